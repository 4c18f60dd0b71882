/// The app's interface orientation (UIKit's `UIInterfaceOrientation`), which decides which way a slide
/// moves a control and where the overlay sits.
///
/// Geometry (docs/CONTROLS.md, "Orientation"): the Camera Control is on the device's right edge in
/// portrait, and strip positions grow toward the device's top. The overlay sits on the screen edge next to
/// the control, and a slide moves a value up when the finger moves toward the screen's top (control on a
/// side edge) or its right (control on the top or bottom edge), as the person sees it.
public enum InterfaceOrientation: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Home side down: the control on the screen's right edge.
    case portrait
    /// Turned upside down: the control on the screen's left edge.
    case portraitUpsideDown = "portrait-upside-down"
    /// UIKit's `landscapeLeft`: the device's top to the screen's right, the control on the bottom edge.
    case landscapeLeft = "landscape-left"
    /// UIKit's `landscapeRight`: the device's top to the screen's left, the control on the top edge.
    case landscapeRight = "landscape-right"

    /// The raw name.
    public var description: String { rawValue }

    /// +1 when a growing strip position moves the finger up or right on screen (values grow), −1 when it
    /// moves it down or left (slides are mirrored).
    public var slideSign: Double {
        switch self {
        case .portrait, .landscapeLeft: 1
        case .portraitUpsideDown, .landscapeRight: -1
        }
    }

    /// Where the overlay sits: the screen edge next to the Camera Control.
    public var overlayPlacement: OverlayPlacement {
        switch self {
        case .portrait: .rightEdge
        case .portraitUpsideDown: .leftEdge
        case .landscapeLeft: .bottomEdge
        case .landscapeRight: .topEdge
        }
    }
}

/// The screen edge the overlay is drawn along (beside the Camera Control), as the person sees the screen.
public enum OverlayPlacement: String, Hashable, Sendable, CustomStringConvertible {
    /// Along the right edge, values growing upwards.
    case rightEdge = "right-edge"
    /// Along the left edge, values growing upwards.
    case leftEdge = "left-edge"
    /// Along the top edge, values growing to the right.
    case topEdge = "top-edge"
    /// Along the bottom edge, values growing to the right.
    case bottomEdge = "bottom-edge"

    /// The raw name.
    public var description: String { rawValue }
}
