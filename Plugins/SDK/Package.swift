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
        .library(name: "ShutterPipeConformance", targets: ["ShutterPipeConformance"]),
        .library(name: "ShutterPipeFixtures", targets: ["ShutterPipeFixtures"]),
    ],
    dependencies: [
        .package(path: "ShutterPipeKit"),
    ],
    targets: [
        .target(name: "CShutterPipeSupport", path: "Sources/CShutterPipeSupport"),
        .target(name: "ShutterPipeSupport", dependencies: [kit, "CShutterPipeSupport"], path: "Sources/ShutterPipeSupport", swiftSettings: strict),
        .target(name: "ShutterPipeFixtures", path: "Sources/ShutterPipeFixtures", swiftSettings: strict),
        .target(name: "ShutterPipeConformance", dependencies: [kit, "ShutterPipeSupport", "ShutterPipeFixtures"],
                path: "Sources/ShutterPipeConformance", swiftSettings: strict),
    ]
)
