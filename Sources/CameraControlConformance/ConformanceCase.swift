import CameraControlWire

/// Why a case failed: what it sent, what it saw and what the spec expected.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// Failure codes.
    public enum Code: String, Sendable {
        /// The device's behaviour departs from the spec.
        case violation
        /// The device did not answer in time.
        case noAnswer
        /// The link failed under the case (transport closed, write failed).
        case link
        /// Nothing answered: not one byte came from the port during the run's first two cases (a wrong port or
        /// baud rate, a device that is off or runs no firmware). The run stops there.
        case silentDevice
    }
    /// What kind of failure.
    public var code: Code
    /// What went wrong, in words.
    public var message: String
    /// The last bytes the case sent before it saw the problem.
    public var sent: [UInt8]?
    /// The bytes the device sent instead (nil: nothing arrived).
    public var seen: [UInt8]?
    /// What the spec expects, in words (and bytes where the case can construct them).
    public var expected: String
    /// True when an answer FAILED_PRECONDITION in ``seen`` is not a session the case lost (``ConformanceSuite``
    /// runs such a case again): the case saw the session go on after it, or had ended the session itself.
    public var noSessionLost = false

    /// A failure; `seen` nil means "nothing arrived".
    public init(
        _ message: String, code: Code = .violation, sent: [UInt8]? = nil, seen: [UInt8]? = nil, expected: String = ""
    ) {
        self.code = code
        self.message = message
        self.sent = sent
        self.seen = seen
        self.expected = expected
    }

    /// The message, then the bytes.
    public var description: String {
        var lines = [message]
        if let sent { lines.append("sent      \(hex(sent))") }
        lines.append("seen      \(seen.map(hex) ?? "nothing")")
        if !expected.isEmpty { lines.append("expected  \(expected)") }
        return lines.joined(separator: "\n")
    }
}

/// Hex bytes, space separated (long runs shortened in the middle).
public func hex(_ bytes: [UInt8]) -> String {
    let digits = "0123456789abcdef".map { $0 }
    func byte(_ b: UInt8) -> String { String([digits[Int(b >> 4)], digits[Int(b & 15)]]) }
    if bytes.count > 48 {
        return bytes.prefix(24).map(byte).joined(separator: " ") + " … (\(bytes.count) bytes) … "
            + bytes.suffix(8).map(byte).joined(separator: " ")
    }
    return bytes.map(byte).joined(separator: " ")
}

/// What a case needs from the device (checked against the handshake's capabilities).
public enum CaseRequirement: Hashable, Sendable, CustomStringConvertible {
    /// Any device.
    case none
    /// `SimulatorService` (camctl-sim, or a device announcing `is_simulator`).
    case simulatorService
    /// A force sensor (raw sample streams).
    case forceSensor
    /// The user's settings (`has_settings`, v1.2).
    case settings
    /// A person at the device (`--interactive`).
    case person
    /// Frames of at least this many bytes (`max_frame_bytes`): a case whose frame would not fit a small
    /// device's buffers.
    case frameBytes(Int)

    /// The requirement in words.
    public var description: String {
        switch self {
        case .none: "none"
        case .simulatorService: "SimulatorService"
        case .forceSensor: "force sensor"
        case .settings: "the user's settings (has_settings)"
        case .person: "a person (--interactive)"
        case .frameBytes(let bytes): "frames of \(bytes) bytes"
        }
    }
}

/// Questions a case may put to a person at the device (`--interactive`).
public protocol ConformancePrompter: Sendable {
    /// Shows `instruction` (e.g. "press volume up now") and returns when the person is ready; false to skip.
    func ask(_ instruction: String) async -> Bool
}

/// The context a case body runs in.
public struct CaseContext: Sendable {
    /// The raw peer.
    public var probe: Probe
    /// The capabilities of the handshake made before the case.
    public var capabilities: Capabilities
    /// The handshake response made before the case.
    public var handshake: HandshakeResponse
    /// The prompter of an interactive run.
    public var prompter: (any ConformancePrompter)?
}

/// One conformance case: a name, the spec section it checks, what it needs, and its body.
public struct ConformanceCase: Sendable, Identifiable {
    /// The case's unique, stable name (`--case NAME`).
    public var name: String
    /// The section of the spec it checks, e.g. `PROTOCOL.md §7`.
    public var section: String
    /// What it checks, in one sentence.
    public var summary: String
    /// What the device must have for the case to run.
    public var requirement: CaseRequirement
    /// The protocol decision (docs/CONFORMANCE.md) the case checks, when it checks one that is not in v1.0.
    public var decision: String?
    /// A decision that replaces this (v1.0) case's rule: once implemented, the case no longer runs.
    public var supersededBy: String?
    /// A reason to skip the case always (e.g. nothing in v1 produces what it would check).
    public var skipReason: String?
    /// True for a case that changes the device's configuration or the user's settings (and puts them back
    /// when it ends): after it fails half-way, the suite puts back what it read before the case
    /// (``ConformanceSuite/putBack(_:probe:)``), so no later case, run or user meets a device it changed.
    public var changesDeviceState: Bool
    /// True for a case that takes seconds (runs that must be quick may leave it out).
    public var slow: Bool
    /// The body: throws a ``ConformanceFailure`` when the device departs from the spec.
    public var body: @Sendable (CaseContext) async throws -> Void

    /// The name.
    public var id: String { name }

    /// A case.
    public init(
        _ name: String, _ section: String, _ summary: String, requires requirement: CaseRequirement = .none,
        decision: String? = nil, supersededBy: String? = nil, skipReason: String? = nil, changesDeviceState: Bool = false,
        slow: Bool = false, body: @escaping @Sendable (CaseContext) async throws -> Void
    ) {
        self.name = name
        self.section = section
        self.summary = summary
        self.requirement = requirement
        self.decision = decision
        self.supersededBy = supersededBy
        self.skipReason = skipReason
        self.changesDeviceState = changesDeviceState
        self.slow = slow
        self.body = body
    }
}

/// What happened to one case.
public enum CaseOutcome: Sendable, Equatable {
    /// The device follows the spec here.
    case pass
    /// The device departs from the spec.
    case fail(ConformanceFailure)
    /// Not run, with the reason.
    case skip(String)

    /// `PASS`, `FAIL` or `SKIP`.
    public var label: String {
        switch self {
        case .pass: "PASS"
        case .fail: "FAIL"
        case .skip: "SKIP"
        }
    }

    /// Outcomes are equal by label and text.
    public static func == (a: CaseOutcome, b: CaseOutcome) -> Bool {
        switch (a, b) {
        case (.pass, .pass): true
        case (.fail(let x), .fail(let y)): x.description == y.description
        case (.skip(let x), .skip(let y)): x == y
        default: false
        }
    }
}

/// One case's result.
public struct CaseResult: Sendable {
    /// The case's name.
    public var name: String
    /// The spec section it checks.
    public var section: String
    /// The outcome.
    public var outcome: CaseOutcome
    /// How long it ran, in seconds.
    public var seconds: Double
    /// How many times the case ran: more than once when a run lost the session while a side was stalled
    /// (see ``ConformanceSuite/maximumRuns``).
    public var runs: Int
    /// True when the case ran more than once.
    public var retried: Bool { runs > 1 }

    /// A result.
    public init(name: String, section: String, outcome: CaseOutcome, seconds: Double, runs: Int = 1) {
        self.name = name
        self.section = section
        self.outcome = outcome
        self.seconds = seconds
        self.runs = runs
    }
}
