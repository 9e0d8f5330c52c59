#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ShutterPipeApp

// Photos pass through in buffers of tens of MB, one after another. glibc's malloc raises
// its mmap threshold after the first such buffer is freed (dynamically, up to 32 MiB), so
// the next ones come from the heap, whose pages it keeps: resident memory then creeps up
// through a burst. A fixed threshold keeps every buffer over 1 MiB in a mapping of its
// own, given back when it is freed (docs/benchmarks.md, "A burst's memory").
_ = sp_fix_mmap_threshold(1 << 20)

let status = await ShutterPipeCLI.main(Array(CommandLine.arguments.dropFirst()))
// Everything is stored, closed and said by now. exit() would run the C and C++ libraries'
// destructors (LibRaw's, libheif's) while threads of theirs may still be winding down, and
// a run crashed there once ("double free or corruption" after "pipeline stopped"): flush
// what is buffered and leave without them.
fflush(nil)
_exit(status)
