#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// `fifo`: each line written into a named pipe is a shutter event (`capture`, `enter`,
/// `exit`): `echo capture > ~/shutter.fifo` from a script, a foot switch's helper, a
/// timer. The pipe is made (0600) when it is not there.
///
/// How a trigger that reads stops, the part to copy:
/// - A blocking read never runs on the cooperative pool: the reading happens on a thread
///   of its own, which waits in `poll` on the pipe and on a *wake pipe* of its own.
/// - When the session cancels `run`, the cancellation handler writes one byte into the
///   wake pipe: `poll` returns, the thread leaves its loop and closes what it opened.
/// - `run` returns only once the thread has ended: nothing of this run is left (no
///   thread, no descriptor), which the kit checks (`Conformance.checkTriggerCleansUp`).
public final class FifoTrigger: TriggerSource {
    public static let typeName = "fifo"

    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "example: lines written into a named pipe (capture, enter, exit) are shutter events") { options, _ in
            guard let path = try options.path("path") else {
                throw options.error("a fifo trigger needs 'path': the named pipe to read, such as ~/shutter.fifo", key: "path")
            }
            return FifoTrigger(path: path)
        }
    }

    let path: String

    public init(path: String) {
        self.path = path
    }

    public func run(delivering events: EventChannel) async throws {
        if mkfifo(path, 0o600) != 0 && errno != EEXIST {
            throw ShutterError(.invalidConfiguration, "fifo trigger: cannot make '\(path)': \(String(cString: strerror(errno)))", fix: "set 'path' to a place this user may write")
        }
        // Read and write: the pipe never reports end of input when a writer closes it.
        let fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fifo >= 0 else {
            throw ShutterError(.invalidConfiguration, "fifo trigger: cannot open '\(path)': \(String(cString: strerror(errno)))", fix: "check that it is a named pipe this user may read")
        }
        var wake: [Int32] = [-1, -1]
        guard pipe(&wake) == 0 else {
            close(fifo)
            throw ShutterError(.unexpected, "fifo trigger: no pipe: \(String(cString: strerror(errno)))")
        }
        let reader = Reader(fifo: fifo, wake: wake[0], events: events)
        let wakeUp = wake[1]
        // The thread closes `fifo` and the wake pipe's read end as it leaves; the write end
        // is closed here, once it has.
        await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                let thread = Thread {
                    reader.loop()
                    finished.resume()
                }
                thread.name = "fifo trigger"
                thread.start()
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wakeUp, &byte, 1)
        }
        close(wakeUp)
    }
}

/// The reading thread's work: lines from the pipe, until the wake pipe says to stop.
private final class Reader: @unchecked Sendable {  // used by its one thread only
    let fifo: Int32
    let wake: Int32
    let events: EventChannel
    var pending: [UInt8] = []

    init(fifo: Int32, wake: Int32, events: EventChannel) {
        self.fifo = fifo
        self.wake = wake
        self.events = events
    }

    func loop() {
        defer { close(fifo); close(wake) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var watched = [pollfd(fd: fifo, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            guard poll(&watched, 2, -1) >= 0 || errno == EINTR else { return }
            if watched[1].revents != 0 { return }  // cancelled
            guard watched[0].revents & Int16(POLLIN) != 0 else { continue }
            let count = read(fifo, &buffer, buffer.count)
            guard count > 0 else { continue }
            pending += buffer[0..<count]
            while let end = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<end], as: UTF8.self).trimmingCharacters(in: .whitespaces)
                pending.removeSubrange(...end)
                guard !line.isEmpty else { continue }
                events.send(ShutterEvent(rawValue: line) ?? .unknown, origin: "fifo line")
            }
            if pending.count > 4096 { pending.removeAll() }  // no line is that long: not ours
        }
    }
}
