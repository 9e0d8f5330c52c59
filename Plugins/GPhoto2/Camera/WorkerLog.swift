import Foundation
import GPhoto2Backend
import ShutterPipeSupport
import Synchronization

/// The worker's way to the backend's log: what it and libgphoto2 have to say travels as
/// ``WorkerEvent/log(level:message:)`` and lands in the session's log as a structured
/// entry, never as loose lines on a terminal.
enum WorkerLog {
    private static let channel = Mutex<MessageChannel?>(nil)

    static func attach(_ to: MessageChannel) { channel.withLock { $0 = to } }

    static func info(_ message: String) { send("info", message) }
    static func warning(_ message: String) { send("warning", message) }
    static func debug(_ message: String) { send("debug", message) }

    static func send(_ level: String, _ message: String) {
        guard let channel = channel.withLock({ $0 }) else { return }
        try? WorkerProtocol.send(WorkerMessage.event(.log(level: level, message: message)), over: channel)
    }
}
