/// An HTTP/1.1 request as the server's handler sees it: the request line and headers, and the body when
/// the request declared one with `Content-Length`.
public struct HTTPRequest: Sendable, Equatable {
    /// The method, as sent (`GET`, `POST`, …; tokens are case-sensitive in HTTP).
    public var method: String
    /// The request target, as sent (`/`, `/events?x=1`).
    public var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String
    /// The header fields in the order they came; names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (empty without `Content-Length`).
    public var body: [UInt8]

    /// A request with these parts.
    public init(
        method: String, target: String, version: String = "HTTP/1.1", headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target's path, without its query.
    public var path: Substring {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The value of the first header named `name` (compared without regard to ASCII case).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Equal when every part is, headers in order.
    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// Why a request was refused; each maps to the status the server answers with before it closes.
public struct HTTPRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code's name.
        public var rawValue: String
        /// A code with this name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The request line or a header line is not HTTP/1.x syntax (400).
        public static let malformed = Code(rawValue: "malformed")
        /// The request line is longer than ``HTTPLimits/maxRequestLineBytes`` (414).
        public static let requestLineTooLong = Code(rawValue: "request-line-too-long")
        /// The head (request line and headers) is longer than ``HTTPLimits/maxHeadBytes``, or has more than
        /// ``HTTPLimits/maxHeaderCount`` fields (431).
        public static let headTooLarge = Code(rawValue: "head-too-large")
        /// `Content-Length` is over ``HTTPLimits/maxBodyBytes`` (413).
        public static let bodyTooLarge = Code(rawValue: "body-too-large")
        /// A body framing this server does not take: `Transfer-Encoding` (501).
        public static let unsupportedFraming = Code(rawValue: "unsupported-framing")
        /// Not HTTP/1.0 or HTTP/1.1 (505).
        public static let unsupportedVersion = Code(rawValue: "unsupported-version")
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a person.
    public var message: String

    /// An error with this code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The status the server answers this error with.
    public var status: HTTPStatus {
        switch code {
        case .requestLineTooLong: return .uriTooLong
        case .headTooLarge: return .headerFieldsTooLarge
        case .bodyTooLarge: return .contentTooLarge
        case .unsupportedFraming: return .notImplemented
        case .unsupportedVersion: return .httpVersionNotSupported
        default: return .badRequest
        }
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// The bounds a decoder (and so the server) holds every request to.
public struct HTTPLimits: Sendable, Equatable {
    /// The longest request line, CRLF included.
    public var maxRequestLineBytes: Int
    /// The longest head: request line, header lines and the empty line.
    public var maxHeadBytes: Int
    /// The most header fields.
    public var maxHeaderCount: Int
    /// The largest body.
    public var maxBodyBytes: Int

    /// Limits with these values.
    public init(maxRequestLineBytes: Int = 2_048, maxHeadBytes: Int = 8_192, maxHeaderCount: Int = 64, maxBodyBytes: Int = 65_536) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }

    /// 2 KiB request line, 8 KiB head, 64 fields, 64 KiB body: what a page and its small JSON posts need.
    public static let `default` = HTTPLimits()
}

/// Decodes HTTP/1.x requests from a byte stream: fed bytes with ``append(_:)``, it returns each whole
/// request from ``next()``, or nil when it needs more. It never holds more than one request's head and body
/// (within ``HTTPLimits``) plus what the peer pipelined after it, and it is sans-IO: no socket, no clock.
///
/// ```
///   GET /events HTTP/1.1\r\n          request line  ≤ maxRequestLineBytes
///   Host: 127.0.0.1\r\n               header lines  ≤ maxHeaderCount
///   \r\n                              end of head    (head ≤ maxHeadBytes)
///   [Content-Length bytes of body]                   ≤ maxBodyBytes
/// ```
///
/// After an error the decoder stays failed: the server answers the error's status and closes.
public struct HTTPRequestDecoder: Sendable {
    private enum State: Sendable {
        /// Reading the head; `scanned` bytes of `buffer` hold no CRLFCRLF.
        case head(scanned: Int)
        /// The head is parsed; waiting for `length` body bytes.
        case body(HTTPRequest, length: Int)
        case failed(HTTPRequestError)
    }

    /// The bounds in force.
    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    private var start = 0
    private var state: State = .head(scanned: 0)

    /// A decoder holding requests to `limits`.
    public init(limits: HTTPLimits = .default) {
        self.limits = limits
    }

    /// Bytes held, not yet returned as part of a request.
    public var bufferedBytes: Int { buffer.count - start }

    /// Whether the decoder holds nothing (between requests, nothing pipelined).
    public var isIdle: Bool {
        if case .head = state { return bufferedBytes == 0 }
        return false
    }

    /// Adds bytes read from the peer.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if case .failed = state { return }
        if start > 0 && start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole request, or nil when more bytes are needed.
    ///
    /// - Throws: ``HTTPRequestError`` with any of its codes; every later call throws the same error.
    public mutating func next() throws(HTTPRequestError) -> HTTPRequest? {
        switch state {
        case .failed(let error):
            throw error
        case .head(let scanned):
            guard let end = findEndOfHead(from: start + scanned) else {
                let held = buffer.count - start
                if let error = overLongHead(held: held) { return try fail(error) }
                state = .head(scanned: max(0, held - 3))
                return nil
            }
            let head = buffer[start..<end]
            start = end + 4
            let (request, length): (HTTPRequest, Int)
            do {
                (request, length) = try parseHead(head)
            } catch {
                return try fail(error)
            }
            state = .body(request, length: length)
            return try next()
        case .body(var request, let length):
            guard buffer.count - start >= length else { return nil }
            request.body = Array(buffer[start..<start + length])
            start += length
            state = .head(scanned: 0)
            return request
        }
    }

    private mutating func fail(_ error: HTTPRequestError) throws(HTTPRequestError) -> HTTPRequest? {
        state = .failed(error)
        buffer = []
        start = 0
        throw error
    }

    /// The index of the CR of the first CRLFCRLF at or after `from`, if any.
    private func findEndOfHead(from: Int) -> Int? {
        var index = max(start, from)
        while index + 3 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The error for a head that is still incomplete after `held` bytes, if it is over a bound already.
    private func overLongHead(held: Int) -> HTTPRequestError? {
        let window = buffer[start..<min(buffer.count, start + limits.maxRequestLineBytes + 1)]
        let lineLength = (window.firstIndex(of: 10) ?? window.endIndex) - start
        if lineLength > limits.maxRequestLineBytes {
            return HTTPRequestError(
                code: .requestLineTooLong, message: "the request line is longer than \(limits.maxRequestLineBytes) bytes")
        }
        if held > limits.maxHeadBytes {
            return HTTPRequestError(code: .headTooLarge, message: "the request head is longer than \(limits.maxHeadBytes) bytes")
        }
        return nil
    }

    private func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPRequestError) -> (HTTPRequest, Int) {
        if head.count + 4 > limits.maxHeadBytes {
            throw HTTPRequestError(code: .headTooLarge, message: "the request head is longer than \(limits.maxHeadBytes) bytes")
        }
        var lines = split(head)
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else {
            throw HTTPRequestError(code: .malformed, message: "no request line")
        }
        if requestLine.count + 2 > limits.maxRequestLineBytes {
            throw HTTPRequestError(
                code: .requestLineTooLong, message: "the request line is longer than \(limits.maxRequestLineBytes) bytes")
        }
        let parts = requestLine.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, let method = token(parts[0]), let target = visible(parts[1]), !target.isEmpty else {
            throw HTTPRequestError(code: .malformed, message: "the request line is not 'METHOD TARGET HTTP/1.x'")
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            if version.hasPrefix("HTTP/") {
                throw HTTPRequestError(code: .unsupportedVersion, message: "\(version.prefix(16)) is not HTTP/1.0 or HTTP/1.1")
            }
            throw HTTPRequestError(code: .malformed, message: "the request line does not end in an HTTP version")
        }
        let fieldLines = lines.dropFirst()
        if fieldLines.count > limits.maxHeaderCount {
            throw HTTPRequestError(code: .headTooLarge, message: "more than \(limits.maxHeaderCount) header fields")
        }
        var headers: [(name: String, value: String)] = []
        var length = 0
        for line in fieldLines {
            guard let colon = line.firstIndex(of: 58), let name = token(line[line.startIndex..<colon]) else {
                throw HTTPRequestError(code: .malformed, message: "a header line is not 'name: value'")
            }
            let value = trimmed(line[(colon + 1)...])
            guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                throw HTTPRequestError(code: .malformed, message: "header \(name) holds a control character")
            }
            let text = String(decoding: value, as: UTF8.self)
            switch name.lowercased() {
            case "content-length":
                guard let declared = Int(text), declared >= 0, text.allSatisfy(\.isASCII) else {
                    throw HTTPRequestError(code: .malformed, message: "Content-Length is not a number")
                }
                if headers.contains(where: { $0.name.lowercased() == "content-length" }) && declared != length {
                    throw HTTPRequestError(code: .malformed, message: "two different Content-Length values")
                }
                if declared > limits.maxBodyBytes {
                    throw HTTPRequestError(code: .bodyTooLarge, message: "a body of \(declared) bytes is over \(limits.maxBodyBytes)")
                }
                length = declared
            case "transfer-encoding":
                throw HTTPRequestError(code: .unsupportedFraming, message: "Transfer-Encoding is not supported; send Content-Length")
            default:
                break
            }
            headers.append((name, text))
        }
        return (HTTPRequest(method: method, target: target, version: version, headers: headers), length)
    }

    /// The head's lines, split at CRLF (a bare LF ends a line too, as RFC 9112 allows a recipient).
    private func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 10 {
                var end = index
                if end > lineStart && head[end - 1] == 13 { end -= 1 }
                lines.append(head[lineStart..<end])
                lineStart = index + 1
            }
            index += 1
        }
        var end = head.endIndex
        if end > lineStart && head[end - 1] == 13 { end -= 1 }
        lines.append(head[lineStart..<end])
        return lines
    }

    /// `bytes` as a string when it is a non-empty RFC 9110 token.
    private func token(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.allSatisfy(Self.isTokenByte) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `bytes` as a string when every byte is visible ASCII (a request target).
    private func visible(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
        while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
        return slice
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
