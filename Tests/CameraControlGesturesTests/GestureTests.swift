import CameraControlGestures
import Testing

@Suite("Gesture kinds as text")
struct GestureKindTextTests {
    @Test(
        "each kind has a kebab-case name, and its description adds the details a person needs",
        arguments: [
            (GestureKind.touchBegan, "touch-began", "touch-began"),
            (.lightPressEnded, "light-press-ended", "light-press-ended"),
            (.doubleLightPress, "double-light-press", "double-light-press"),
            (.slideBegan(SlideMotion(position: 0.25, delta: 0, velocity: 0)), "slide-began", "slide-began at 0.25"),
            (
                .slideChanged(SlideMotion(position: 0.425, delta: -0.0104, velocity: 1.5)), "slide-changed",
                "slide-changed at 0.43 Δ-0.010 v+1.50/s"
            ),
            (.slideEnded(SlideMotion(position: 1, delta: 0.01, velocity: 0)), "slide-ended", "slide-ended at 1.00"),
            (.longPressBegan(heldMicros: 500_400), "long-press-began", "long-press-began after 500 ms"),
            (
                .pressEnded(PressSummary(durationMicros: 80_000, isLongPress: false, peakForceMillinewtons: 3500)), "press-ended",
                "press-ended click 80 ms peak 3500 mN"
            ),
            (
                .pressEnded(PressSummary(durationMicros: 1_200_600, isLongPress: true, peakForceMillinewtons: 0)), "press-ended",
                "press-ended hold 1201 ms peak 0 mN"
            ),
            (.remoteClick, "remote-click", "remote-click"),
        ])
    func nameAndDescription(kind: GestureKind, name: String, description: String) {
        #expect(kind.name == name)
        #expect(kind.description == description)
        #expect("\(kind)" == description, "interpolation must not print a Swift dump")
    }
}
