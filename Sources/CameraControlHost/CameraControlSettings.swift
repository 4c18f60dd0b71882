import CameraControlWire

/// The user's Camera Control settings (iOS: Settings › Camera › Camera Control, and Accessibility ›
/// Camera Control), as the host applies them (docs/CONTROLS.md, "Settings").
///
/// - ``lightPressForce``: the force thresholds of the light press (``LightPressForce/thresholds``, for the
///   device's `ConfigService/Configure`);
/// - ``doubleLightPressSpeed``: the recogniser's double-light-press window;
/// - ``isCameraControlEnabled``: off, the Camera Control does nothing at all (no gestures, no capture);
/// - ``areAdjustmentsEnabled``: off, the overlay never appears and sliders never move; a full click is
///   still the primary capture event.
public struct CameraControlSettings: Hashable, Sendable {
    /// Light-Press Force.
    public enum LightPressForce: String, Hashable, Sendable, CaseIterable {
        /// Light press on at 600 mN, off at 400 mN.
        case lighter
        /// Light press on at 800 mN, off at 500 mN (the firmware's defaults).
        case `default`
        /// Light press on at 1100 mN, off at 700 mN.
        case firmer

        /// The device thresholds for this preset. Only the light stage moves: the full press stays at
        /// 2500 / 1800 mN, and every preset keeps the firmware's rules (light on ≤ full off, at least
        /// 1000 mN between the two "on" thresholds; docs/SIMULATOR.md, "Thresholds").
        public var thresholds: Thresholds {
            let (on, off): (UInt32, UInt32)
            switch self {
            case .lighter: (on, off) = (600, 400)
            case .default: (on, off) = (800, 500)
            case .firmer: (on, off) = (1100, 700)
            }
            return Thresholds(
                lightPressOnMillinewtons: on, lightPressOffMillinewtons: off, fullPressOnMillinewtons: 2500,
                fullPressOffMillinewtons: 1800, minStageGapMillinewtons: 1000)
        }
    }

    /// Double Light-Press Speed: how long after the first light press the second may start.
    public enum DoubleLightPressSpeed: String, Hashable, Sendable, CaseIterable {
        /// 300 ms (Android's double-tap timeout; the recogniser's default).
        case `default`
        /// 450 ms.
        case slower
        /// 600 ms.
        case slowest

        /// The recogniser's ``GestureRecognizer/Configuration/doubleLightPressWindowMicros`` for it.
        public var windowMicros: UInt64 {
            switch self {
            case .default: 300_000
            case .slower: 450_000
            case .slowest: 600_000
            }
        }
    }

    /// Light-Press Force. Default `.default`.
    public var lightPressForce: LightPressForce
    /// Double Light-Press Speed. Default `.default`.
    public var doubleLightPressSpeed: DoubleLightPressSpeed
    /// Camera Control on or off. Default on.
    public var isCameraControlEnabled: Bool
    /// Camera Adjustments on or off. Default on.
    public var areAdjustmentsEnabled: Bool

    /// Settings; every argument has its documented default (Apple's).
    public init(
        lightPressForce: LightPressForce = .default, doubleLightPressSpeed: DoubleLightPressSpeed = .default,
        isCameraControlEnabled: Bool = true, areAdjustmentsEnabled: Bool = true
    ) {
        self.lightPressForce = lightPressForce
        self.doubleLightPressSpeed = doubleLightPressSpeed
        self.isCameraControlEnabled = isCameraControlEnabled
        self.areAdjustmentsEnabled = areAdjustmentsEnabled
    }
}

extension CameraControlSettings {
    /// The settings as the device's `ConfigService/SetSettings` takes them (every field set).
    public var wireSettings: Settings {
        let force: CameraControlWire.LightPressForce
        switch lightPressForce {
        case .lighter: force = .lighter
        case .default: force = .default
        case .firmer: force = .firmer
        }
        let speed: CameraControlWire.DoubleLightPressSpeed
        switch doubleLightPressSpeed {
        case .default: speed = .default
        case .slower: speed = .slower
        case .slowest: speed = .slowest
        }
        return Settings(
            lightPressForce: force, doubleLightPressSpeed: speed, cameraControl: isCameraControlEnabled ? .on : .off,
            cameraAdjustments: areAdjustmentsEnabled ? .on : .off)
    }

    /// The device's settings (`GetSettings`); a field the device left unspecified keeps `current`'s value.
    /// Nil when `wire` has no field set at all.
    public init?(wire: Settings, keeping current: CameraControlSettings = CameraControlSettings()) {
        guard wire != Settings() else { return nil }
        self = current
        switch wire.lightPressForce {
        case .lighter: lightPressForce = .lighter
        case .default: lightPressForce = .default
        case .firmer: lightPressForce = .firmer
        case .unspecified: break
        }
        switch wire.doubleLightPressSpeed {
        case .default: doubleLightPressSpeed = .default
        case .slower: doubleLightPressSpeed = .slower
        case .slowest: doubleLightPressSpeed = .slowest
        case .unspecified: break
        }
        if wire.cameraControl != .unspecified { isCameraControlEnabled = wire.cameraControl == .on }
        if wire.cameraAdjustments != .unspecified { areAdjustmentsEnabled = wire.cameraAdjustments == .on }
    }
}
