import CDBus
import Foundation

/// A D-Bus value shutterpipe sends: what MPRIS properties need.
indirect enum DBusValue {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case double(Double)
    case int64(Int64)
    case strings([String])
    case dictionary([(String, DBusValue)])

    /// The D-Bus type signature.
    var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .bool: return "b"
        case .double: return "d"
        case .int64: return "x"
        case .strings: return "as"
        case .dictionary: return "a{sv}"
        }
    }

    /// Appends the value at `iterator`.
    func append(to iterator: inout DBusMessageIter) {
        switch self {
        case .string(let text), .objectPath(let text):
            text.withCString { pointer in
                var value: UnsafePointer<CChar>? = pointer
                dbus_message_iter_append_basic(&iterator, DBusType.code(signature), &value)
            }
        case .bool(let flag):
            var value: dbus_bool_t = flag ? 1 : 0
            dbus_message_iter_append_basic(&iterator, DBusType.code("b"), &value)
        case .double(let number):
            var value = number
            dbus_message_iter_append_basic(&iterator, DBusType.code("d"), &value)
        case .int64(let number):
            var value = number
            dbus_message_iter_append_basic(&iterator, DBusType.code("x"), &value)
        case .strings(let items):
            var array = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, DBusType.code("a"), "s", &array)
            for item in items { DBusValue.string(item).append(to: &array) }
            dbus_message_iter_close_container(&iterator, &array)
        case .dictionary(let entries):
            var array = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, DBusType.code("a"), "{sv}", &array)
            for (key, value) in entries {
                var entry = DBusMessageIter()
                dbus_message_iter_open_container(&array, DBusType.code("e"), nil, &entry)
                DBusValue.string(key).append(to: &entry)
                var variant = DBusMessageIter()
                dbus_message_iter_open_container(&entry, DBusType.code("v"), value.signature, &variant)
                value.append(to: &variant)
                dbus_message_iter_close_container(&entry, &variant)
                dbus_message_iter_close_container(&array, &entry)
            }
            dbus_message_iter_close_container(&iterator, &array)
        }
    }
}

/// libdbus's type codes, which Swift cannot import (they are cast macros).
enum DBusType {
    static func code(_ signature: String) -> Int32 { Int32(signature.utf8.first ?? 0) }
}

/// A private connection to a bus, used from one thread only.
final class DBusLink {
    let connection: OpaquePointer

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`), the system bus, or the
    /// bus at `address`.
    init(address: String?, system: Bool) throws(DBusFailure) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let connection: OpaquePointer?
        if let address {
            connection = dbus_connection_open_private(address, &error)
            if let connection, dbus_bus_register(connection, &error) == 0 {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                throw DBusFailure(error)
            }
        } else {
            connection = dbus_bus_get_private(system ? DBUS_BUS_SYSTEM : DBUS_BUS_SESSION, &error)
        }
        guard let connection else { throw DBusFailure(error) }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        self.connection = connection
    }

    deinit {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    /// Asks for a well-known name; fails if another program owns it.
    func requestName(_ name: String) throws(DBusFailure) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let result = dbus_bus_request_name(connection, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        if dbus_error_is_set(&error) != 0 { throw DBusFailure(error) }
        guard result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.NameTaken", message: "another program owns \(name)")
        }
    }

    /// Sends `message` (taking ownership of it) and flushes.
    func send(_ message: OpaquePointer) {
        dbus_connection_send(connection, message, nil)
        dbus_connection_flush(connection)
        dbus_message_unref(message)
    }

    /// Waits up to `milliseconds` for traffic and returns the next message, if any. Returns
    /// `nil` with `disconnected` set when the bus went away.
    func next(waiting milliseconds: Int32, disconnected: inout Bool) -> OpaquePointer? {
        if let message = dbus_connection_pop_message(connection) { return message }
        if dbus_connection_read_write(connection, milliseconds) == 0 { disconnected = true; return nil }
        return dbus_connection_pop_message(connection)
    }

    /// Calls a method and waits for its reply; returns the error, if any.
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
              arguments: [DBusValue], timeout: Int32 = 5_000) -> DBusFailure? {
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            return DBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "out of memory")
        }
        defer { dbus_message_unref(message) }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for argument in arguments { argument.append(to: &iterator) }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let reply = dbus_connection_send_with_reply_and_block(connection, message, timeout, &error)
        if let reply { dbus_message_unref(reply); return nil }
        return DBusFailure(error)
    }
}

/// A D-Bus error.
struct DBusFailure: Error, CustomStringConvertible {
    var name: String
    var message: String

    init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: DBusError) {
        name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        message = error.message.map { String(cString: $0) } ?? "unknown D-Bus error"
    }

    var description: String { "\(message) (\(name))" }
}

/// Reading a method call.
struct DBusCall {
    let message: OpaquePointer

    var path: String { dbus_message_get_path(message).map { String(cString: $0) } ?? "" }
    var interface: String { dbus_message_get_interface(message).map { String(cString: $0) } ?? "" }
    var member: String { dbus_message_get_member(message).map { String(cString: $0) } ?? "" }
    var isMethodCall: Bool { dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL }
    var noReplyExpected: Bool { dbus_message_get_no_reply(message) != 0 }

    /// The string arguments, in order (others are skipped).
    var stringArguments: [String] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        var strings: [String] = []
        repeat {
            if dbus_message_iter_get_arg_type(&iterator) == DBusType.code("s") {
                var value: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&iterator, &value)
                if let value { strings.append(String(cString: value)) }
            }
        } while dbus_message_iter_next(&iterator) != 0
        return strings
    }

    /// A reply carrying `values`.
    func reply(_ values: [DBusValue] = []) -> OpaquePointer? {
        guard let reply = dbus_message_new_method_return(message) else { return nil }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(reply, &iterator)
        for value in values { value.append(to: &iterator) }
        return reply
    }

    /// A reply with one variant.
    func replyVariant(_ value: DBusValue) -> OpaquePointer? {
        guard let reply = dbus_message_new_method_return(message) else { return nil }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(reply, &iterator)
        var variant = DBusMessageIter()
        dbus_message_iter_open_container(&iterator, DBusType.code("v"), value.signature, &variant)
        value.append(to: &variant)
        dbus_message_iter_close_container(&iterator, &variant)
        return reply
    }

    /// An error reply.
    func error(_ name: String, _ text: String) -> OpaquePointer? {
        dbus_message_new_error(message, name, text)
    }
}
