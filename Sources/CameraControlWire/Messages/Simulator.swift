import CameraControlProtoC

/// Queues a scenario on the simulator (`cameracontrol.v1.RunScenarioRequest`).
public struct RunScenarioRequest: WireMessage, CBackedMessage {
    /// A scenario in the format of docs/SIMULATOR.md.
    public var scenario: String

    /// An empty scenario.
    public init() { self.init(scenario: "") }
    /// A request to run `scenario`.
    public init(scenario: String) { self.scenario = scenario }

    /// `cameracontrol.v1.RunScenarioRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.RunScenarioRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__RunScenarioRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__run_scenario_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__run_scenario_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__run_scenario_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__run_scenario_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__run_scenario_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.scenario = arena.string(scenario) }
    init(c m: CMessage) { self.init(scenario: CValue.string(m.scenario)) }
}

/// The simulator's answer to RunScenario (`cameracontrol.v1.RunScenarioResponse`).
public struct RunScenarioResponse: WireMessage, CBackedMessage {
    /// Steps parsed and queued.
    public var steps: UInt32
    /// How long the scenario runs, microseconds.
    public var durationMicros: UInt64

    /// Zero steps.
    public init() { self.init(steps: 0, durationMicros: 0) }
    /// A response.
    public init(steps: UInt32, durationMicros: UInt64) {
        self.steps = steps
        self.durationMicros = durationMicros
    }

    /// `cameracontrol.v1.RunScenarioResponse`.
    public static var protoMessageName: String { "cameracontrol.v1.RunScenarioResponse" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__RunScenarioResponse
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__run_scenario_response__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__run_scenario_response__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__run_scenario_response__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__run_scenario_response__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__run_scenario_response__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.steps = steps
        m.duration_us = durationMicros
    }
    init(c m: CMessage) { self.init(steps: m.steps, durationMicros: m.duration_us) }
}

/// The simulator's state (`cameracontrol.v1.SimulatorStatus`).
public struct SimulatorStatus: WireMessage, CBackedMessage {
    /// True while a scenario is still playing.
    public var isScenarioRunning: Bool
    /// The device clock, microseconds since boot.
    public var deviceTimeMicros: UInt64

    /// Idle, time zero.
    public init() { self.init(isScenarioRunning: false, deviceTimeMicros: 0) }
    /// A status.
    public init(isScenarioRunning: Bool, deviceTimeMicros: UInt64) {
        self.isScenarioRunning = isScenarioRunning
        self.deviceTimeMicros = deviceTimeMicros
    }

    /// `cameracontrol.v1.SimulatorStatus`.
    public static var protoMessageName: String { "cameracontrol.v1.SimulatorStatus" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__SimulatorStatus
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__simulator_status__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__simulator_status__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__simulator_status__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__simulator_status__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__simulator_status__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.scenario_running = CValue.cBool(isScenarioRunning)
        m.device_time_us = deviceTimeMicros
    }
    init(c m: CMessage) {
        self.init(isScenarioRunning: CValue.bool(m.scenario_running), deviceTimeMicros: m.device_time_us)
    }
}

/// Reads the simulator's state (`cameracontrol.v1.GetSimulatorStatusRequest`; no fields).
public struct GetSimulatorStatusRequest: WireMessage, CBackedMessage {
    /// The request.
    public init() {}

    /// `cameracontrol.v1.GetSimulatorStatusRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.GetSimulatorStatusRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__GetSimulatorStatusRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_simulator_status_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__get_simulator_status_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__get_simulator_status_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__get_simulator_status_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_simulator_status_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {}
    init(c m: CMessage) {}
}
