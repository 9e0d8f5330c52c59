import Foundation
import Testing
import TestSupport

func output(of arguments: [String]) async throws -> String {
    let result = try await runProgram(arguments)
    #expect(result.status == 0, "\(arguments) failed")
    return result.text
}

@Suite("One copy of the core", .timeLimit(.minutes(2)))
struct SingleCoreTests {
    @Test("the executable links libShutterPipeKit.so and defines none of the core's symbols")
    func coreIsShared() async throws {
        let needed = try await output(of: ["readelf", "-d", shutterpipeBinary])
        #expect(needed.contains("[libShutterPipeKit.so]"))
        let defined = try await output(of: ["nm", "--defined-only", shutterpipeBinary])
        let coreSymbols = defined.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && ["T", "D", "R"].contains(fields[1]) && fields[2].hasPrefix("$s14ShutterPipeKit")
        }
        #expect(coreSymbols.isEmpty, "the executable carries its own copy of the core: \(coreSymbols.prefix(5))")
        // The check can fail: the shared library does define them.
        let library = URL(fileURLWithPath: shutterpipeBinary).deletingLastPathComponent().appendingPathComponent("libShutterPipeKit.so").path
        #expect(try await output(of: ["nm", "--defined-only", library]).contains(" T $s14ShutterPipeKit"))
    }
}
