import CameraControlWire
import Testing

@testable import CameraControlConformance

/// What a failure's message says the device sent meanwhile (long-garbage-then-request's diagnostics).
@Suite("Failure summaries")
struct FailureSummaryTests {
    @Test("frames are counted by packet type, with the first and last arrival relative to the start")
    func countsAndTimes() throws {
        let start = ContinuousClock.now
        func frame(_ type: PacketType?, at millis: Int) -> ReceivedFrame {
            ReceivedFrame(
                wire: [1, 0], packet: type.map { Packet(type: $0, callID: 0) }, error: nil,
                at: start.advanced(by: .milliseconds(millis)))
        }
        let frames = [frame(.heartbeat, at: -30), frame(.ack, at: 95), frame(nil, at: 120), frame(.heartbeat, at: 1_990)]
        #expect(
            DecisionCases.summary(frames, since: start)
                == "1 ACK, 2 HEARTBEAT, 1 undecodable (the first at -30 ms, the last at +1990 ms)")
        #expect(DecisionCases.summary([], since: start) == "nothing")
    }
}
