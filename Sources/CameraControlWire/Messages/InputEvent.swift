/// Which physical input produced an event (`cameracontrol.v1.InputSource`).
public enum InputSource: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not set (never sent by a conforming device).
    case unspecified = 0
    /// The force/touch/slide sensor with its full-press switch.
    case cameraControl = 1
    /// The volume-up button.
    case volumeUp = 2
    /// The volume-down button.
    case volumeDown = 3
    /// The action button.
    case actionButton = 4
    /// A click from a paired remote (AirPods-style stem click).
    case remote = 5

    /// A readable name (`camera-control`, `volume-up`, …).
    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .cameraControl: "camera-control"
        case .volumeUp: "volume-up"
        case .volumeDown: "volume-down"
        case .actionButton: "action-button"
        case .remote: "remote"
        }
    }
}

/// What happened (`cameracontrol.v1.InputEventKind`).
public enum InputEventKind: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not set.
    case unspecified = 0
    /// Capacitive touch began.
    case touchDown = 1
    /// Capacitive touch ended.
    case touchUp = 2
    /// Force crossed the light-press threshold.
    case lightPressDown = 3
    /// Force fell back below the light-press release threshold.
    case lightPressUp = 4
    /// Force crossed the full-press threshold (the click).
    case fullPressDown = 5
    /// The full press was released.
    case fullPressUp = 6
    /// The finger moved along the strip.
    case slide = 7
    /// A debounced button went down.
    case buttonDown = 8
    /// A debounced button went up.
    case buttonUp = 9
    /// A remote reported a complete click.
    case remoteClick = 10

    /// True for the kinds a device sends reliably (presses, buttons, clicks).
    public var isReliable: Bool {
        switch self {
        case .lightPressDown, .lightPressUp, .fullPressDown, .fullPressUp, .buttonDown, .buttonUp, .remoteClick: true
        default: false
        }
    }

    /// A readable name (`light-press-down`, …).
    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .touchDown: "touch-down"
        case .touchUp: "touch-up"
        case .lightPressDown: "light-press-down"
        case .lightPressUp: "light-press-up"
        case .fullPressDown: "full-press-down"
        case .fullPressUp: "full-press-up"
        case .slide: "slide"
        case .buttonDown: "button-down"
        case .buttonUp: "button-up"
        case .remoteClick: "remote-click"
        }
    }
}

/// One input event from the device (`cameracontrol.v1.InputEvent`).
public struct InputEvent: Hashable, Sendable {
    /// Device clock, microseconds since boot.
    public var timestampMicros: UInt64
    /// What happened.
    public var kind: InputEventKind
    /// Which input it came from.
    public var source: InputSource
    /// Conditioned force at the event, millinewtons.
    public var forceMillinewtons: UInt32
    /// Slide position, 0 ..< `slideResolution`.
    public var position: UInt32
    /// Largest force during the press, on `*Up` kinds.
    public var peakForceMillinewtons: UInt32
    /// Counts input events since boot.
    public var eventNumber: UInt32

    /// An event with every field given; unset ones default to zero.
    public init(
        timestampMicros: UInt64,
        kind: InputEventKind,
        source: InputSource,
        forceMillinewtons: UInt32 = 0,
        position: UInt32 = 0,
        peakForceMillinewtons: UInt32 = 0,
        eventNumber: UInt32 = 0
    ) {
        self.timestampMicros = timestampMicros
        self.kind = kind
        self.source = source
        self.forceMillinewtons = forceMillinewtons
        self.position = position
        self.peakForceMillinewtons = peakForceMillinewtons
        self.eventNumber = eventNumber
    }
}
