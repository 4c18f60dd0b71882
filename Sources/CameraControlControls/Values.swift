/// A stable name for a control inside a session, used in effects and their one-line descriptions.
///
/// Defaults to the control's title in lower case with spaces turned into `-` (`"Exposure Bias"` →
/// `exposure-bias`); pass `id:` to a control's initialiser to choose it.
public struct ControlID: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name.
    public var rawValue: String
    /// An id from a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An id from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The name.
    public var description: String { rawValue }

    /// The default id for a title: lower case, whitespace runs become `-`, empty becomes `control`.
    public static func derived(fromTitle title: String) -> ControlID {
        var out = ""
        var pendingDash = false
        for ch in title.lowercased() {
            if ch.isWhitespace {
                pendingDash = !out.isEmpty
            } else {
                if pendingDash { out.append("-") }
                pendingDash = false
                out.append(ch)
            }
        }
        return ControlID(rawValue: out.isEmpty ? "control" : out)
    }
}

/// Who made a control's value change.
public enum ValueChangeOrigin: String, Hashable, Sendable, CustomStringConvertible {
    /// The control itself, from a Camera Control gesture (slide or momentum). Only these run the action.
    case slider
    /// App code set the value (`setValue`, `setSelectedIndex`).
    case programmatic
    /// The camera device changed from elsewhere (a pinch, another API); system sliders follow it.
    case external

    /// The raw name.
    public var description: String { rawValue }
}

/// A value a control holds: a number for sliders, an index for pickers.
public enum ControlValue: Hashable, Sendable, CustomStringConvertible {
    /// A slider value.
    case number(Double)
    /// A picker index.
    case index(Int)

    /// Numbers with up to four decimals (`2.5`, `-1.6667`), indexes as `#2`.
    public var description: String {
        switch self {
        case .number(let value): NumberText.format(value, decimals: 4)
        case .index(let index): "#\(index)"
        }
    }
}

/// One value change, as reported to observers.
public struct ValueChange<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The control that changed.
    public var controlID: ControlID
    /// The new value.
    public var value: Value
    /// Who made the change.
    public var origin: ValueChangeOrigin

    /// A change.
    public init(controlID: ControlID, value: Value, origin: ValueChangeOrigin) {
        self.controlID = controlID
        self.value = value
        self.origin = origin
    }
}

/// Number formatting without Foundation's locale machinery: stable across machines.
enum NumberText {
    /// `value` rounded to `decimals` places, trailing zeros and `-0` removed.
    static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<max(0, decimals) { scale *= 10 }
        var rounded = (value * scale).rounded() / scale
        if rounded == 0 { rounded = 0 }
        var text = "\(rounded)"
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
