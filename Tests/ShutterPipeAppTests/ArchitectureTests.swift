import Foundation
import TestSupport
import Testing

/// The layout docs/architecture.md promises, checked on the sources themselves.
@Suite("The architecture stays as documented")
struct ArchitectureTests {
    /// Every Swift file of the repository, as (path relative to the root, text).
    static let sources: [(path: String, text: String)] = {
        var found: [(String, String)] = []
        let root = URL(fileURLWithPath: repositoryRoot)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        for case let url as URL in walker {
            let relative = String(url.path.dropFirst(repositoryRoot.count + 1))
            if url.lastPathComponent == ".build" || url.lastPathComponent == ".git" { walker.skipDescendants(); continue }
            guard relative.hasSuffix(".swift"), let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            found.append((relative, text))
        }
        return found.sorted { $0.0 < $1.0 }
    }()

    /// The modules a file imports.
    static func imports(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { $0 != "@preconcurrency" && $0 != "@testable" }
            return words.count == 2 && words[0] == "import" ? String(words[1]) : nil
        })
    }

    /// The built-in plugins, from Package.swift's one list (`builtInPlugins`): folder and module.
    static let builtIns: [(folder: String, module: String)] = {
        let manifest = (try? String(contentsOfFile: "\(repositoryRoot)/Package.swift", encoding: .utf8)) ?? ""
        return manifest.matches(of: /BuiltInPlugin\(folder: "(\w+)", module: "(\w+)"/).map { (String($0.output.1), String($0.output.2)) }
    }()

    /// The built-in plugins' module names.
    static var pluginModules: Set<String> { Set(builtIns.map(\.module)) }

    @Test("no Swift file is over 300 lines without a reason written at its top (a line \"// Over 300 lines: why\" among its first five)")
    func fileLength() {
        #expect(Self.sources.count > 100)
        let long = Self.sources.map { ($0.path, $0.text.split(separator: "\n", omittingEmptySubsequences: false)) }
            .filter { $0.1.count > 300 && !$0.1.prefix(5).contains { $0.hasPrefix("// Over 300 lines: ") && $0.count > 40 } }
            .map { ($0.0, $0.1.count) }
        #expect(long.isEmpty, "split these, or say at the top why they are one file: \(long)")
    }

    @Test("Package.swift's list of built-in plugins is every plugin folder, and the host registers exactly those")
    func oneListOfPlugins() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: "\(repositoryRoot)/Plugins")
            .filter { FileManager.default.fileExists(atPath: "\(repositoryRoot)/Plugins/\($0)/Sources") && $0 != "SDK" && $0 != "Examples" }
        #expect(Set(Self.builtIns.map(\.folder)) == Set(folders))
        #expect(Self.builtIns.count == folders.count)
        let registered = Self.sources.first { $0.path == "Sources/ShutterPipeApp/BuiltInPlugins.swift" }?.text ?? ""
        #expect(Self.imports(registered).intersection(Self.pluginModules) == Self.pluginModules)
        let calls = Set(registered.matches(of: /try (\w+)\.register\(in: registry\)/).map { String($0.output.1) })
        // Each plugin's registering type is named like its module (FilesSink.register(in:)).
        #expect(calls == Self.pluginModules, "BuiltInPlugins.swift registers \(calls.sorted()), the plugins are \(Self.pluginModules.sorted())")
    }

    @Test("the host imports no plugin module outside its list of built-in plugins")
    func hostNamesNoPlugin() {
        let host = Self.sources.filter { $0.path.hasPrefix("Sources/ShutterPipeApp/") }
        for file in host where !file.path.hasSuffix("/BuiltInPlugins.swift") {
            let named = Self.imports(file.text).intersection(Self.pluginModules)
            #expect(named.isEmpty, "\(file.path) imports \(named.sorted())")
        }
    }

    @Test("a built-in plugin uses nothing a third-party plugin could not: the contract, the helpers, the imaging module, the fixtures, its own C libraries")
    func pluginsUseTheSDKOnly() {
        // The image libraries (libjpeg-turbo, libexif, LibRaw, libheif, libtiff, zlib) are
        // reached through ShutterPipeImaging only: one decoder, one EXIF reader, one of each.
        let allowed: Set<String> = ["Foundation", "Glibc", "Dispatch", "Synchronization", "ShutterPipeKit", "ShutterPipeSupport", "ShutterPipeImaging", "ShutterPipeFixtures",
                                    "CLinux", "CGPhoto2", "CDBus", "CWebServer", "CMosquitto", "CWorkerConfinement", "CStreamDecoder", "CRegionDecoder", "CCrypto"]
        let plugins = Self.sources.filter { $0.path.hasPrefix("Plugins/") && $0.path.contains("/Sources/") && !$0.path.hasPrefix("Plugins/SDK/") }
        #expect(plugins.count > 30)
        for file in plugins {
            let extra = Self.imports(file.text).subtracting(allowed)
            #expect(extra.isEmpty, "\(file.path) imports \(extra.sorted())")
        }
        // The gphoto2 plugin's worker side (its library and executable) adds only the
        // plugin's own modules; its host side (Sources) must not load libgphoto2.
        let worker = Self.sources.filter { $0.path.hasPrefix("Plugins/GPhoto2/Camera/") || $0.path.hasPrefix("Plugins/GPhoto2/Worker/") }
        #expect(worker.count >= 5)
        for file in worker {
            let extra = Self.imports(file.text).subtracting(allowed.union(["GPhoto2Backend", "GPhoto2Camera"]))
            #expect(extra.isEmpty, "\(file.path) imports \(extra.sorted())")
        }
        let host = Self.sources.filter { $0.path.hasPrefix("Plugins/GPhoto2/Sources/") }
        #expect(host.allSatisfy { !Self.imports($0.text).contains("CGPhoto2") }, "the gphoto2 backend's host side imports libgphoto2")
    }

    /// The stored globals of a Swift source: top-level stored `let`/`var`, a stored
    /// `static var`, a `static let` holding a lock, an atomic, a queue or a thread, and
    /// anything `nonisolated(unsafe)`.
    static func storedGlobals(_ text: String) -> [String] {
        let stateful = ["Mutex(", "Atomic", "NSLock", "NSCondition", "NSRecursiveLock", "DispatchSemaphore", "DispatchQueue(", "BlockingQueue(", "OwnedThread",
                        "NSCache", "UnsafeMutable"]
        return text.split(separator: "\n").map(String.init).filter { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            if code.contains("nonisolated(unsafe)") { return true }
            if code.firstMatch(of: #/^(public |private |fileprivate |internal |package )?(let|var) /#) != nil { return true }
            if trimmed.firstMatch(of: #/^(public |private |fileprivate |internal |package )?static var \w+\s*(:[^={]*)?(=|$)/#) != nil { return true }
            if trimmed.firstMatch(of: #/^(public |private |fileprivate |internal |package )?static let /#) != nil, stateful.contains(where: { code.contains($0) }) { return true }
            return false
        }
    }

    @Test("the helpers hold no stored global: each plugin links its own copy, so shared state there would exist once per plugin")
    func supportHoldsNoGlobals() {
        let support = Self.sources.filter { $0.path.hasPrefix("Plugins/SDK/Sources/ShutterPipeSupport/") || $0.path.hasPrefix("Plugins/SDK/Sources/ShutterPipeImaging/") }
        #expect(support.count > 30)
        for file in support {
            #expect(Self.storedGlobals(file.text).isEmpty, "\(file.path): \(Self.storedGlobals(file.text))")
        }
        // The check itself catches each shape.
        for shape in ["let cache = [String: Int]()", "public var counter = 0", "    static var hits = 0", "    static var hits: Int = 0",
                      "    private static let lock = Mutex(0)", "nonisolated(unsafe) var x = 1"] {
            #expect(!Self.storedGlobals(shape).isEmpty, "\(shape)")
        }
        for shape in ["    static let limit = 64", "    public static var defaultPath: String {", "    let local = 1"] {
            #expect(Self.storedGlobals(shape).isEmpty, "\(shape)")
        }
    }

    @Test("the contract imports no helper, no runtime and no C library")
    func contractStandsAlone() {
        let contract = Self.sources.filter { $0.path.hasPrefix("Plugins/SDK/ShutterPipeKit/Sources/") }
        #expect(contract.count > 10)
        for file in contract {
            let extra = Self.imports(file.text).subtracting(["Foundation", "Synchronization"])
            #expect(extra.isEmpty, "\(file.path) imports \(extra.sorted())")
        }
    }

    @Test("the helpers, the runtime and the fixtures import only what docs/architecture.md allows them", arguments: [
        ("Plugins/SDK/Sources/ShutterPipeSupport/", ["ShutterPipeKit", "CShutterPipeSupport"]),
        ("Plugins/SDK/Sources/ShutterPipeImaging/", ["ShutterPipeKit", "ShutterPipeSupport", "CTurboJPEG", "CExif", "CLibRaw", "CHeif", "CTIFF", "CZlib", "CImageLibraries"]),
        // The catalogue reads photos through the imaging module, never a C image library itself.
        ("Sources/ShutterPipeCatalogue/", ["ShutterPipeKit", "ShutterPipeSupport", "ShutterPipeImaging", "CSQLite", "CCrypto"]),
        ("Sources/ShutterPipeRuntime/", ["ShutterPipeKit", "ShutterPipeSupport"]),
        ("Plugins/SDK/Sources/ShutterPipeFixtures/", []),
        ("Plugins/SDK/Sources/ShutterPipeConformance/", ["ShutterPipeKit", "ShutterPipeSupport", "ShutterPipeFixtures"]),
    ])
    func sdkLayers(folder: String, ours: [String]) {
        let files = Self.sources.filter { $0.path.hasPrefix(folder) }
        #expect(!files.isEmpty)
        let allowed = Set(ours + ["Foundation", "Glibc", "Dispatch", "Synchronization"])
        for file in files {
            let extra = Self.imports(file.text).subtracting(allowed)
            #expect(extra.isEmpty, "\(file.path) imports \(extra.sorted())")
        }
    }

    @Test("tests write and copy their files through TestSupport's writeTestFile and copyTestFile, never Foundation's writers, which fsync on Linux and held a pool thread for seconds on a busy disk")
    func testsWriteWithoutFsync() {
        let tests = Self.sources.filter { ($0.path.hasPrefix("Tests/") || $0.path.contains("/Tests/")) && !$0.path.hasPrefix("Tests/Fixtures/") }
        #expect(tests.count > 50)
        // Spelled in two halves, so that this file does not match itself.
        let writers = [".write(" + "to:", "write(" + "toFile:", "copyItem(" + "atPath:", "createFile(" + "atPath:"]
        let found = tests.filter { $0.path != "Tests/TestSupport/TestFiles.swift" }.flatMap { file in
            file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { line in writers.contains { line.element.contains($0) } }.map { "\(file.path):\($0.offset + 1)" }
        }
        #expect(found.isEmpty, "use writeTestFile / copyTestFile (Tests/TestSupport/TestFiles.swift): \(found)")
    }
}
