// libFuzzer harness (scripts/fuzz connection): a hostile device against the host's ConnectionCore.
//
// The input is a script of records: `00 n bytes…` raw bytes from the device, `01 …` a well-formed frame
// (type, flags, sequence, call id from the calls in flight, status, payload), so the fuzzer gets past the
// check; `02 t` time passes; `03 m` the host starts a call; `04` the host cancels one; `05` the session
// is marked established.
//
// Properties: never a crash; the calls in flight never exceed the configured limit; every call the host
// started ends at most once, and all of them end by the time the link dies or closes; what the host
// sends is always well-formed.
import CameraControlRPC
import CameraControlWire

struct Script {
    var bytes: ArraySlice<UInt8>
    mutating func byte() -> UInt8? { bytes.popFirst() }
    mutating func take(_ count: Int) -> [UInt8] {
        let chunk = Array(bytes.prefix(count))
        bytes = bytes.dropFirst(chunk.count)
        return chunk
    }
}

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConnection(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var script = Script(bytes: ArraySlice(UnsafeBufferPointer(start: data, count: size)))
    var core = ConnectionCore()
    var now = Duration.seconds(1)
    var started: Set<CallID> = []
    var ended: Set<CallID> = []
    var hostDecoder = FrameDecoder()

    func drain(_ core: inout ConnectionCore) {
        for event in core.takeEvents() {
            switch event {
            case .response(let call, _), .failed(let call, _), .streamEnded(let call):
                precondition(started.contains(call), "an event for a call the host never started")
                precondition(!ended.contains(call), "\(call) ended twice")
                ended.insert(call)
            default: break
            }
        }
        precondition(core.callsInFlight.count <= core.configuration.maxCallsInFlight, "too many calls in flight")
        hostDecoder.append(core.takeOutbound())
        while let output = hostDecoder.next() {
            if case .error(let error) = output { preconditionFailure("the host sent a bad frame: \(error)") }
        }
    }

    while let record = script.byte() {
        switch record % 6 {
        case 0:
            let count = Int(script.byte() ?? 0)
            core.receive(script.take(count), now: now)
        case 1:
            let header = script.take(6)
            guard header.count == 6 else { break }
            let live = core.callsInFlight
            let callID = live.isEmpty || header[3] & 0x80 != 0 ? UInt32(header[3]) : live[Int(header[3]) % live.count].rawValue
            let type = PacketType(rawValue: header[0])
            let packet = Packet(
                type: type, isReliable: header[0] & 0x10 != 0, sequence: UInt16(header[1]) | UInt16(header[2]) << 8,
                callID: callID, address: type == .request ? MethodID(service: 1, method: header[4]) : nil,
                status: type == .error || type == .streamEnd ? StatusCode(rawValue: header[4]) : nil,
                payload: script.take(Int(header[5])))
            if let wire = try? PacketEncoder.encode(packet) { core.receive(wire, now: now) }
        case 2:
            now += .milliseconds(Int64(script.byte() ?? 1) * 10)
        case 3:
            let methods = MethodID.allV1
            let method = methods[Int(script.byte() ?? 0) % methods.count]
            if let call = try? core.startCall(method: method, request: [], now: now) { started.insert(call) }
        case 4:
            if let call = core.callsInFlight.first { core.cancelCall(call, now: now) }
        default:
            core.markSessionEstablished(heartbeatInterval: .milliseconds(100), maxFrameBytes: nil, now: now)
        }
        core.poll(now: now)
        drain(&core)
    }
    core.closeLink(now: now)
    drain(&core)
    precondition(ended == started, "calls still open after the link closed")
    return 0
}
