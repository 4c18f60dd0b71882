// swift-tools-version: 6.0
//
// CameraControl: an open Camera Control for any camera host.
//
// Targets, one job each, with arrows pointing down only: the one diagram of them is in docs/DESIGN.md, and
// scripts/check-deps fails when it and the dependencies declared below disagree (or when a target imports
// what it does not declare).
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let firmwareCSettings: [CSetting] = [
    .define("CC_HOST_BUILD", to: "1")
]

let package = Package(
    name: "CameraControl",
    products: [
        .executable(name: "camctl", targets: ["camctl"]),
        .executable(name: "camctl-sim", targets: ["camctl-sim"]),
        .executable(name: "camctl-bench", targets: ["camctl-bench"]),
        .executable(name: "camera-app", targets: ["camera-app"]),
        .library(name: "CameraControlWire", targets: ["CameraControlWire"]),
        .library(name: "CameraControlTransport", targets: ["CameraControlTransport"]),
        .library(name: "CameraControlPosixTransport", targets: ["CameraControlPosixTransport"]),
        .library(name: "CameraControlSerialTransport", targets: ["CameraControlSerialTransport"]),
        .library(name: "CameraControlRPC", targets: ["CameraControlRPC"]),
        .library(name: "CameraControlDevice", targets: ["CameraControlDevice"]),
        .library(name: "CameraControlGestures", targets: ["CameraControlGestures"]),
        .library(name: "CameraControlCapture", targets: ["CameraControlCapture"]),
        .library(name: "CameraControlControls", targets: ["CameraControlControls"]),
        .library(name: "CameraControlHost", targets: ["CameraControlHost"]),
        .library(name: "CameraControlPorts", targets: ["CameraControlPorts"]),
        .library(name: "CameraControlGStreamer", targets: ["CameraControlGStreamer"]),
        .library(name: "CameraControlAVFoundation", targets: ["CameraControlAVFoundation"]),
        .library(name: "CameraControlEmbedded", targets: ["CameraControlEmbedded"]),
        .library(name: "CameraControlSimulation", targets: ["CameraControlSimulation"]),
        .library(name: "CameraControlConformance", targets: ["CameraControlConformance"]),
        .library(name: "CameraControlHTTP", targets: ["CameraControlHTTP"]),
        .library(name: "CameraControlLivePage", targets: ["CameraControlLivePage"]),
    ],
    targets: [
        // MARK: System libraries (Debian packages)
        .systemLibrary(
            name: "CProtobufC",
            pkgConfig: "libprotobuf-c",
            providers: [.apt(["libprotobuf-c-dev"])]
        ),
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-app-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CLibSerialPort",
            pkgConfig: "libserialport",
            providers: [.apt(["libserialport-dev"])]
        ),

        // MARK: C: generated code, firmware core, simulator
        .target(
            name: "CameraControlProtoC",
            dependencies: ["CProtobufC"],
            path: "Firmware-sim/generated",
            publicHeadersPath: "include"
        ),
        .target(
            name: "FirmwareCore",
            path: "Firmware-sim/core",
            exclude: ["cc_pb.limits"],
            publicHeadersPath: "include",
            cSettings: firmwareCSettings
        ),
        .target(
            name: "FirmwareSim",
            dependencies: ["FirmwareCore"],
            path: "Firmware-sim/simlib",
            publicHeadersPath: "include",
            cSettings: firmwareCSettings
        ),
        .executableTarget(
            name: "camctl-sim",
            dependencies: ["FirmwareSim"],
            path: "Firmware-sim/sim",
            cSettings: firmwareCSettings
        ),
        .target(name: "CSystemShim", path: "Sources/CSystemShim"),
        .target(name: "CGStreamerShim", dependencies: ["CGStreamer"], path: "Sources/CGStreamerShim"),

        // MARK: Swift host stack
        .target(
            name: "CameraControlWire",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlTransport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlPosixTransport",
            dependencies: ["CSystemShim", "CameraControlTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlSerialTransport",
            dependencies: ["CLibSerialPort", "CameraControlTransport", "CameraControlPosixTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlRPC",
            dependencies: ["CameraControlWire", "CameraControlTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlDevice",
            dependencies: ["CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport", "CameraControlRPC"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlGestures",
            dependencies: ["CameraControlWire"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlCapture",
            dependencies: ["CameraControlWire", "CameraControlGestures"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlControls",
            dependencies: ["CameraControlWire", "CameraControlGestures", "CameraControlCapture"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlHost",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport", "CameraControlRPC",
                "CameraControlDevice", "CameraControlGestures", "CameraControlCapture", "CameraControlControls",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlPorts",
            dependencies: ["CameraControlTransport", "CameraControlSerialTransport", "CameraControlDevice", "CameraControlHost"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlGStreamer",
            dependencies: ["CGStreamerShim", "CameraControlCapture", "CameraControlControls"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlAVFoundation",
            dependencies: ["CameraControlCapture", "CameraControlControls"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraAppExample",
            dependencies: ["CameraControlWire", "CameraControlCapture", "CameraControlControls"],
            path: "Examples/CameraApp",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlEmbedded",
            dependencies: ["FirmwareSim", "CameraControlWire"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlSimulation",
            dependencies: [
                "CameraControlWire", "CameraControlRPC", "CameraControlGestures", "CameraControlCapture", "CameraControlControls",
                "CameraControlHost", "CameraAppExample", "CameraControlEmbedded",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlConformance",
            dependencies: ["CameraControlWire", "CameraControlTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlHTTP",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlLivePage",
            dependencies: ["CameraControlHTTP"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlTools",
            dependencies: [
                "CSystemShim", "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport", "CameraControlSerialTransport",
                "CameraControlDevice", "CameraControlGestures", "CameraControlCapture", "CameraControlControls", "CameraControlHost",
                "CameraAppExample",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "camctl",
            dependencies: [
                "CSystemShim", "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport",
                "CameraControlSerialTransport", "CameraControlRPC", "CameraControlDevice", "CameraControlGestures", "CameraControlCapture", "CameraControlControls",
                "CameraControlHost", "CameraControlPorts", "CameraControlGStreamer", "CameraAppExample", "CameraControlEmbedded",
                "CameraControlConformance", "CameraControlTools", "CameraControlSimulation", "CameraControlHTTP", "CameraControlLivePage",
            ],
            swiftSettings: swiftSettings
        ),

        // camctl-bench's C: the bare protobuf-c baselines, the allocation counter, and for `scale` the
        // feeder (simulated devices on one thread behind ptys) and the minimal C host.
        .target(
            name: "CBenchSupport",
            dependencies: ["CameraControlProtoC", "FirmwareCore", "FirmwareSim"],
            path: "Sources/CBenchSupport",
            cSettings: firmwareCSettings
        ),
        // One host (this project's or the minimal C host) taking presses, for `camctl-bench presspath`
        // to count under callgrind.
        .executableTarget(
            name: "camctl-bench-probe",
            dependencies: ["CameraControlCapture", "CameraControlHost", "CameraControlPorts", "CBenchSupport"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "camctl-bench",
            dependencies: [
                "CameraControlWire", "CameraControlPosixTransport", "CameraControlRPC", "CameraControlDevice", "CameraControlCapture",
                "CameraControlHost", "CameraControlPorts", "CameraControlGStreamer", "CameraControlSimulation", "CameraAppExample",
                "CameraControlEmbedded", "CameraControlTools", "CBenchSupport",
            ],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "camera-app",
            dependencies: ["CameraControlControls", "CameraControlDevice", "CameraControlHost", "CameraControlPorts", "CameraAppExample"],
            path: "Examples/camera-app",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        // Shared by the test targets: one seeded generator, the manual clock's capture view, the golden
        // vectors, the decoder verifier, fakes.
        .target(
            name: "CameraControlTestSupport",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlRPC", "CameraControlDevice", "CameraControlCapture",
            ],
            path: "Tests/CameraControlTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CameraControlHTTPTests", dependencies: ["CameraControlHTTP", "CameraControlTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlLivePageTests", dependencies: ["CameraControlLivePage", "CameraControlHTTP", "CameraControlTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlWireTests", dependencies: ["CameraControlWire", "CameraControlTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlTransportTests",
            dependencies: [
                "CSystemShim", "CameraControlTransport", "CameraControlPosixTransport", "CameraControlSerialTransport",
                "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CameraControlRPCTests",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport", "CameraControlRPC",
                "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CameraControlDeviceTests",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlRPC", "CameraControlDevice", "CameraControlEmbedded",
                "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlGesturesTests", dependencies: ["CameraControlWire", "CameraControlGestures", "CameraControlTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlCaptureTests",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlRPC", "CameraControlGestures", "CameraControlCapture", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlControlsTests",
            dependencies: [
                "CameraControlWire", "CameraControlGestures", "CameraControlCapture", "CameraControlControls", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlHostTests",
            dependencies: [
                "CameraControlWire", "CameraControlTransport", "CameraControlRPC", "CameraControlDevice", "CameraControlGestures",
                "CameraControlCapture", "CameraControlControls", "CameraControlHost", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlGStreamerTests",
            dependencies: [
                "CameraControlWire", "CameraControlCapture", "CameraControlControls", "CameraControlGStreamer",
                "CameraControlGestures",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "FirmwareTests",
            dependencies: ["FirmwareCore", "CameraControlWire", "CameraControlEmbedded", "CameraControlTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlSimulationTests",
            dependencies: [
                "CameraControlWire", "CameraControlRPC", "CameraControlGestures", "CameraControlCapture", "CameraControlControls",
                "CameraAppExample", "CameraControlEmbedded", "CameraControlSimulation", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlConformanceTests",
            dependencies: [
                "camctl-sim", "camctl", "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport",
                "CameraControlConformance", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlToolsTests",
            dependencies: [
                "CameraControlWire", "CameraControlGestures", "CameraControlTools", "CameraControlTransport",
                "CameraControlPosixTransport", "CameraControlTestSupport", "CameraControlCapture", "CameraControlControls",
                "CameraAppExample",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "camctl-bench", "camctl-sim", "camera-app", "CameraControlWire", "CameraControlTransport", "CameraControlPosixTransport",
                "CameraControlRPC", "CameraControlDevice", "CameraControlGestures", "CameraControlCapture", "CameraControlControls",
                "CameraControlHost", "CameraControlPorts", "CameraControlEmbedded", "CameraControlSimulation",
                "CameraControlTools", "CameraControlLivePage", "camctl", "CameraControlTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
