import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTools
import CameraControlTransport
import CameraControlWire
import Dispatch
import Foundation
import Synchronization

/// `camctl record PORT -o FILE.pcapng [--seconds N] [--scenario FILE] [--no-raw] [--quiet]`: this process
/// is the session's host (handshake, input stream, raw samples when the device offers them, its
/// configuration, clock round trips), printing events as `camctl monitor` does and writing every frame
/// both ways, timestamped, to a pcapng file (`tools/wireshark/cameracontrol.lua` dissects it;
/// `camctl replay`, `decode` and `plot` read it). It stops after `--seconds`, at the end of the
/// `--scenario`, or on Ctrl-C; the file is complete after every frame, so it is complete either way.
enum Record {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv.map { $0 == "-o" ? "--output" : $0 }, valued: ["output", "seconds", "scenario"], switches: ["no-raw", "quiet", "json"])
        let port = try args.required(0, "PORT")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "record takes one PORT") }
        guard let output = args.value("output") else { throw Arguments.Failure(description: "missing -o FILE.pcapng") }
        try Arguments.refuseOverwriting(output, option: "-o", inputs: [port], what: "the port")
        try Arguments.refuseOverwriting(output, option: "-o", inputs: args.value("scenario").map { [$0] } ?? [], what: "the scenario")
        let seconds = try args.seconds()
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }

        let writer = try PcapngWriter(path: output, interfaceName: port)
        defer { writer.close() }
        // The recorder is a tap on the loop's path: the session runs on the host's loop like any other.
        let tap = RecordingTap(writer: writer)
        let transport = TappedTransport(try Transports.open(path: port), tap: tap)
        let loop = EventLoops.make(name: "camctl-record")
        let first: DeviceSession
        do {
            first = try await DeviceSession.connect(transport: transport, hostName: "camctl record", eventLoop: loop)
        } catch {
            loop.shutdown()
            throw error
        }
        let handOff = Mutex<DeviceSession?>(first)
        let host = CameraControlHost(configuration: .init(reconnects: false), eventLoop: loop) {
            _ async throws(DeviceError) -> DeviceSession in
            guard let session = handOff.withLock({ $0.take() }) else { throw DeviceError(.closed, "recording one session only") }
            return session
        }
        let json = args.flag("json")
        let printer = EventPrinter(quiet: args.flag("quiet"), json: json)
        printer.offsetSource = { host.clockOffsetMicros }
        let interaction = CaptureEventInteraction(
            soundPlayer: host,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        // Set before the recorder stops the host itself: a device lost otherwise ends the recording with
        // an error (the file is still complete).
        let stopping = StopFlag()
        @Sendable func stop() async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        await host.observe { effect in
            if case .deviceLost = effect, !stopping.value.withLock({ $0 }) { printer.note("device lost") }
            if case .connected = effect { printer.resetOrigin() }
            printer.effect(effect)
        }
        printer.watch(interaction)
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        // A file that can take no more (a full disk) ends the recording: what it holds stays whole.
        tap.onWriteFailure = { Task { await stop() } }
        await host.start()
        await host.waitUntilConnected()
        guard let session = await host.session else { throw DeviceError(.closed, "the device went away at once") }
        print(json ? Monitor.connectedJSON(session.info) : session.info.summary + "\n")

        // Ctrl-C (or SIGTERM) ends the recording cleanly (the file is whole after every frame anyway).
        Interrupts.onInterrupt { Task { await stop() } }

        // The configuration goes into the recording (plots draw its thresholds), and raw samples when offered.
        _ = try? await session.config()
        var rawTask: Task<Void, Never>?
        if !args.flag("no-raw"), let stream = try? await session.rawSamples() {
            rawTask = Task {
                do {
                    for try await _ in stream {}
                } catch {}
            }
        }
        defer { rawTask?.cancel() }

        var scenarioEnd: ScenarioFiles.ScenarioEnd?
        if let scenario {
            let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
            printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
            if seconds == 0 { scenarioEnd = (session, UInt64(played.durationMicros)) }
        }
        ScenarioFiles.stop(afterSeconds: seconds, orAfter: scenarioEnd, by: stop)
        await host.run()
        rawTask?.cancel()
        writer.close()
        StandardStreams.error("camctl: recorded \(writer.count) frames to \(output)")
        if let failure = writer.failure { throw failure }
        if !stopping.value.withLock({ $0 }), let lost = await host.lastDisconnect {
            throw DeviceError(.closed, "the device went away: \(lost)")
        }
    }
}

/// Whether the recorder itself is stopping the host.
final class StopFlag: Sendable {
    /// True once the recorder stops the host.
    let value = Mutex(false)
}

/// Records each frame that passes, both ways, with the host time it went (the frame is timestamped when
/// its delimiter passes): a tap on the event loop's path.
final class RecordingTap: TransportTap {
    private let writer: PcapngWriter
    private let partial = Mutex<(toDevice: [UInt8], fromDevice: [UInt8])>(([], []))
    private let failureHandler = Mutex<(@Sendable () -> Void)?>(nil)

    /// Called once, when a frame could not be written (``PcapngWriter/failure`` says why).
    var onWriteFailure: (@Sendable () -> Void)? {
        get { failureHandler.withLock { $0 } }
        set { failureHandler.withLock { $0 = newValue } }
    }

    /// Writes the frames it sees to `writer`.
    init(writer: PcapngWriter) {
        self.writer = writer
    }

    func received(_ bytes: UnsafeRawBufferPointer) {
        record(bytes, .fromDevice)
    }

    func sent(_ bytes: UnsafeRawBufferPointer) {
        // Recorded as it leaves, before the answer can arrive (and be recorded first).
        record(bytes, .toDevice)
    }

    private func record(_ bytes: UnsafeRawBufferPointer, _ direction: FrameDirection) {
        let time = Self.wallMicros()
        let frames = partial.withLock { buffers -> [[UInt8]] in
            var buffer = direction == .toDevice ? buffers.toDevice : buffers.fromDevice
            var done: [[UInt8]] = []
            for byte in bytes {
                if byte == WireFormat.delimiter {
                    if !buffer.isEmpty { done.append(buffer + [byte]) }  // a lone delimiter is no frame
                    buffer.removeAll(keepingCapacity: true)
                } else if buffer.count < 2 * WireFormat.maxFrameBytes {
                    buffer.append(byte)
                }
            }
            if direction == .toDevice { buffers.toDevice = buffer } else { buffers.fromDevice = buffer }
            return done
        }
        for frame in frames where !writer.write(RecordedFrame(timeMicros: time, direction: direction, bytes: frame)) {
            failureHandler.withLock { $0 }?()
        }
    }

    /// Microseconds since the Unix epoch (what pcapng timestamps are).
    static func wallMicros() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1000
    }
}
