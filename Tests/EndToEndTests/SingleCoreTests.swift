import Foundation
import TestSupport
import Testing

func output(of arguments: [String]) async throws -> String {
    let result = try await runProgram(arguments)
    #expect(result.status == 0, "\(arguments) failed")
    return result.text
}

/// The Swift functions and data a binary defines itself (text, data, read-only, bss):
/// each symbol, mangled and demangled.
func definedSymbols(_ binary: String) async throws -> [(mangled: String, demangled: String)] {
    let listing = try await output(of: ["nm", "--defined-only", "--demangle=none", binary])
    let mangled = try await offThePool {  // tens of thousands of lines
        listing.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count == 3 && ["T", "D", "R", "B"].contains(fields[1]) && fields[2].hasPrefix("$s") ? String(fields[2]) : nil
        }
    }
    let folder = TemporaryDirectory("symbols")
    try mangled.joined(separator: "\n").writeTestFile(folder.file("mangled"))
    let text = try await output(of: ["sh", "-c", "swift demangle --compact < \(folder.file("mangled"))"])
    let demangled = try await offThePool { text.split(separator: "\n").map(String.init) }
    #expect(demangled.count == mangled.count)
    return Array(zip(mangled, demangled))
}

/// Whether a symbol belongs to a declaration of the ShutterPipeKit module itself. Helpers
/// that extend its types ("(extension in ShutterPipeSupport):ShutterPipeKit.Console…") are
/// mangled under its name too, but belong to the helpers.
func ownedByKit(_ symbol: (mangled: String, demangled: String)) -> Bool {
    symbol.mangled.hasPrefix("$s14ShutterPipeKit") && !symbol.demangled.contains("(extension in ")
}

@Suite("One copy of the core", .timeLimit(.minutes(2)))
struct SingleCoreTests {
    @Test("the executable links libShutterPipeKit.so and defines none of the contract's symbols")
    func coreIsShared() async throws {
        let binary = try shutterpipeBinary()
        let needed = try await output(of: ["readelf", "-d", binary])
        #expect(needed.contains("[libShutterPipeKit.so]"))
        let copied = try await definedSymbols(binary).filter(ownedByKit).map(\.demangled)
        #expect(copied.isEmpty, "the executable carries its own copy of the contract: \(copied.prefix(5))")
        // The check can fail: the shared library does define them.
        let library = URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("libShutterPipeKit.so").path
        #expect(try await definedSymbols(library).contains(where: ownedByKit))
    }

    @Test("the session process loads no camera driver: libgphoto2 is linked by the camera worker only")
    func noCameraDriverInTheHost() async throws {
        let host = try await output(of: ["readelf", "-d", try shutterpipeBinary()])
        #expect(!host.contains("libgphoto2"), "shutterpipe links libgphoto2")
        let worker = try await output(of: ["readelf", "-d", try builtExecutable("shutterpipe-camera-worker")])
        #expect(worker.contains("[libgphoto2.so"))  // the check reads the right thing
    }

    @Test("libShutterPipeKit.so is the contract only: no coordinator, no pipeline assembly, no helpers")
    func contractOnly() async throws {
        let library = URL(fileURLWithPath: try shutterpipeBinary()).deletingLastPathComponent().appendingPathComponent("libShutterPipeKit.so").path
        let symbols = try await definedSymbols(library)
        #expect(symbols.count > 100)  // the check reads real symbols
        for forbidden in ["ShutterCoordinator", "ShutterPipeRuntime", "ShutterPipeSupport", "BlockingQueue", "withDeadline",
                          "SyntheticJPEG", "PipelineConfig", "CoordinatorSettings", "StateCommands", "EventMap"] {
            let found = symbols.filter { $0.demangled.contains(forbidden) }.map(\.demangled)
            #expect(found.isEmpty, "libShutterPipeKit.so defines \(forbidden): \(found.prefix(3))")
        }
        // The executable has them instead: the check looks in the right place.
        #expect(try await definedSymbols(try shutterpipeBinary()).contains { $0.demangled.contains("ShutterCoordinator") })
    }
}
