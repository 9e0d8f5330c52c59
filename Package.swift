// swift-tools-version:6.0
// shutterpipe: tethered studio photography on Linux.
//
// Layout (see docs/architecture.md):
// - Plugins/SDK       the SDK. Its nested package ShutterPipeKit is the plugin contract, a
//                     dynamic library that everything here links as a product, never as a
//                     target, so the process holds one copy. The SDK package itself has
//                     the helpers (ShutterPipeSupport), the runtime (ShutterPipeRuntime:
//                     the coordinator), the conformance kit and the test fixtures.
// - Plugins/<Name>    one built-in plugin per folder: Sources, Tests, README.md,
//                     example.yaml.
// - Sources/C*        C libraries as system library targets.
// - Sources/ShutterPipeCatalogue  the session catalogue: SQLite, sidecar ratings, the
//                     recorder the host adds to every pipeline.
// - Sources/ShutterPipeApp  the host: config loading, CLI, logging, built-in registry.
// - Sources/shutterpipe     the executable.
import PackageDescription

let kit: Target.Dependency = .product(name: "ShutterPipeKit", package: "ShutterPipeKit")
let support: Target.Dependency = .product(name: "ShutterPipeSupport", package: "SDK")
let runtime: Target.Dependency = .product(name: "ShutterPipeRuntime", package: "SDK")
let fixtures: Target.Dependency = .product(name: "ShutterPipeFixtures", package: "SDK")
let conformance: Target.Dependency = .product(name: "ShutterPipeConformance", package: "SDK")

let package = Package(
    name: "shutterpipe",
    products: [
        .executable(name: "shutterpipe", targets: ["shutterpipe"]),
        .executable(name: "shutterpipe-fakecam", targets: ["shutterpipe-fakecam"]),
        .executable(name: "shutterpipe-camera-worker", targets: ["shutterpipe-camera-worker"]),
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
        .systemLibrary(name: "CExif", path: "Sources/CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig: libraw_r.pc asks for -fopenmp, which SwiftPM refuses; the headers and the
        // library are in the default paths.
        .systemLibrary(name: "CLibRaw", path: "Sources/CLibRaw", providers: [.apt(["libraw-dev"])]),
        .systemLibrary(name: "CHeif", path: "Sources/CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CTIFF", path: "Sources/CTIFF", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // Built-in plugins: the contract and the helpers, like any third-party plugin.
        .target(name: "FileStubBackend", dependencies: [kit, support, fixtures], path: "Plugins/FileStub/Sources"),
        .target(name: "StdinTrigger", dependencies: [kit, support], path: "Plugins/Stdin/Sources"),
        .target(name: "SocketTrigger", dependencies: [kit, support], path: "Plugins/Socket/Sources"),
        .target(name: "EvdevTrigger", dependencies: [kit, support, "CLinux"], path: "Plugins/Evdev/Sources"),
        .target(name: "MPRISTrigger", dependencies: [kit, support, "CDBus"], path: "Plugins/MPRIS/Sources"),
        // The gphoto2 backend (in the host: no libgphoto2), and its camera worker, the only
        // process that loads libgphoto2 (the library, then the executable around it).
        .target(name: "GPhoto2Backend", dependencies: [kit, support], path: "Plugins/GPhoto2/Sources"),
        // The worker's confinement (no_new_privs, capabilities, user, Landlock, a seccomp
        // filter), applied before libgphoto2 loads.
        .target(name: "CWorkerConfinement", path: "Plugins/GPhoto2/Confinement", linkerSettings: [.linkedLibrary("seccomp")]),
        .target(name: "GPhoto2Camera", dependencies: [kit, support, "CGPhoto2", "CWorkerConfinement", "GPhoto2Backend"], path: "Plugins/GPhoto2/Camera"),
        .executableTarget(name: "shutterpipe-camera-worker", dependencies: ["GPhoto2Camera"], path: "Plugins/GPhoto2/Worker"),
        .target(name: "CommandSink", dependencies: [kit, support], path: "Plugins/Command/Sources"),
        .target(name: "FilesSink", dependencies: [kit, support, "CLinux", "CExif", "CCrypto"], path: "Plugins/Files/Sources"),
        // The hotfolder backend: files other programs write into a folder, through inotify.
        .target(name: "HotFolderBackend", dependencies: [kit, support], path: "Plugins/HotFolder/Sources"),
        // The upload sink: rclone as a child process, from a durable queue.
        .target(name: "UploadSink", dependencies: [kit, support], path: "Plugins/Upload/Sources"),
        // The web trigger: libmicrohttpd (through a small C part for its variadic calls),
        // libturbojpeg, and LibRaw and libheif for the previews of RAW and HEIF photos.
        .target(name: "CWebServer", path: "Plugins/Web/CWebServer", linkerSettings: [.linkedLibrary("microhttpd")]),
        .target(name: "WebTrigger", dependencies: [kit, support, "CWebServer", "CTurboJPEG", "CLibRaw", "CHeif", "CTIFF", "CZlib"], path: "Plugins/Web/Sources"),
        // The mqtt trigger (a node of a rig) and the rig command, on libmosquitto.
        .target(name: "MQTTTrigger", dependencies: [kit, support, "CMosquitto", "CCrypto"], path: "Plugins/MQTT/Sources"),

        // Host
        // The session catalogue (SQLite), ratings in sidecars, and the recorder that fills it.
        .target(name: "ShutterPipeCatalogue", dependencies: [kit, support, "CSQLite", "CCrypto", "CExif", "CLibRaw", "CHeif"], path: "Sources/ShutterPipeCatalogue"),
        .target(name: "ShutterPipeApp", dependencies: [kit, support, runtime, "CYAML", "FileStubBackend", "StdinTrigger", "SocketTrigger",
                                                       "EvdevTrigger", "MPRISTrigger", "FilesSink", "CommandSink", "GPhoto2Backend", "WebTrigger", "MQTTTrigger",
                                                       "UploadSink", "HotFolderBackend", "ShutterPipeCatalogue"],
                path: "Sources/ShutterPipeApp"),
        .executableTarget(name: "shutterpipe", dependencies: ["ShutterPipeApp", "CLinux"], path: "Sources/shutterpipe"),
        .executableTarget(name: "shutterpipe-fakecam", dependencies: [kit, support, fixtures], path: "Sources/shutterpipe-fakecam"),

        // Tests
        // The helpers every test uses; their C part kills a test's children when the test
        // process is interrupted or exits.
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        .target(name: "TestSupport", dependencies: [kit, support, runtime, fixtures, "CLinux", "CTestSupport"], path: "Tests/TestSupport"),
        // The kit against libgphoto2 in a process of its own (libgphoto2 reads HOME once).
        .executableTarget(name: "gphoto2-conformance", dependencies: [kit, support, conformance, "GPhoto2Backend"],
                          path: "Tests/GPhoto2ConformanceRunner"),
        .testTarget(name: "ConformanceTests", dependencies: [kit, support, conformance, fixtures, "TestSupport",
                                                             "FilesSink", "CommandSink", "FileStubBackend", "StdinTrigger",
                                                             "SocketTrigger", "EvdevTrigger", "MPRISTrigger",
                                                             "gphoto2-conformance", "shutterpipe-fakecam", "shutterpipe-camera-worker"],
                    path: "Tests/ConformanceTests"),
        .testTarget(name: "ShutterPipeSupportTests", dependencies: [kit, support, "TestSupport"], path: "Tests/ShutterPipeSupportTests"),
        .testTarget(name: "ShutterPipeRuntimeTests", dependencies: [kit, support, runtime, "TestSupport"], path: "Tests/ShutterPipeRuntimeTests"),
        .testTarget(name: "ShutterPipeAppTests", dependencies: [kit, support, runtime, "ShutterPipeApp", "TestSupport"], path: "Tests/ShutterPipeAppTests"),
        // Fault injection, fuzzing and long sessions (docs/reliability.md); full counts: scripts/chaos.
        .testTarget(name: "ReliabilityTests", dependencies: [kit, support, runtime, fixtures, "CLinux", "ShutterPipeApp", "FilesSink", "EvdevTrigger",
                                                             "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker", "TestSupport"],
                    path: "Tests/ReliabilityTests"),
        .testTarget(name: "EndToEndTests", dependencies: [kit, support, "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker", "TestSupport"],
                    path: "Tests/EndToEndTests"),
        .testTarget(name: "GPhoto2BackendTests", dependencies: [kit, support, fixtures, "GPhoto2Backend", "GPhoto2Camera", "CGPhoto2", "shutterpipe",
                                                                "shutterpipe-fakecam", "shutterpipe-camera-worker", "TestSupport"],
                    path: "Plugins/GPhoto2/Tests"),
        .testTarget(name: "FileStubBackendTests", dependencies: [kit, support, fixtures, "FileStubBackend", "TestSupport"], path: "Plugins/FileStub/Tests",
                    exclude: ["Fixtures"]),
        .testTarget(name: "SocketTriggerTests", dependencies: [kit, support, "SocketTrigger", "shutterpipe", "TestSupport"], path: "Plugins/Socket/Tests"),
        .testTarget(name: "WebTriggerTests", dependencies: [kit, support, fixtures, "WebTrigger", "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker",
                                                            "TestSupport"], path: "Plugins/Web/Tests"),
        .testTarget(name: "MQTTTriggerTests", dependencies: [kit, support, "MQTTTrigger", "shutterpipe", "shutterpipe-fakecam", "shutterpipe-camera-worker",
                                                            "TestSupport"], path: "Plugins/MQTT/Tests"),
        .testTarget(name: "EvdevTriggerTests", dependencies: [kit, support, "EvdevTrigger", "CLinux", "shutterpipe", "TestSupport"], path: "Plugins/Evdev/Tests"),
        .testTarget(name: "MPRISTriggerTests", dependencies: [kit, support, "MPRISTrigger", "shutterpipe", "TestSupport"], path: "Plugins/MPRIS/Tests"),
        .testTarget(name: "HotFolderBackendTests", dependencies: [kit, support, fixtures, "HotFolderBackend", "shutterpipe", "TestSupport"], path: "Plugins/HotFolder/Tests"),
        .testTarget(name: "UploadSinkTests", dependencies: [kit, support, "UploadSink", "shutterpipe", "TestSupport"], path: "Plugins/Upload/Tests"),
        .testTarget(name: "CommandSinkTests", dependencies: [kit, support, "CommandSink", "shutterpipe", "TestSupport"], path: "Plugins/Command/Tests"),
        .testTarget(name: "StdinTriggerTests", dependencies: [kit, support, "StdinTrigger", "TestSupport"], path: "Plugins/Stdin/Tests"),
        .testTarget(name: "CatalogueTests", dependencies: [kit, support, fixtures, "ShutterPipeCatalogue", "shutterpipe", "TestSupport"], path: "Tests/CatalogueTests"),
        .testTarget(name: "FilesSinkTests", dependencies: [kit, support, fixtures, "FilesSink", "TestSupport"], path: "Plugins/Files/Tests"),
    ]
)
