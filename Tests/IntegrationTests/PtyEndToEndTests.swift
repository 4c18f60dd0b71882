import CameraControlDevice
import CameraControlPorts
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The host stack (Swift) against the firmware (C) in `camctl-sim`, over a real pseudo-terminal: the
/// command-line tool, the handshake, every kind of call, streams, cancellation, reconnects.
extension OverRealPTY {
    @Suite("End to end")
    struct EndToEnd {
        // MARK: camctl as a subprocess

        @Test("camctl info prints the simulator's identity, version and capabilities, and exits 0")
        func camctlInfo() async throws {
            try await withSimulator(seed: 7) { simulator in
                let run = try await runTool("camctl", ["info", simulator.ptyPath])
                #expect(run.status == 0, "stderr: \(run.standardError)")

                // What the tool printed must be what the device says in a handshake of our own.
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let info = session.info
                await session.close()
                let output = run.standardOutput
                #expect(output.contains(info.identity.vendor))
                #expect(output.contains(info.identity.model))
                #expect(output.contains("serial      SIM-00000007"))
                #expect(output.contains("firmware    \(info.identity.firmwareVersion)"))
                #expect(output.contains("protocol    device 1.2, session 1.2"))
                #expect(output.contains("frames ≤ \(info.capabilities.maxFrameBytes) bytes"))
                #expect(output.contains("volume-up"))
                // Line for line the same summary, except the session id, which every handshake changes.
                func withoutSession(_ text: String) -> [Substring] {
                    text.split(separator: "\n").filter { !$0.hasPrefix("session ") }
                }
                #expect(withoutSession(output) == withoutSession(info.summary))
            }
        }

        @Test("camctl info on a path that does not exist exits non-zero and names the path")
        func camctlInfoNonexistent() async throws {
            let run = try await runTool("camctl", ["info", "/nonexistent"])
            #expect(run.status != 0)
            #expect(run.standardError.contains("/nonexistent"))
            #expect(run.standardError.contains("cannot open"))
            #expect(run.standardOutput.isEmpty)
        }

        @Test("camctl ping and camctl counters work over the pty")
        func camctlPingAndCounters() async throws {
            try await withSimulator { simulator in
                let ping = try await runTool("camctl", ["ping", simulator.ptyPath, "--count", "3"])
                #expect(ping.status == 0, "stderr: \(ping.standardError)")
                #expect(ping.standardOutput.contains("3 sent, 3 received, 0 lost"))
                let counters = try await runTool("camctl", ["counters", simulator.ptyPath])
                #expect(counters.status == 0, "stderr: \(counters.standardError)")
                #expect(counters.standardOutput.contains("frames_received"))
                #expect(counters.standardOutput.contains("check_errors"))
            }
        }

        @Test(
            "camctl info and DeviceSession.open refuse what is no terminal with a transport error",
            arguments: ["/nonexistent", "/dev/null", "/etc/hostname", "/tmp"])
        func notATerminal(path: String) async throws {
            let run = try await runTool("camctl", ["info", path])
            #expect(run.status == 1)
            #expect(run.standardError.contains(path))
            let error = await deviceFailure { _ = try await DeviceSession.open(path: path) }
            #expect(error?.code == .transport)
            #expect(error?.transportError != nil)
        }

        @Test("camctl-sim --link places a symlink that DeviceSession.open accepts, and removes it on SIGTERM")
        func linkSymlink() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/camctl-sim"
            let simulator = try SimulatorProcess(seed: 3, linkPath: link)
            defer { simulator.kill() }
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == simulator.ptyPath)

            let session = try await DeviceSession.open(path: link)
            #expect(session.info.identity.serialNumber == "SIM-00000003")
            #expect(try await session.ping([1, 2, 3]).payload == [1, 2, 3])
            await session.close()

            // The signal reaches it even though the test runner started it (docs/SIMULATOR.md §4).
            #expect(simulator.stop(), "camctl-sim did not exit on SIGTERM")
            #expect(simulator.termination?.status == 0)
            #expect(!FileManager.default.fileExists(atPath: link))
        }

        @Test("camctl demo with a scenario larger than a frame plays it in pieces and leaves no simulator behind")
        func demoWithOversizedScenario() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let file = folder + "/too-large.scenario"
            let line = "pause 1ms # more than one frame of text\n"
            let text = String(repeating: line, count: WireFormat.maxFrameBytes / line.utf8.count + 1)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            // A seed no other test uses, to find the demo's own simulator afterwards.
            let seed = 40_000 + UInt64(getpid() % 10_000)
            let run = try await runTool(
                "camctl", ["demo", "--scenario", file, "--seed", "\(seed)"], timeout: .seconds(30))
            let leftovers = simulatorProcesses(seed: seed)
            for pid in leftovers { signalProcess(pid, SIGKILL) }
            // One RunScenario request cannot hold it: the demo sends it in pieces (ScenarioPieces.swift).
            #expect(run.status == 0, "stderr: \(run.standardError)")
            #expect(run.standardOutput.contains(" pieces)"), "stdout: \(run.standardOutput)")
            #expect(leftovers.isEmpty, "camctl demo left camctl-sim running: \(leftovers)")
            #expect(!run.outputHeldOpen)
        }

        /// The root cause of `camctl demo` hanging on a scenario too large for a frame: the RPC error was
        /// thrown at once, but `camctl`'s `defer { simulator.terminate() }` waited forever, because
        /// Foundation's `Process` starts the child with the spawning thread's signal mask — which blocks
        /// SIGTERM on Swift's threads. camctl-sim now unblocks SIGINT and SIGTERM at start-up; this
        /// reproduces the spawn from a thread that blocks them.
        @Test("camctl-sim exits on SIGTERM even when spawned from a thread that blocks SIGTERM")
        func sigtermWithBlockedMask() async throws {
            var blocked = sigset_t()
            var previous = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGINT)
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            let started = Result { try SimulatorProcess() }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            let simulator = try started.get()
            defer { simulator.kill() }

            let sigterm = UInt64(1) << UInt64(SIGTERM - 1)
            let mask = try #require(simulator.blockedSignals)
            #expect(mask & sigterm == 0, "camctl-sim blocks SIGTERM (SigBlk \(String(mask, radix: 16)))")
            #expect(simulator.stop(), "camctl-sim did not exit on SIGTERM")
            #expect(simulator.termination?.status == 0)
        }

        // MARK: The handshake

        @Test("the handshake carries the simulator's identity, version and capabilities")
        func handshake() async throws {
            try await withSimulator(seed: 0x2A) { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "pty-e2e")
                let info = session.info
                #expect(info.deviceVersion.major == 1)
                #expect(info.negotiatedVersion == ProtocolVersion(major: 1, minor: 2))
                #expect(info.identity.serialNumber == "SIM-0000002A")
                #expect(!info.identity.vendor.isEmpty)
                #expect(!info.identity.firmwareVersion.isEmpty)
                #expect(info.sessionID != 0)
                let caps = info.capabilities
                #expect(caps.isSimulator)
                #expect(caps.hasForceSensor && caps.hasTouchSensor && caps.hasSlideStrip)
                #expect(caps.maxFrameBytes >= UInt32(WireFormat.minMaxFrameBytes))
                #expect(caps.maxFrameBytes <= UInt32(WireFormat.maxFrameBytes))
                #expect(caps.maxConcurrentCalls >= 4)
                #expect(caps.heartbeatIntervalMillis > 0)
                #expect(caps.thresholds != nil)
                #expect(caps.buttons.contains(.volumeUp))
                // The host now sends frames of the device's size.
                #expect(session.client.connectionConfiguration.maxFrameBytes == Int(caps.maxFrameBytes))
                await session.close()
            }
        }

        // MARK: Unary calls

        static let pingPayloads: [PingPayload] = [
            PingPayload("empty", []),
            PingPayload("one 0x00", [0x00]),
            PingPayload("one 0xFF", [0xFF]),
            PingPayload("0x00 0xFF alternating", [0x00, 0xFF, 0x00, 0xFF]),
            PingPayload("200 × 0x00, a run of delimiters for COBS to stuff", [UInt8](repeating: 0x00, count: 200)),
            PingPayload("200 × 0xFF", [UInt8](repeating: 0xFF, count: 200)),
            PingPayload("0…199, with CR, LF, ^C, ^D, XON, XOFF", (0..<200).map { UInt8($0) }),
            PingPayload("56…255", (56...255).map { UInt8($0) }),
        ]

        @Test("ping echoes its payload byte for byte", arguments: pingPayloads)
        func pingEcho(payload: PingPayload) async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let reply = try await session.ping(payload.bytes)
                #expect(reply.payload == payload.bytes)
                #expect(reply.deviceTimeMicros > 0)
                await session.close()
            }
        }

        @Test("a ping whose request cannot fit the device's frame fails at once with RESOURCE_EXHAUSTED")
        func pingTooLarge() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let payload = [UInt8](repeating: 0x55, count: Int(session.info.capabilities.maxFrameBytes))
                let error = await #expect(throws: RPCError.self) { try await session.ping(payload, deadline: .seconds(60)) }
                #expect(error?.code == .resourceExhausted)
                #expect(try await session.ping([7]).payload == [7])
                await session.close()
            }
        }

        @Test("GetConfig and Configure round trip; an invalid config is refused and changes nothing")
        func configRoundTrip() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let original = try await session.config()
                #expect(original.thresholds != nil)
                #expect(session.info.capabilities.sampleRatesHertz.contains(original.sampleRateHertz))

                var changed = original
                changed.sampleRateHertz = try #require(
                    session.info.capabilities.sampleRatesHertz.first { $0 != original.sampleRateHertz })
                changed.debounceMillis = original.debounceMillis + 1
                let applied = try await session.configure(changed)
                #expect(applied == changed)
                #expect(try await session.config() == changed)

                var invalid = changed
                invalid.sampleRateHertz = 12_345
                let error = await #expect(throws: RPCError.self) { try await session.configure(invalid) }
                #expect(error?.code == .invalidArgument)
                var noThresholds = changed
                noThresholds.thresholds = nil
                let second = await #expect(throws: RPCError.self) { try await session.configure(noThresholds) }
                #expect(second?.code == .invalidArgument)
                #expect(try await session.config() == changed)

                #expect(try await session.configure(original) == original)
                await session.close()
            }
        }

        @Test("GetCounters reports the link's traffic, and ResetCounters zeroes it")
        func counters() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let first = try await session.counters()
                #expect(first.framesReceived >= 2)  // the handshake and this call
                #expect(first.framesSent >= 1)
                #expect(first.bytesReceived > 0 && first.bytesSent > 0)
                #expect(first.uptimeMicros > 0)
                #expect(first.checkErrors == 0 && first.framingErrors == 0 && first.oversizedFrames == 0)
                for index in 0..<3 { _ = try await session.ping([UInt8(index)]) }
                let second = try await session.counters()
                #expect(second.framesReceived >= first.framesReceived + 4)
                #expect(second.uptimeMicros > first.uptimeMicros)
                let before = try await session.resetCounters()
                #expect(before.framesReceived >= second.framesReceived)
                let after = try await session.counters()
                #expect(after.framesReceived < before.framesReceived)
                await session.close()
            }
        }

        @Test("eight concurrent pings with different payloads each get their own answer")
        func concurrentPings() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let payloads = (0..<8).map { index in (0..<(index * 7 + 1)).map { UInt8(truncatingIfNeeded: $0 * 31 + index) } }
                let replies = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                    for (index, payload) in payloads.enumerated() {
                        group.addTask { (index, try await session.ping(payload).payload) }
                    }
                    var replies: [Int: [UInt8]] = [:]
                    for try await (index, reply) in group { replies[index] = reply }
                    return replies
                }
                for (index, payload) in payloads.enumerated() {
                    #expect(replies[index] == payload, "ping \(index)")
                }
                let counters = session.client.counters
                #expect(counters.callsSucceeded >= 9)  // the handshake and the pings
                await session.close()
            }
        }

        // MARK: Streams and cancellation

        @Test("under load: two raw-sample streams, an event stream and a scenario, while 32 pings run at once")
        func mixedLoad() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let events = try await session.inputEvents()
                let raw = [try await session.rawSamples(samplesPerBatch: 5), try await session.rawSamples()]
                let readers = raw.map { stream in
                    Task<Int, Never> {
                        var batches = 0
                        do {
                            for try await _ in stream { batches += 1 }
                        } catch {}
                        return batches
                    }
                }
                _ = try await session.runScenario("full-click\nremote-click count=3\n")
                let payloads = (0..<32).map { index in [UInt8](repeating: UInt8(index), count: index * 5) }
                let replies = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                    for (index, payload) in payloads.enumerated() {
                        group.addTask { (index, try await session.ping(payload, deadline: .seconds(10)).payload) }
                    }
                    var replies: [Int: [UInt8]] = [:]
                    for try await (index, reply) in group { replies[index] = reply }
                    return replies
                }
                #expect(replies.count == payloads.count)
                for (index, payload) in payloads.enumerated() { #expect(replies[index] == payload, "ping \(index)") }
                let clicks = try await withTimeout(.seconds(15), "the scenario's remote clicks") {
                    var clicks = 0
                    for try await event in events where event.kind == .remoteClick {
                        clicks += 1
                        if clicks == 3 { break }
                    }
                    return clicks
                }
                #expect(clicks == 3)
                for stream in raw { stream.cancel() }
                for reader in readers { #expect(await reader.value > 0) }
                let counters = try await session.counters()
                #expect(counters.txDropped == 0)
                #expect(counters.checkErrors == 0 && counters.framingErrors == 0)
                #expect(session.client.counters.wire.checkErrors == 0)
                await session.close()
            }
        }

        @Test("StreamInputEvents delivers the events of a scenario played with RunScenario")
        func inputStream() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let events = try await session.inputEvents()
                let played = try await session.runScenario("full-click\npause 50ms\nbutton volume-up\n")
                #expect(played.steps == 3)
                #expect(played.durationMicros > 0)
                let seen = try await withTimeout(.seconds(15), "the scenario's events") {
                    var seen: [InputEvent] = []
                    for try await event in events {
                        seen.append(event)
                        if event.kind == .buttonUp { break }
                    }
                    return seen
                }
                let kinds = seen.map(\.kind)
                #expect(kinds.contains(.fullPressDown))
                #expect(kinds.contains(.fullPressUp))
                #expect(seen.contains { $0.kind == .buttonDown && $0.source == .volumeUp })
                // Events are numbered in order.
                let numbers = seen.map(\.eventNumber)
                #expect(numbers == numbers.sorted())
                await session.close()
            }
        }

        @Test("StreamRawSamples delivers batches of the asked size at the configured rate")
        func rawSamples() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let config = try await session.config()
                let stream = try await session.rawSamples(samplesPerBatch: 10)
                let batches = try await withTimeout(.seconds(15), "three raw sample batches") {
                    var batches: [RawSampleBatch] = []
                    for try await batch in stream {
                        batches.append(batch)
                        if batches.count == 3 { break }
                    }
                    return batches
                }
                #expect(batches.count == 3)
                for batch in batches {
                    #expect(batch.decodedSamples.count == 10)
                    #expect(!batch.hasPartialRecord)
                    #expect(batch.sampleIntervalMicros == 1_000_000 / config.sampleRateHertz)
                }
                let starts = batches.map(\.firstTimestampMicros)
                #expect(starts == starts.sorted())
                await session.close()
            }
        }

        @Test("feedback calls and GetSimulatorStatus are served over the pty")
        func feedbackAndStatus() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                for pattern in session.info.capabilities.hapticPatterns {
                    #expect(try await session.playHaptic(pattern, intensityPercent: 50).deviceTimeMicros > 0)
                }
                #expect(try await session.playSound(.shutter).deviceTimeMicros > 0)
                #expect(try await session.setIndicator(.blink, rgb: 0x00FF00).deviceTimeMicros > 0)
                #expect(try await session.simulatorStatus().isScenarioRunning == false)
                _ = try await session.runScenario("pause 300ms\n")
                #expect(try await session.simulatorStatus().isScenarioRunning)
                let finished = try await eventually { try await !session.simulatorStatus().isScenarioRunning }
                #expect(finished)
                await session.close()
            }
        }

        @Test("cancelling the task that reads a stream cancels the call on the device")
        func streamCancellation() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let before = try await session.counters().cancelledCalls
                let events = try await session.inputEvents()
                let reader = Task<RPCError?, Never> {
                    await rpcFailure {
                        for try await _ in events {}
                    }
                }
                // The device has the call once an unrelated call after it was answered (calls are served in order).
                _ = try await session.ping()
                reader.cancel()
                let ending = await reader.value
                #expect(ending?.code == .cancelled)
                let counted = try await eventually {
                    try await session.counters().cancelledCalls == before + 1
                }
                #expect(counted, "cancelled_calls did not go up")
                // The link goes on.
                #expect(try await session.ping([9]).payload == [9])
                await session.close()
            }
        }

        /// The bug reported from `camctl demo` (a ~450-byte scenario over what was then a 256-byte frame) must
        /// fail fast. The RPC layer does: the hang was camctl-sim ignoring SIGTERM (see
        /// ``sigtermWithBlockedMask()``).
        @Test("RunScenario with a scenario larger than the device's frame fails at once with RESOURCE_EXHAUSTED")
        func largeScenarioFailsFast() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let before = try await session.counters()
                let maxFrame = Int(session.info.capabilities.maxFrameBytes)
                let line = "pause 1ms # " + String(repeating: "x", count: 30) + "\n"
                let text = String(repeating: line, count: maxFrame / line.utf8.count + 2)
                #expect(text.utf8.count > Int(session.info.capabilities.maxFrameBytes))
                let error = try await withTimeout(.seconds(10), "RunScenario of \(text.utf8.count) bytes") {
                    await rpcFailure {
                        // A long deadline: if the request went out and the device dropped it, this would hang.
                        _ = try await session.client.unary(
                            .simulatorRunScenario, RunScenarioRequest(scenario: text), as: RunScenarioResponse.self,
                            deadline: .seconds(600))
                    }
                }
                #expect(error?.code == .resourceExhausted)
                #expect(error?.method == .simulatorRunScenario)
                let viaSession = await #expect(throws: RPCError.self) { try await session.runScenario(text) }
                #expect(viaSession?.code == .resourceExhausted)
                // Nothing reached the wire: the device saw no oversized frame, and the link goes on.
                let after = try await session.counters()
                #expect(after.oversizedFrames == before.oversizedFrames)
                #expect(try await session.ping([1]).payload == [1])
                await session.close()
            }
        }

        @Test("a scenario that exactly fills the device's frame is accepted; one byte more is refused")
        func scenarioAtTheFrameLimit() async throws {
            try await withSimulator { simulator in
                let session = try await DeviceSession.open(path: simulator.ptyPath)
                let maxFrame = Int(session.info.capabilities.maxFrameBytes)
                // Envelope (type, sequence, a 1-byte call id, service, method) and check.
                let overhead = 1 + 2 + 1 + 2 + WireFormat.checkBytes
                // A step, comment lines, and a last comment without a newline that takes up the rest.
                func scenario(frameBytes: Int) -> String {
                    func size(_ text: String) -> Int { RunScenarioRequest(scenario: text).serializedBytes().count + overhead }
                    var text = "pause 1ms\n"
                    let line = "#" + String(repeating: "y", count: 48) + "\n"
                    while size(text + line) < frameBytes { text += line }
                    let room = frameBytes - size(text)
                    if room > 0 { text += "#" + String(repeating: "z", count: room - 1) }
                    return text
                }
                let fits = scenario(frameBytes: maxFrame)
                #expect(RunScenarioRequest(scenario: fits).serializedBytes().count + overhead == maxFrame)
                let played = try await session.runScenario(fits)
                #expect(played.steps == 1)
                let tooLarge = fits + "z"
                let error = await #expect(throws: RPCError.self) { try await session.runScenario(tooLarge) }
                #expect(error?.code == .resourceExhausted)
                await session.close()
            }
        }

        // MARK: Reconnect

        @Test("two sessions one after the other on the same pty: each handshake starts a new session")
        func sequentialSessions() async throws {
            try await withSimulator { simulator in
                let first = try await DeviceSession.open(path: simulator.ptyPath)
                #expect(try await first.ping([1]).payload == [1])
                await first.close()
                let second = try await DeviceSession.open(path: simulator.ptyPath)
                #expect(second.info.sessionID != first.info.sessionID)
                #expect(try await second.ping([2]).payload == [2])
                #expect(try await second.counters().framingErrors == 0)
                await second.close()
            }
        }

        @Test("a handshake sent while the simulator is stopped starts a session that outlives the simulator's catch-up")
        func handshakeDuringStall() async throws {
            try await withSimulator { simulator in
                // The handshake waits in the pty while camctl-sim is stopped (a machine that did not run it); when
                // it runs again it catches the stopped time up in a moment, and the host's answers come in real
                // time after the response: that catch-up is not host silence (docs/SIMULATOR.md).
                simulator.send(signal: SIGSTOP)
                let opening = Task { try await DeviceSession.open(path: simulator.ptyPath) }
                try await Task.sleep(for: .seconds(2))  // ten dead timeouts (4 heartbeat intervals of 50 ms, PROTOCOL.md §8)
                simulator.send(signal: SIGCONT)
                let session = try await opening.value
                #expect(try await session.ping([3]).payload == [3])
                #expect(try await session.counters().heartbeatTimeouts == 0)
                await session.close()
            }
        }

        @Test("a device that freezes and comes back: DeviceConnection reports disconnected, then a new session")
        func freezeAndRecover() async throws {
            try await withSimulator { simulator in
                let connection = DeviceConnection(path: simulator.ptyPath, retryDelay: .milliseconds(50))
                let activity = ActivityReader(running: connection)
                let first = try #require(await activity.nextConnected())

                // Silence: the host's heartbeat timeout declares the link dead.
                simulator.send(signal: SIGSTOP)
                let lost = await activity.nextDisconnected()
                simulator.send(signal: SIGCONT)
                #expect(lost?.code == .unavailable)

                let second = try #require(await activity.nextConnected())
                #expect(second.sessionID != first.sessionID)
                let session = try #require(await connection.session)
                #expect(try await session.ping([8]).payload == [8])
                await connection.stop()
            }
        }

        @Test("DeviceConnection reports disconnected, then connected to a new simulator at the same --link path")
        func reconnect() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/device"
            let first = try SimulatorProcess(seed: 11, linkPath: link)
            defer { first.kill() }
            let connection = DeviceConnection(path: link, retryDelay: .milliseconds(50))
            let activity = ActivityReader(running: connection)

            let firstInfo = try #require(await activity.nextConnected())
            #expect(firstInfo.identity.serialNumber == "SIM-0000000B")

            first.kill()
            let lost = await activity.nextDisconnected()
            #expect(lost?.code == .unavailable)

            let second = try SimulatorProcess(seed: 12, linkPath: link)
            defer { second.kill() }
            let secondInfo = try #require(await activity.nextConnected())
            #expect(secondInfo.identity.serialNumber == "SIM-0000000C")
            #expect(secondInfo.sessionID != firstInfo.sessionID)
            let session = try #require(await connection.session)
            #expect(try await session.ping([4, 2]).payload == [4, 2])
            await connection.stop()
            #expect(await activity.finishes(), "run() returns after stop()")
        }
    }
}

/// A ping payload with a short name for the test report.
struct PingPayload: Sendable, CustomTestStringConvertible {
    /// What is special about it.
    var name: String
    /// The bytes.
    var bytes: [UInt8]
    init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
    var testDescription: String { name }
}

/// Reads a ``DeviceConnection``'s activity, skipping what a test does not look for, with a generous
/// deadline against hangs.
final class ActivityReader: @unchecked Sendable {
    private var iterator: AsyncStream<DeviceConnection.Activity>.Iterator

    /// Runs `connection` in a task of its own, its activity read here; the stream ends when `run(_:)` returns.
    init(running connection: DeviceConnection) {
        let (stream, continuation) = AsyncStream<DeviceConnection.Activity>.makeStream()
        iterator = stream.makeAsyncIterator()
        Task {
            await connection.run { activity, _ in continuation.yield(activity) }
            continuation.finish()
        }
    }

    /// The next `.connected`, or nil when the stream ended or nothing came within `timeout`.
    func nextConnected(within timeout: Duration = .seconds(15)) async -> DeviceInfo? {
        await next(within: timeout) { activity in
            if case .connected(let info) = activity { return info }
            return nil
        }
    }

    /// The next `.disconnected`, or nil when the stream ended or nothing came within `timeout`.
    func nextDisconnected(within timeout: Duration = .seconds(15)) async -> RPCError? {
        await next(within: timeout) { activity in
            if case .disconnected(let error) = activity { return error }
            return nil
        }
    }

    /// True when the activity ends (skipping what comes before the end) within `timeout`.
    func finishes(within timeout: Duration = .seconds(10)) async -> Bool {
        let box = IteratorBox(iterator)
        let ended = try? await withTimeout(timeout, "waiting for the end of the activity") {
            while await box.next() != nil {}
            return true
        }
        iterator = box.iterator
        return ended ?? false
    }

    private func next<T: Sendable>(
        within timeout: Duration, _ match: @escaping @Sendable (DeviceConnection.Activity) -> T?
    ) async -> T? {
        let box = IteratorBox(iterator)
        let result = try? await withTimeout(timeout, "waiting for connection activity") {
            while let activity = await box.next() {
                if let value = match(activity) { return value }
            }
            return T?.none
        }
        iterator = box.iterator
        return result ?? nil
    }
}

/// An iterator moved into a task and back (the test reads the activity from one task at a time).
private final class IteratorBox: @unchecked Sendable {
    var iterator: AsyncStream<DeviceConnection.Activity>.Iterator
    init(_ iterator: AsyncStream<DeviceConnection.Activity>.Iterator) { self.iterator = iterator }
    func next() async -> DeviceConnection.Activity? { await iterator.next() }
}
