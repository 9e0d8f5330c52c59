import Foundation
import ShutterPipeSupport
import TestSupport
import Testing

/// The one hand-over from producers to a consumer thread (the socket's replies, a live
/// view's frames, a download's pieces): its rules, each tried on real threads.
@Suite("ValueChannel: bounded, never blocking a sender, a receiver woken by a value, a close or its deadline", .timeLimit(.minutes(2)))
struct ValueChannelTests {
    @Test("values come out in order, from four senders at once; the consumer handles each until it asks for the next; finish lets it take what is queued, then says closed")
    func order() async {
        let channel = ValueChannel<Int>(capacity: 10_000)
        let sent = await onThreads(4) { sender in (0..<1000).map { channel.send(sender * 1000 + $0) } }
        #expect(sent.allSatisfy { $0.allSatisfy { $0 == .queued } })
        channel.finish()
        #expect(channel.send(-1) == .closed)
        let received = await onThreads(1) { _ -> [Int] in
            var values: [Int] = []
            while case .value(let value) = channel.receive() {
                #expect(!channel.isIdle)  // being handled
                values.append(value)
            }
            return values
        }[0]
        #expect(received.count == 4000)
        for sender in 0..<4 {
            let own = received.filter { $0 / 1000 == sender }
            #expect(own == Array(sender * 1000..<sender * 1000 + 1000), "sender \(sender)'s values in their order")
        }
        #expect(channel.isIdle && channel.isClosed)
    }

    @Test("full: refuse says so and queues nothing; dropOldest keeps the newest; cancel drops what waits and wakes the consumer with closed")
    func overflow() async {
        let refusing = ValueChannel<Int>(capacity: 2)
        #expect([1, 2, 3].map { refusing.send($0) } == [.queued, .queued, .full])
        #expect(refusing.count == 2)
        let newest = ValueChannel<Int>(capacity: 1, overflow: .dropOldest)
        for value in 1...5 { newest.send(value) }
        let taken = await onThreads(1) { _ -> Int? in
            if case .value(let value) = newest.receive(until: .now + .seconds(30)) { return value }
            return nil
        }[0]
        #expect(taken == 5)

        let cancelled = ValueChannel<Int>(capacity: 8)
        cancelled.send(1)
        cancelled.cancel()
        #expect(cancelled.count == 0)
        let after = await onThreads(1) { _ -> Bool in
            if case .closed = cancelled.receive() { return true }
            return false
        }[0]
        #expect(after)
    }

    @Test("a waiting receiver is woken by a value sent from the pool, by a close from another thread, and by its deadline; a deadline that passes finds nothing and says so")
    func waking() async {
        let channel = ValueChannel<String>(capacity: 4)
        // Whether the receiver already waits or is yet to look, the value reaches it.
        async let woken = onThreads(1) { _ -> String? in
            if case .value(let value) = channel.receive() { return value }
            return nil
        }
        channel.send("frame")
        #expect(await woken == ["frame"])

        async let closed = onThreads(1) { _ -> Bool in
            if case .closed = channel.receive() { return true }
            return false
        }
        channel.finish()
        #expect(await closed == [true])

        let quiet = ValueChannel<Int>(capacity: 1)
        let outcome = await onThreads(1) { _ -> Bool in
            if case .timedOut = quiet.receive(until: .now + .milliseconds(20)) { return true }
            return false
        }[0]
        #expect(outcome)
    }
}
