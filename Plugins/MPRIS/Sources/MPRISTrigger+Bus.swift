import CDBus
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The bus thread: the player published on the bus, method calls turned into events, each
/// answer written back as the player's properties.
extension MPRISTrigger {
    func serve(_ events: EventChannel, ready: AsyncStream<Result<Void, ShutterError>>.Continuation) {
        let link: DBusLink
        do {
            link = try DBusLink(address: options.busAddress, system: false)
            try link.requestName("\(Self.rootInterface).\(options.busName)")
        } catch {
            ready.yield(.failure(ShutterError(.permissionDenied, "mpris: cannot publish the player on the session bus: \(error)",
                                              fix: "run inside a desktop session (or dbus-run-session), and stop any other shutterpipe with an mpris trigger")))
            ready.finish()
            return
        }
        var bluezLink: DBusLink?
        if options.bluez {
            do {
                let system = try DBusLink(address: options.systemBusAddress, system: true)
                if let failure = system.call("org.bluez", options.adapter, "org.bluez.Media1", "RegisterPlayer",
                                             arguments: [.objectPath(Self.objectPath), .dictionary(playerProperties(state.withLock { $0 }))]) {
                    log.warning("BlueZ did not take the player (\(failure)); use mpris-proxy instead")
                } else {
                    log.info("registered with BlueZ at \(options.adapter)")
                    bluezLink = system
                }
            } catch {
                log.warning("no system bus for BlueZ (\(error)); use mpris-proxy instead")
            }
        }
        log.info("MPRIS player \(Self.rootInterface).\(options.busName) is on the session bus")
        ready.yield(.success(()))
        ready.finish()
        var disconnected = false
        while !stopped.load(ordering: .acquiring) && !disconnected {
            for link in [link] + (bluezLink.map { [$0] } ?? []) {
                while let message = link.next(waiting: 20, disconnected: &disconnected) {
                    handle(DBusCall(message: message), on: link, events)
                    dbus_message_unref(message)
                }
            }
            for update in outgoing.withLock({ pending -> [PlayerState] in defer { pending.removeAll() }; return pending }) {
                for target in [link] + (bluezLink.map { [$0] } ?? []) { announce(update, on: target) }
            }
        }
        if disconnected { log.error("the session bus went away; the mpris trigger stopped") }
    }

    private func handle(_ call: DBusCall, on link: DBusLink, _ events: EventChannel) {
        guard call.isMethodCall else { return }
        let reply: OpaquePointer?
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            reply = call.reply([.string(Self.introspection)])
        case (Self.propertiesInterface, "Get"):
            let arguments = call.stringArguments
            if arguments.count == 2, let value = properties(of: arguments[0])?.first(where: { $0.0 == arguments[1] })?.1 {
                reply = call.replyVariant(value)
            } else {
                reply = call.error("org.freedesktop.DBus.Error.UnknownProperty", "no property \(call.stringArguments.joined(separator: "."))")
            }
        case (Self.propertiesInterface, "GetAll"):
            reply = call.reply([.dictionary(properties(of: call.stringArguments.first ?? "") ?? [])])
        case (Self.propertiesInterface, "Set"):
            reply = call.error("org.freedesktop.DBus.Error.PropertyReadOnly", "shutterpipe's player properties are read-only")
        case (Self.rootInterface, "Raise"), (Self.rootInterface, "Quit"):
            reply = call.reply()
        case (Self.playerInterface, let member) where Self.commands.contains(member):
            if let event = options.map.event(for: member) {
                events.send(event, origin: member)
            } else if let sequence = options.map.sequence(for: member) {
                // A gesture mapped to a sequence: each frame is answered through sync, as a
                // capture (the earbud hears every photo), and the end is logged.
                events.send(SequenceRequest(sequence, origin: member)) { [log] answer in log.info(answer.summary) }
            } else {
                log.info("\(member) is not mapped; ignored")
            }
            reply = call.reply()
        case (Self.playerInterface, "Seek"), (Self.playerInterface, "SetPosition"), (Self.playerInterface, "OpenUri"):
            reply = call.reply()
        default:
            reply = call.error("org.freedesktop.DBus.Error.UnknownMethod", "no method \(call.interface).\(call.member)")
        }
        if let reply, !call.noReplyExpected { link.send(reply) } else if let reply { dbus_message_unref(reply) }
    }

    private func properties(of interface: String) -> [(String, DBusValue)]? {
        switch interface {
        case Self.rootInterface:
            return [("CanQuit", .bool(false)), ("CanRaise", .bool(false)), ("HasTrackList", .bool(false)),
                    ("Identity", .string("shutterpipe")), ("SupportedUriSchemes", .strings([])), ("SupportedMimeTypes", .strings([]))]
        case Self.playerInterface:
            return playerProperties(state.withLock { $0 })
        default:
            return nil
        }
    }

    private func playerProperties(_ current: PlayerState) -> [(String, DBusValue)] {
        let map = options.map
        func mapped(_ command: String) -> Bool { map.event(for: command) != nil || map.sequence(for: command) != nil }
        func can(_ command: String) -> DBusValue { .bool(mapped(command)) }
        return [
            ("PlaybackStatus", .string(current.playbackStatus)),
            ("Metadata", .dictionary(metadata(current))),
            ("CanControl", .bool(true)),
            ("CanPlay", .bool(mapped("Play") || mapped("PlayPause"))),
            ("CanPause", .bool(mapped("Pause") || mapped("PlayPause"))),
            ("CanGoNext", can("Next")), ("CanGoPrevious", can("Previous")), ("CanSeek", .bool(false)),
            ("Rate", .double(1)), ("MinimumRate", .double(1)), ("MaximumRate", .double(1)),
            ("Volume", .double(1)), ("Position", .int64(0)),
        ]
    }

    private func metadata(_ current: PlayerState) -> [(String, DBusValue)] {
        [("mpris:trackid", .objectPath("/org/shutterpipe/shot/\(current.shot)")), ("xesam:title", .string(current.title)),
         ("xesam:artist", .strings(["shutterpipe"])), ("mpris:length", .int64(0))]
    }

    private func announce(_ current: PlayerState, on link: DBusLink) {
        guard let signal = dbus_message_new_signal(Self.objectPath, Self.propertiesInterface, "PropertiesChanged") else { return }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(signal, &iterator)
        DBusValue.string(Self.playerInterface).append(to: &iterator)
        DBusValue.dictionary([("PlaybackStatus", .string(current.playbackStatus)), ("Metadata", .dictionary(metadata(current)))]).append(to: &iterator)
        DBusValue.strings([]).append(to: &iterator)
        link.send(signal)
    }

    static let introspection = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
    <node>
     <interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>
     <interface name="org.freedesktop.DBus.Properties">
      <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
      <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
      <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
      <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
     </interface>
     <interface name="org.mpris.MediaPlayer2">
      <method name="Raise"/><method name="Quit"/>
      <property name="CanQuit" type="b" access="read"/><property name="CanRaise" type="b" access="read"/>
      <property name="HasTrackList" type="b" access="read"/><property name="Identity" type="s" access="read"/>
      <property name="SupportedUriSchemes" type="as" access="read"/><property name="SupportedMimeTypes" type="as" access="read"/>
     </interface>
     <interface name="org.mpris.MediaPlayer2.Player">
      <method name="Next"/><method name="Previous"/><method name="Pause"/><method name="PlayPause"/><method name="Stop"/><method name="Play"/>
      <method name="Seek"><arg type="x" direction="in"/></method>
      <method name="SetPosition"><arg type="o" direction="in"/><arg type="x" direction="in"/></method>
      <method name="OpenUri"><arg type="s" direction="in"/></method>
      <property name="PlaybackStatus" type="s" access="read"/><property name="Metadata" type="a{sv}" access="read"/>
      <property name="CanControl" type="b" access="read"/><property name="CanPlay" type="b" access="read"/>
      <property name="CanPause" type="b" access="read"/><property name="CanGoNext" type="b" access="read"/>
      <property name="CanGoPrevious" type="b" access="read"/><property name="CanSeek" type="b" access="read"/>
      <property name="Rate" type="d" access="read"/><property name="MinimumRate" type="d" access="read"/>
      <property name="MaximumRate" type="d" access="read"/><property name="Volume" type="d" access="read"/>
      <property name="Position" type="x" access="read"/>
     </interface>
    </node>
    """
}
