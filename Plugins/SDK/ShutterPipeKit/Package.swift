// swift-tools-version:6.0
// ShutterPipeKit: the plugin contract, and nothing else.
//
// Its one product is a dynamic library: the shutterpipe executable, every built-in plugin
// and every runtime-loaded plugin link this one copy, so that protocol casts and the
// plugin registry are shared across the process. What it holds is the plugin ABI
// (SDKVersion.swift says what the ABI covers). Helpers, the runtime and the test kits are
// in the SDK package one folder up, which depends on this one (docs/architecture.md says
// why the contract is a package of its own).
import PackageDescription

let package = Package(
    name: "ShutterPipeKit",
    products: [
        .library(name: "ShutterPipeKit", type: .dynamic, targets: ["ShutterPipeKit"]),
    ],
    targets: [
        .target(name: "ShutterPipeKit", path: "Sources/ShutterPipeKit",
                // Library evolution: additive changes keep older plugins loading (SDKVersion.swift).
                // Its one warning is that Foundation is not built with library evolution, once
                // per file that imports it; the handshake's toolchain check covers that, so
                // warnings are silenced here and ContractTests type-checks these sources with
                // warnings shown and fails on any other.
                swiftSettings: [.unsafeFlags(["-enable-library-evolution", "-suppress-warnings"])]),
    ]
)
