import CameraControlHTTP
import CameraControlTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

private func pageServer(_ configuration: HTTPServer.Configuration = .init()) throws -> HTTPServer {
    try HTTPServer(configuration: configuration) { request in
        switch (request.method, request.path) {
        case ("GET", "/"): return .response(.content(Array("<p>page</p>".utf8), type: "text/html"))
        case ("GET", "/events"): return .eventStream(initial: ServerSentEvents.event("hello", data: "1"))
        case ("POST", "/echo"): return .response(HTTPResponse(body: request.body))
        default: return .response(.text("no such page\n", status: .notFound))
        }
    }
}

@Suite("HTTP server", .serialized)
struct HTTPServerTests {
    @Test("listens on loopback and answers requests on one kept-alive connection")
    func keepAlive() throws {
        let server = try pageServer()
        defer { server.shutdown() }
        #expect(server.configuration.host == "127.0.0.1")
        let client = try LoopbackClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = client.read { $0.hasSuffix("<p>page</p>") }
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"))
        client.send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        let second = client.read()
        #expect(second.contains("Connection: close"))
        #expect(second.hasSuffix("\r\n\r\nhello"))
        client.send("GET /nothing HTTP/1.1\r\n\r\n")
        #expect(client.read() == "", "the server closed after Connection: close")
    }

    @Test("an event stream gets its first event, then every broadcast")
    func eventStream() throws {
        let server = try pageServer()
        defer { server.shutdown() }
        let client = try LoopbackClient(port: server.port)
        client.send("GET /events HTTP/1.1\r\n\r\n")
        let head = client.read { $0.contains("data: 1\n\n") }
        #expect(head.contains("Content-Type: text/event-stream"))
        server.broadcast(ServerSentEvents.event("capture", data: "{\"phase\":\"ended\"}"))
        let next = client.read { $0.contains("\n\n") }
        #expect(next == "event: capture\ndata: {\"phase\":\"ended\"}\n\n")
    }

    @Test(
        "bad input is refused with its status, and the server goes on serving",
        arguments: [
            ("GET / HTTP/1.1\r\nX: " + String(repeating: "y", count: 20_000) + "\r\n\r\n", "431"),
            ("\u{0}\u{1}garbage\r\n\r\n", "400"),
            ("POST /echo HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n", "413"),
        ])
    func badInput(text: String, status: String) throws {
        let server = try pageServer()
        defer { server.shutdown() }
        let bad = try LoopbackClient(port: server.port)
        bad.send(text)
        #expect(bad.read().hasPrefix("HTTP/1.1 \(status) "))
        let good = try LoopbackClient(port: server.port)
        good.send("GET / HTTP/1.1\r\n\r\n")
        #expect(good.read { $0.hasSuffix("</p>") }.hasPrefix("HTTP/1.1 200"))
        #expect(server.statistics.refusedBadRequest == 1)
    }

    @Test("a head that trickles in too slowly gets 408 and is closed (slowloris)")
    func slowHead() throws {
        let server = try pageServer(.init(headTimeout: .milliseconds(300)))
        defer { server.shutdown() }
        let slow = try LoopbackClient(port: server.port)
        slow.send("GET / HTTP/1.1\r\nX-1: a\r\n")
        let answer = slow.read()
        #expect(answer.hasPrefix("HTTP/1.1 408 "))
        #expect(server.statistics.timedOut == 1)
    }

    @Test("1,000 connections: those over the bound get 503, memory stays bounded, the page is still served")
    func manyConnections() throws {
        let server = try pageServer(.init(maxConnections: 32))
        defer { server.shutdown() }
        var held: [LoopbackClient] = []
        var refused = 0
        for _ in 0..<1_000 {
            guard let client = try? LoopbackClient(port: server.port) else { continue }
            if held.count < 32 {
                held.append(client)
            } else {
                let answer = client.read()
                if answer.hasPrefix("HTTP/1.1 503 ") { refused += 1 }
            }
        }
        #expect(held.count == 32)
        #expect(refused == 1_000 - 32)
        #expect(server.statistics.open <= 32)
        held.removeAll()
        let ok = try eventuallyConnects(server)
        #expect(ok)
    }

    @Test("an event stream that is never read is dropped once its backlog passes the bound")
    func slowStreamDropped() throws {
        let server = try pageServer(.init(maxStreamBacklog: 64 * 1_024))
        defer { server.shutdown() }
        let client = try LoopbackClient(port: server.port)
        var size: Int32 = 4_096
        _ = setsockopt(client.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        client.send("GET /events HTTP/1.1\r\n\r\n")
        _ = client.read { $0.contains("data: 1\n\n") }
        let chunk = ServerSentEvents.event("sample", data: String(repeating: "x", count: 16_000))
        var dropped = false
        for _ in 0..<4_000 where !dropped {
            server.broadcast(chunk)
            dropped = server.statistics.droppedSlowStreams == 1
            if !dropped { usleep(200) }
        }
        #expect(dropped)
    }

    @Test("a port in use is a clear error")
    func portInUse() throws {
        let server = try pageServer()
        defer { server.shutdown() }
        #expect {
            try pageServer(.init(port: server.port))
        } throws: { error in
            "\(error)".contains("cannot listen on 127.0.0.1:\(server.port)")
        }
    }
}

/// Connects and gets the page within a few tries (the refused clients' sockets close asynchronously).
private func eventuallyConnects(_ server: HTTPServer) throws -> Bool {
    for _ in 0..<50 {
        if let client = try? LoopbackClient(port: server.port) {
            client.send("GET / HTTP/1.1\r\n\r\n")
            if client.read(until: { $0.hasSuffix("</p>") }).hasPrefix("HTTP/1.1 200") { return true }
        }
        usleep(20_000)
    }
    return false
}
