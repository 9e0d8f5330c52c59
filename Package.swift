// swift-tools-version:6.0
// shutterpipe: tethered studio photography on Linux.
//
// Layout (see docs/architecture.md):
// - Plugins/SDK       the SDK. Its nested package ShutterPipeKit is the plugin contract, a
//                     dynamic library built with library evolution that everything here
//                     links as a product, never as a target, so the process holds one copy.
//                     The SDK package itself has the helpers (ShutterPipeSupport), the
//                     conformance kit and the test fixtures.
// - Plugins/<Name>    one built-in plugin per folder: Sources, Tests, README.md,
//                     example.yaml; listed once, in `builtInPlugins` below.
// - Sources/ShutterPipeRuntime  the coordinator: the host's, out of every plugin's reach.
// - Sources/C*        C libraries as system library targets.
// - Sources/ShutterPipeCatalogue  the session catalogue: SQLite, sidecar ratings, the
//                     recorder the host adds to every pipeline.
// - Sources/ShutterPipeApp  the host: config loading, CLI, logging, built-in registry.
// - Sources/shutterpipe     the executable.
import PackageDescription

let kit: Target.Dependency = .product(name: "ShutterPipeKit", package: "ShutterPipeKit")
let support: Target.Dependency = .product(name: "ShutterPipeSupport", package: "SDK")
let imaging: Target.Dependency = .product(name: "ShutterPipeImaging", package: "SDK")
let fixtures: Target.Dependency = .product(name: "ShutterPipeFixtures", package: "SDK")
let conformance: Target.Dependency = .product(name: "ShutterPipeConformance", package: "SDK")

/// Every flag every Swift target of ours is built with: warnings are errors.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

/// A built-in plugin: its folder under Plugins/, its module, what it links besides the
/// contract and the helpers, and what its tests link besides TestSupport.
struct BuiltInPlugin {
    var folder: String
    var module: String
    var links: [Target.Dependency] = []
    var testLinks: [Target.Dependency] = []
    /// Folders under its Tests that are data, not sources.
    var testExclude: [String] = []
    /// Files under its Sources embedded in the binary at build time (the web page's).
    var resources: [Resource] = []
}

/// The built-in plugins: adding one is a folder under Plugins/ and a line here. The
/// plugin's module, its test target and its place in the host all follow from this list
/// (the host's BuiltInPlugins.swift is checked against it by ArchitectureTests).
let builtInPlugins: [BuiltInPlugin] = [
    BuiltInPlugin(folder: "FileStub", module: "FileStubBackend", links: [fixtures], testLinks: [fixtures], testExclude: ["Fixtures"]),
    BuiltInPlugin(folder: "Stdin", module: "StdinTrigger"),
    BuiltInPlugin(folder: "Socket", module: "SocketTrigger", testLinks: ["shutterpipe"]),
    BuiltInPlugin(folder: "Evdev", module: "EvdevTrigger", links: ["CLinux"], testLinks: ["CLinux", "shutterpipe"]),
    BuiltInPlugin(folder: "MPRIS", module: "MPRISTrigger", links: ["CDBus"], testLinks: ["shutterpipe"]),
    // The gphoto2 backend's host side: no libgphoto2 (that is in its camera worker).
    BuiltInPlugin(folder: "GPhoto2", module: "GPhoto2Backend", links: [imaging],
                  testLinks: [fixtures, "GPhoto2Camera", "CGPhoto2", "CStreamDecoder", "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker"]),
    BuiltInPlugin(folder: "Command", module: "CommandSink", testLinks: ["shutterpipe"]),
    BuiltInPlugin(folder: "Files", module: "FilesSink", links: ["CLinux", imaging, "CCrypto"], testLinks: [fixtures, "shutterpipe"]),
    // Files other programs write into a folder, through inotify.
    BuiltInPlugin(folder: "HotFolder", module: "HotFolderBackend", testLinks: [fixtures, "shutterpipe"]),
    // rclone as a child process, from a durable queue.
    BuiltInPlugin(folder: "Upload", module: "UploadSink", testLinks: ["shutterpipe"]),
    // libmicrohttpd, libturbojpeg, and LibRaw and libheif for the previews of RAW and HEIF.
    // Its page is real files (Sources/Page), embedded in the binary at build time.
    BuiltInPlugin(folder: "Web", module: "WebTrigger", links: ["CWebServer", "CRegionDecoder", imaging],
                  testLinks: [fixtures, "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker"],
                  resources: ["index.html", "page.css", "script.js", "grid.js", "viewer.js", "loupe.js", "live.js", "camera-controls.js", "start.js"]
                      .map { .embedInCode("Page/\($0)") }),
    // A node of a rig, and the rig command, on libmosquitto.
    BuiltInPlugin(folder: "MQTT", module: "MQTTTrigger", links: ["CMosquitto", "CCrypto"],
                  testLinks: ["shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker"]),
]

let pluginModules: [Target.Dependency] = builtInPlugins.map { .target(name: $0.module) }

let package = Package(
    name: "shutterpipe",
    products: [
        .executable(name: "shutterpipe", targets: ["shutterpipe"]),
        .executable(name: "shutterpipe-fakecam", targets: ["shutterpipe-fakecam"]),
        .executable(name: "shutterpipe-camera-worker", targets: ["shutterpipe-camera-worker"]),
        // The sample step program of a spin: a turntable on a serial line.
        .executable(name: "shutterpipe-turntable", targets: ["shutterpipe-turntable"]),
    ],
    dependencies: [
        .package(path: "Plugins/SDK/ShutterPipeKit"),
        .package(path: "Plugins/SDK"),
    ],
    targets: [
        // C libraries
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CGPhoto2", path: "Sources/CGPhoto2", pkgConfig: "libgphoto2", providers: [.apt(["libgphoto2-dev"])]),
        .systemLibrary(name: "CDBus", path: "Sources/CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // Built-in plugins come from `builtInPlugins` below; the gphoto2 plugin's worker side
        // (libgphoto2 is loaded only there) and the web plugin's C part are here.
        // The worker's confinement (no_new_privs, capabilities, user, Landlock, a seccomp
        // filter), applied before libgphoto2 loads.
        .target(name: "CWorkerConfinement", path: "Plugins/GPhoto2/Confinement", linkerSettings: [.linkedLibrary("seccomp")]),
        // A JPEG decoded while its bytes arrive, in the camera worker (libjpeg-turbo's libjpeg).
        .target(name: "CStreamDecoder", path: "Plugins/GPhoto2/StreamDecoder", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "GPhoto2Camera", dependencies: [kit, support, imaging, "CGPhoto2", "CWorkerConfinement", "CStreamDecoder", "GPhoto2Backend"], path: "Plugins/GPhoto2/Camera",
                swiftSettings: strict),
        .executableTarget(name: "shutterpipe-camera-worker", dependencies: ["GPhoto2Camera"], path: "Plugins/GPhoto2/Worker", swiftSettings: strict),
        // libmicrohttpd's variadic calls, wrapped in C for the web plugin; the library is opened
        // when a server starts, not linked (microhttpd_loader.c).
        .target(name: "CWebServer", path: "Plugins/Web/CWebServer"),
        // A rectangle of a JPEG decoded alone (libjpeg's crop and skip), for the web plugin's 100 % tiles.
        .target(name: "CRegionDecoder", path: "Plugins/Web/CRegionDecoder", linkerSettings: [.linkedLibrary("jpeg")]),

        // Host
        // The runtime: the coordinator, pipeline assembly, ingress and the answer log. The
        // host's alone: no SDK product carries it, so a plugin cannot import it.
        .target(name: "ShutterPipeRuntime", dependencies: [kit, support], path: "Sources/ShutterPipeRuntime", swiftSettings: strict),
        // The session catalogue (SQLite), ratings in sidecars, and the recorder that fills it.
        .target(name: "ShutterPipeCatalogue", dependencies: [kit, support, imaging, "CSQLite", "CCrypto"], path: "Sources/ShutterPipeCatalogue",
                swiftSettings: strict),
        .target(name: "ShutterPipeApp", dependencies: [kit, support, "ShutterPipeRuntime", "CYAML", "ShutterPipeCatalogue"] + pluginModules,
                path: "Sources/ShutterPipeApp", swiftSettings: strict),
        .executableTarget(name: "shutterpipe", dependencies: ["ShutterPipeApp", "CLinux"], path: "Sources/shutterpipe", swiftSettings: strict),
        .executableTarget(name: "shutterpipe-fakecam", dependencies: [kit, support, "ShutterPipeRuntime", fixtures], path: "Sources/shutterpipe-fakecam", swiftSettings: strict),
        // A sample for those who adapt it to their table: Glibc alone, no SDK.
        .executableTarget(name: "shutterpipe-turntable", path: "Plugins/Examples/SerialTurntable/Sources", swiftSettings: strict),

        // Tests
        // The helpers every test uses; their C part kills a test's children when the test
        // process is interrupted or exits.
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        .target(name: "TestSupport", dependencies: [kit, support, "ShutterPipeRuntime", fixtures, "CLinux", "CTestSupport"], path: "Tests/TestSupport",
                swiftSettings: strict),
        // The kit against libgphoto2 in a process of its own (libgphoto2 reads HOME once).
        .executableTarget(name: "gphoto2-conformance", dependencies: [kit, support, conformance, "GPhoto2Backend"],
                          path: "Tests/GPhoto2ConformanceRunner", swiftSettings: strict),
        .testTarget(name: "ConformanceTests", dependencies: [kit, support, conformance, fixtures, "TestSupport", "ShutterPipeApp",
                                                             "gphoto2-conformance", "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker"] + pluginModules,
                    path: "Tests/ConformanceTests", swiftSettings: strict),
        .testTarget(name: "ShutterPipeSupportTests", dependencies: [kit, support, imaging, "TestSupport"], path: "Tests/ShutterPipeSupportTests", swiftSettings: strict),
        .testTarget(name: "ShutterPipeImagingTests", dependencies: [kit, support, imaging, fixtures, "TestSupport"], path: "Tests/ShutterPipeImagingTests",
                    swiftSettings: strict),
        .testTarget(name: "ShutterPipeRuntimeTests", dependencies: [kit, support, "ShutterPipeRuntime", "TestSupport"], path: "Tests/ShutterPipeRuntimeTests",
                    swiftSettings: strict),
        .testTarget(name: "ShutterPipeAppTests", dependencies: [kit, support, "ShutterPipeRuntime", "ShutterPipeApp", "TestSupport"], path: "Tests/ShutterPipeAppTests",
                    swiftSettings: strict),
        // Fault injection, fuzzing and long sessions (docs/reliability.md); full counts: scripts/chaos.
        .testTarget(name: "ReliabilityTests", dependencies: [kit, support, "ShutterPipeRuntime", fixtures, "CLinux", "ShutterPipeApp", "FilesSink", "EvdevTrigger",
                                                             "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker", "TestSupport"],
                    path: "Tests/ReliabilityTests", swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: [kit, support, "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker", "shutterpipe-turntable", "TestSupport", "CTestSupport"],
                    path: "Tests/EndToEndTests", swiftSettings: strict),
        .testTarget(name: "CatalogueTests", dependencies: [kit, support, fixtures, "ShutterPipeCatalogue", "shutterpipe", "TestSupport"], path: "Tests/CatalogueTests",
                    swiftSettings: strict),
    ] + builtInPlugins.flatMap { plugin -> [Target] in [
        .target(name: plugin.module, dependencies: [kit, support] + plugin.links, path: "Plugins/\(plugin.folder)/Sources", resources: plugin.resources,
                swiftSettings: strict),
        .testTarget(name: "\(plugin.module)Tests", dependencies: [kit, support, .target(name: plugin.module), "TestSupport"] + plugin.testLinks,
                    path: "Plugins/\(plugin.folder)/Tests", exclude: plugin.testExclude, swiftSettings: strict),
    ] }
)
