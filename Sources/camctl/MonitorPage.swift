import CameraAppExample
import CameraControlControls
import CameraControlDevice
import CameraControlEmbedded
import CameraControlGStreamer
import CameraControlHTTP
import CameraControlHost
import CameraControlLivePage
import CameraControlTools
import CameraControlWire
import Foundation
import Synchronization

/// `camctl monitor PORT --http [HOST:]PORT`: the session on the live page (``LivePageServer``) instead of
/// the terminal. Every event the plain monitor prints in `--json` goes to the page as it comes, with the
/// device's raw samples for the force trace, its thresholds and its counters; when the device is a
/// simulator, the page's virtual Camera Control plays its gestures through `SimulatorService`.
extension Monitor {
    /// The address of `--http`: `PORT`, `HOST:PORT` or `HOST:` (IPv4; loopback and a port the OS chooses
    /// by default).
    static func pageAddress(_ text: String) throws(Arguments.Failure) -> (host: String, port: UInt16) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let host = parts.count == 2 ? (parts[0].isEmpty ? "127.0.0.1" : parts[0]) : "127.0.0.1"
        let portText = parts.count == 2 ? parts[1] : parts[0]
        if portText.isEmpty { return (host, 0) }
        guard let port = UInt16(portText) else {
            throw Arguments.Failure(description: "--http wants PORT or HOST:PORT (a port 0…65535), not '\(text)'")
        }
        return (host, port)
    }

    /// Serves the live page for the session until `--seconds` pass, the scenario ends or Ctrl-C.
    static func runPage(_ args: Arguments, address: String) async throws {
        let (pageHost, pagePort) = try pageAddress(address)
        let seconds = try args.seconds()
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }
        if args.value("output") != nil, args.value("camera") == nil {
            throw Arguments.Failure(description: "-o goes with --camera (where its photos go)")
        }
        // The camera first: a missing one is an error before the device is touched.
        let camera = try args.value("camera").map { name in
            try GStreamerCamera(
                configuration: .init(source: try CameraSource(parsing: name), outputDirectory: args.value("output") ?? "."))
        }
        defer { camera?.stop() }
        let reconnects = !args.flag("no-reconnect")
        let (host, port) = try await Ports.connectHost(
            try args.required(0, "PORT"), hostName: "camctl monitor", configuration: .init(reconnects: reconnects))
        let stopping = StopFlag()
        @Sendable func stop() async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        // Ctrl-C (or SIGTERM) ends the page as it ends the other monitors: the session closes cleanly, exit 0.
        Interrupts.onInterrupt { Task { await stop() } }
        let isSimulator = SharedFlag()
        let control = VirtualControlPlayer(isSimulator: isSimulator) { await host.session }
        let page: LivePageServer
        do {
            page = try LivePageServer(
                configuration: .init(host: pageHost, port: pagePort), hasCamera: camera != nil, control: control.take)
        } catch {
            await host.stop()
            throw CLIFailure(status: .failure, message: "--http: \(error)")
        }
        defer { page.shutdown() }
        print("page: http://\(pageHost):\(page.http.port)/")

        let printer = EventPrinter(json: true)
        let app: CameraApp
        if let camera {
            app = try CameraApp(
                device: camera, executor: InlineExecutor(), soundPlayer: host,
                hostMicros: { device in host.clockOffsetMicros.map { UInt64(clamping: Int64(bitPattern: device) + $0) } }
            ) { printer.app($0) }
            // The live picture, 10 images a second, the zoom and exposure the sliders set applied.
            _ = camera.addPreviewObserver(framesPerSecond: 10) { page.publishFrame(jpeg: $0) }
        } else {
            app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { printer.app($0) }
        }
        let tasks = await feed(
            page, from: host, portName: port, printer: printer, isSimulator: isSimulator, control: control, camera: camera != nil,
            isStopping: { stopping.value.withLock { $0 } })
        defer { for task in tasks { task.cancel() } }
        // Ctrl-C is taken from here on: a step that fails because the session closed under it ends the page
        // as the signal asked (exit 0), not with the step's error.
        var scenarioEnd: ScenarioFiles.ScenarioEnd?
        do {
            await app.attach(to: host, printer: printer)
            app.install(in: try await host.makeControlsSession())

            if let scenario, let session = await host.session {
                let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
                if seconds == 0 { scenarioEnd = (session, UInt64(played.durationMicros)) }
            }
        } catch  where stopping.value.withLock({ $0 }) {
            return
        }
        ScenarioFiles.stop(afterSeconds: seconds, orAfter: scenarioEnd, by: stop)
        await host.run()
        try await Monitor.endedOnItsOwn(host, stopping: stopping)
    }

    /// Feeds `page` from `host` until the tasks returned are cancelled: the device (sticky), every host effect
    /// through `printer` (JSON), each session's thresholds and raw samples (the force trace), the link
    /// counters once a second; `lost` when the device goes away while not `isStopping`. While the device is
    /// gone (until the host has it again) the page's virtual control is refused (409, why), not accepted and
    /// dropped.
    static func feed(
        _ page: LivePageServer, from host: CameraControlHost, portName: String, printer: EventPrinter,
        isSimulator: SharedFlag, control: VirtualControlPlayer, camera: Bool, isStopping: @escaping @Sendable () -> Bool
    ) async -> [Task<Void, Never>] {
        printer.offsetSource = { host.clockOffsetMicros }
        printer.sink = { page.publish(json: $0) }
        @Sendable func show(_ info: DeviceInfo) {
            let identity = info.identity
            isSimulator.value.withLock { $0 = info.capabilities.isSimulator }
            var members = [
                JSONMember("type", .string("device")),
                JSONMember("name", .string("\(identity.vendor) \(identity.model) on \(portName)")),
                JSONMember("simulator", .bool(info.capabilities.isSimulator)),
            ]
            if camera { members.append(JSONMember("camera", .string("/camera"))) }
            page.publish(json: JSONValue.object(members).compactText, sticky: "device")
        }
        if let info = await host.deviceInfo { show(info) }
        await host.onConnect { show($0) }
        await host.observe { effect in
            switch effect {
            case .connected:
                printer.resetOrigin()
                // Not while the host stops: serve handing the device to an app refused the steps for that.
                if !isStopping() { control.refuse(nil) }
            case .deviceLost where !isStopping():
                control.refuse("the device is gone: \(portName) is being reconnected, steps play again once it is back")
                page.publish(json: #"{"type":"lost"}"#)
            case .deviceLost: break  // the host stops (serve hands the device over, or it is told to stop)
            default: printer.effect(effect)
            }
        }
        return [
            // Each session: its thresholds, then its raw samples for the force trace (when offered).
            Task {
                var served: ObjectIdentifier?
                while !Task.isCancelled {
                    guard let session = await host.session, ObjectIdentifier(session) != served else {
                        try? await Task.sleep(for: .milliseconds(100))
                        continue
                    }
                    served = ObjectIdentifier(session)
                    if let thresholds = (try? await session.config())?.thresholds {
                        page.publish(json: Self.thresholdsJSON(thresholds), sticky: "thresholds")
                    }
                    guard let stream = try? await session.rawSamples() else { continue }
                    do {
                        for try await batch in stream { page.publish(json: Self.samplesJSON(batch)) }
                    } catch {}
                }
            },
            // The link counters once a second.
            Task {
                while !Task.isCancelled {
                    if let session = await host.session, let counters = try? await session.counters() {
                        page.publish(json: Self.countersJSON(counters), sticky: "counters")
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            },
        ]
    }

    /// `{"type":"thresholds", "lightPressMn", "lightReleaseMn", "fullPressMn", "fullReleaseMn"}`.
    static func thresholdsJSON(_ thresholds: Thresholds) -> String {
        JSONValue.object([
            JSONMember("type", .string("thresholds")),
            JSONMember("lightPressMn", .integer(thresholds.lightPressOnMillinewtons)),
            JSONMember("lightReleaseMn", .integer(thresholds.lightPressOffMillinewtons)),
            JSONMember("fullPressMn", .integer(thresholds.fullPressOnMillinewtons)),
            JSONMember("fullReleaseMn", .integer(thresholds.fullPressOffMillinewtons)),
        ]).compactText
    }

    /// `{"type":"samples", "records": [[device ms, forceMn, touching, position 0…1], …]}` for one batch.
    static func samplesJSON(_ batch: RawSampleBatch) -> String {
        let records = batch.decodedSamples.enumerated().map { index, sample -> JSONValue in
            let micros = batch.timestampMicros(ofSample: index)
            return .array([
                .number(String(format: "%.3f", Double(micros) / 1000)), .integer(sample.forceMillinewtons),
                .bool(sample.isTouched), .number(String(format: "%.4f", Double(sample.position) / Double(RawSample.maxPosition))),
            ])
        }
        return JSONValue.object([JSONMember("type", .string("samples")), JSONMember("records", .array(records))]).compactText
    }

    /// `{"type":"counters", "values": {name: value, …}}` with the device's counters in protobuf's JSON names.
    static func countersJSON(_ counters: Counters) -> String {
        JSONValue.object([
            JSONMember("type", .string("counters")), JSONMember("values", counters.jsonValue(includingDefaults: true)),
        ]).compactText
    }
}

/// The page's virtual Camera Control: a step that parses is played with `SimulatorService/RunScenario` on
/// the session `session` gives, when the device is a simulator — one step after the other, in the order
/// they were posted (a step replaces the one playing, so a `touch` overtaken by the `release` before it
/// would leave the finger up). Each step is answered at once: 204 when it will be played, 409 with why
/// when it cannot be (not a simulator, or ``refuse(_:)`` said why: `camctl serve` while an app has the
/// device, or ``maxWaitingSteps`` accepted steps still wait to be played), 422 when it does not parse;
/// none is accepted and then dropped.
final class VirtualControlPlayer: Sendable {
    /// The most accepted steps that wait to be played at once; past it a step is answered 409. The page
    /// posts a step at most every 30–40 ms per gesture and a simulator plays one in about a millisecond: a
    /// burst beyond this is a page (or a script) gone wrong, told so rather than losing steps it was promised.
    static let maxWaitingSteps = 256

    /// One thing for the player's task: a step to play, or (nil) a point that ``settle()`` waits for.
    private struct Work: Sendable {
        var step: String?
        var done: (@Sendable () -> Void)?
    }

    private struct State {
        /// Why steps are refused now (nil: they are played).
        var refusal: String?
        /// The page's finger is down: a step accepted since the last `release` put it there.
        var isFingerDown = false
    }

    /// Steps accepted by ``take(_:)`` and not yet taken by the player's task (shared with the task, which
    /// does not keep the player alive).
    private final class WaitingSteps: Sendable {
        let count = Mutex(0)
    }

    private let isSimulator: SharedFlag
    private let state = Mutex(State())
    private let waiting = WaitingSteps()
    private let queue: AsyncStream<Work>.Continuation

    /// A player for the session `session` gives; steps are played while the device is a simulator.
    init(isSimulator: SharedFlag, session: @escaping @Sendable () async -> DeviceSession?) {
        self.isSimulator = isSimulator
        // Bounded by `take` (maxWaitingSteps) and by settle()'s callers, never by dropping what was accepted.
        let (work, queue) = AsyncStream<Work>.makeStream(bufferingPolicy: .unbounded)
        self.queue = queue
        Task { [waiting] in
            for await item in work {
                if item.step != nil, item.done == nil { waiting.count.withLock { $0 -= 1 } }
                let session = await session()
                if let step = item.step, let session { _ = try? await session.runScenario(step + "\n") }
                guard let done = item.done else { continue }
                // A point settle() waits for: what was sent is played by then (RunScenario answers once the
                // simulator has the steps; a click still playing would run on into the next session).
                if let session { await Self.waitUntilPlayed(on: session) }
                done()
            }
        }
    }

    /// Returns once the simulator on `session` plays no scenario (asked every 20 ms; at most 5 s, and at
    /// once when it cannot say).
    private static func waitUntilPlayed(on session: DeviceSession) async {
        let end = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < end, (try? await session.simulatorStatus())?.isScenarioRunning == true {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit { queue.finish() }

    /// Answers one step the page posted (the page's `POST /control`).
    @Sendable func take(_ step: VirtualControlStep) -> VirtualControlOutcome {
        do {
            _ = try ScenarioParser.check(step.text)
        } catch {
            return .invalid("\(error)")
        }
        guard isSimulator.value.withLock({ $0 }) else { return .unavailable("the device is not a simulator") }
        return state.withLock { state in
            if let refusal = state.refusal { return .unavailable(refusal) }
            let room = waiting.count.withLock { count in
                guard count < Self.maxWaitingSteps else { return false }
                count += 1
                return true
            }
            guard room else {
                return .unavailable(
                    "\(Self.maxWaitingSteps) steps already wait to be played: the page posts faster than the simulator plays")
            }
            let verb = step.text.split(separator: " ").first ?? ""
            if ["touch", "slide", "force"].contains(verb) {
                state.isFingerDown = true
            } else if verb == "release" {
                state.isFingerDown = false
            }
            enqueue(Work(step: step.text))
            return .accepted
        }
    }

    /// From now on steps are answered 409 with `why` (nil: played again).
    func refuse(_ why: String?) {
        state.withLock { $0.refusal = why }
    }

    /// Returns once every step accepted so far was played (the simulator reports no scenario running; at
    /// most 5 s), after a `release` when they left the page's finger down: call it (after ``refuse(_:)``) before the session goes, and no step is lost with it,
    /// nor is the simulated finger left pressing.
    func settle() async {
        let lift = state.withLock { state in
            defer { state.isFingerDown = false }
            return state.isFingerDown
        }
        await withCheckedContinuation { (played: CheckedContinuation<Void, Never>) in
            enqueue(Work(step: lift ? "release" : nil, done: { played.resume() }))
        }
    }

    /// Queues `work` for the player's task; work that does not get there (the queue ended) is done at once.
    private func enqueue(_ work: Work) {
        switch queue.yield(work) {
        case .enqueued: break
        case .dropped(let dropped): dropped.done?()  // not with an unbounded queue
        case .terminated: work.done?()
        @unknown default: work.done?()
        }
    }
}

/// A true-or-false shared by closures on several threads (whether the device is a simulator, for the page).
final class SharedFlag: Sendable {
    /// The value.
    let value = Mutex(false)
}
