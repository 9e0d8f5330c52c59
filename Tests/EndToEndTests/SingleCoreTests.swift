import Foundation
import Testing
import TestSupport

func output(of arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(arguments) failed")
    return String(decoding: data, as: UTF8.self)
}

@Suite("One copy of the core")
struct SingleCoreTests {
    @Test("the executable links libShutterPipeKit.so and defines none of the core's symbols")
    func coreIsShared() throws {
        let needed = try output(of: ["readelf", "-d", shutterpipeBinary])
        #expect(needed.contains("[libShutterPipeKit.so]"))
        let defined = try output(of: ["nm", "--defined-only", shutterpipeBinary])
        let coreSymbols = defined.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && ["T", "D", "R"].contains(fields[1]) && fields[2].hasPrefix("$s14ShutterPipeKit")
        }
        #expect(coreSymbols.isEmpty, "the executable carries its own copy of the core: \(coreSymbols.prefix(5))")
        // The check can fail: the shared library does define them.
        let library = URL(fileURLWithPath: shutterpipeBinary).deletingLastPathComponent().appendingPathComponent("libShutterPipeKit.so").path
        #expect(try output(of: ["nm", "--defined-only", library]).contains(" T $s14ShutterPipeKit"))
    }
}
