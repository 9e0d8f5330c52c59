// swift-tools-version:6.0
// An example third-party shutterpipe plugin: a sink that keeps a SHA-256 manifest of the
// session. Built outside shutterpipe's own package, against the SDK by path, and loaded
// at run time:  swift build  then  shutterpipe run --plugin-path .build/debug/libShutterPipeManifest.so
import PackageDescription

let package = Package(
    name: "ShutterPipeManifest",
    products: [
        // A plugin is a dynamic library; shutterpipe dlopens it.
        .library(name: "ShutterPipeManifest", type: .dynamic, targets: ["ShutterPipeManifest"]),
    ],
    dependencies: [
        // The contract: one dynamic library that shutterpipe and every plugin share.
        .package(path: "../../SDK/ShutterPipeKit"),
        // Helpers (ShutterPipeSupport, linked into the plugin) and the conformance kit.
        .package(path: "../../SDK"),
    ],
    targets: [
        // Depend on the contract's product (the shared dynamic library), never on its target.
        .target(name: "ShutterPipeManifest", dependencies: [
            .product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
            .product(name: "ShutterPipeSupport", package: "SDK"),
        ], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
        // The SDK's conformance kit checks the sink against the coordinator's contracts.
        .testTarget(name: "ShutterPipeManifestTests", dependencies: [
            "ShutterPipeManifest", .product(name: "ShutterPipeConformance", package: "SDK"),
            .product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
        ], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
    ]
)
