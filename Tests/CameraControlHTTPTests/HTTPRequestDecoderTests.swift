import CameraControlHTTP
import CameraControlTestSupport
import Testing

/// What a decoder gave for a whole input: the requests, then the error that stopped it, if any.
private struct Decoded: Equatable, CustomStringConvertible {
    var requests: [HTTPRequest] = []
    var error: HTTPRequestError?

    var description: String {
        requests.map { "\($0.method) \($0.target) \($0.headers.count) fields \($0.body.count) B" }.joined(separator: ", ")
            + (error.map { " then \($0)" } ?? "")
    }
}

private func decode(_ chunks: [[UInt8]], limits: HTTPLimits = .default) -> Decoded {
    var decoder = HTTPRequestDecoder(limits: limits)
    var result = Decoded()
    for chunk in chunks {
        decoder.append(chunk)
        do {
            while let request = try decoder.next() { result.requests.append(request) }
        } catch {
            result.error = error
            return result
        }
    }
    return result
}

@Suite("HTTP request decoder")
struct HTTPRequestDecoderTests {
    @Test("pipelined requests come out whole, the same however the bytes are split")
    func pipelined() {
        let text =
            "GET /events?since=3 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
            + "POST /press HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"force\":1200}"
            + "GET / HTTP/1.0\r\n\r\n"
        let whole = DecoderVerifier.verify(Array(text.utf8)) { decode($0) }
        #expect(whole.error == nil)
        #expect(whole.requests.map(\.method) == ["GET", "POST", "GET"])
        #expect(whole.requests.map(\.target) == ["/events?since=3", "/press", "/"])
        #expect(whole.requests[0].path == "/events")
        #expect(whole.requests[0].header("accept") == "text/event-stream")
        #expect(whole.requests[1].body == Array("{\"force\":1200}".utf8))
        #expect(whole.requests[2].version == "HTTP/1.0")
    }

    @Test("a head still incomplete holds nothing past its bound")
    func incompleteHeadIsBounded() throws {
        var decoder = HTTPRequestDecoder(limits: HTTPLimits(maxRequestLineBytes: 64, maxHeadBytes: 256))
        decoder.append(Array("GET / HTTP/1.1\r\nX-A: ".utf8))
        #expect(try decoder.next() == nil)
        var thrown: HTTPRequestError?
        for _ in 0..<1_000 {
            decoder.append([UInt8](repeating: UInt8(ascii: "a"), count: 100))
            do { _ = try decoder.next() } catch {
                thrown = error
                break
            }
        }
        #expect(thrown?.code == .headTooLarge)
        #expect(decoder.bufferedBytes == 0, "a failed decoder keeps no bytes")
        decoder.append([UInt8](repeating: 0, count: 10_000))
        #expect(decoder.bufferedBytes == 0, "nor takes more")
        #expect(throws: HTTPRequestError.self) { try decoder.next() }
    }

    @Test(
        "bad requests get the status a server answers them with",
        arguments: [
            ("GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
            ("G(T / HTTP/1.1\r\n\r\n", 400),
            ("GET /a b HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1 extra\r\n\r\n", 400),
            ("\u{1}\u{2}\u{3}\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nX: a\u{7}b\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 70000\r\n\r\n", 413),
            ("GET /" + String(repeating: "x", count: 3_000) + " HTTP/1.1\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 65) + "\r\n", 431),
            ("GET / HTTP/1.1\r\nX: " + String(repeating: "y", count: 9_000) + "\r\n\r\n", 431),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
            ("GET / HTTP/2.0\r\n\r\n", 505),
        ])
    func badRequests(text: String, status: Int) {
        let result = decode([Array(text.utf8)])
        #expect(result.requests.isEmpty)
        #expect(result.error?.status.code == status, "\(result.error.map(String.init(describing:)) ?? "no error")")
        let split = decode(Array(text.utf8).map { [$0] })
        #expect(split.error?.status.code == status, "fed one byte at a time")
    }

    @Test("a body waits for every declared byte, and the next request follows it")
    func bodyWaits() throws {
        var decoder = HTTPRequestDecoder()
        decoder.append(Array("POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\nab".utf8))
        #expect(try decoder.next() == nil)
        decoder.append(Array("cdGET /y HTTP/1.1\r\n\r\n".utf8))
        #expect(try decoder.next()?.body == Array("abcd".utf8))
        #expect(try decoder.next()?.target == "/y")
        #expect(try decoder.next() == nil)
        #expect(decoder.isIdle)
    }
}

@Suite("HTTP responses and server-sent events")
struct HTTPResponseTests {
    @Test("a response carries its length and, when closing, says so")
    func encoded() {
        let bytes = HTTPResponse.text("hi\n").encoded(closing: true)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n\r\nhi\n")
    }

    @Test("an event's lines each get a data: field; a name cannot break the stream")
    func event() {
        #expect(
            String(decoding: ServerSentEvents.event("sample", data: "{\"f\":1}"), as: UTF8.self) == "event: sample\ndata: {\"f\":1}\n\n")
        #expect(String(decoding: ServerSentEvents.event(nil, data: "a\nb\r\nc"), as: UTF8.self) == "data: a\ndata: b\ndata: c\n\n")
        #expect(String(decoding: ServerSentEvents.event("x\ny", data: ""), as: UTF8.self) == "event: xy\ndata: \n\n")
    }
}
