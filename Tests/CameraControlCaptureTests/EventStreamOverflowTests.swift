import CameraControlCapture
import CameraControlGestures
import CameraControlWire
import Testing

@Suite("CaptureEventInteraction.events: a consumer that falls behind")
struct EventStreamOverflowTests {
    @Test func aFullBufferEndsTheStreamInsteadOfDroppingAnEnded() async {
        let interaction = CaptureEventInteraction(eventBufferLimit: 3)
        interaction.setSessionRunning(true)
        let events = interaction.events
        for press in 0..<3 {
            let t = UInt64(press) * 1_000_000
            interaction.handle(Gesture(kind: .pressBegan, source: .volumeDown, timestampMicros: t))
            let summary = PressSummary(durationMicros: 100_000, isLongPress: false, peakForceMillinewtons: 0)
            interaction.handle(Gesture(kind: .pressEnded(summary), source: .volumeDown, timestampMicros: t + 100_000))
        }
        var seen: [CaptureEventPhase] = []
        for await event in events { seen.append(event.phase) }
        // The buffer held 3 (began, ended, began); the 4th (an ended) did not fit, so the stream ended
        // rather than going on without it.
        #expect(seen == [.began, .ended, .began])
    }
}
