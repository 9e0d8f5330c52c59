// swift-tools-version:6.0
// The shutterpipe SDK: everything a plugin author, the host and the tests build on.
//
// - ShutterPipeKit (the nested package ShutterPipeKit/): the contract, a dynamic library,
//   the plugin ABI. Every product here links it as a product, never as a target: SwiftPM
//   links a target of the same package statically into each product that uses it, which
//   would give the process two copies of every contract type.
// - ShutterPipeSupport: helpers any plugin may use (blocking queue, deadlines, POSIX I/O,
//   processes, `map:` and `feedback:`). Static: each plugin carries its own copy, so it is
//   not part of the ABI, and its types never cross from a plugin to the host.
// - ShutterPipeImaging: what a photo is made of, in one room: a JPEG's segments, EXIF and
//   TIFF blocks, XMP read and written, the previews a file carries, and decoding and
//   encoding through libjpeg-turbo, LibRaw, libheif, libtiff, zlib and libexif (their
//   system library targets are here too). Static, like the helpers. The files sink, the
//   catalogue, the web page and the camera worker all use it; a third-party plugin may.
// - ShutterPipeConformance: the contract checks plugin authors run in their tests.
// - ShutterPipeFixtures: synthetic JPEGs and a seeded generator, for tests and stubs.
import PackageDescription

let kit: Target.Dependency = .product(name: "ShutterPipeKit", package: "ShutterPipeKit")
/// Warnings are errors in the SDK as in the host.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "ShutterPipeSDK",
    products: [
        .library(name: "ShutterPipeSupport", targets: ["ShutterPipeSupport"]),
        .library(name: "ShutterPipeImaging", targets: ["ShutterPipeImaging"]),
        .library(name: "ShutterPipeConformance", targets: ["ShutterPipeConformance"]),
        .library(name: "ShutterPipeFixtures", targets: ["ShutterPipeFixtures"]),
    ],
    dependencies: [
        .package(path: "ShutterPipeKit"),
    ],
    targets: [
        .target(name: "CShutterPipeSupport", path: "Sources/CShutterPipeSupport"),
        .target(name: "ShutterPipeSupport", dependencies: [kit, "CShutterPipeSupport"], path: "Sources/ShutterPipeSupport", swiftSettings: strict),
        // The C libraries of the imaging module: system library targets on Debian's -dev packages.
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CExif", path: "Sources/CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        // No pkgConfig: libraw_r.pc asks for -fopenmp, which SwiftPM refuses; the headers are in
        // the default paths, and the library is loaded when needed (CImageLibraries).
        .systemLibrary(name: "CLibRaw", path: "Sources/CLibRaw", providers: [.apt(["libraw-dev"])]),
        // libheif, LibRaw and libtiff are declared here and linked by nothing: CImageLibraries
        // loads each the first time a photo needs it (no pkgConfig, whose flags would link it).
        .systemLibrary(name: "CHeif", path: "Sources/CHeif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CTIFF", path: "Sources/CTIFF", providers: [.apt(["libtiff-dev"])]),
        .target(name: "CImageLibraries", path: "Sources/CImageLibraries"),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "ShutterPipeImaging", dependencies: [kit, "ShutterPipeSupport", "CTurboJPEG", "CExif", "CLibRaw", "CHeif", "CTIFF", "CZlib", "CImageLibraries"],
                path: "Sources/ShutterPipeImaging", swiftSettings: strict),
        .target(name: "ShutterPipeFixtures", path: "Sources/ShutterPipeFixtures", swiftSettings: strict),
        .target(name: "ShutterPipeConformance", dependencies: [kit, "ShutterPipeSupport", "ShutterPipeFixtures"],
                path: "Sources/ShutterPipeConformance", swiftSettings: strict),
    ]
)
