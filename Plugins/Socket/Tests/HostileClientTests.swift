#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
@testable import SocketTrigger
import TestSupport
import Testing

@Suite("socket trigger: hostile clients", .timeLimit(.minutes(3)))
struct HostileClientTests {
    @Test("a connection's descriptor stays open until its last user lets go, so its number cannot be reused under a reply in flight")
    func descriptorOutlivesHangUp() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[1]) }
        var before = stat()
        #expect(fstat(ends[0], &before) == 0)
        var connection: SocketConnection? = SocketConnection(descriptor: ends[0])
        var inFlight = connection  // what a sync holds while it queues a reply
        connection?.hangUp()       // the reader saw the client go
        connection = nil           // and the client left the table
        let writerEnded = await eventually { [inFlight] in inFlight?.hasWriterEnded == true }
        #expect(writerEnded)  // the writer thread has let go
        #expect(isOpen(ends[0], inode: before.st_ino), "closed while a reply was in flight: the number could be reused")
        #expect(inFlight?.send(Data("late\n".utf8)) == true)  // queued for nobody, harmlessly
        // Once the last user let go, it is closed.
        inFlight = nil
        let (descriptor, inode) = (ends[0], before.st_ino)
        #expect(await eventually(timeout: .seconds(60)) { !isOpen(descriptor, inode: inode) })
    }

    @Test("a client that sends captures and never reads its replies is disconnected; another client is answered at once and SIGTERM ends the session")
    func clientThatNeverReads() async throws {
        let folder = TemporaryDirectory("socket-unread")
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48")
        let rude = connectUnixSocket(path)
        #expect(rude >= 0)
        defer { close(rude) }
        let flood = Array((0..<3_000).map { "{\"event\":\"capture\",\"id\":\($0)}\n" }.joined().utf8)
        let sent = await onThreads(1) { _ in (try? DescriptorIO.writeAll(flood, to: rude)) != nil }
        #expect(sent == [true])
        #expect(await eventually(timeout: .seconds(30)) { session.stderrSoFar.contains("replies unread; disconnected it") },
                "\(session.stderrSoFar.suffix(1500))")
        // Another client, a line at a time: each answered (behind at most the queue's bound
        // of the rude client's captures). Before, the session froze for good: every pool
        // thread sat in a write to the rude client, and no answer came.
        let polite = try await SocketLines(path: path)
        for index in 1...5 {
            await polite.send("{\"event\":\"capture\",\"id\":\"p\(index)\"}\n")
            let replies = await polite.replies(index, timeout: .seconds(60))
            #expect(replies.count == index, "request \(index) unanswered")
        }
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(60), for: "SIGTERM to end the session, whatever the client that does not read")
        #expect([0, 4].contains(outcome.status))  // 4 when the flood met a full queue (busy)
    }
}

/// Whether `descriptor` is open and still the file with `inode`.
private func isOpen(_ descriptor: Int32, inode: ino_t) -> Bool {
    var info = stat()
    return fstat(descriptor, &info) == 0 && info.st_ino == inode
}

@Suite("triggers never block: a standard output nobody reads", .timeLimit(.minutes(2)))
struct UnreadOutputTests {
    @Test("stdout a pipe nobody reads: stdin's answers stop being written, with a log line, and a socket client is still answered at once")
    func unreadStandardOutput() async throws {
        // Small photos on tmpfs: the ~150 shots it takes to fill the pipe and the writer's
        // queue cost little, also on a loaded machine.
        let folder = TemporaryDirectory("unread-stdout", inMemory: true)
        let socket = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers:
          - type: stdin
          - {type: socket, path: \(socket)}
        sinks: [{type: files, directory: \(folder.file("out"))}]
        """, in: folder)
        // Standard output is a pipe of one page that nobody reads: it is full after ~50
        // answer lines, and every later write would block.
        let session = try ChildProcess([try shutterpipeBinary(), "run", "--config", config], directory: folder.path,
                                       input: .pipe, output: .pipe, error: .file(folder.file("stderr")))
        defer { session.signal(SIGKILL) }
        _ = fcntl(session.output!, 1031 /* F_SETPIPE_SZ */, 4096)
        _ = await eventually { let probe = connectUnixSocket(socket); if probe >= 0 { close(probe) }; return probe >= 0 }
        OwnedThread.start("feeder") {
            for _ in 0..<300 { try? session.write(Array("capture\n".utf8)) }
        }
        let log = folder.file("stderr")
        let stderr: @Sendable () -> String = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(await eventually(timeout: .seconds(120)) { stderr().contains("standard output is not being read") }, "\(stderr().suffix(2000))")
        // The session still serves others: a socket client's capture is answered (behind at
        // most the stdin lines read ahead, linesAhead), while stdin's answers pile up unread.
        let client = try await SocketLines(path: socket)
        _ = await client.send("{\"event\":\"capture\",\"id\":\"other\"}\n")
        let reply = await client.replies(1, timeout: .seconds(60)).first
        #expect(reply?["id"] as? String == "other" && reply?["state"] as? String == "photoSuccess", "\(String(describing: reply)) \(stderr().suffix(2000))")
        client.close()
    }
}
