import CameraControlDevice
import CameraControlGestures
import CameraControlHost
import CameraControlLivePage
import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTools
import CameraControlTransport
import CameraControlWire
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `camctl serve PORT`: the system's part of the Camera Control (docs/CAPTURE.md, "Apps attached to camctl
/// serve", "Launch on click"). It owns the device's port; apps attach over a local socket with the same API
/// they use on a port (`CameraControlHost.connect(to: SOCKET)`), and the one that attached last is in front
/// (``ForegroundApps``): serve relays the wire protocol between it and the device, and nothing to the others.
/// While no app is attached serve holds the device itself: a click (or a double click) launches the camera
/// app with `CAMCTL_PORT` set to the socket, a click-and-hold its own action.
enum Serve {
    static let command = Command(
        name: "serve", summary: "own the device for the apps that attach over a local socket; a click launches the camera app",
        usage:
            "PORT [--socket PATH] [--launch CMD] [--launch-on click|double-click] [--double-click-ms N] [--hold CMD] [--http ADDR] [--seconds N]",
        details: """
            serve owns PORT. Apps attach at the socket as they would open a port (camera-app SOCKET,
            CameraControlHost.connect(to: SOCKET)); the app that attached last is in front and alone gets the
            device: its press in flight is cancelled when another app attaches, and when it leaves (its
            process ends, or it closes its connection) the app before it comes back to the front at once.
            An app in the background is answered UNAVAILABLE (who has the device) and waits for its turn.
            One process is one app: a second connection from a process whose connection is open is
            refused (its handshake is answered ALREADY_EXISTS, with why). While no app is attached serve
            holds the device, and a Camera Control click launches CMD (sh -c, CAMCTL_PORT set to the
            socket). Apple's Settings > Camera > Camera Control > Launch Camera. A device unplugged is
            waited for at PORT; a pseudo-terminal whose simulator ended never comes back: serve exits 1.
              --socket PATH         where apps attach (default: $XDG_RUNTIME_DIR/camctl-serve.sock, or
                                    /tmp/camctl-serve-UID.sock)
              --launch CMD          the camera app, launched by a click while no app is attached
              --launch-on TRIGGER   click (default) or double-click: two clicks, the second ending within the window
              --double-click-ms N   the double-click window (default 400)
              --hold CMD            a click-and-hold runs CMD instead, once the hold is recognised (iPhone: Visual
                                    Intelligence); without it a hold is a click
              --http [HOST:]PORT    serve the live page there (loopback by default): the device while serve
                                    holds it (force trace, gestures, counters, the virtual control on a
                                    simulator), and which app has it while one is in front (the counters
                                    then: what serve carries for it)
              --seconds N           stop after N seconds (default: run until Ctrl-C)
            """,
        examples: [
            "serve /dev/ttyACM0 --launch '.build/debug/camera-app \"$CAMCTL_PORT\"'",
            "serve auto --socket /tmp/cc.sock --launch 'my-camera' --launch-on double-click --hold 'say hello'",
        ],
        run: run)

    /// The socket apps attach to when `--socket` is not given.
    static var defaultSocketPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/camctl-serve.sock"
        }
        return "/tmp/camctl-serve-\(getuid()).sock"
    }

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["socket", "launch", "launch-on", "double-click-ms", "hold", "http", "seconds"], switches: [],
            positionals: ["PORT"])
        let hold = args.value("hold")
        let triggerName = args.value("launch-on") ?? LaunchOnClick.Trigger.click.rawValue
        guard let trigger = LaunchOnClick.Trigger(rawValue: triggerName) else {
            throw Arguments.Failure(description: "--launch-on \(triggerName): expected click or double-click")
        }
        let window = try args.integer("double-click-ms", default: 400)
        guard (50...2000).contains(window) else {
            throw Arguments.Failure(description: "--double-click-ms \(window): expected 50 to 2000")
        }
        let seconds = try args.seconds()
        let port = try args.required(0, "PORT")
        let socketPath = args.value("socket") ?? defaultSocketPath
        let end: ContinuousClock.Instant? = seconds > 0 ? .now + .seconds(seconds) : nil
        let rules = LaunchOnClick(trigger: trigger, doubleClickWindowMicros: UInt64(window) * 1000, holdHasAction: hold != nil)

        let pageAddress = try args.value("http").map { try Monitor.pageAddress($0) }
        // The first connect must work (a typo in PORT is an error, not an endless retry). Every open of the
        // port, serve's and its pump's for the apps, goes through one reopener: none takes a pseudo-terminal
        // that is not the one lost.
        let path = try await Ports.resolve(port)
        let reopener = PortReopener(path: path)
        let host = try await Ports.connectHost(reopening: reopener, hostName: "camctl serve")
        let listener: LocalSocketListener
        do {
            listener = try LocalSocketListener(path: socketPath)
        } catch {
            await host.stop()
            throw CLIFailure(status: .failure, message: "\(error)")
        }
        defer { listener.close() }
        Interrupts.removeOnExit(socketPath, kind: .socket)
        let engine = ServeEngine(
            reopener: reopener, socketPath: socketPath, launch: args.value("launch"), hold: hold, rules: rules, end: end)
        if let (pageHost, pagePort) = pageAddress {
            do {
                let page = try await engine.startPage(host: pageHost, port: pagePort)
                print("page: http://\(pageHost):\(page.http.port)/")
            } catch {
                await host.stop()
                throw CLIFailure(status: .failure, message: "--http: \(error)")
            }
        }
        await engine.holdDevice(host)
        print("serve: holding \(path); apps attach at \(socketPath)")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await connection in listener.connections { await engine.accepted(connection) }
            }
            group.addTask {
                // The apps that left (process ended, or no connection for the grace time) are noticed here,
                // and a device gone for good.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    await engine.tick()
                    if await engine.goneForGood != nil { return }
                }
            }
            group.addTask {
                if let end {
                    try? await Task.sleep(until: end, clock: .continuous)
                } else {
                    await waitForever()
                }
            }
            await group.next()
            group.cancelAll()
            listener.close()
        }
        await engine.shutdown()
        if let gone = await engine.goneForGood {
            throw CLIFailure(status: .failure, message: "the device is gone for good: \(gone)")
        }
    }

    private static func waitForever() async {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }
}

/// `camctl serve`'s I/O: the device's port held by a ``CameraControlHost`` (no app attached) or carried raw
/// between the device and the app in front; the rules are ``ForegroundApps`` and ``LaunchOnClick``.
actor ServeEngine {
    private let path: String
    /// Every open of the device's port: serve's held host's and the pump's for the apps.
    private let reopener: PortReopener
    /// Why the device cannot come back (its pseudo-terminal closed), once an open said so: serve ends.
    private(set) var goneForGood: String?
    private let socketPath: String
    private let launchCommand: String?
    private let holdCommand: String?
    private var rules: LaunchOnClick
    private let end: ContinuousClock.Instant?
    private let started = ContinuousClock.now

    private var foreground = ForegroundApps()
    private var connections: [ForegroundApps.ConnectionID: LocalSocketTransport] = [:]
    private var nextConnection = 0
    /// The device's host while serve holds it.
    private var host: CameraControlHost?
    /// The held host while serve hands the device to an app: the page's last steps are played on it.
    private var handingOver: CameraControlHost?
    /// The bytes between the device's port and the app in front, on one event loop.
    private let wire = ServeWire()
    /// Opens the device's port (again after an unplug) while an app has it.
    private var devicePump: Task<Void, Never>?
    /// The connection whose bytes are carried.
    private var relayed: ForegroundApps.ConnectionID?
    /// The command launched last, while it runs.
    private var launched: Process?
    /// The held host's gestures, to the launch rules; finished when the host stops.
    private var gestureFeed: AsyncStream<Gesture?>.Continuation?
    /// `--http`: the live page, fed by the held host (``Monitor/feed(_:from:portName:printer:isSimulator:control:camera:isStopping:)``).
    private var page: LivePageServer?
    /// `--http`: the page's virtual control, played through the held host's session; refused while serve
    /// holds none (an app has the device, or serve is taking it back).
    private var control: VirtualControlPlayer?
    private var pageFeed: [Task<Void, Never>] = []
    /// Set before serve stops the held host itself (not a lost device, for the page).
    private var releasing = StopFlag()
    private let isSimulator = SharedFlag()

    init(
        reopener: PortReopener, socketPath: String, launch: String?, hold: String?, rules: LaunchOnClick,
        end: ContinuousClock.Instant?
    ) {
        self.reopener = reopener
        self.path = reopener.path
        self.socketPath = socketPath
        self.launchCommand = launch
        self.holdCommand = hold
        self.rules = rules
        self.end = end
    }

    private var nowMicros: UInt64 {
        let elapsed = ContinuousClock.now - started
        return UInt64(elapsed.components.seconds) * 1_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000_000)
    }

    // MARK: Apps

    func accepted(_ connection: LocalSocketTransport) async {
        nextConnection += 1
        let id = nextConnection
        connections[id] = connection
        let pid = connection.peerProcessID.map { "pid \($0)" } ?? "an app"
        let known = foreground.apps.first { $0.processID == connection.peerProcessID }
        let actions = foreground.connected(id, processID: connection.peerProcessID, nowMicros: nowMicros, isOpen: isOpen)
        // An app in the background reconnects at every handshake deadline (3.3 s): said once, when it went there.
        let app = foreground.apps.first { $0.connection == id }?.processID
        let waitsAgain = actions.last == .park(id) && app.map { told.contains(.waiting($0)) } == true
        if actions != [.refuse(id)] && !waitsAgain {
            print("serve: \(pid) \(known != nil ? "reconnected" : "attached") (connection \(id))")
        }
        await apply(actions, quietly: waitsAgain)
    }

    /// What serve's log said of an app that it does not say again until the app's state changes.
    private enum News: Hashable {
        /// The app (its process) waits in the background.
        case waiting(Int32)
        /// A second connection of the app's process was refused.
        case refused(Int32)
    }

    /// The news the log gave of the apps attached.
    private var told: Set<News> = []

    /// Answers connection `id`'s requests with `ALREADY_EXISTS` and why, until its app closes it: a second
    /// host in a process that has one attached (one process is one app; the two took the device from each
    /// other at every reconnect).
    private func refuse(_ id: ForegroundApps.ConnectionID, reason: String) {
        guard let connection = connections[id] else { return }
        let message =
            "camctl serve: \(reason): one process is one app, and a second host in it would take the device from "
            + "the first at every reconnect; use one CameraControlHost per process"
        if told.insert(.refused(connection.peerProcessID ?? -Int32(truncatingIfNeeded: id + 1))).inserted {
            print("serve: connection \(id) refused: \(reason) (one process is one app)")
        }
        wire.refuse(connection, status: .alreadyExists, message: message) { [weak self] in
            Task { await self?.appEnded(id) }
        }
    }

    /// Answers connection `id`'s handshakes with `UNAVAILABLE` and who has the device, while its app waits in
    /// the background: its host knows the device is there, held for another app
    /// (`DeviceError.isDeviceBusy`), keeps the connection open and asks again, and its `connect` waits for
    /// its turn instead of giving up. The connection's end is not news here: the rules learn it when they
    /// need it (``isOpen(_:)``).
    private func answerBusy(_ id: ForegroundApps.ConnectionID) {
        guard let connection = connections[id] else { return }
        let front = foreground.front.map { $0.processID > 0 ? "pid \($0.processID)" : "another app" } ?? "another app"
        let message =
            "camctl serve: \(front) has the device (in front); this app waits in the background and gets it when "
            + "that app leaves"
        wire.refuse(connection, status: .unavailable, message: message) {}
    }

    /// Whether connection `id` is still open at its app's end (not closed by it).
    private func isOpen(_ id: ForegroundApps.ConnectionID) -> Bool {
        connections[id].map { !$0.isPeerClosed } ?? false
    }

    func tick() async {
        // The held host stops by itself when the device cannot come back (`CameraControlHost.goneForGood`).
        if let host, let gone = await host.goneForGood { self.gone(gone.message) }
        await apply(
            foreground.expire(nowMicros: nowMicros, isRunning: { pid in kill(pid, 0) == 0 || errno == EPERM }, isOpen: isOpen))
        showRelayCounters()
        let attached = Set(foreground.apps.map(\.processID))
        told = told.filter { news in
            switch news {
            case .waiting(let pid), .refused(let pid): attached.contains(pid)
            }
        }
    }

    /// A connection's bytes ended (the app closed it, or serve did); what the rules say to do then (the app
    /// in front closing its connection has left: the device goes on at once; unless no device is carried,
    /// its port gone: then the app's host reconnects until it is back, and keeps the front meanwhile).
    private func ended(_ id: ForegroundApps.ConnectionID) -> [ForegroundApps.Action] {
        connections.removeValue(forKey: id)?.close()
        let deviceGone = relayed == id && !wire.isCarryingDevice
        if relayed == id {
            relayed = nil
            wire.setFront(nil)
        }
        return foreground.disconnected(id, nowMicros: nowMicros, frontStays: deviceGone, isOpen: isOpen)
    }

    /// Does what the rules say; `quietly`: an app in the background reconnected, which the log said already.
    private func apply(_ actions: [ForegroundApps.Action], quietly: Bool = false) async {
        for action in actions {
            switch action {
            case .close(let id):
                if !quietly { print("serve: closing connection \(id)") }
                if relayed == id {
                    wire.setFront(nil)
                    relayed = nil
                }
                // serve closed it: the rules knew before (no news from them).
                _ = ended(id)
            case .park(let id):
                if let pid = foreground.apps.first(where: { $0.connection == id })?.processID {
                    told.insert(.waiting(pid))
                }
                if !quietly { print("serve: connection \(id) waits in the background") }
                answerBusy(id)
            case .refuse(let id):
                let processID = connections[id]?.peerProcessID
                let open = foreground.apps.first { $0.processID == processID }?.connection
                let pid = processID.map { "pid \($0)" } ?? "its process"
                refuse(id, reason: "\(pid) is attached already, through connection \(open.map(String.init) ?? "?"), still open")
            case .relay(let id):
                await relay(id)
            case .hold:
                print("serve: no app attached; taking the device back")
                control?.refuse("camctl serve is taking the device back")
                showWhoHasTheDevice()
                await releaseDevice()
                // An app may attach while the device is reopened (this actor takes it meanwhile): then it
                // has the device, and the host just made goes.
                let host = await reacquire()
                if foreground.apps.isEmpty {
                    await holdDevice(host)
                } else {
                    await host?.stop()
                }
            }
        }
        showWhoHasTheDevice()
    }

    /// Carries the device's bytes between connection `id` and the device.
    private func relay(_ id: ForegroundApps.ConnectionID) async {
        guard let connection = connections[id] else { return }
        let pid = connection.peerProcessID.map { "pid \($0)" } ?? "connection \(id)"
        control?.refuse(
            "\(pid) has the device: the virtual control plays through camctl serve's own session, and serve "
                + "has none while an app is in front")
        if let host {
            // Let go of at once (an app attaching meanwhile finds it gone); the steps the page had posted are
            // played on it (and the page's finger lifted) before its session goes.
            // From here its effects neither clear the page's refusal (a reconnect meanwhile) nor say "lost".
            releasing.value.withLock { $0 = true }
            self.host = nil
            handingOver = host
            await control?.settle()
            handingOver = nil
            gestureFeed?.finish()
            for task in pageFeed { task.cancel() }
            pageFeed = []
            await host.stop()
        }
        // Another app may have come to the front while this one waited for the held host to stop.
        guard foreground.front?.connection == id, connections[id] != nil else { return }
        if devicePump == nil {
            // Open the port now, so that the app's first bytes (its handshake) find it; a port that does not
            // open yet (unplugged) is opened by the pump, every 250 ms.
            startDevicePump(opened: try? reopener.open())
        }
        relayed = id
        if let app = foreground.apps.first(where: { $0.connection == id })?.processID { told.remove(.waiting(app)) }
        print("serve: \(pid) in front (connection \(id))")
        // End any half frame the app before left on the line, then carry this app's bytes.
        wire.setFront(connection) { [weak self] in
            Task { await self?.appEnded(id) }
        }
        showWhoHasTheDevice()
        showRelayCounters(now: true)
    }

    private func appEnded(_ id: ForegroundApps.ConnectionID) async {
        guard connections[id] != nil else { return }
        // A refused connection's end is no news (its host may try again and again, at most 2 s apart).
        let app = foreground.apps.first { $0.connection == id }
        if app != nil { print("serve: connection \(id) ended") }
        let inFront = app != nil && foreground.front?.connection == id
        let actions = ended(id)
        if inFront, let app, foreground.front?.processID != app.processID {
            print("serve: \(app.processID > 0 ? "pid \(app.processID)" : "connection \(id)'s app") left the front")
        }
        await apply(actions)
    }

    /// Opens the device's port (again after an unplug) and carries its bytes to and from the app in front
    /// until ``releaseDevice()``.
    private func startDevicePump(opened: (any EventLoopTransport)?) {
        let path = path
        let reopener = reopener
        let wire = wire
        wire.allowDevice()
        devicePump = Task {
            var reported = false
            var next = opened
            while !Task.isCancelled {
                let port: any EventLoopTransport
                do {
                    if let opened = next {
                        port = opened
                        next = nil
                    } else {
                        port = try reopener.open()
                    }
                } catch {
                    if (error as? TransportError)?.code == .gone {
                        self.gone("\(error)")
                        break
                    }
                    if !reported {
                        print("serve: cannot open \(path) (\(error)); trying again every 250 ms")
                        reported = true
                    }
                    try? await Task.sleep(for: .milliseconds(250))
                    continue
                }
                if reported { print("serve: \(path) is open again") }
                reported = false
                let carried = await wire.carryDevice(port)
                port.close()
                if !carried { break }  // released meanwhile
            }
            next?.close()
        }
    }

    /// Stops carrying bytes and closes the raw port.
    private func releaseDevice() async {
        wire.setFront(nil)
        relayed = nil
        devicePump?.cancel()
        wire.closeDevice()  // ends the pump's carry
        devicePump = nil
    }

    // MARK: Holding the device

    /// Starts the live page (`--http`): the virtual control plays through the held host's session.
    func startPage(host address: String, port: UInt16) throws -> LivePageServer {
        let control = VirtualControlPlayer(isSimulator: isSimulator) { [weak self] in await self?.heldSession() }
        let page = try LivePageServer(configuration: .init(host: address, port: port), control: control.take)
        control.refuse("camctl serve is connecting to the device")  // until it holds it
        self.page = page
        self.control = control
        wire.showSessions(on: page)
        return page
    }

    private func heldSession() async -> DeviceSession? {
        await (host ?? handingOver)?.session
    }

    /// Tells the page who has the device (sticky: a page opened later sees it first), when it changed.
    private func showFront(_ text: String) {
        guard let page, text != shownFront else { return }
        shownFront = text
        let json = JSONValue.object([JSONMember("type", .string("front")), JSONMember("text", .string(text))]).compactText
        page.publish(json: json, sticky: "front")
    }

    /// What the page's `front` message says now.
    private var shownFront: String?

    /// Tells the page who has the device now: the app whose bytes are carried, the app in front while its
    /// host reconnects (brought to the front, or its link lost), serve, or nobody while serve takes the
    /// device back. An app that left is not
    /// named (before 2026-12-07 it was, for the 5 s grace time).
    private func showWhoHasTheDevice() {
        if let relayed {
            showFront("\(appName(relayed)) has the device")
        } else if let front = foreground.front {
            let name = front.processID > 0 ? "pid \(front.processID)" : "an app"
            showFront("\(name) is in front, its host reconnecting")
        } else if host != nil {
            showFront("held by camctl serve: no app attached")
        } else {
            showFront("no app attached: camctl serve is taking the device back")
        }
    }

    /// Connection `id`'s app as the page and the log name it.
    private func appName(_ id: ForegroundApps.ConnectionID) -> String {
        connections[id]?.peerProcessID.map { "pid \($0)" } ?? "connection \(id)"
    }

    /// When the page last got the relay's counters.
    private var countersShown: ContinuousClock.Instant?

    /// While an app is in front, the page's link counters are what the wire carried for it, once a second
    /// (or `now`): serve holds no session of its own then (before 2026-12-07 the page kept the last counters
    /// of serve's session, frozen).
    private func showRelayCounters(now: Bool = false) {
        guard let page, let relayed else { return }
        if !now, let shown = countersShown, ContinuousClock.now - shown < .seconds(1) { return }
        countersShown = .now
        page.publish(json: wire.relayCountersJSON(app: appName(relayed)), sticky: "counters")
    }

    /// Holds the device with `host` (nil: it could not be opened before the end) and launches on a click.
    func holdDevice(_ host: CameraControlHost?) async {
        guard let host else { return }
        self.host = host
        control?.refuse(nil)
        showWhoHasTheDevice()
        if let page, let control {
            let releasing = StopFlag()
            self.releasing = releasing
            pageFeed = await Monitor.feed(
                page, from: host, portName: path, printer: EventPrinter(json: true), isSimulator: isSimulator, control: control,
                camera: false, isStopping: { releasing.value.withLock { $0 } })
        }
        // The host's observer runs on its loop; one task takes the gestures in order.
        let (gestures, continuation) = AsyncStream<Gesture?>.makeStream()
        gestureFeed = continuation
        await host.observe { effect in
            switch effect {
            case .gesture(let gesture): continuation.yield(gesture)
            case .deviceLost: continuation.yield(nil)
            default: break
            }
        }
        Task { [weak self] in
            for await gesture in gestures {
                guard let self else { return }
                if let gesture {
                    await self.take(gesture)
                } else {
                    await self.resetRules()
                }
            }
        }
    }

    private func resetRules() { rules.reset() }

    private func take(_ gesture: Gesture) {
        guard host != nil, foreground.apps.isEmpty, let launch = rules.take(gesture) else { return }
        if let launched, launched.isRunning {
            // It may be an app still starting, or a command that never attaches (a `--hold` that plays a sound).
            print("serve: `\(launched.arguments?.last ?? "")` is still running and has not attached; the press reaches no app")
            return
        }
        guard let command = launch == .hold ? holdCommand ?? launchCommand : launchCommand else { return }
        print("serve: \(launch == .hold ? "hold" : rules.trigger.rawValue) → launching `\(command)` (CAMCTL_PORT=\(socketPath))")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = ProcessInfo.processInfo.environment.merging(["CAMCTL_PORT": socketPath]) { _, new in new }
        process.terminationHandler = { ended in
            print("serve: `\(command)` exited with status \(ended.terminationStatus)")
        }
        do {
            // With no signal blocked (the app can be interrupted), and ended with serve.
            guard try LaunchedProcesses.launch(process) else { return }
            launched = process
        } catch {
            StandardStreams.error("camctl serve: cannot run /bin/sh: \(error)")
        }
    }

    /// The device cannot come back: serve ends (exit 1) at its next tick.
    private func gone(_ why: String) {
        guard goneForGood == nil else { return }
        goneForGood = why
        print("serve: \(path) is gone for good (\(why)); stopping")
    }

    /// Connects to the device again, every 250 ms until it works, the end passes, an app attaches (the
    /// device may have been unplugged while an app had it) or the device is gone for good.
    private func reacquire() async -> CameraControlHost? {
        var reported = false
        while (end.map { ContinuousClock.now < $0 } ?? true) && foreground.apps.isEmpty && goneForGood == nil {
            do {
                let host = try await Ports.connectHost(reopening: reopener, hostName: "camctl serve")
                if reported { print("serve: \(path) answers again") }
                return host
            } catch let failure as CLIFailure where failure.isGoneForGood {
                gone(failure.message)
                return nil
            } catch {
                if !reported {
                    print("serve: \(path) does not answer yet (\(error)); trying again every 250 ms")
                    reported = true
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        return nil
    }

    /// Closes every connection and lets the device go.
    func shutdown() async {
        LaunchedProcesses.terminateAll()  // the apps it launched end with it
        for task in pageFeed { task.cancel() }
        page?.shutdown()
        for connection in connections.values { connection.close() }
        connections.removeAll()
        await releaseDevice()
        if let host {
            self.host = nil
            gestureFeed?.finish()
            await host.stop()
        }
    }
}

/// The bytes between the device's port and the app in front, on one event loop: what one side reads goes
/// out of the other in the same wake-up, and with `--http` the front app's session is read as it passes
/// (``SessionTap``): its gestures (recognised here from its input events, as the app's host does) and its
/// raw samples go to the page. The engine decides who is in front; the wire carries.
final class ServeWire: Sendable {
    private struct State {
        var device: (port: any EventLoopTransport, control: any EventLoopControl)?
        /// Set by ``closeDevice()`` until ``allowDevice()``: a port handed over meanwhile is closed.
        var deviceStopped = false
        var deviceEnded: CheckedContinuation<Bool, Never>?
        var front: (connection: LocalSocketTransport, control: any EventLoopControl)?
        var page: LivePageServer?
        var tap = SessionTap()
        var recognizer = GestureRecognizer()
        /// Bytes carried since the app in front got the device: from the device, from the app.
        var bytes = (fromDevice: 0, fromApp: 0)
    }

    /// Serve's loop (nil when none can be made: each port then runs on a loop of its own).
    private let loop = try? PollEventLoop(name: "cc-serve")
    private let state = Mutex(State())
    private let printer = EventPrinter(json: true)

    /// With `--http`: the front app's gestures and raw samples go to `page`.
    func showSessions(on page: LivePageServer) {
        printer.sink = { page.publish(json: $0) }
        state.withLock { $0.page = page }
    }

    /// What the wire carried for the app in front since it got the device, as the page's link counters
    /// (`{"type":"counters","values":{…}}`: serve makes no call of its own on the app's session, so these
    /// are what it saw pass by, not the device's counters); the packets are counted with `--http` only.
    func relayCountersJSON(app: String) -> String {
        let (counts, bytes) = state.withLock { ($0.tap.counts, $0.bytes) }
        let values: [(String, Int)] = [
            ("bytesFromDevice", bytes.fromDevice), ("bytesFromApp", bytes.fromApp),
            ("packetsFromDevice", counts.packetsFromDevice), ("packetsFromApp", counts.packetsFromHost),
            ("badFramesFromDevice", counts.badFramesFromDevice), ("badFramesFromApp", counts.badFramesFromHost),
            ("inputEvents", counts.inputEvents), ("sampleBatches", counts.sampleBatches),
        ]
        return JSONValue.object([
            JSONMember("type", .string("counters")),
            JSONMember(
                "values",
                .object([JSONMember("relayedFor", .string(app))] + values.map { JSONMember($0.0, .integer($0.1)) })),
        ]).compactText
    }

    /// Whether the device's port is being carried (false while it is reopened: unplugged, or not yet open).
    var isCarryingDevice: Bool { state.withLock { $0.device != nil } }

    /// A port may be carried again (after ``closeDevice()``).
    func allowDevice() {
        state.withLock { $0.deviceStopped = false }
    }

    /// Carries `port`'s bytes until it ends (unplugged, or ``closeDevice()``); false at once when the wire
    /// is closed to ports (or the port cannot run on the loop).
    func carryDevice(_ port: any EventLoopTransport) async -> Bool {
        await withCheckedContinuation { (ended: CheckedContinuation<Bool, Never>) in
            let started = state.withLock { state -> Bool in
                guard !state.deviceStopped,
                    let control = port.startEventLoop(delegate: WireSide(wire: self, connection: nil), on: loop)
                else { return false }
                state.device = (port, control)
                state.deviceEnded = ended
                return true
            }
            if !started { ended.resume(returning: false) }
        }
    }

    /// Closes the port being carried; ports handed over later are closed until ``allowDevice()``.
    func closeDevice() {
        let port = state.withLock { state -> (any EventLoopTransport)? in
            state.deviceStopped = true
            return state.device?.port
        }
        port?.close()
    }

    /// Puts `connection` in front (nil: nobody): a zero byte first ends any half frame the app before left on
    /// the line, then what it sends goes to the device and what the device sends to it. `ended` is called
    /// once, when its connection ends.
    func setFront(_ connection: LocalSocketTransport?, ended: @escaping @Sendable () -> Void = {}) {
        guard let connection else {
            state.withLock { $0.front = nil }
            return
        }
        state.withLock { state in
            state.front = nil
            state.tap = SessionTap()
            state.recognizer = GestureRecognizer()
            state.bytes = (0, 0)
            printer.resetOrigin()
            if let device = state.device { [UInt8(0)].withUnsafeBytes { device.control.write($0) } }
            guard
                let control = connection.startEventLoop(
                    delegate: WireSide(wire: self, connection: connection, ended: ended), on: loop)
            else { return }
            state.front = (connection, control)
        }
    }

    /// Answers every request `connection` sends with an `ERROR` of `status` and `message`: `ALREADY_EXISTS`
    /// when serve refuses it (``ForegroundApps/Action/refuse(_:)``), `UNAVAILABLE` while its app waits in
    /// the background (``ForegroundApps/Action/park(_:)``); `ended` is called once, when the connection ends.
    func refuse(
        _ connection: LocalSocketTransport, status: StatusCode, message: String, ended: @escaping @Sendable () -> Void
    ) {
        let side = RefusedSide(status: status, message: message, ended: ended)
        side.attach(connection.startEventLoop(delegate: side, on: loop))
    }

    /// Bytes read from the device (`connection` nil) or from an app's connection: only the app in front
    /// reaches the device.
    fileprivate func received(_ bytes: UnsafeRawBufferPointer, from connection: LocalSocketTransport?) {
        state.withLock { state in
            if connection == nil {
                guard let front = state.front else { return }
                front.control.write(bytes)
                state.bytes.fromDevice += bytes.count
                guard let page = state.page else { return }
                for item in state.tap.deviceSent(Array(bytes)) {
                    switch item {
                    case .input(let event):
                        for gesture in state.recognizer.handle(event) { printer.gesture(gesture) }
                    case .samples(let batch):
                        page.publish(json: Monitor.samplesJSON(batch))
                    }
                }
            } else {
                guard let front = state.front, front.connection === connection else { return }
                state.bytes.fromApp += bytes.count
                if state.page != nil { state.tap.hostSent(Array(bytes)) }
                state.device?.control.write(bytes)
            }
        }
    }

    fileprivate func deviceEnded() {
        let ended = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.device = nil
            defer { state.deviceEnded = nil }
            return state.deviceEnded
        }
        ended?.resume(returning: true)
    }
}

/// One side of the wire: the device's port (`connection` nil), or an app's connection.
private final class WireSide: EventLoopDelegate {
    let wire: ServeWire
    let connection: LocalSocketTransport?
    let ended: @Sendable () -> Void

    init(wire: ServeWire, connection: LocalSocketTransport?, ended: @escaping @Sendable () -> Void = {}) {
        self.wire = wire
        self.connection = connection
        self.ended = ended
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) { wire.received(bytes, from: connection) }

    func eventLoopTimerFired() {}

    func eventLoopEnded(_ error: TransportError) {
        if connection == nil { wire.deviceEnded() } else { ended() }
    }
}

/// A connection serve refuses, or whose app waits in the background: each request it sends (its handshake
/// first) is acknowledged and answered `ERROR` with a status (`ALREADY_EXISTS`, `UNAVAILABLE`) and the
/// reason, so its host knows why (not a silent device); nothing reaches the device.
private final class RefusedSide: EventLoopDelegate {
    private struct State {
        var decoder = FrameDecoder()
        var sequence: UInt16 = 0
        var control: (any EventLoopControl)?
        /// Replies made before ``attach(_:)``.
        var pending: [UInt8] = []
    }

    private let status: StatusCode
    private let message: [UInt8]
    private let ended: @Sendable () -> Void
    private let state = Mutex(State())

    init(status: StatusCode, message: String, ended: @escaping @Sendable () -> Void) {
        self.status = status
        self.message = Array(message.utf8.prefix(512))
        self.ended = ended
    }

    /// The connection's control, once its loop started (nil: it could not, and it is over).
    func attach(_ control: (any EventLoopControl)?) {
        guard let control else { return ended() }
        state.withLock { state in
            state.control = control
            state.pending.withUnsafeBytes { control.write($0) }
            state.pending = []
        }
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            state.decoder.append(bytes)
            var replies: [UInt8] = []
            while let output = state.decoder.next() {
                guard case .packet(let request) = output, request.type == .request else { continue }
                for var reply in [
                    Packet.ack(sequence: 0, acking: request.sequence),
                    Packet(type: .error, isReliable: true, callID: request.callID, status: status, payload: message),
                ] {
                    reply.sequence = state.sequence
                    state.sequence &+= 1
                    replies += (try? PacketEncoder.encode(reply)) ?? []
                }
            }
            guard !replies.isEmpty else { return }
            if let control = state.control {
                replies.withUnsafeBytes { control.write($0) }
            } else {
                state.pending += replies
            }
        }
    }

    func eventLoopTimerFired() {}

    func eventLoopEnded(_ error: TransportError) { ended() }
}
