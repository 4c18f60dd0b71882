import CameraControlHTTP
import Synchronization

/// What the page's virtual Camera Control asked for: one scenario step (`touch at=0.4`, `force 1800mN
/// over=30ms`, `slide to=0.6 over=40ms force=1500mN`, `release`, `full-click`, `button volume-up`, …),
/// already checked to be one short line of printable ASCII.
public struct VirtualControlStep: Sendable, Equatable {
    /// The step's text (docs/SIMULATOR.md §3).
    public var text: String

    /// The longest step the page may post (a scenario line is at most 200 characters).
    public static let maxLength = 200

    /// `text` as a step when it is one line of 1…``maxLength`` printable ASCII characters.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxLength, bytes.allSatisfy({ $0 >= 32 && $0 < 127 }) else { return nil }
        self.text = text
    }
}

/// The outcome of a virtual-control step, answered to the page.
public enum VirtualControlOutcome: Sendable, Equatable {
    /// It will be played on the device, after the steps before it (204).
    case accepted
    /// The step cannot be played now: the device is not a simulator, none is connected, or (`camctl serve`) an
    /// app has it (409, with the reason in one line; the page shows it).
    case unavailable(String)
    /// The step does not parse (422, with the parser's message).
    case invalid(String)
}

/// The live page over ``HTTPServer``: `GET /` serves the page, `GET /events` streams the session as
/// server-sent events (each a JSON object, `data:` only), `POST /control` takes one virtual-control
/// step, and `GET /camera` streams the preview as MJPEG from the frames given to ``publishFrame(jpeg:)``
/// (404 on a page made without a camera).
///
/// Messages marked *sticky* (the device's identity, its thresholds, the latest counters) are kept, one
/// per kind, and sent first to every page that connects later.
public final class LivePageServer: Sendable {
    /// The HTTP server underneath (its port, its statistics).
    public let http: HTTPServer
    private let sticky = StickyMessages()
    private static let boundary = "camctlframe"
    private static let cameraChannel = "camera"

    /// Starts serving.
    ///
    /// - Parameters:
    ///   - configuration: where to listen and the server's bounds (loopback by default).
    ///   - hasCamera: whether frames will come (``publishFrame(jpeg:)``); without, `GET /camera` answers 404
    ///     at once rather than an MJPEG stream that never shows a picture.
    ///   - control: runs a virtual-control step; called on the server's thread, so it must only check and
    ///     hand the step on (not wait for the device).
    /// - Throws: ``HTTPServerError`` when the address cannot be listened on.
    public init(
        configuration: HTTPServer.Configuration = .init(), hasCamera: Bool = false,
        control: @escaping @Sendable (VirtualControlStep) -> VirtualControlOutcome = { _ in .unavailable("no simulator attached") }
    ) throws(HTTPServerError) {
        let sticky = self.sticky
        http = try HTTPServer(configuration: configuration) { request in
            Self.route(request, sticky: sticky, hasCamera: hasCamera, control: control)
        }
    }

    /// Sends one JSON object (one line, no newline inside) to every open page. When `sticky` names a kind,
    /// the message also replaces the kept one of that kind.
    public func publish(json: String, sticky kind: String? = nil) {
        let bytes = ServerSentEvents.event(nil, data: json)
        if let kind { sticky.keep(bytes, as: kind) }
        http.broadcast(bytes)
    }

    /// Sends one JPEG frame to every open `GET /camera` preview.
    public func publishFrame(jpeg: [UInt8]) {
        let head = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n"
        http.broadcast(Array(head.utf8) + jpeg + Array("\r\n".utf8), to: Self.cameraChannel)
    }

    /// Stops serving (see ``HTTPServer/shutdown()``).
    public func shutdown() { http.shutdown() }

    private static func route(
        _ request: HTTPRequest, sticky: StickyMessages, hasCamera: Bool,
        control: @Sendable (VirtualControlStep) -> VirtualControlOutcome
    ) -> HTTPServerReply {
        switch (request.method, request.path) {
        case ("GET", "/"), ("GET", "/index.html"):
            return .response(.content(Array(LivePageAssets.html.utf8), type: "text/html; charset=utf-8"))
        case ("GET", "/events"):
            return .eventStream(initial: sticky.all)
        case ("GET", "/camera") where !hasCamera:
            return .response(.text("no camera: this page shows none (camctl monitor --http --camera SOURCE does)\n", status: .notFound))
        case ("GET", "/camera"):
            return .stream(contentType: "multipart/x-mixed-replace; boundary=\(boundary)", channel: cameraChannel, initial: [])
        case ("POST", "/control"):
            guard let step = VirtualControlStep(String(decoding: request.body, as: UTF8.self)) else {
                return .response(
                    .text(
                        "a step is one line of at most \(VirtualControlStep.maxLength) printable ASCII characters\n", status: .unprocessable
                    ))
            }
            switch control(step) {
            case .accepted: return .response(HTTPResponse(status: .noContent))
            case .unavailable(let why): return .response(.text(why + "\n", status: .conflict))
            case .invalid(let why): return .response(.text(why + "\n", status: .unprocessable))
            }
        case (_, "/"), (_, "/events"), (_, "/control"), (_, "/camera"):
            return .response(.text("\(request.method) is not allowed here\n", status: .methodNotAllowed))
        default:
            return .response(.text("no such page: \(request.path.prefix(100))\n", status: .notFound))
        }
    }
}

/// The latest message of each sticky kind, in the order the kinds first came.
final class StickyMessages: Sendable {
    private let kept = Mutex<[(kind: String, bytes: [UInt8])]>([])

    /// Keeps `bytes` as the message of `kind`, replacing the one kept before.
    func keep(_ bytes: [UInt8], as kind: String) {
        kept.withLock { kept in
            if let index = kept.firstIndex(where: { $0.kind == kind }) {
                kept[index].bytes = bytes
            } else {
                kept.append((kind, bytes))
            }
        }
    }

    /// Every kept message, one after another.
    var all: [UInt8] { kept.withLock { $0.flatMap { $0.bytes } } }
}
