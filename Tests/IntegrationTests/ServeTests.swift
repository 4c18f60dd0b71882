import CameraControlDevice
import CameraControlHost
import CameraControlPorts
import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTools
import CameraControlTransport
import CameraControlWire
import Foundation
import Synchronization
import Testing

/// `camctl serve` over a real pty: apps attach at its socket with Apple's foreground rules; a click launches the
/// camera command, which gets the device through the socket, a click-and-hold the hold command, and serve takes
/// the device back in between.
extension OverRealPTY {
    @Suite("camctl serve")
    struct Serve {
        @Test("a click launches the camera command, which gets the device through serve's socket; a click-and-hold the hold command")
        func launchOnClick() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-serve-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // The click 0.5 s after serve's handshake; the hold 4 s later, room for the launched command to
            // attach, handshake, exit, and for serve to take the device back on a loaded machine.
            let scenario = folder.appendingPathComponent("serve.scenario")
            try "pause 500ms\nfull-click\npause 4000ms\nclick-and-hold 1000ms\npause 500ms\n"
                .write(to: scenario, atomically: true, encoding: .utf8)
            let log = folder.appendingPathComponent("launched.log").path
            let info = folder.appendingPathComponent("info.txt").path
            let camctl = try BuiltProducts.executable("camctl")
            let socket = folder.appendingPathComponent("serve.sock").path
            try await withSimulator(seed: 91, extraArguments: ["--scenario", scenario.path]) { simulator in
                let run = try await runTool(
                    "camctl",
                    [
                        "serve", simulator.ptyPath, "--socket", socket,
                        "--launch", "'\(camctl)' info \"$CAMCTL_PORT\" > '\(info)' 2>&1; echo camera $? >> '\(log)'",
                        "--hold", "echo hold >> '\(log)'", "--seconds", "12",
                    ], timeout: .seconds(40))
                #expect(run.status == 0, "\(run.standardError)")
                let launched = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                #expect(launched == "camera 0\nhold\n", "serve said:\n\(run.standardOutput)")
                let infoText = (try? String(contentsOfFile: info, encoding: .utf8)) ?? ""
                #expect(infoText.contains("SIM-"), "the launched command had the device: \(infoText)")
                #expect(run.standardOutput.contains("taking the device back"))
                #expect(run.standardOutput.contains("(CAMCTL_PORT=\(socket))"), "the camera command attached at serve's socket")
            }
        }

        /// A launched app that outlives serve went on alone against a socket that was gone (`sh -c` does not
        /// always `exec` the command: the shell and the app both stayed).
        @Test("what serve launched ends with it: the shell, the processes below it and the orphans it left")
        func launchedEndWithServe() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let scenario = folder + "/click.scenario"
            try "pause 500ms\nfull-click\npause 200ms\n".write(toFile: scenario, atomically: true, encoding: .utf8)
            let pids = folder + "/pids"
            try await withSimulator(seed: 95, extraArguments: ["--scenario", scenario]) { simulator in
                let run = try await runTool(
                    "camctl",
                    [
                        "serve", simulator.ptyPath, "--socket", folder + "/serve.sock",
                        "--launch",
                        "echo $$ > '\(pids)'; (sleep 61 & echo $! >> '\(pids)'); sleep 60 & echo $! >> '\(pids)'; wait",
                        "--seconds", "4",
                    ], timeout: .seconds(30))
                #expect(run.status == 0, "\(run.standardError)")
                let launched = ((try? String(contentsOfFile: pids, encoding: .utf8)) ?? "").split(separator: "\n")
                    .compactMap { pid_t($0) }
                // The shell, an orphan its subshell left (init's child now, in the shell's process group) and
                // a background job.
                try #require(launched.count == 3, "the command ran: \(run.standardOutput)")
                /// Gone, or a zombie nobody has reaped yet (it has ended).
                func ended(_ processID: pid_t) -> Bool {
                    guard kill(processID, 0) == 0 else { return true }
                    let stat = (try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8)) ?? ""
                    return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
                }
                for processID in launched {
                    let gone = await eventually(within: .seconds(5)) { ended(processID) }
                    #expect(gone, "process \(processID) outlived serve")
                    if !gone { kill(processID, SIGKILL) }
                }
            }
        }

        @Test(
            "apps attached to one camctl serve: the last attached gets every capture, the others none; a new app cancels the press in flight of the one before; leaving hands back"
        )
        func appsAttachedWithForegroundRules() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let control = folder + "/control"
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 93, extraArguments: ["--control", control]) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                /// Plays `scenario` on the device, whoever holds its pty (camctl-sim --control).
                func press(_ scenario: String) throws {
                    let fifo = try #require(FileHandle(forWritingAtPath: control))
                    fifo.write(Data((scenario + "\n\n").utf8))
                    try fifo.close()
                }

                let first = try Background("camera-app", [socket])
                defer { first.stop() }
                try await first.waitFor("device connected")
                try press("full-click")
                try await first.waitFor("photo 1")

                // A second app attaches: it is in front, the first goes to the background and gets nothing.
                let second = try Background("camera-app", [socket])
                defer { second.stop() }
                try await second.waitFor("device connected")
                try await first.waitFor("device lost")
                try press("full-click")
                try await second.waitFor("photo 1")

                // A press in flight in the second when a third attaches: cancelled there, never captured.
                try press("click-and-hold 10000ms")
                let held = ContinuousClock.now
                try await second.waitFor("capture began", count: 2)
                let third = try Background("camera-app", [socket])
                defer { third.stop() }
                try await third.waitFor("device connected")
                try await second.waitFor("capture cancelled primary camera-control")

                // The third leaves: the second comes back to the front and gets the next click.
                third.stop()
                try await second.waitFor("device connected", count: 2)
                try await Task.sleep(until: held + .milliseconds(10_500), clock: .continuous)  // the finger lifted
                try press("full-click")
                try await second.waitFor("photo 2")

                #expect(first.count("capture began") == 1, "the first app captured in the background:\n\(first.text)")
                #expect(!third.text.contains("capture"), "the third app saw the press it attached in the middle of:\n\(third.text)")
                #expect(!second.text.contains("photo 3") && second.count("capture ended") == 2, "\(second.text)")
                #expect(serve.text.contains("waits in the background"), "\(serve.text)")
            }
        }

        /// Connects a host to serve at `socket` whose first open attaches (in front) and, before its handshake,
        /// runs `meanwhile` (another app attaching: this one goes to the background); later opens are the
        /// host's reconnects. Returns the host and how many opens it made.
        static func connectSentToTheBackground(
            at socket: String, serve: Background, meanwhile: @escaping @Sendable () async -> Void
        ) async throws(DeviceError) -> (host: CameraControlHost, opens: Int) {
            let opens = Mutex(0)
            let host = try await CameraControlHost.connect { loop async throws(DeviceError) -> DeviceSession in
                let first = opens.withLock { count in
                    count += 1
                    return count == 1
                }
                guard first else {
                    return try await DeviceSession.open(path: socket, hostName: "first", eventLoop: loop)
                }
                let transport: LocalSocketTransport
                do throws(TransportError) {
                    transport = try LocalSocketTransport(connectingTo: socket)
                } catch {
                    throw DeviceError(.transport, "\(error)", transportError: error)
                }
                try? await serve.waitFor("in front (connection 1)")
                await meanwhile()
                return try await DeviceSession.connect(transport: transport, hostName: "first", eventLoop: loop)
            }
            return (host, opens.withLock { $0 })
        }

        /// Two apps starting together: serve closed the first one's connection during its handshake (the second
        /// sent it to the background), and its connect() gave up at once: camera-app exited 3 ("no device answered").
        @Test("two apps starting together: the first, sent to the background during its handshake, gets the device in its turn")
        func appsStartingTogether() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 99) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                let other = Mutex<ToolRun?>(nil)
                // Before its handshake another app attaches, has the device in its turn (camctl info) and leaves.
                let (host, opens) = try await Self.connectSentToTheBackground(at: socket, serve: serve) {
                    let run = try? await runTool("camctl", ["info", socket], timeout: .seconds(60))
                    other.withLock { $0 = run }
                }
                let run = try #require(other.withLock { $0 })
                #expect(run.status == 0 && run.standardOutput.contains("SIM-"), "\(run.standardError)")
                #expect(opens >= 2, "its first open failed and was made again")
                let connected = await (host.session != nil, host.connectionCount)
                #expect(connected == (true, 1), "serve printed:\n\(serve.text)")
                await host.stop()
            }
        }

        /// An app sent to the background while it started gave up after `reconnectWithin` (10 s) when the app
        /// in front stayed longer: serve's parked connection never answered its handshake.
        @Test("an app sent to the background while it starts waits past reconnectWithin, answered busy, and gets the device in its turn")
        func appStartingInTheBackgroundWaits() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 93) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                // The app in front stays longer than connect waits for a device that went away.
                let frontSeconds = CameraControlHost.reconnectWithin.components.seconds + 3
                let front = Mutex<Background?>(nil)
                defer { front.withLock { $0?.stop() } }
                let started = ContinuousClock.now
                // Before its handshake another app attaches and stays.
                let (host, opens) = try await Self.connectSentToTheBackground(at: socket, serve: serve) {
                    let monitor = try? Background("camctl", ["monitor", socket, "--seconds", "\(frontSeconds)"])
                    front.withLock { $0 = monitor }
                    try? await serve.waitFor("in front (connection 2)")
                }
                // It connected once the other app left, after waiting longer than reconnectWithin (lower bounds).
                #expect(ContinuousClock.now - started >= .seconds(frontSeconds), "serve printed:\n\(serve.text)")
                #expect(opens >= 2)
                let session = try #require(await host.session, "serve printed:\n\(serve.text)")
                _ = try await session.ping()
                #expect(await host.connectionCount == 1)
                #expect(serve.text.contains("waits in the background"), "serve printed:\n\(serve.text)")
                await host.stop()
            }
        }

        /// Two hosts in one process took the device from each other every 250 ms: each one's reconnect closed
        /// the other's connection (one process is one app).
        @Test("a second host in a process that has one attached is refused, ALREADY_EXISTS with why; the first keeps the device")
        func secondHostInOneProcess() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 96) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                let first = try await CameraControlHost.connect(to: socket, hostName: "first")
                do throws(DeviceError) {
                    let second = try await CameraControlHost.connect(to: socket, hostName: "second")
                    await second.stop()
                    Issue.record("the second host was let in; serve printed:\n\(serve.text)")
                } catch {
                    #expect(error.rpcError?.code == .alreadyExists, "\(error)")
                    #expect(error.message.contains("one process is one app"), "\(error)")
                }
                // A second host that keeps trying (a host started, not connect()) is refused each time, and the
                // log says so once (a bound against a hang, not a timing).
                let tries = Atomic<Int>(0)
                let retrying = CameraControlHost(configuration: .init(retryDelay: .milliseconds(50))) {
                    loop async throws(DeviceError) -> DeviceSession in
                    tries.wrappingAdd(1, ordering: .relaxed)
                    return try await DeviceSession.open(path: socket, hostName: "retrying", eventLoop: loop)
                }
                await retrying.start()
                #expect(await eventually(within: .seconds(60)) { tries.load(ordering: .relaxed) >= 4 })
                await retrying.stop()
                // The first host kept the device all along: its one session answers.
                let session = try #require(await first.session, "serve printed:\n\(serve.text)")
                _ = try await session.ping()
                #expect(await first.connectionCount == 1, "serve printed:\n\(serve.text)")
                #expect(serve.count("refused") == 1 && !serve.text.contains("ended"), "\(serve.text)")
                await first.stop()
            }
        }

        @Test("serve --http: the page shows the device while serve holds it, and which app has it and its gestures while one is in front")
        func page() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            let control = folder + "/control"
            try await withSimulator(seed: 94, extraArguments: ["--control", control]) { simulator in
                let serve = try Background(
                    "camctl", ["serve", simulator.ptyPath, "--socket", socket, "--http", "127.0.0.1:0", "--seconds", "300"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at")
                let port = try #require(serve.pagePort, "serve printed:\n\(serve.text)")
                /// The page's event stream until it shows `needle` (a new page gets the sticky messages first), or
                /// fails after 30 s (a guard, not a timing) with what the page and serve said.
                func events(until needle: String, _ context: @autoclosure () -> String = "") async throws -> String {
                    let text = try await blockingOnOwnThread {
                        let client = try LoopbackClient(port: port)
                        client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                        let end = ContinuousClock.now + .seconds(30)
                        return client.read { $0.contains(needle) || ContinuousClock.now > end }
                    }
                    guard text.contains(needle) else {
                        throw ChildProcessFailure(
                            description:
                                "the page never showed '\(needle)'; it sent:\n\(text.suffix(1200))\nserve printed:\n\(serve.text)\(context())"
                        )
                    }
                    return text
                }
                let held = try await events(until: "held by camctl serve")
                #expect(held.contains(#""type":"device""#) && held.contains("on \(simulator.ptyPath)"), "\(held)")
                #expect(held.contains(#""simulator":true"#), "the virtual control is offered: \(held)")

                let app = try Background("camera-app", [socket])
                defer { app.stop() }
                try await app.waitFor("device connected")
                let front = try await events(until: "has the device", "\ncamera-app printed:\n\(app.text)")
                #expect(front.contains(#""type":"front""#), "\(front)")
                // The app's session passes through serve: a click on the device shows on the page as gestures.
                let clicked = try await blockingOnOwnThread {
                    let client = try LoopbackClient(port: port)
                    client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                    let end = ContinuousClock.now + .seconds(30)
                    var seen = client.read { $0.contains("has the device") || ContinuousClock.now > end }
                    let fifo = FileHandle(forWritingAtPath: control)
                    fifo?.write(Data("full-click\n\n".utf8))
                    try fifo?.close()
                    seen += client.read {
                        ($0.contains(#""type":"gesture""#) && $0.contains("press-ended")) || ContinuousClock.now > end
                    }
                    return seen
                }
                #expect(
                    clicked.contains(#""type":"gesture""#) && clicked.contains("press-ended"),
                    "no gesture on the page: \(clicked.suffix(600))\nserve printed:\n\(serve.text)")
                try await app.waitFor("photo 1")
                app.stop()
                let back = try await events(until: "held by camctl serve", "\ncamera-app printed:\n\(app.text)")
                #expect(back.contains("held by camctl serve"), "serve took the device back: \(serve.text)")
            }
        }

        /// serve held the device for nobody for the grace time (5 s) when the app in front stopped its host while
        /// its process ran on: the app in the background got it only once the one in front counted as gone.
        @Test("the app in front stopping its host hands the device at once to the app in the background, not after the grace time")
        func frontAppLeavingHandsOverAtOnce() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 89) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                let background = try Background("camera-app", [socket])
                defer { background.stop() }
                try await background.waitFor("device connected")
                // This process attaches: it is in front, and camera-app waits in the background.
                let front = try await CameraControlHost.connect(to: socket, hostName: "front")
                try await background.waitFor("device lost")
                try await serve.waitFor("waits in the background")
                // Its host stops; this process runs on.
                let stopped = ContinuousClock.now
                await front.stop()
                try await background.waitFor("device connected", count: 2)
                // The hand-over is a reconnect (the retry delay, 250 ms) and a handshake; serve used to wait for
                // the grace time first.
                let took = ContinuousClock.now - stopped
                #expect(
                    took < .microseconds(Int64(ForegroundApps.reconnectGraceMicros)),
                    "camera-app had the device again \(took) after the front app's host stopped; serve printed:\n\(serve.text)")
                #expect(serve.text.contains("pid \(getpid()) left the front"), "\(serve.text)")
            }
        }

        /// The app in front leaving at once when its connection ends must not take the device from it while the
        /// device is unplugged: its host reconnects then (at each handshake deadline), and another app brought
        /// to the front would get no device either.
        @Test(
            "the device unplugged while an app is in front: it keeps the front as its host reconnects, and has the device once it is back"
        )
        func frontAppKeepsTheFrontWhileTheDeviceIsGone() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/cc"
            let socket = folder + "/serve.sock"
            let first = try SimulatorProcess(seed: 87, linkPath: link)
            defer { first.kill() }
            let serve = try Background("camctl", ["serve", link, "--socket", socket, "--seconds", "120"])
            defer { serve.stop() }
            try await serve.waitFor("apps attach at \(socket)")
            let background = try Background("camera-app", [socket])
            defer { background.stop() }
            try await background.waitFor("device connected")
            // This process attaches: it is in front, and camera-app waits in the background.
            let opens = Atomic<Int>(0)
            let front = try await CameraControlHost.connect { loop async throws(DeviceError) -> DeviceSession in
                opens.wrappingAdd(1, ordering: .relaxed)
                return try await DeviceSession.open(path: socket, hostName: "front", eventLoop: loop)
            }
            try await serve.waitFor("waits in the background")
            // The device goes: this app's host loses it and reconnects twice (its handshakes unanswered: a bound
            // against a hang, not a timing).
            first.kill()
            try? FileManager.default.removeItem(atPath: link)
            #expect(await eventually(within: .seconds(60)) { opens.load(ordering: .relaxed) >= 3 }, "serve printed:\n\(serve.text)")
            #expect(!serve.text.contains("left the front"), "\(serve.text)")
            #expect(background.count("device connected") == 1, "\(background.text)")
            // It comes back at the same path: this app has it again.
            let second = try SimulatorProcess(seed: 87, linkPath: link)
            defer { second.kill() }
            #expect(await eventually(within: .seconds(60)) { await front.connectionCount >= 2 }, "serve printed:\n\(serve.text)")
            let session = try #require(await front.session, "serve printed:\n\(serve.text)")
            _ = try await session.ping()
            #expect(!serve.text.contains("left the front"), "\(serve.text)")
            #expect(background.count("device connected") == 1, "\(background.text)")
            await front.stop()
        }

        /// A pseudo-terminal never comes back: serve reopened `/dev/pts/N` every 250 ms for ever, and could take
        /// whichever program's pseudo-terminal got that number next. Its held host and the pump that carries an
        /// app's bytes open the port through one `PortReopener`, which says the port is gone for good.
        @Test("the device's pseudo-terminal closed: serve ends with exit 1 and says so, whether it held the device or an app had it")
        func deviceGoneForGood() async throws {
            for appInFront in [false, true] {
                let folder = try makeTemporaryFolder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let socket = folder + "/serve.sock"
                let simulator = try SimulatorProcess(seed: 91)
                defer { simulator.kill() }
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                let app = appInFront ? try Background("camera-app", [socket]) : nil
                defer { app?.stop() }
                if let app {
                    try await app.waitFor("device connected")
                    try await serve.waitFor(" in front (connection ")
                }
                simulator.kill()
                let status = await serve.waitForExit()
                #expect(status == 1, "app in front: \(appInFront); serve printed:\n\(serve.text)")
                #expect(serve.text.contains("is gone for good"), "app in front: \(appInFront); serve printed:\n\(serve.text)")
            }
        }

        /// The page named an app that had left for the grace time (5 s), and its link counters stayed those of
        /// serve's own session, frozen, while an app was in front.
        @Test(
            "serve --http: while an app is in front the page's link counters are what serve carries for it, live; an app that leaves is no longer named"
        )
        func pageWhileAnAppIsInFront() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 88) { simulator in
                let serve = try Background(
                    "camctl", ["serve", simulator.ptyPath, "--socket", socket, "--http", "127.0.0.1:0", "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at")
                let port = try #require(serve.pagePort, "serve printed:\n\(serve.text)")
                // This process attaches, and pings the device through serve meanwhile.
                let app = try await CameraControlHost.connect(to: socket, hostName: "test-app")
                let pinging = Task {
                    while !Task.isCancelled {
                        _ = try? await app.session?.ping()
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                }
                let page = try PageEvents(port: port)
                // Two of them (one a second): the second counts more of the app's session.
                let live = try await page.read { relayCounters($0).count >= 2 }
                pinging.cancel()
                _ = await pinging.value
                let counters = relayCounters(live)
                try #require(counters.count >= 2, "\(live.suffix(1200))\nserve printed:\n\(serve.text)")
                #expect(counters[0]["relayedFor"] as? String == "pid \(getpid())", "\(counters[0])")
                let packets = counters.map { $0["packetsFromDevice"] as? Int ?? -1 }
                #expect(packets[0] >= 0 && packets.last! > packets[0], "\(counters)")
                #expect(live.contains("pid \(getpid()) has the device"), "\(live.suffix(1200))")
                // The app's host stops (this process runs on): the page names it no longer, at once.
                let stopped = ContinuousClock.now
                await app.stop()
                let after = try await page.read { $0.contains("taking the device back") || $0.contains("held by camctl serve") }
                let took = ContinuousClock.now - stopped
                #expect(
                    after.contains("taking the device back") || after.contains("held by camctl serve"),
                    "\(after.suffix(1200))\nserve printed:\n\(serve.text)")
                #expect(
                    took < .microseconds(Int64(ForegroundApps.reconnectGraceMicros)),
                    "the page named the app \(took) after it left; serve printed:\n\(serve.text)")
            }
        }

        /// serve's page answered 204 to a virtual-control step while an app was in front, and dropped it: a
        /// dropped `release` left the simulated finger down.
        @Test(
            "serve --http: the virtual control is refused (409, why) while an app has the device, and the finger the page left down is lifted before the app gets it"
        )
        func pageControlWhileAnAppIsInFront() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 97) { simulator in
                let serve = try Background(
                    "camctl", ["serve", simulator.ptyPath, "--socket", socket, "--http", "127.0.0.1:0", "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at")
                let port = try #require(serve.pagePort, "serve printed:\n\(serve.text)")
                func post(_ step: String) async throws -> String { try await postStep(step, toPageAt: port) }
                // serve holds the device: the page presses (a light press, held).
                for step in ["touch at=0.500", "force 1200mN over=30ms"] {
                    let answer = try await post(step)
                    #expect(answer.hasPrefix("HTTP/1.1 204 "), "\(step): \(answer)")
                }
                // The press reached the device (its light press shows on the page; 30 s is a bound against a hang).
                let pressed = try await blockingOnOwnThread {
                    let client = try LoopbackClient(port: port)
                    client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                    let end = ContinuousClock.now + .seconds(30)
                    return client.read { $0.contains("light-press-began") || ContinuousClock.now > end }
                }
                try #require(pressed.contains("light-press-began"), "\(pressed.suffix(600))\nserve printed:\n\(serve.text)")
                // An app attaches (this test's process) and is in front, the page's finger still down.
                let app = try await CameraControlHost.connect(to: socket, hostName: "test-app")
                // The page's release is refused, with why in one line.
                let refused = try await post("release")
                #expect(refused.hasPrefix("HTTP/1.1 409 ") && refused.contains("has the device"), "\(refused)")
                let reason = refused.components(separatedBy: "\r\n\r\n").last ?? ""
                #expect(reason.hasSuffix("\n") && reason.dropLast().split(separator: "\n").count == 1, "\(refused)")
                // serve lifted the finger before the app had the device: the app's samples show it up (30 s of
                // samples is a bound against a hang, not a timing: without the lift the finger stays down).
                let session = try #require(await app.session)
                let end = ContinuousClock.now + .seconds(30)
                var lifted = false
                var last: RawSample?
                for try await batch in try await session.rawSamples() {
                    last = batch.decodedSamples.last ?? last
                    if batch.decodedSamples.contains(where: { !$0.isTouched && $0.forceMillinewtons < 100 }) {
                        lifted = true
                        break
                    }
                    if ContinuousClock.now > end { break }
                }
                #expect(lifted, "the finger stayed down: \(String(describing: last))\nserve printed:\n\(serve.text)")
                await app.stop()
            }
        }

        /// monitor's page answered 204 to a virtual-control step while its device was gone (the host
        /// reconnecting), and dropped it.
        @Test("monitor --http: the virtual control is refused (409, why) while the device is gone, and played again once it is back")
        func pageControlWhileTheDeviceIsGone() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/cc"
            let first = try SimulatorProcess(seed: 99, linkPath: link)
            defer { first.kill() }
            let monitor = try Background("camctl", ["monitor", link, "--http", "127.0.0.1:0", "--seconds", "120"])
            defer { monitor.stop() }
            try await monitor.waitFor("page: http://127.0.0.1:")
            let port = try #require(monitor.pagePort, "monitor printed:\n\(monitor.text)")
            func post(_ step: String) async throws -> String { try await postStep(step, toPageAt: port) }
            /// Posts `step` until the answer's status line starts with `status` (30 s: a bound against a hang).
            func answer(_ step: String, becomes status: String) async throws -> String {
                var last = ""
                let end = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < end {
                    last = try await post(step)
                    if last.hasPrefix(status) { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                return last
            }
            let played = try await answer("touch at=0.500", becomes: "HTTP/1.1 204 ")
            #expect(played.hasPrefix("HTTP/1.1 204 "), "\(played)\nmonitor printed:\n\(monitor.text)")
            // The device goes (its simulator killed, its link gone): the steps are refused with why, once monitor knows.
            first.kill()
            try? FileManager.default.removeItem(atPath: link)
            let refused = try await answer("release", becomes: "HTTP/1.1 409 ")
            #expect(
                refused.hasPrefix("HTTP/1.1 409 ") && refused.contains("the device is gone"),
                "\(refused)\nmonitor printed:\n\(monitor.text)")
            // It comes back at the same path: the steps play again.
            let second = try SimulatorProcess(seed: 99, linkPath: link)
            defer { second.kill() }
            let again = try await answer("release", becomes: "HTTP/1.1 204 ")
            #expect(again.hasPrefix("HTTP/1.1 204 "), "\(again)\nmonitor printed:\n\(monitor.text)")
        }

        /// A parked app's reconnects (one per handshake deadline: 3 s and the retry delay) filled serve's log,
        /// three lines each.
        @Test("an app waiting in the background is logged once, not at each of its reconnects there")
        func backgroundAppLoggedOnce() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/serve.sock"
            try await withSimulator(seed: 98) { simulator in
                let serve = try Background("camctl", ["serve", simulator.ptyPath, "--socket", socket, "--seconds", "120"])
                defer { serve.stop() }
                try await serve.waitFor("apps attach at \(socket)")
                let opens = Atomic<Int>(0)
                let parked = try await CameraControlHost.connect { loop async throws(DeviceError) -> DeviceSession in
                    opens.wrappingAdd(1, ordering: .relaxed)
                    return try await DeviceSession.open(path: socket, hostName: "parked", eventLoop: loop)
                }
                // Another app attaches: this one goes to the background, where it reconnects at every handshake deadline.
                let front = try Background("camera-app", [socket])
                defer { front.stop() }
                try await front.waitFor("device connected")
                // Three reconnects started: serve has had two of them at least (a bound against a hang, not a timing).
                #expect(await eventually(within: .seconds(60)) { opens.load(ordering: .relaxed) >= 4 })
                #expect(serve.count("pid \(getpid()) reconnected") == 1, "\(serve.text)")
                #expect(serve.count("waits in the background") == 1, "\(serve.text)")
                await parked.stop()
            }
        }

        @Test("the systemd unit and the launchd plist in tools/ start camctl serve with arguments it accepts")
        func serviceFiles() async throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            // systemd: ExecStart with the unit's Environment= defaults, as systemd substitutes them (`${NAME}`:
            // the value as one argument).
            let unit = try String(contentsOf: root.appendingPathComponent("tools/systemd/camctl-serve.service"), encoding: .utf8)
            var environment: [String: String] = [:]
            var execStart: String?
            for line in unit.split(separator: "\n") {
                if line.hasPrefix("Environment=") {
                    var assignment = line.dropFirst("Environment=".count)
                    if assignment.hasPrefix("\""), assignment.hasSuffix("\"") {
                        assignment = assignment.dropFirst().dropLast()
                    }
                    let unquoted = assignment.replacingOccurrences(of: "\\\"", with: "\"")
                    guard let equals = unquoted.firstIndex(of: "=") else { continue }
                    environment[String(unquoted[..<equals])] = String(unquoted[unquoted.index(after: equals)...])
                } else if line.hasPrefix("ExecStart=") {
                    execStart = String(line.dropFirst("ExecStart=".count))
                }
            }
            let systemd = try #require(execStart, "the unit has an ExecStart").split(separator: " ").map { word in
                guard word.hasPrefix("${"), word.hasSuffix("}") else { return String(word) }
                return environment[String(word.dropFirst(2).dropLast())] ?? "<unset \(word)>"
            }
            #expect(systemd.prefix(3) == ["/usr/local/bin/camctl", "serve", "auto"], "\(systemd)")
            #expect(systemd.contains("/usr/local/bin/camera-app \"$CAMCTL_PORT\""), "\(systemd)")
            #expect(unit.contains("Restart=always") && unit.contains("StartLimitIntervalSec=0"))
            // launchd: ProgramArguments.
            let plist = try Data(contentsOf: root.appendingPathComponent("tools/launchd/org.cameracontrol.camctl-serve.plist"))
            let agent = try #require(try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any])
            let launchd = try #require(agent["ProgramArguments"] as? [String], "the plist has ProgramArguments")
            #expect(agent["KeepAlive"] as? Bool == true && agent["RunAtLoad"] as? Bool == true)
            #expect(launchd == systemd, "the two start serve alike")
            // Both command lines, with the built camctl and camctl-sim's pty for `auto`, for 2 seconds: serve
            // accepts them and holds the device (its socket in a folder of the test's, not the user's default).
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            for arguments in [systemd, launchd] {
                try await withSimulator(seed: 92) { simulator in
                    let run = try await runTool(
                        "camctl",
                        arguments.dropFirst().map { $0 == "auto" ? simulator.ptyPath : $0 } + [
                            "--seconds", "2", "--socket", folder + "/serve.sock",
                        ],
                        timeout: .seconds(30))
                    #expect(run.status == 0, "\(arguments): \(run.standardError)")
                }
            }
        }

        @Test("usage errors exit 2 with what to fix: no PORT, an unknown trigger, a window out of range")
        func usageErrors() async throws {
            let missing = try await runTool("camctl", ["serve", "--launch", "true"])
            #expect(missing.status == 2)
            #expect(missing.standardError.contains("PORT"), "\(missing.standardError)")
            let trigger = try await runTool("camctl", ["serve", "/dev/null", "--launch", "true", "--launch-on", "triple"])
            #expect(trigger.status == 2)
            #expect(trigger.standardError.contains("click or double-click"), "\(trigger.standardError)")
            let window = try await runTool(
                "camctl", ["serve", "/dev/null", "--launch", "true", "--launch-on", "double-click", "--double-click-ms", "5"])
            #expect(window.status == 2)
            #expect(window.standardError.contains("50 to 2000"), "\(window.standardError)")
        }
    }
}

/// Posts one virtual-control step to the live page on loopback `port`: its answer, status line first.
func postStep(_ step: String, toPageAt port: UInt16) async throws -> String {
    try await blockingOnOwnThread {
        let client = try LoopbackClient(port: port)
        client.send("POST /control HTTP/1.1\r\nContent-Length: \(step.utf8.count)\r\nConnection: close\r\n\r\n\(step)")
        return client.read()
    }
}

/// The counters of serve's relay (`relayedFor` among them) the page sent in `text`, in order.
private func relayCounters(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { line -> [String: Any]? in
        guard line.hasPrefix("data: "), line.contains(#""type":"counters""#) else { return nil }
        let object = try? JSONSerialization.jsonObject(with: Data(line.dropFirst("data: ".count).utf8))
        let values = (object as? [String: Any])?["values"] as? [String: Any]
        return values?["relayedFor"] == nil ? nil : values
    }
}

/// The live page's event stream (`GET /events`) on loopback `port`, read on a thread of its own.
final class PageEvents: @unchecked Sendable {
    private let client: LoopbackClient

    /// Subscribes: the page sends its sticky messages first, then each one as it is published.
    init(port: UInt16) throws {
        client = try LoopbackClient(port: port)
        client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    }

    /// What the page sends from now until `done` holds for it, or 30 s passed (a guard against a hang, not a
    /// timing).
    func read(until done: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await blockingOnOwnThread {
            let end = ContinuousClock.now + .seconds(30)
            return self.client.read { done($0) || ContinuousClock.now > end }
        }
    }
}

/// A built executable running in the background for a test, its stdout collected; killed by ``stop()``.
final class Background: @unchecked Sendable {
    private let process = Process()
    private let output: PipeCollector
    private let name: String

    /// Starts `name ARGS` (a built product).
    init(_ name: String, _ arguments: [String]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable(name))
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        output = PipeCollector(out.fileHandleForReading)
    }

    deinit { stop() }

    /// Everything printed so far.
    var text: String { output.text }

    /// The loopback port of the live page it printed (`page: http://127.0.0.1:PORT/`), once printed.
    var pagePort: UInt16? {
        let prefix = "page: http://127.0.0.1:"
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return UInt16(line.dropFirst(prefix.count).dropLast())
    }

    /// How many times `needle` was printed so far.
    func count(_ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Waits (a guard against a hang, not a timing: 60 s) until `needle` was printed `count` times.
    func waitFor(_ needle: String, count: Int = 1) async throws {
        let seen = await eventually(within: .seconds(60)) { self.count(needle) >= count }
        if !seen {
            throw ChildProcessFailure(description: "\(name) never printed '\(needle)' (\(count)×); it printed:\n\(text)")
        }
    }

    /// Its exit status once it has ended by itself, waiting for that up to `timeout` (a guard against a
    /// hang, not a timing); nil while it runs on.
    func waitForExit(within timeout: Duration = .seconds(60)) async -> Int32? {
        guard await eventually(within: timeout, { !self.process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Ends the process (SIGTERM, then SIGKILL) and reaps it. Idempotent.
    func stop() {
        _ = terminateChild(process, grace: .seconds(5))
    }
}
