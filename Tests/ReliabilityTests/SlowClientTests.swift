#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// A TCP connection to 127.0.0.1:`port` from `source` (another loopback address: another
/// client, as the server counts them), or -1 when refused.
func connectTCP(from source: String, to port: UInt16) -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return -1 }
    var local = sockaddr_in(), remote = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = inet_addr(source)
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = port.bigEndian
    remote.sin_addr.s_addr = inet_addr("127.0.0.1")
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }
    let connected = bound == 0 && withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, size) } } == 0
    if !connected { close(descriptor); return -1 }
    return descriptor
}

/// Reads what `descriptor` has until `enough` or the deadline: the text, and whether the
/// peer closed.
func readUntil(_ descriptor: Int32, within timeout: Duration, _ enough: (String) -> Bool) -> (text: String, closed: Bool) {
    let deadline = ContinuousClock.now + timeout
    var text = Data(), buffer = [UInt8](repeating: 0, count: 65_536)
    while ContinuousClock.now < deadline && !enough(String(decoding: text, as: UTF8.self)) {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 100) >= 0 else { break }
        if entry.revents == 0 { continue }
        let count = read(descriptor, &buffer, buffer.count)
        if count <= 0 { return (String(decoding: text, as: UTF8.self), true) }
        text.append(contentsOf: buffer[0..<count])
    }
    return (String(decoding: text, as: UTF8.self), false)
}

/// Runs `body` on a thread of its own (blocking socket work stays off the cooperative pool).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
}

/// Case 10: clients that are slow or gone on purpose cost the others nothing.
@Suite("fault: slow and dead web clients")
struct SlowClientTests {
    @Test("slowloris: 64 connections from 4 addresses trickle a header byte every 5 s; each is closed at the 10 s deadline, and a fifth address is answered all along")
    func slowloris() async throws {
        let folder = TemporaryDirectory("chaos-slowloris")
        let web = try await WebSession.start(folder)
        let port = web.port
        // The attack lasts at least this long (past the 10 s deadline of its first wave), and
        // until the fifth address has made its requests.
        let attack: Duration = .seconds(Chaos.count(ci: 24, full: 60))
        let requestCount = Chaos.count(ci: 20, full: 60)
        let connected = Atomic<Int>(0), stop = Atomic<Bool>(false)
        // The slow clients: one thread, each connection opened again as soon as it is closed.
        async let lifetimes: [Double] = onThread {
            let sources = (2...5).map { "127.0.0.\($0)" }
            var open: [(descriptor: Int32, source: String, opened: ContinuousClock.Instant)] = []
            var lifetimes: [Double] = []
            let started = ContinuousClock.now
            var lastByte = ContinuousClock.now, refusedAt = ContinuousClock.now - .seconds(1)
            while ContinuousClock.now - started < attack || !stop.load(ordering: .sequentiallyConsistent) {
                // Refused (its address's slots not yet free): a tenth of a second before the next try.
                while open.count < 64 && ContinuousClock.now - refusedAt > .milliseconds(100) {
                    let source = sources[open.count % 4]
                    let descriptor = connectTCP(from: source, to: port)
                    guard descriptor >= 0 else { break }
                    _ = "GET /api/status HTTP/1.1\r\nHo".withCString { send(descriptor, $0, 28, Int32(MSG_NOSIGNAL)) }
                    open.append((descriptor, source, .now))
                }
                connected.store(open.count, ordering: .sequentiallyConsistent)
                if ContinuousClock.now - lastByte >= .seconds(5) {
                    lastByte = .now
                    for connection in open { _ = send(connection.descriptor, "s", 1, Int32(MSG_NOSIGNAL)) }
                }
                // Which the server closed.
                var entries = open.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
                _ = poll(&entries, nfds_t(entries.count), 200)
                var kept: [(descriptor: Int32, source: String, opened: ContinuousClock.Instant)] = []
                for (entry, connection) in zip(entries, open) {
                    var byte: UInt8 = 0
                    if entry.revents != 0 && recv(connection.descriptor, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 {
                        let lived = (ContinuousClock.now - connection.opened) / .seconds(1)
                        if lived < 1 { refusedAt = .now } else { lifetimes.append(lived) }
                        close(connection.descriptor)
                    } else {
                        kept.append(connection)
                    }
                }
                open = kept
            }
            // Still open at the end: they lived the whole attack.
            for connection in open { lifetimes.append((ContinuousClock.now - connection.opened) / .seconds(1)); close(connection.descriptor) }
            return lifetimes
        }
        #expect(await eventually(timeout: .seconds(60)) { connected.load(ordering: .sequentiallyConsistent) >= 64 }, "64 slow connections open")
        // The fifth address, spread over the attack, across the 10 s deadline of its first
        // wave. (A generous timeout: on a loaded runner a request can take seconds; before
        // the fix none was answered at all.)
        var times: [Double] = []
        var failures: [String] = []
        while times.count + failures.count < requestCount {
            let started = ContinuousClock.now
            do {
                let reply = try await http("GET", "/api/status", port: port, timeout: .seconds(10))
                if reply.status == 200 { times.append((ContinuousClock.now - started) / .seconds(1)) } else { failures.append("\(reply.status)") }
            } catch {
                failures.append("\(error)")
            }
            try await Task.sleep(for: attack / requestCount)  // pacing only: the outcome is each request's own time
        }
        stop.store(true, ordering: .sequentiallyConsistent)
        let lived = await lifetimes
        let outcome = await web.stop()
        #expect(outcome.status == 0)
        let requests = times.count + failures.count
        let withinOne = times.filter { $0 <= 1 }.count
        Chaos.record("web slowloris", ["requests": requests, "answered": times.count, "answeredWithin1s": withinOne,
                                       "medianMs": Int((times.sorted().dropFirst(times.count / 2).first ?? 0) * 1000),
                                       "slowConnections": lived.count, "longestSlowConnectionS": lived.max() ?? 0])
        #expect(Double(times.count) >= 0.95 * Double(requests), "answered \(times.count) of \(requests): \(failures.prefix(3))")
        // Timing on a busy 2-core runner: within 1 s asserted at full scale, recorded always.
        if Chaos.full { #expect(Double(withinOne) >= 0.95 * Double(requests), "within 1 s: \(withinOne) of \(requests)") }
        // Closed by the 10 s deadline (plus the watch's quarter second and a busy machine),
        // not by the 30 s idle timeout, which each trickled byte restarts.
        #expect(lived.count > 64, "the first wave was closed and opened again")
        #expect((lived.max() ?? 99) < 15, "a slow connection lived \(lived.max() ?? 0) s")
    }

    @Test("40 /events streams opened and closed in a row from one address: each finds a free slot at once (a closed stream frees its slot within 1 s)")
    func closedStreamsFreeTheirSlots() async throws {
        let folder = TemporaryDirectory("chaos-events-slots")
        let web = try await WebSession.start(folder)
        let port = web.port
        let waits: [Double] = await onThread {
            var waits: [Double] = []
            for _ in 0..<40 {
                let asked = ContinuousClock.now
                // Refused while the address's 16 slots are taken: asked again 50 ms later.
                while ContinuousClock.now - asked < .seconds(30) {
                    let descriptor = connectTCP(from: "127.0.0.6", to: port)
                    if descriptor >= 0 {
                        _ = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                        let reply = readUntil(descriptor, within: .seconds(10)) { $0.contains("shutterpipe events") }
                        close(descriptor)
                        if reply.text.contains("shutterpipe events") { break }
                    }
                    usleep(50_000)
                }
                waits.append((ContinuousClock.now - asked) / .seconds(1))
            }
            return waits
        }
        let outcome = await web.stop()
        #expect(outcome.status == 0)
        Chaos.record("web events slots", ["streams": waits.count, "longestWaitS": waits.max() ?? 0])
        #expect(waits.count == 40)
        // Before the fix a closed stream held its slot to the next 15 s keep-alive: the
        // 17th stream waited 11–15 s.
        #expect((waits.max() ?? 99) < 2, "a stream waited \(waits.max() ?? 0) s for a slot")
    }

    @Test("an /events reader that never reads is dropped once 256 events are behind, counting the kernel's buffers, and its connection closed; the session goes on")
    func readerThatNeverReads() async throws {
        let folder = TemporaryDirectory("chaos-events-stall")
        let web = try await WebSession.start(folder, backend: "{type: file-stub, width: 64, height: 48}")
        let descriptor = connectTCP(from: "127.0.0.7", to: web.port)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        _ = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        await web.process.waitForOutput("at 127.0.0.7 listens to /events")
        // Shots (three events each: answer, photo, shot) until the session drops the reader.
        var shots = 0
        while shots < 600 && !web.process.stderrSoFar.contains("from /events") {
            for _ in 0..<10 { web.process.send("capture\n") }
            shots += 10
            let answered = shots
            await web.process.waitForOutput(on: .stdout, "answer \(answered)") { $0.split(separator: "\n").count >= answered }
        }
        let log = web.process.stderrSoFar
        let dropped = log.split(separator: "\n").first { $0.contains("dropped the operator at 127.0.0.7 from /events") }
        // Before the fix: some 21,000 events (7,000 shots) sat in the kernel first.
        #expect(dropped != nil && shots <= 400, "\(shots) shots, not dropped: \(log.suffix(600))")
        let closed = await onThread { readUntil(descriptor, within: .seconds(30)) { _ in false }.closed }
        #expect(closed, "the dropped reader's connection ends once it reads what the kernel held")
        // The session goes on for everyone else.
        web.process.send("capture\n")
        let last = shots + 1
        await web.process.waitForOutput(on: .stdout, "answer \(last)") { $0.split(separator: "\n").count >= last }
        let outcome = await web.stop()
        #expect(outcome.status == 0)
        let reason = dropped.flatMap { line in line.range(of: "/events, ").map { String(line[$0.upperBound...].prefix { $0 != ":" }) } } ?? ""
        Chaos.record("web events stalled reader", ["shotsBeforeDrop": shots, "eventsBeforeDrop": shots * 3, "dropped": reason])
    }
}
