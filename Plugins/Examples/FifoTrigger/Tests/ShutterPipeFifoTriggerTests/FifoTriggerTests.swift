#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeConformance
import ShutterPipeKit
@testable import ShutterPipeFifoTrigger
import Testing

@Suite("fifo trigger", .serialized)
struct FifoTriggerTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)").path

    /// Writes `text` into the pipe, as `echo capture > PATH` does.
    /// The pipe can exist a moment before the trigger has opened it: a writer that opens it
    /// then gets ENXIO (no reader yet), so that is tried again, for a minute at most.
    func write(_ text: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var descriptor = open(path, O_WRONLY | O_NONBLOCK)
        while descriptor < 0 && errno == ENXIO && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            descriptor = open(path, O_WRONLY | O_NONBLOCK)
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Waits until the trigger has made its pipe (a minute at most: then the write fails).
    func waitForPipe() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while access(path, F_OK) != 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("passes the conformance kit: a line is an event, sync is quick, a cancelled run returns at once")
    func conformance() async throws {
        let problems = await Conformance.checkTrigger(FifoTrigger(path: path), expecting: 2) {
            try await waitForPipe()  // the trigger makes it as its run begins
            try await write("enter\ncapture\n")
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("leaves no thread and no descriptor behind across starts and stops")
    func cleansUp() async {
        let problems = await Conformance.checkTriggerCleansUp({ FifoTrigger(path: path) }, stimulate: { try await write("capture\n") })
        #expect(problems.isEmpty, "\(problems)")
    }
}
