#if canImport(Glibc)
import Glibc
#endif
import ShutterPipeApp

exit(await ShutterPipeCLI.main(Array(CommandLine.arguments.dropFirst())))
