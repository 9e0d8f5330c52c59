// swift-tools-version:6.0
// A plugin built against today's contract, for ContractGrowthTests: loaded into today's
// shutterpipe running on the contract as its next minor revision could have it
// (scripts/grow-contract: a new shutter event and a new camera-setting kind), it must
// load, and meet what it never heard of with its `@unknown default`.
import PackageDescription

let package = Package(
    name: "ShutterPipeGrowthProbe",
    products: [
        .library(name: "ShutterPipeGrowthProbe", type: .dynamic, targets: ["ShutterPipeGrowthProbe"]),
    ],
    dependencies: [
        .package(path: "../../../Plugins/SDK/ShutterPipeKit"),
    ],
    targets: [
        .target(name: "ShutterPipeGrowthProbe", dependencies: [
            .product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
        ], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
    ]
)
