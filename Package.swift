// swift-tools-version: 6.0
//
// CameraControl: an open Camera Control for any camera host.
//
// Targets, with arrows pointing down only:
//
//   camctl ─▶ CameraControlControls ─▶ CameraControlCapture ─▶ CameraControlDevice ─▶ CameraControlRPC
//                                   └──────────────▶ CameraControlGestures ─┐        │
//                                                                          ▼        ▼
//                                        CameraControlWire ◀───────────────────── CameraControlTransport
//                                              │                        (ByteTransport, in-memory; no C)
//                                              ▼
//                    CameraControlProtoC (protoc-c output) ─▶ CProtobufC (libprotobuf-c)
//
//   CameraControlDevice, camctl ─▶ CameraControlSerialTransport (libserialport; Transports.open: PORT → transport)
//                                    └─▶ CameraControlPosixTransport (fd link, termios, port locks, syscall shim)
//                                          └─▶ CameraControlTransport, CSystemShim
//
//   camctl-sim ─▶ FirmwareSim ─▶ FirmwareCore ─▶ CameraControlProtoC   (the C firmware and its simulator)
//   CameraControlEmbedded: the firmware core in-process, in virtual time.
//   CameraControlSimulation: that firmware wired to the real host stack (connection core, recogniser,
//   capture router) in one virtual time line, for tests, benchmarks and conformance.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let firmwareCSettings: [CSetting] = [
    .define("CC_HOST_BUILD", to: "1"),
]

let package = Package(
    name: "CameraControl",
    products: [
        .executable(name: "camctl", targets: ["camctl"]),
        .executable(name: "camctl-sim", targets: ["camctl-sim"]),
        .library(name: "CameraControlWire", targets: ["CameraControlWire"]),
        .library(name: "CameraControlTransport", targets: ["CameraControlTransport"]),
        .library(name: "CameraControlPosixTransport", targets: ["CameraControlPosixTransport"]),
        .library(name: "CameraControlSerialTransport", targets: ["CameraControlSerialTransport"]),
        .library(name: "CameraControlRPC", targets: ["CameraControlRPC"]),
        .library(name: "CameraControlDevice", targets: ["CameraControlDevice"]),
        .library(name: "CameraControlGestures", targets: ["CameraControlGestures"]),
        .library(name: "CameraControlCapture", targets: ["CameraControlCapture"]),
        .library(name: "CameraControlControls", targets: ["CameraControlControls"]),
        .library(name: "CameraControlEmbedded", targets: ["CameraControlEmbedded"]),
        .library(name: "CameraControlSimulation", targets: ["CameraControlSimulation"]),
    ],
    targets: [
        // MARK: System libraries (Debian packages)
        .systemLibrary(
            name: "CProtobufC",
            pkgConfig: "libprotobuf-c",
            providers: [.apt(["libprotobuf-c-dev"])]
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
            dependencies: ["CameraControlProtoC"],
            path: "Firmware-sim/core",
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

        // MARK: Swift host stack
        .target(
            name: "CameraControlWire",
            dependencies: ["CameraControlProtoC"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlTransport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlPosixTransport",
            dependencies: ["CameraControlTransport", "CSystemShim"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlSerialTransport",
            dependencies: ["CameraControlPosixTransport", "CameraControlTransport", "CLibSerialPort"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlRPC",
            dependencies: ["CameraControlWire", "CameraControlTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlDevice",
            dependencies: ["CameraControlRPC", "CameraControlSerialTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlGestures",
            dependencies: ["CameraControlWire"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlCapture",
            dependencies: ["CameraControlGestures", "CameraControlDevice"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlControls",
            dependencies: ["CameraControlCapture"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlEmbedded",
            dependencies: ["FirmwareSim", "CameraControlTransport", "CameraControlWire"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CameraControlSimulation",
            dependencies: [
                "CameraControlEmbedded", "CameraControlRPC", "CameraControlCapture", "CameraControlGestures",
                "CameraControlControls",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "camctl",
            dependencies: [
                "CameraControlControls", "CameraControlCapture", "CameraControlDevice",
                "CameraControlTransport", "CameraControlSerialTransport", "CameraControlEmbedded", "CameraControlSimulation",
                "CSystemShim",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .testTarget(name: "CameraControlWireTests", dependencies: ["CameraControlWire"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CameraControlTransportTests",
            dependencies: ["CameraControlTransport", "CameraControlPosixTransport", "CameraControlSerialTransport", "CSystemShim"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CameraControlRPCTests", dependencies: ["CameraControlRPC", "CameraControlPosixTransport", "CameraControlSimulation"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CameraControlDeviceTests", dependencies: ["CameraControlDevice", "CameraControlSimulation"], swiftSettings: swiftSettings),
        .testTarget(name: "CameraControlGesturesTests", dependencies: ["CameraControlGestures"], swiftSettings: swiftSettings),
        .testTarget(name: "CameraControlCaptureTests", dependencies: ["CameraControlCapture", "CameraControlSimulation"], swiftSettings: swiftSettings),
        .testTarget(name: "CameraControlControlsTests", dependencies: ["CameraControlControls", "CameraControlSimulation"], swiftSettings: swiftSettings),
        .testTarget(name: "FirmwareTests", dependencies: ["FirmwareSim", "CameraControlWire", "CameraControlEmbedded"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["camctl-sim", "camctl", "CameraControlDevice", "CameraControlPosixTransport", "CameraControlSimulation"],
            swiftSettings: swiftSettings
        ),
    ]
)
