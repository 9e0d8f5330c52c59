// swift-tools-version:6.0
// An example third-party shutterpipe trigger: lines written into a named pipe are shutter
// events. It shows how a trigger that reads on a thread of its own stops when the session
// cancels it. Built outside shutterpipe's own package, against the SDK by path, and loaded
// at run time:  swift build  then  shutterpipe run --plugin-path .build/debug/libShutterPipeFifoTrigger.so
import PackageDescription

let package = Package(
    name: "ShutterPipeFifoTrigger",
    products: [
        // A plugin is a dynamic library; shutterpipe dlopens it.
        .library(name: "ShutterPipeFifoTrigger", type: .dynamic, targets: ["ShutterPipeFifoTrigger"]),
    ],
    dependencies: [
        // The contract: one dynamic library that shutterpipe and every plugin share.
        .package(path: "../../SDK/ShutterPipeKit"),
        // The conformance kit (and the helpers, which this example does without).
        .package(path: "../../SDK"),
    ],
    targets: [
        // Depend on the contract's product (the shared dynamic library), never on its target.
        .target(name: "ShutterPipeFifoTrigger", dependencies: [
            .product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
        ], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
        // The SDK's conformance kit checks the trigger against the coordinator's contracts.
        .testTarget(name: "ShutterPipeFifoTriggerTests", dependencies: [
            "ShutterPipeFifoTrigger", .product(name: "ShutterPipeConformance", package: "SDK"),
            .product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
        ], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
    ]
)
