import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback client with a receive timeout (a test never waits for ever).
public final class LoopbackClient {
    /// The socket.
    public let descriptor: Int32

    /// Connects to 127.0.0.1:`port` (receives time out after 10 s).
    public init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClientError.socket }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw ClientError.connect
        }
    }

    /// Sends `text` whole (MSG_NOSIGNAL: a closed peer is no signal).
    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until `done` holds for what came so far, the peer closes, or the timeout passes.
    public func read(until done: (String) -> Bool = { _ in false }) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !done(String(decoding: received, as: UTF8.self)) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    deinit { close(descriptor) }

    /// The socket could not be made or connected.
    public enum ClientError: Error { case socket, connect }
}
