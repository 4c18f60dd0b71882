/// One camera frame: its pixels, when it was taken on the host clock, and the digital settings in force.
public struct Frame: Sendable {
    /// The pixels: RGBx, 4 bytes a pixel, rows packed (shared, never copied when the frame is kept).
    public var pixels: [UInt8]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// When the frame was taken, host clock microseconds.
    public var hostMicros: UInt64
    /// The digital zoom to apply (1 when the device zooms optically, or at 1×).
    public var digitalZoom: Double
    /// The digital gain to apply (1 when the device applies the exposure bias itself).
    public var digitalGain: Double
    /// The zoom factor the camera reported when the frame arrived.
    public var zoomFactor: Double
    /// The exposure bias the camera reported when the frame arrived, EV.
    public var exposureBias: Double

    /// A frame.
    public init(
        pixels: [UInt8], width: Int, height: Int, hostMicros: UInt64, digitalZoom: Double = 1, digitalGain: Double = 1,
        zoomFactor: Double = 1, exposureBias: Double = 0
    ) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.hostMicros = hostMicros
        self.digitalZoom = digitalZoom
        self.digitalGain = digitalGain
        self.zoomFactor = zoomFactor
        self.exposureBias = exposureBias
    }
}

/// The last few frames, oldest first, for zero shutter lag: a press that reaches the host late still
/// finds the frame taken when it happened. Sans-IO: frames and times go in, frames come out.
public struct FrameRing: Sendable {
    /// The most frames kept.
    public let capacity: Int
    /// The frames, oldest first.
    public private(set) var frames: [Frame] = []

    /// An empty ring keeping at most `capacity` frames (at least 1).
    public init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds the newest frame, dropping the oldest when full.
    public mutating func append(_ frame: Frame) {
        if frames.count == capacity { frames.removeFirst() }
        frames.append(frame)
    }

    /// The newest frame, if any.
    public var newest: Frame? { frames.last }

    /// The frame whose time is nearest `hostMicros` (the earlier one on a tie), if any.
    public func nearest(toHostMicros hostMicros: UInt64) -> Frame? {
        Self.nearer(frames, to: hostMicros)
    }

    /// The frames taken at or after `hostMicros`, oldest first.
    public func frames(since hostMicros: UInt64) -> [Frame] { frames.filter { $0.hostMicros >= hostMicros } }

    /// The frame of `candidates` nearest `hostMicros` (the earlier one on a tie).
    static func nearer(_ candidates: [Frame], to hostMicros: UInt64) -> Frame? {
        var best: Frame?
        var bestDistance = UInt64.max
        for frame in candidates {
            let distance = frame.hostMicros > hostMicros ? frame.hostMicros - hostMicros : hostMicros - frame.hostMicros
            if distance < bestDistance || (distance == bestDistance && frame.hostMicros < (best?.hostMicros ?? .max)) {
                best = frame
                bestDistance = distance
            }
        }
        return best
    }
}

/// Chooses the frame of one press as frames arrive: the nearest to the press time seen so far, decided
/// once a frame at or after the press has arrived (no later frame can be nearer). Sans-IO.
public struct ShutterSelection: Sendable {
    /// The press's host time, microseconds.
    public let pressHostMicros: UInt64
    /// The best frame so far.
    public private(set) var chosen: Frame?
    /// True once no later frame can be nearer the press.
    public private(set) var isDecided = false

    /// A selection for a press at `pressHostMicros`, starting from the frames already kept.
    public init(pressHostMicros: UInt64, ring: FrameRing) {
        self.pressHostMicros = pressHostMicros
        for frame in ring.frames { offer(frame) }
    }

    /// Considers a newer frame.
    public mutating func offer(_ frame: Frame) {
        guard !isDecided else { return }
        chosen = FrameRing.nearer([chosen, frame].compactMap { $0 }, to: pressHostMicros)
        if frame.hostMicros >= pressHostMicros { isDecided = true }
    }
}
