import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import CameraControlWire
import Foundation
import Synchronization

/// What a recording says happened, in the terms the host pipeline is fed with.
package enum SessionItem {
    /// A handshake answered: a session with this device began.
    case connected(HandshakeResponse, Capabilities)
    /// The device's configuration (a GetConfig or Configure answer).
    case config(Config)
    /// A ping round trip: the request left at `sent`, the answer came at `received`.
    case clockSample(sent: UInt64, received: UInt64, deviceMicros: UInt64)
    /// An input event from the device.
    case input(InputEvent)
    /// A batch of raw samples.
    case rawSamples(RawSampleBatch)
}

/// Turns a recording's frames into ``SessionItem``s: it follows the calls (each request's call id says
/// what its answers are), drops retransmitted copies of reliable packets and ignores link packets and
/// frames that do not decode.
package struct SessionReader {
    private var calls: [UInt32: (method: MethodID, sentMicros: UInt64)] = [:]
    /// Recent sequence numbers of reliable packets from the device (a retransmission repeats one).
    private var recentReliable: [UInt16] = []

    /// The items of `frame`, received at its time.
    package mutating func read(_ frame: RecordedFrame) -> [SessionItem] {
        guard case .success(let packet) = frame.decoded else { return [] }
        if packet.type == .request, let method = packet.address {
            if method == .deviceHandshake { recentReliable = [] }
            calls[packet.callID] = (method, frame.timeMicros)
            return []
        }
        guard frame.direction != .toDevice, let call = calls[packet.callID] else { return [] }
        if packet.isReliable {
            if recentReliable.contains(packet.sequence) { return [] }
            recentReliable.append(packet.sequence)
            if recentReliable.count > 64 { recentReliable.removeFirst() }
        }
        let payload = packet.payload
        switch (packet.type, call.method) {
        case (.response, .deviceHandshake):
            guard let response = try? HandshakeResponse(serializedBytes: payload), let capabilities = response.capabilities
            else { return [] }
            return [.connected(response, capabilities)]
        case (.response, .devicePing):
            guard let response = try? PingResponse(serializedBytes: payload) else { return [] }
            return [.clockSample(sent: call.sentMicros, received: frame.timeMicros, deviceMicros: response.deviceTimeMicros)]
        case (.response, .configGetConfig), (.response, .configConfigure):
            return (try? Config(serializedBytes: payload)).map { [.config($0)] } ?? []
        case (.streamMessage, .inputStreamInputEvents):
            return (try? InputEvent(serializedBytes: payload)).map { [.input($0)] } ?? []
        case (.streamMessage, .inputStreamRawSamples):
            return (try? RawSampleBatch(serializedBytes: payload)).map { [.rawSamples($0)] } ?? []
        default:
            return []
        }
    }
}

/// Drives the public host pipeline (``HostCore``) from a recording, in the recording's own host time:
/// each frame's items are fed at its timestamp, and in between the core is advanced exactly at its
/// deadlines. Nothing reads a real clock, so a replay gives the same result every time.
package final class ReplayEngine: @unchecked Sendable {  // driven from one task; delivery is synchronous
    /// The pipeline being driven.
    package let core = HostCore()
    /// The capture interaction attached to it (its events go to `onCapture`).
    private(set) var interaction: CaptureEventInteraction!
    /// The recording's host time the engine has reached.
    package var nowMicros: UInt64 { now.value.withLock { $0 } }
    private let now = ReplayTime()
    /// The latest configuration seen.
    private(set) var config: Config?
    /// The latest capabilities seen.
    private(set) var capabilities: Capabilities?
    private var reader = SessionReader()

    /// Called with each capture event and the role of the handler it went to.
    package var onCapture: ((CaptureEvent, String) -> Void)?
    /// Called with each raw sample batch.
    package var onRawSamples: ((RawSampleBatch) -> Void)?
    /// Called with each handshake answer, before its session starts.
    package var onHandshake: ((HandshakeResponse) -> Void)?
    /// Called with each configuration.
    package var onConfig: ((Config) -> Void)?

    package init() {
        let time = now
        interaction = CaptureEventInteraction(
            clock: CaptureClock { time.value.withLock { $0 } },
            primary: { [unowned self] in self.onCapture?($0, "primary") },
            secondary: { [unowned self] in self.onCapture?($0, "secondary") })
        core.attach(interaction)
        interaction.setSessionRunning(true)
    }

    /// Feeds every frame, then lets the last deadlines fall due.
    package func run(_ frames: [RecordedFrame]) {
        for frame in frames.sorted(by: { $0.timeMicros < $1.timeMicros }) { feed(frame) }
        finish()
    }

    /// Feeds one frame at its time (frames must come in time order: ``RecordingPasses/replay(into:)``
    /// orders a file's).
    package func feed(_ frame: RecordedFrame) {
        advance(to: frame.timeMicros)
        for item in reader.read(frame) { feed(item, at: frame.timeMicros) }
    }

    /// After the last frame: lets the last deadlines fall due, and ends the session as the live host did.
    package func finish() {
        while let next = core.nextDeadlineHostMicros { step(to: max(next, nowMicros)) }
        // The live host ended its session when the recording ended (stopped, or the device lost): presses
        // still in flight were cancelled then, so they are here.
        if capabilities != nil { core.deviceLost(atHostMicros: nowMicros) }
    }

    private func feed(_ item: SessionItem, at time: UInt64) {
        switch item {
        case .connected(let response, let capabilities):
            onHandshake?(response)
            if self.capabilities != nil { core.deviceLost(atHostMicros: time) }
            self.capabilities = capabilities
            core.connected(capabilities)
        case .config(let config):
            self.config = config
            onConfig?(config)
        case .clockSample(let sent, let received, let device):
            core.addClockSample(sentAtHostMicros: sent, receivedAtHostMicros: received, deviceMicros: device)
        case .input(let event):
            core.receive(event, atHostMicros: time)
            core.advance(toHostMicros: time)
        case .rawSamples(let batch):
            onRawSamples?(batch)
        }
    }

    /// Advances through every deadline before `time`, then to `time`.
    private func advance(to time: UInt64) {
        while let next = core.nextDeadlineHostMicros, next < time { step(to: max(next, nowMicros)) }
        now.value.withLock { $0 = max($0, time) }
    }

    private func step(to time: UInt64) {
        now.value.withLock { $0 = time }
        let before = core.nextDeadlineHostMicros
        core.advance(toHostMicros: time)
        // A deadline that does not move once reached would loop forever: step past it.
        if let after = core.nextDeadlineHostMicros, after == before, after <= time {
            core.advance(toHostMicros: time + 1)
            now.value.withLock { $0 = time + 1 }
        }
    }
}

/// The replay's host time, readable by the capture interaction's clock.
package final class ReplayTime: Sendable {
    /// Microseconds of the recording's host time.
    package let value = Mutex<UInt64>(0)
}
