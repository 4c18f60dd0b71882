/// What a faulty link does to the bytes that cross it: the fault model shared by `camctl relay`,
/// the virtual-time fault tests and the soak (and, in C, by `camctl-sim --faults`).
///
/// Written as a spec string, comma-separated `name=value` items, all optional:
///
/// ```text
/// corrupt=1%,drop=0.1%,drop-frame=1%,dup=1%,reorder=1%,garbage=0.5%:64,stall=0.1%:200ms,baud=1.05,
/// reset=30s,unplug=20s:1s,seed=7
/// ```
///
/// | item | meaning |
/// |---|---|
/// | `corrupt=R` | each byte is XOR-ed with a random non-zero value with probability R |
/// | `drop=R` | each byte is lost with probability R |
/// | `drop-frame=R` | each frame (bytes up to and including a `0x00`) is lost with probability R |
/// | `dup=R` | each frame is sent twice with probability R |
/// | `reorder=R` | each frame is held back and sent after the next one with probability R |
/// | `garbage=R[:N]` | before each frame, with probability R, a burst of 1…N random bytes (N = 64) |
/// | `stall=R[:D]` | at each frame, with probability R, the line stops for D (100 ms; more than 0), then resumes |
/// | `baud=X` | the receiver's UART runs at X times the sender's baud rate (1 = matched): bytes are re-sampled bit by bit |
/// | `reset=D` | the device reboots every D (where the device can: the simulator) |
/// | `unplug=D[:U]` | D after the start and after each return the port vanishes for U (1 s), then comes back |
/// | `seed=N` | the random generator's seed (1) |
///
/// Rates are a fraction (`0.01`) or a percentage (`1%`); durations `500us`, `200ms`, `1.5s` (bare: ms).
public struct LinkFaults: Sendable, Hashable, CustomStringConvertible {
    /// A spec that does not parse.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong.
        public enum Code: String, Sendable, Hashable {
            /// An item name that is not one of the table's.
            case unknownItem
            /// A value that is not a rate, a count or a duration as the item needs.
            case badValue
        }

        /// The kind of error.
        public var code: Code
        /// The item at fault, and why.
        public var message: String

        /// `--faults: message`.
        public var description: String { "--faults: \(message)" }
    }

    /// Probability that a byte is corrupted.
    public var corruptRate: Double = 0
    /// Probability that a byte is lost.
    public var dropByteRate: Double = 0
    /// Probability that a frame is lost.
    public var dropFrameRate: Double = 0
    /// Probability that a frame is duplicated.
    public var duplicateRate: Double = 0
    /// Probability that a frame is held back behind the next one.
    public var reorderRate: Double = 0
    /// Probability of a garbage burst before a frame.
    public var garbageRate: Double = 0
    /// The longest garbage burst, bytes.
    public var garbageMaxBytes: Int = 64
    /// Probability of a stall at a frame.
    public var stallRate: Double = 0
    /// How long a stall lasts, microseconds.
    public var stallMicros: UInt64 = 100_000
    /// The receiver's baud rate over the sender's (1: matched).
    public var baudRatio: Double = 1
    /// Reboot the device every this many microseconds (nil: never).
    public var resetEveryMicros: UInt64?
    /// Unplug the port every this many microseconds (nil: never).
    public var unplugEveryMicros: UInt64?
    /// How long an unplug lasts, microseconds.
    public var unplugForMicros: UInt64 = 1_000_000
    /// The random generator's seed.
    public var seed: UInt64 = 1

    /// The spec's item names, as the table gives them.
    public static let itemNames: Set<String> = [
        "corrupt", "drop", "drop-frame", "dup", "reorder", "garbage", "stall", "baud", "reset", "unplug", "seed",
    ]

    /// No faults at all.
    public init() {}

    /// The faults a spec string describes (see the type's table).
    ///
    /// - Throws: ``ParseError`` with `unknownItem` or `badValue`.
    public init(spec: String) throws(ParseError) {
        for item in spec.split(separator: ",").map({ $0.trimmingSpaces }) where !item.isEmpty {
            guard let equals = item.firstIndex(of: "=") else {
                // A misspelt name is unknown, whether or not a value follows it (as camctl-sim says).
                guard Self.itemNames.contains(String(item)) else {
                    throw ParseError(code: .unknownItem, message: "unknown item '\(item)'")
                }
                throw ParseError(code: .badValue, message: "'\(item)' needs a value")
            }
            let name = String(item[..<equals])
            let value = String(item[item.index(after: equals)...])
            let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
            let first = parts.first ?? ""
            let second = parts.count > 1 ? parts[1] : nil
            func bad() -> ParseError {
                let form =
                    switch name {
                    case "garbage": "garbage=R[:N], R a rate (1%, 0.01) and N bytes 1…1048576"
                    case "stall": "stall=R[:D], R a rate (1%, 0.01) and D a duration above 0 (200ms)"
                    case "baud": "baud=X, a ratio 0.5…2"
                    case "reset": "reset=D, a duration (2s)"
                    case "unplug": "unplug=D[:U], durations (10s:1s)"
                    case "seed": "seed=N, a whole number"
                    default: "\(name)=R, a rate (1%, 0.01)"
                    }
                return ParseError(code: .badValue, message: "'\(item)': bad value; want \(form)")
            }
            func rate(_ text: String) throws(ParseError) -> Double {
                guard let rate = Self.parseRate(text) else { throw bad() }
                return rate
            }
            func duration(_ text: String) throws(ParseError) -> UInt64 {
                guard let micros = Self.parseDuration(text) else { throw bad() }
                return micros
            }
            switch name {
            case "corrupt": corruptRate = try rate(value)
            case "drop": dropByteRate = try rate(value)
            case "drop-frame": dropFrameRate = try rate(value)
            case "dup": duplicateRate = try rate(value)
            case "reorder": reorderRate = try rate(value)
            case "garbage":
                garbageRate = try rate(first)
                if let second {
                    guard let count = Int(second), count > 0, count <= 1 << 20 else { throw bad() }
                    garbageMaxBytes = count
                }
            case "stall":
                stallRate = try rate(first)
                if let second {
                    stallMicros = try duration(second)
                    guard stallMicros > 0 else { throw bad() }  // a stall of nothing stops nothing
                }
            case "baud":
                guard let ratio = Double(value), ratio >= 0.5, ratio <= 2 else { throw bad() }
                baudRatio = ratio
            case "reset": resetEveryMicros = try duration(value)
            case "unplug":
                unplugEveryMicros = try duration(first)
                if let second { unplugForMicros = try duration(second) }
            case "seed":
                guard let number = UInt64(value) else { throw bad() }
                seed = number
            default:
                throw ParseError(code: .unknownItem, message: "unknown item '\(name)'")
            }
        }
    }

    /// True when no fault is set.
    public var isEmpty: Bool { self == LinkFaults(seedOnly: seed) }

    /// Whether a fault acts on frames (drop, duplicate, reorder, garbage before, stall at) or re-samples them
    /// at another baud rate (whose damage must not depend on how reads split a frame): only then does a
    /// ``FaultInjector`` look for frames at all (``needsWholeFrames`` says when it holds them).
    public var actsOnFrames: Bool {
        dropFrameRate > 0 || duplicateRate > 0 || reorderRate > 0 || garbageRate > 0 || stallRate > 0 || baudRatio != 1
    }

    /// Whether a fault needs a frame whole before it can act (duplicate, reorder: the frame is sent again
    /// or later) or a baud mismatch is set: only then does a ``FaultInjector`` hold a frame's bytes until its
    /// delimiter. Drop, garbage and stall are decided at a frame's first byte, and its bytes then pass as
    /// they come.
    public var needsWholeFrames: Bool { duplicateRate > 0 || reorderRate > 0 || baudRatio != 1 }

    private init(seedOnly seed: UInt64) { self.seed = seed }

    /// The spec string (parses back to the same value).
    public var description: String {
        var items: [String] = []
        func rate(_ name: String, _ value: Double, _ suffix: String = "") {
            if value > 0 { items.append("\(name)=\(value)\(suffix)") }
        }
        rate("corrupt", corruptRate)
        rate("drop", dropByteRate)
        rate("drop-frame", dropFrameRate)
        rate("dup", duplicateRate)
        rate("reorder", reorderRate)
        rate("garbage", garbageRate, ":\(garbageMaxBytes)")
        rate("stall", stallRate, ":\(stallMicros)us")
        if baudRatio != 1 { items.append("baud=\(baudRatio)") }
        if let resetEveryMicros { items.append("reset=\(resetEveryMicros)us") }
        if let unplugEveryMicros { items.append("unplug=\(unplugEveryMicros)us:\(unplugForMicros)us") }
        items.append("seed=\(seed)")
        return items.joined(separator: ",")
    }

    /// `0.01` or `1%` → 0.01; nil outside 0…1.
    static func parseRate(_ text: String) -> Double? {
        let percent = text.hasSuffix("%")
        guard let number = Double(percent ? String(text.dropLast()) : text) else { return nil }
        let rate = percent ? number / 100 : number
        return rate >= 0 && rate <= 1 ? rate : nil
    }

    /// `500us`, `200ms`, `1.5s`, bare milliseconds → microseconds.
    static func parseDuration(_ text: String) -> UInt64? {
        let units: [(String, Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000), ("", 1_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0, number <= 86_400_000_000 / scale else { continue }
            return UInt64(number * scale)
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
