// Runs the SDK conformance kit against the gphoto2 backend in a process of its own.
//
// libgphoto2 keeps its PTP/IP GUID in $HOME/.gphoto/settings and reads HOME once per
// process. The test suite runs in parallel in one process, where changing HOME is a race
// with every other test; so the conformance test starts this program with the virtual
// camera's own HOME instead. Prints each problem on a line of its own; exits 1 if any.
//
//   gphoto2-conformance --port ptpip:127.0.0.1:PORT --slow-port ptpip:127.0.0.1:PORT2
import Foundation
import GPhoto2Backend
import ShutterPipeConformance
import ShutterPipeKit
import ShutterPipeSupport

// As the shutterpipe host does: libgphoto2 writes to camera sockets that may be gone.
signal(SIGPIPE, SIG_IGN)

var arguments = CommandLine.arguments.dropFirst()
var port: String?, slowPort: String?
while let argument = arguments.popFirst() {
    switch argument {
    case "--port": port = arguments.popFirst()
    case "--slow-port": slowPort = arguments.popFirst()
    default:
        Console.standardError.printLine("gphoto2-conformance: unknown argument '\(argument)'")
        exit(2)
    }
}
guard let port else {
    Console.standardError.printLine("usage: gphoto2-conformance --port PORT [--slow-port PORT]")
    exit(2)
}

func backend(on port: String) -> GPhoto2Backend {
    var options = GPhoto2Backend.Options()
    options.port = port
    return GPhoto2Backend(options: options)
}

let problems = await Conformance.checkBackend(backend(on: port), slow: slowPort.map(backend(on:)))
for problem in problems { print(problem) }
print(problems.isEmpty ? "conformant" : "\(problems.count) problem(s)")
exit(problems.isEmpty ? 0 : 1)
