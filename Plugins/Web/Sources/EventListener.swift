#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CWebServer
import Foundation

extension EventHub {
    /// One `/events` reader: a queue that its connection's thread drains.
    ///
    /// It is "behind" by what waits here and what the kernel still holds: frames written
    /// to the socket that the client has not acknowledged (SIOCOUTQ), with the socket's
    /// send buffer capped at about 64 KB (by default Linux grows it past 1 MB, some
    /// 20,000 events). A reader 256 events or 10 s behind is dropped: its connection is
    /// shut down, and the page's EventSource reconnects when it can read again. A client
    /// that closes its stream is noticed within a quarter of a second, not at the next
    /// keep-alive, so its slot is free at once.
    final class Listener: HTTPStream, @unchecked Sendable {  // every `var` under `lock`
        static let eventLimit = 256
        static let lagLimit: Duration = .seconds(10)
        static let keepAlive: Duration = .seconds(15)
        /// SO_SNDBUF asked for; the kernel doubles it.
        static let sendBuffer: Int32 = 32_768

        private let lock = NSCondition()
        private var frames: [(data: Data, at: ContinuousClock.Instant)] = [(Data("retry: 2000\n: shutterpipe events\n\n".utf8), .now)]
        private var pending = Data()
        /// Frames handed to the socket, by the byte count written once each is out, until
        /// the client has acknowledged them.
        private var inFlight: [(end: Int, at: ContinuousClock.Instant)] = []
        private var written = 0
        private var lastWritten = ContinuousClock.now
        /// A duplicate of the connection's socket (ours to close: never one the server has
        /// closed and the kernel given to another file).
        private var descriptor: Int32 = -1
        private var ended = false
        private let onClosed: @Sendable (Listener) -> Void
        /// Told why, once, when the listener is dropped for being behind.
        private let onDropped: @Sendable (String) -> Void
        /// What its reader may see: only its events are queued for it.
        let access: WebAccess

        init(access: WebAccess, onClosed: @escaping @Sendable (Listener) -> Void, onDropped: @escaping @Sendable (String) -> Void) {
            self.access = access
            self.onClosed = onClosed
            self.onDropped = onDropped
        }

        deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

        func attached(to socket: Int32) {
            guard socket >= 0 else { return }
            var size = Self.sendBuffer
            _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            let copy = fcntl(socket, F_DUPFD_CLOEXEC, 0)
            lock.withLock { descriptor = copy }
        }

        func closed() {
            end()
            onClosed(self)
        }

        /// Queues a frame; false when the listener is too far behind (it is then ended).
        func offer(_ frame: Data) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard !ended, !endIfBehind() else { return false }
            frames.append((frame, .now))
            lock.signal()
            return true
        }

        /// False when the listener is over: too far behind, or its client gone.
        func check() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return !ended && !endIfBehind() && !endIfGone()
        }

        func end() {
            lock.lock()
            ended = true
            lock.broadcast()
            lock.unlock()
        }

        func next(maximum: Int) -> Data? {
            lock.lock()
            defer { lock.unlock() }
            while pending.isEmpty {
                if ended || endIfGone() || endIfBehind() { return nil }
                if !frames.isEmpty {
                    let frame = frames.removeFirst()
                    pending = frame.data
                    inFlight.append((written + frame.data.count, frame.at))
                } else if ContinuousClock.now - lastWritten >= Self.keepAlive {
                    // A quiet stream stays open through proxies and timeouts.
                    pending = Data(": keep-alive\n\n".utf8)
                    inFlight.append((written + pending.count, .now))
                } else {
                    _ = lock.wait(until: Date(timeIntervalSinceNow: 0.25))
                }
            }
            let chunk = pending.prefix(maximum)
            pending = Data(pending.dropFirst(chunk.count))
            written += chunk.count
            lastWritten = .now
            return Data(chunk)
        }

        /// Under `lock`: ends the listener when 256 events or 10 s wait, here or in the
        /// kernel; then the connection is shut down (its thread may be blocked writing).
        private func endIfBehind() -> Bool {
            let unsent = descriptor >= 0 ? Int(sp_web_unsent_bytes(descriptor)) : -1
            // What the client acknowledged is no longer behind (unknown: nothing is).
            let acknowledged = unsent >= 0 ? written - unsent : Int.max
            while let first = inFlight.first, first.end <= acknowledged { inFlight.removeFirst() }
            let oldest = [inFlight.first?.at, frames.first?.at].compactMap { $0 }.min()
            let waiting = inFlight.count + frames.count
            let lag = oldest.map { ContinuousClock.now - $0 } ?? .zero
            guard waiting >= Self.eventLimit || lag >= Self.lagLimit else { return false }
            finish()
            onDropped(waiting >= Self.eventLimit ? "\(waiting) events behind (\(frames.count) queued, \(inFlight.count) in the kernel)"
                      : "\(Int(lag / .seconds(1))) s behind")
            return true
        }

        /// Under `lock`: ends the listener when its client has closed the connection.
        private func endIfGone() -> Bool {
            guard descriptor >= 0, sp_web_peer_gone(descriptor) != 0 else { return false }
            finish()
            return true
        }

        private func finish() {
            ended = true
            if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_RDWR)) }
            lock.broadcast()
        }
    }
}
