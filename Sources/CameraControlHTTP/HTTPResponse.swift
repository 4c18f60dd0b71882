/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// The three-digit code.
    public var code: Int
    /// The reason phrase sent after it.
    public var reason: String

    /// A status with this code and reason phrase.
    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// 200: the request succeeded.
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    /// 204: done, nothing to send back.
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    /// 400: the request is not HTTP.
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    /// 404: no such page.
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    /// 405: the page exists, the method does not.
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    /// 408: the request did not arrive in time.
    public static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    /// 409: the server cannot do this now (no simulator attached).
    public static let conflict = HTTPStatus(code: 409, reason: "Conflict")
    /// 413: the body is over the bound.
    public static let contentTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    /// 414: the request line is over the bound.
    public static let uriTooLong = HTTPStatus(code: 414, reason: "URI Too Long")
    /// 422: well-formed, but its content is refused.
    public static let unprocessable = HTTPStatus(code: 422, reason: "Unprocessable Content")
    /// 431: the head is over the bound.
    public static let headerFieldsTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    /// 500: the server failed.
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    /// 501: a feature this server lacks.
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    /// 503: too many connections.
    public static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    /// 505: not HTTP/1.0 or 1.1.
    public static let httpVersionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")

    /// `code reason`, as on the status line.
    public var description: String { "\(code) \(reason)" }
}

/// A whole response: status, headers and body. The server adds `Content-Length` and `Connection`.
public struct HTTPResponse: Sendable, Equatable {
    /// The status line's code and reason.
    public var status: HTTPStatus
    /// Header fields besides `Content-Length` and `Connection`.
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]

    /// A response with these parts.
    public init(status: HTTPStatus = .ok, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// A response with `body` of the given content type.
    public static func content(_ body: [UInt8], type: String) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": type], body: body)
    }

    /// The bytes on the wire: status line, headers (sorted, for stable output), `Content-Length`,
    /// `Connection: close` when `closing`, the empty line and the body.
    public func encoded(closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n"
        if closing { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}

/// Server-sent events (the WHATWG HTML standard's `text/event-stream`): each event is an optional
/// `event:` line, one `data:` line per line of its data, and an empty line.
public enum ServerSentEvents {
    /// The head of an event-stream response (no `Content-Length`: the stream lasts until either side closes).
    public static let responseHead: [UInt8] = Array(
        ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
            + "Connection: close\r\n\r\n").utf8)

    /// One event's bytes. Line breaks in `data` become separate `data:` lines (a receiver joins them
    /// with LF); CR and LF in `name` are dropped.
    public static func event(_ name: String?, data: String) -> [UInt8] {
        var text = ""
        if let name {
            text += "event: " + name.filter { $0 != "\r" && $0 != "\n" } + "\n"
        }
        for line in data.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            text += "data: " + line + "\n"
        }
        text += "\n"
        return Array(text.utf8)
    }

    /// A comment line: keeps idle proxies and the page's connection check alive.
    public static let keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8)
}
