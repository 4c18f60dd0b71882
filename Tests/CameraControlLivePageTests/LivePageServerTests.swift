import CameraControlHTTP
import CameraControlLivePage
import CameraControlTestSupport
import Synchronization
import Testing

@Suite("Live page server", .serialized)
struct LivePageServerTests {
    @Test("the page is served whole, with no outside asset")
    func page() throws {
        let page = try LivePageServer()
        defer { page.shutdown() }
        let client = try LoopbackClient(port: page.http.port)
        client.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        let answer = client.read()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.contains("Content-Type: text/html; charset=utf-8"))
        #expect(answer.contains("new EventSource(\"/events\")"))
        #expect(answer.hasSuffix("</html>\n") || answer.hasSuffix("</html>"))
        #expect(!answer.contains("http://") && !answer.contains("https://"), "no asset from elsewhere")
    }

    @Test("a page that connects late gets the sticky messages first, then what is published")
    func sticky() throws {
        let page = try LivePageServer()
        defer { page.shutdown() }
        page.publish(json: #"{"type":"device","name":"old"}"#, sticky: "device")
        page.publish(json: #"{"type":"device","name":"camctl-sim"}"#, sticky: "device")
        page.publish(json: #"{"type":"capture","phase":"ended"}"#)
        let client = try LoopbackClient(port: page.http.port)
        client.send("GET /events HTTP/1.1\r\n\r\n")
        let first = client.read { $0.contains("\n\n") }
        #expect(first.hasSuffix("data: {\"type\":\"device\",\"name\":\"camctl-sim\"}\n\n"), "only the latest of a kind, nothing not sticky")
        page.publish(json: #"{"type":"capture","phase":"began"}"#)
        #expect(client.read { $0.contains("\n\n") } == "data: {\"type\":\"capture\",\"phase\":\"began\"}\n\n")
    }

    @Test(
        "virtual-control steps are checked before they reach the device",
        arguments: [
            ("full-click", "204"), ("touch at=0.4", "204"), ("bad\nsecond line", "422"),
            (String(repeating: "x", count: 201), "422"), ("explode", "422"),
        ])
    func control(body: String, status: String) throws {
        let seen = Mutex<[String]>([])
        let page = try LivePageServer { step in
            seen.withLock { $0.append(step.text) }
            return step.text == "explode" ? .invalid("line 1: unknown step") : .accepted
        }
        defer { page.shutdown() }
        let client = try LoopbackClient(port: page.http.port)
        client.send("POST /control HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(client.read().hasPrefix("HTTP/1.1 \(status) "))
        #expect(seen.withLock { $0 } == (status == "204" || body == "explode" ? [body] : []))
    }

    @Test("without a simulator the control answers 409 with the reason")
    func noSimulator() throws {
        let page = try LivePageServer()
        defer { page.shutdown() }
        let client = try LoopbackClient(port: page.http.port)
        client.send("POST /control HTTP/1.1\r\nContent-Length: 7\r\nConnection: close\r\n\r\nrelease")
        let answer = client.read()
        #expect(answer.hasPrefix("HTTP/1.1 409 "))
        #expect(answer.hasSuffix("no simulator attached\n"))
    }

    @Test("without a camera the preview is 404 at once, not a stream that never shows a picture")
    func noCamera() throws {
        let page = try LivePageServer()
        defer { page.shutdown() }
        let client = try LoopbackClient(port: page.http.port)
        client.send("GET /camera HTTP/1.1\r\nConnection: close\r\n\r\n")
        let answer = client.read()
        #expect(answer.hasPrefix("HTTP/1.1 404 "), "\(answer)")
        #expect(answer.hasSuffix("no camera: this page shows none (camctl monitor --http --camera SOURCE does)\n"), "\(answer)")
    }

    @Test("camera frames reach an open preview as multipart JPEG parts")
    func camera() throws {
        let page = try LivePageServer(hasCamera: true)
        defer { page.shutdown() }
        let client = try LoopbackClient(port: page.http.port)
        client.send("GET /camera HTTP/1.1\r\n\r\n")
        #expect(client.read { $0.contains("\r\n\r\n") }.contains("multipart/x-mixed-replace; boundary=camctlframe"))
        // The stream is registered before its head goes out: a frame published now reaches it.
        page.publishFrame(jpeg: [0xFF, 0xD8, 0xFF, 0xD9])
        let got = client.read { $0.contains("Content-Length: 4\r\n\r\n") }
        #expect(got.contains("--camctlframe\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\n\r\n"))
    }
}
