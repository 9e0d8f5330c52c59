import Foundation
import TestSupport
import Testing

/// The contract's package silences warnings (library evolution warns once per file that
/// Foundation is not built with it); here they are shown, and only that one may appear.
@Suite("The contract compiles with library evolution and no warning but Foundation's", .timeLimit(.minutes(5)))
struct ContractTests {
    @Test("every warning compiling ShutterPipeKit with library evolution is the one about Foundation")
    func onlyFoundationWarns() async throws {
        let folder = "\(repositoryRoot)/Plugins/SDK/ShutterPipeKit/Sources/ShutterPipeKit"
        let names = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
        let files = names.filter { $0.hasSuffix(".swift") }.map { "\(folder)/\($0)" }
        #expect(files.count > 20)
        let check = try await runProgram(["swiftc", "-typecheck", "-parse-as-library", "-enable-library-evolution", "-swift-version", "6",
                                          "-module-name", "ShutterPipeKit"] + files, timeout: .seconds(240))
        #expect(check.status == 0, "\(check.errors.suffix(3000))")
        let warnings = (check.text + check.errors).split(separator: "\n").filter { $0.contains(": warning: ") }
        #expect(!warnings.isEmpty, "library evolution no longer warns about Foundation: drop -suppress-warnings from the contract's package")
        let others = warnings.filter { !$0.contains("module 'Foundation' was not compiled with library evolution support") }
        #expect(others.isEmpty, "\(others.joined(separator: "\n"))")
    }
}
