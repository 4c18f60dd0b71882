/// A JSON value, as parsed or to be printed: the pure-Swift carrier of protobuf's JSON mapping
/// (``ProtoJSONMessage``).
///
/// Numbers keep their text, so a 64-bit integer or a long decimal survives unchanged; objects keep
/// their members in order (protobuf's JSON prints fields in schema order).
public enum JSONValue: Hashable, Sendable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its JSON text (`12`, `-0.5`, `1e3`).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: members in order; a name appears at most once.
    case object([JSONMember])

    /// The value printed on one line, without spaces (`{"a":1,"b":[true]}`).
    public var description: String { compactText }

    /// The value printed on one line, without spaces.
    public var compactText: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The value printed over several lines, members indented by `indent` spaces per level.
    public func prettyText(indent: Int = 2) -> String {
        var out = ""
        write(to: &out, indent: indent, level: 0)
        return out
    }

    /// The member `name` of an object (nil for other values or a missing member).
    public subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name == name }?.value
    }

    /// A number value from an integer.
    public static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }

    /// The kind of value, for errors (`a string`, `an object`, …).
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private func write(to out: inout String, indent: Int?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let items):
            writeContainer(items.map { (nil, $0) }, open: "[", close: "]", to: &out, indent: indent, level: level)
        case .object(let members):
            writeContainer(members.map { ($0.name, $0.value) }, open: "{", close: "}", to: &out, indent: indent, level: level)
        }
    }

    private func writeContainer(
        _ items: [(String?, JSONValue)], open: Character, close: Character, to out: inout String, indent: Int?, level: Int
    ) {
        out.append(open)
        guard !items.isEmpty else {
            out.append(close)
            return
        }
        for (index, (name, value)) in items.enumerated() {
            if index > 0 { out += "," }
            if let indent { out += "\n" + String(repeating: " ", count: indent * (level + 1)) }
            if let name {
                Self.writeString(name, to: &out)
                out += indent == nil ? ":" : ": "
            }
            value.write(to: &out, indent: indent, level: level + 1)
        }
        if let indent { out += "\n" + String(repeating: " ", count: indent * level) }
        out.append(close)
    }

    /// Appends `text` as a JSON string literal (control characters escaped, the rest as is).
    static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Parses JSON text (RFC 8259: one value, surrounded by optional whitespace).
    ///
    /// - Throws: ``ProtoJSONError/Code/syntax`` naming the line and column and what was expected.
    public init(parsing text: String) throws(ProtoJSONError) {
        let size = text.utf8.count
        guard size <= Self.maxTextBytes else {
            throw ProtoJSONError(
                .tooLarge, "JSON text of \(size) bytes is over the \(Self.maxTextBytes / 1024) KiB limit (no message is that large)")
        }
        var parser = JSONParser(Array(text.utf8))
        self = try parser.document()
    }

    /// The longest JSON text ``init(parsing:)`` takes: no message fits a frame of more than
    /// ``WireFormat/maxFrameBytes`` bytes, and even escaped as `\u00XX` one is far below this.
    public static let maxTextBytes = 1 << 20
}

/// One member of a JSON object.
public struct JSONMember: Hashable, Sendable {
    /// The member's name.
    public var name: String
    /// The member's value.
    public var value: JSONValue

    /// A member.
    public init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes, with positions for errors.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func document() throws(ProtoJSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw failure("expected the end of the JSON text") }
        return value
    }

    private func position() -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    private func failure(_ expected: String) -> ProtoJSONError {
        let (line, column) = position()
        let found: String
        if index >= bytes.count {
            found = "the end of the text"
        } else {
            let end = bytes[index...].prefix(12).firstIndex { [UInt8(ascii: " "), 10, 13, 9].contains($0) } ?? min(index + 12, bytes.count)
            found = "'" + String(decoding: bytes[index..<max(end, index + 1)], as: UTF8.self) + "'"
        }
        return ProtoJSONError(.syntax, "bad JSON at line \(line), column \(column): \(expected), found \(found)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [UInt8(ascii: " "), 9, 10, 13].contains(bytes[index]) { index += 1 }
    }

    private mutating func parseValue() throws(ProtoJSONError) -> JSONValue {
        guard index < bytes.count else { throw failure("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseContainer(object: true)
        case UInt8(ascii: "["): return try parseContainer(object: false)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("expected a value (an object, array, string, number, true, false or null)")
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(ProtoJSONError) -> JSONValue {
        let text = Array(word.utf8)
        guard bytes.count - index >= text.count, Array(bytes[index..<index + text.count]) == text else {
            throw failure("expected a value (strings need double quotes)")
        }
        index += text.count
        return value
    }

    private mutating func parseContainer(object: Bool) throws(ProtoJSONError) -> JSONValue {
        depth += 1
        guard depth <= 64 else { throw failure("nesting deeper than 64") }
        defer { depth -= 1 }
        index += 1
        var members: [JSONMember] = []
        var names: Set<String> = []
        var items: [JSONValue] = []
        let close = UInt8(ascii: object ? "}" : "]")
        skipWhitespace()
        if index < bytes.count, bytes[index] == close {
            index += 1
            return object ? .object([]) : .array([])
        }
        while true {
            skipWhitespace()
            if object {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw failure("expected a field name in double quotes")
                }
                let name = try parseString()
                if !names.insert(name).inserted { throw failure("'\(name)' given twice") }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                index += 1
                skipWhitespace()
                members.append(JSONMember(name, try parseValue()))
            } else {
                items.append(try parseValue())
            }
            skipWhitespace()
            guard index < bytes.count else { throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == close {
                index += 1
                return object ? .object(members) : .array(items)
            }
            throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// A string literal, in one pass: its UTF-8 bytes are collected (escapes encoded in place) and
    /// decoded once at the end, so the time is linear in its length whatever the escapes.
    private mutating func parseString() throws(ProtoJSONError) -> String {
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else { throw failure("expected '\"' to end the string") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw failure("control characters in strings must be escaped") }
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                continue
            }
            guard index < bytes.count else { throw failure("expected an escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("expected the second half of a surrogate pair")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("expected a low surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                utf8.append(contentsOf: UTF8.encode(Unicode.Scalar(code) ?? "\u{FFFD}")!)
            default:
                index -= 1
                throw failure("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private mutating func hex4() throws(ProtoJSONError) -> UInt32 {
        guard bytes.count - index >= 4, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw failure("expected four hex digits") }
        index += 4
        return value
    }

    private mutating func parseNumber() throws(ProtoJSONError) -> JSONValue {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        if integerDigits == 0 { throw failure("expected a digit") }
        if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") {
            index = integerStart
            throw failure("numbers have no leading zeros")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { throw failure("expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits() == 0 { throw failure("expected a digit in the exponent") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }
}
