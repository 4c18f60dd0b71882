/// How a continuous slider spreads its range along the strip.
public enum SliderScale: String, Hashable, Sendable {
    /// Equal strip travel for equal value change.
    case linear
    /// Equal strip travel for equal ratios (1×→2× as long as 5×→10×); used by the system zoom slider.
    /// Needs a range with a positive lower bound (otherwise ``linear`` is used).
    case logarithmic
}

/// The finite, sorted set of values of a discrete slider: a stepped range or an explicit list.
/// Stepped sets are computed, never expanded, and hold at most ``ControlLimits/maximumDiscreteValues``.
public struct DiscreteValues: Hashable, Sendable {
    private enum Storage: Hashable, Sendable {
        case stepped(lower: Double, step: Double, count: Int)
        case list([Double])
    }

    private let storage: Storage

    /// `range.lowerBound`, `+ step`, … up to the last value not above `range.upperBound` (within 1e-9 of a
    /// step, so `0...1` by `0.1` ends at 1).
    ///
    /// Throws ``ControlError/Code/invalidRange``, ``ControlError/Code/invalidStep``,
    /// ``ControlError/Code/tooManyValues``.
    public init(range: ClosedRange<Double>, step: Double) throws(ControlError) {
        try Self.checkRange(range)
        guard step.isFinite, step > 0 else {
            throw ControlError(.invalidStep, "step must be a finite number > 0, got \(step)")
        }
        let steps = ((range.upperBound - range.lowerBound) / step + 1e-9).rounded(.down)
        guard steps.isFinite, steps < Double(ControlLimits.maximumDiscreteValues) else {
            throw ControlError(
                .tooManyValues,
                "range \(range) by step \(step) gives more than \(ControlLimits.maximumDiscreteValues) values")
        }
        storage = .stepped(lower: range.lowerBound, step: step, count: Int(steps) + 1)
    }

    /// An explicit list, sorted and with duplicates removed.
    ///
    /// Throws ``ControlError/Code/emptyValues``, ``ControlError/Code/nonFiniteValue``,
    /// ``ControlError/Code/tooManyValues``.
    public init(values: [Double]) throws(ControlError) {
        guard !values.isEmpty else { throw ControlError(.emptyValues, "a discrete slider needs at least one value") }
        guard values.count <= ControlLimits.maximumDiscreteValues else {
            throw ControlError(.tooManyValues, "\(values.count) values; at most \(ControlLimits.maximumDiscreteValues)")
        }
        if let bad = values.first(where: { !$0.isFinite }) {
            throw ControlError(.nonFiniteValue, "value \(bad) is not finite")
        }
        var sorted = values.sorted()
        var unique: [Double] = []
        unique.reserveCapacity(sorted.count)
        for value in sorted where unique.last != value { unique.append(value) }
        sorted = unique
        storage = .list(sorted)
    }

    static func checkRange(_ range: ClosedRange<Double>) throws(ControlError) {
        guard range.lowerBound.isFinite, range.upperBound.isFinite else {
            throw ControlError(.invalidRange, "range \(range) has a non-finite bound")
        }
        guard range.lowerBound < range.upperBound else {
            throw ControlError(.invalidRange, "range minimum \(range.lowerBound) must be below maximum \(range.upperBound)")
        }
    }

    /// Number of values (≥ 1).
    public var count: Int {
        switch storage {
        case .stepped(_, _, let count): count
        case .list(let values): values.count
        }
    }

    /// The value at `index` (`0 ..< count`; clamped).
    public func value(at index: Int) -> Double {
        let clamped = min(max(index, 0), count - 1)
        switch storage {
        case .stepped(let lower, let step, _): return lower + Double(clamped) * step
        case .list(let values): return values[clamped]
        }
    }

    /// Smallest value.
    public var first: Double { value(at: 0) }
    /// Largest value.
    public var last: Double { value(at: count - 1) }

    /// Index of the value nearest to `value` (ties go down).
    public func nearestIndex(to value: Double) -> Int {
        switch storage {
        case .stepped(let lower, let step, let count):
            let raw = ((value - lower) / step - 0.5).rounded(.up)  // the nearest; halfway, the lower one
            guard raw.isFinite else { return 0 }
            return Int(min(max(raw, 0), Double(count - 1)))
        case .list(let values):
            var low = 0
            var high = values.count - 1
            while low < high {
                let mid = (low + high) / 2
                if values[mid] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0, abs(values[low - 1] - value) <= abs(values[low] - value) { return low - 1 }
            return low
        }
    }
}

/// What a slider adjusts over: a continuous range or a discrete set.
public enum SliderDomain: Hashable, Sendable {
    /// Any value in the range, spread along the strip by the scale.
    case continuous(ClosedRange<Double>, scale: SliderScale)
    /// One of a finite set of values.
    case discrete(DiscreteValues)

    /// Smallest value.
    public var lowerBound: Double {
        switch self {
        case .continuous(let range, _): range.lowerBound
        case .discrete(let values): values.first
        }
    }

    /// Largest value.
    public var upperBound: Double {
        switch self {
        case .continuous(let range, _): range.upperBound
        case .discrete(let values): values.last
        }
    }

    /// A tolerance for "in range" checks on discrete sets (floating-point steps).
    var tolerance: Double {
        switch self {
        case .continuous: 0
        case .discrete: max(1e-9, (upperBound - lowerBound) * 1e-9)
        }
    }

    /// `value` checked (finite, in range) and, for discrete sets, snapped to the nearest member.
    func validated(_ value: Double) throws(ControlError) -> Double {
        guard value.isFinite else { throw ControlError(.nonFiniteValue, "value \(value) is not finite") }
        guard value >= lowerBound - tolerance, value <= upperBound + tolerance else {
            throw ControlError(.valueOutOfRange, "value \(value) is outside \(lowerBound)...\(upperBound)")
        }
        switch self {
        case .continuous: return value
        case .discrete(let values): return values.value(at: values.nearestIndex(to: value))
        }
    }
}
