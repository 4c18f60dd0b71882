import CameraControlControls
import Testing

@Suite("System sliders follow the camera's format")
struct SystemSliderFormatTests {
    static let formats = [
        CameraFormat(name: "wide", zoomFactorRange: 1...10, exposureBiasRange: -8...8, prominentZoomFactors: [2, 5]),
        CameraFormat(name: "tele", zoomFactorRange: 2...6, exposureBiasRange: -1...1, prominentZoomFactors: [5]),
        CameraFormat(name: "fixed", zoomFactorRange: nil, exposureBiasRange: nil),
    ]

    @Test("a format change re-ranges both sliders, clamps their values; an absent range disables them")
    func reRange() throws {
        let camera = try SyntheticCamera(formats: Self.formats)
        let zoom = try SystemZoomSlider(device: camera)
        let exposure = try SystemExposureBiasSlider(device: camera)
        #expect(zoom.domain == .continuous(1...10, scale: .logarithmic))
        #expect(zoom.prominentValues == [2, 5])
        try camera.pinch(toZoomFactor: 8)

        try camera.setActiveFormat(1)
        #expect(camera.activeFormatIndex == 1)
        #expect(zoom.domain == .continuous(2...6, scale: .logarithmic))
        #expect(zoom.prominentValues == [5])
        #expect(zoom.value == 6)  // clamped into the new range
        #expect(exposure.domain.lowerBound == -1 && exposure.domain.upperBound == 1)
        #expect(zoom.isEnabled && exposure.isEnabled)

        try camera.setActiveFormat(2)
        #expect(!zoom.isEnabled && !exposure.isEnabled)
        #expect(zoom.snapshot.isEnabled == false)
        // Disabled, the slider keeps its value: the camera's 1× clamped into 2…6 would be a value nobody set.
        #expect(camera.zoomFactor == 1 && zoom.value == 6)

        try camera.setActiveFormat(0)
        #expect(zoom.isEnabled && exposure.isEnabled)
        #expect(zoom.value == 1)  // the camera's again
        #expect(zoom.domain == .continuous(1...10, scale: .logarithmic))
        #expect(exposure.domain.lowerBound == -2 && exposure.domain.upperBound == 2)
        #expect(throws: ControlError.self) { try camera.setActiveFormat(3) }
    }

    @Test("a camera needs a format, and every range in it must be usable")
    func badFormats() {
        #expect(throws: ControlError.self) { try SyntheticCamera(formats: []) }
        #expect(throws: ControlError.self) {
            try SyntheticCamera(formats: [CameraFormat(name: "bad", zoomFactorRange: 3...3, exposureBiasRange: nil)])
        }
    }
}
