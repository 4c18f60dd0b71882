// libFuzzer harness (scripts/fuzz messages): arbitrary bytes into every message type of the schema
// (the first byte picks the type).
//
// Properties: never a crash; a message that decodes re-encodes to bytes that decode and re-encode to
// the same bytes (the encoding is canonical: unknown fields dropped, repeated fields merged).
import CameraControlWire

/// Every message of Proto/cameracontrol/v1 (Sources/CameraControlWire/Generated).
let messageTypes: [any WireMessage.Type] = [
    ProtocolVersion.self, Thresholds.self, Config.self, GetConfigRequest.self, ConfigureRequest.self, DeviceIdentity.self,
    Capabilities.self, HandshakeRequest.self, HandshakeResponse.self, PingRequest.self, PingResponse.self, Counters.self,
    GetCountersRequest.self, ResetCountersRequest.self, PlayHapticRequest.self, PlaySoundRequest.self, SetIndicatorRequest.self,
    FeedbackResponse.self, InputEvent.self, StreamInputEventsRequest.self, StreamRawSamplesRequest.self, RawSampleBatch.self,
    RunScenarioRequest.self, RunScenarioResponse.self, SimulatorStatus.self, GetSimulatorStatusRequest.self,
]

extension WireMessage {
    static func roundTrip(_ bytes: [UInt8]) {
        typealias Message = Self
        guard let message = try? Message(serializedBytes: bytes) else { return }
        let once = message.serializedBytes()
        guard let again = try? Message(serializedBytes: once) else {
            preconditionFailure("\(Message.protoMessageName): its own encoding does not decode")
        }
        precondition(again.serializedBytes() == once, "\(Message.protoMessageName): encoding is not stable")
        // Borrowed bytes decode the same as an array.
        let borrowed = bytes.withUnsafeBytes { try? Message(serializedBytes: $0) }
        precondition(borrowed?.serializedBytes() == once, "\(Message.protoMessageName): borrowed decode differs")
    }
}

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessages(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    messageTypes[Int(data[0]) % messageTypes.count].roundTrip(bytes)
    return 0
}
