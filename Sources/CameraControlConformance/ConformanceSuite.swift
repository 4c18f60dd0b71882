import CameraControlTransport
import CameraControlWire

/// The conformance suite: every case, and a runner over any ``ByteTransport`` (docs/CONFORMANCE.md).
public enum ConformanceSuite {
    /// The protocol decisions (docs/CONFORMANCE.md, "Decisions") this tree's firmware and host implement.
    /// Cases marked with another decision are skipped unless a run enables it explicitly.
    public static let implementedDecisions: Set<String> = [
        "R1", "R2", "R3", "R4", "R5", "R6", "S1", "S2", "S3", "S4", "S5", "S6", "S7",
    ]

    /// Every decision a case depends on.
    public static let allDecisions: Set<String> = ["R1", "R2", "R3", "R4", "R5", "R6", "S1", "S2", "S3", "S4", "S5", "S6", "S7"]

    /// Every case, in the order they run.
    public static var cases: [ConformanceCase] {
        LinkCases.all + InteropCases.all + ReliabilityCases.all + InputCases.all + DecisionCases.all + SettingsCases.all
    }

    /// The case named `name`.
    public static func named(_ name: String) -> ConformanceCase? { cases.first { $0.name == name } }

    /// Why `testCase` does not run against a device with `capabilities` under `decisions`, or nil when it runs.
    public static func skipReason(
        _ testCase: ConformanceCase, capabilities: Capabilities, decisions: Set<String>, interactive: Bool
    ) -> String? {
        if let reason = testCase.skipReason { return reason }
        if let decision = testCase.decision, !decisions.contains(decision) {
            return
                "checks protocol decision \(decision), not enabled for this run (ConformanceSuite.implementedDecisions, or --decision \(decision))"
        }
        if let decision = testCase.supersededBy, decisions.contains(decision) {
            return "superseded by protocol decision \(decision)"
        }
        switch testCase.requirement {
        case .none: return nil
        case .simulatorService:
            return capabilities.isSimulator ? nil : "the device does not announce SimulatorService (is_simulator is false)"
        case .forceSensor:
            return capabilities.hasForceSensor ? nil : "the device has no force sensor"
        case .settings:
            return capabilities.hasSettings ? nil : "the device does not serve the user's settings (has_settings is false)"
        case .person:
            return interactive ? nil : "needs a person at the device (--interactive)"
        case .frameBytes(let bytes):
            return capabilities.maxFrameBytes >= bytes
                ? nil : "needs frames of \(bytes) bytes; the device announces max_frame_bytes \(capabilities.maxFrameBytes)"
        }
    }

    /// Runs `cases` one after another over `transport` and returns one result per case.
    ///
    /// Each case starts with a fresh handshake (a new session); a case that does not finish within
    /// `caseTimeout`, plus the time ``slowLineBytes`` take on a slow line (``Probe/lineTime(bytes:)``), fails.
    /// `progress` is called after each case.
    public static func run(
        _ cases: [ConformanceCase], over transport: any ByteTransport, decisions: Set<String> = implementedDecisions,
        prompter: (any ConformancePrompter)? = nil, caseTimeout: Duration = .seconds(20),
        progress: @Sendable (CaseResult) -> Void = { _ in }
    ) async -> [CaseResult] {
        let probe = Probe(transport: transport)
        await probe.start()
        defer { Task { await probe.stop() } }
        var results: [CaseResult] = []
        var closedFailed = false  // a case already failed because the port had closed
        var silent = false  // the first two cases heard not one byte: nothing answers on this port
        for testCase in cases {
            if silent {
                let result = CaseResult(
                    name: testCase.name, section: testCase.section,
                    outcome: .skip("not run: nothing answered on the port (see the cases before)"), seconds: 0)
                results.append(result)
                progress(result)
                continue
            }
            if await probe.isClosed {
                // The port is gone (unplugged, the device's program ended): the cases after it cannot run, and
                // trying each would only add its timeout. The first of them fails (a device that went away is
                // not certified, even between two cases that passed); the others are not run.
                let outcome: CaseOutcome =
                    !closedFailed
                    ? .fail(ConformanceFailure("the port closed before this case: the device went away", code: .link))
                    : .skip("not run: the port closed during an earlier case (the device went away)")
                closedFailed = true
                let result = CaseResult(
                    name: testCase.name, section: testCase.section, outcome: outcome, seconds: 0)
                results.append(result)
                progress(result)
                continue
            }
            let started = ContinuousClock.now
            // A case the last session's capabilities already skip needs no state read before it (a handshake and
            // two calls); before the first session nothing is known, and the state is read. (The last session may
            // have been at another minor than the case's own, 1.0: a device announces the same capabilities.)
            let skipped = await probe.session?.capabilities.map {
                skipReason(testCase, capabilities: $0, decisions: decisions, interactive: prompter != nil) != nil
            }
            let stateBefore = testCase.changesDeviceState && skipped != true ? await readState(probe) : nil
            await probe.resetLongestSilence()
            var outcome = await runOne(
                testCase, probe: probe, decisions: decisions, prompter: prompter, timeout: caseTimeout)
            var runs = 1
            while case .fail(let failure) = outcome, lostSession(failure), runs < maximumRuns {
                // The device answered "no session" in the middle of the case, after the probe itself (by
                // its own clock) had sent nothing for most of the device's 4-interval dead timeout (§8), or
                // had heard nothing from the device, in its session, for as long: a machine too busy to run
                // the host, or the simulated device, ended the session, and the run measured nothing. Run the
                // case once more (the report says so). A device that ends sessions while both sides keep the
                // link alive fails at once, and one that always does fails the second run too. A third run
                // only when the probe itself stalled again: a device that freezes now and then (its own
                // silence) gets no third try.
                let stall = runs == 1 ? max(await probe.longestSilence, await probe.longestDeviceSilence) : await probe.longestSilence
                guard hostWasSilent(stall, interval: await probe.heartbeatInterval) else { break }
                runs += 1
                if let stateBefore {
                    _ = await putBack(stateBefore, probe: probe)  // the run again starts from the device as it was
                }
                await probe.resetLongestSilence()
                outcome = await runOne(
                    testCase, probe: probe, decisions: decisions, prompter: prompter, timeout: caseTimeout)
            }
            if case .fail(var failure) = outcome, lostSession(failure) {
                // Say whose the stall was: the longest silences of the probe and of the device in the run that failed.
                func millis(_ silence: Duration) -> Int64 {
                    silence.components.seconds * 1_000 + silence.components.attoseconds / 1_000_000_000_000_000
                }
                let (host, device) = (await probe.longestSilence, await probe.longestDeviceSilence)
                failure.message +=
                    " (the session was lost; the longest silence of the probe was \(millis(host)) ms, of the device \(millis(device)) ms)"
                outcome = .fail(failure)
            }
            if case .fail(var failure) = outcome, testCase.changesDeviceState, !(await probe.isClosed) {
                if let stateBefore {
                    if let note = await putBack(stateBefore, probe: probe) { failure.message += note }
                } else {
                    failure.message += "; the suite could not read the device's configuration before the case (it may be left changed)"
                }
                outcome = .fail(failure)
            }
            if results.count == 1 || (results.count == 0 && cases.count == 1), case .fail(let failure) = outcome,
                await probe.bytesReceived == 0
            {
                // Not one byte in the first two cases (their handshakes included, about 13 s: time for a board that
                // resets when the port opens to boot): every other case would wait out its own handshake the same
                // way, minutes in all. This failure says it, the rest are not run.
                silent = true
                outcome = .fail(
                    ConformanceFailure(
                        "nothing answered on the port: not one byte came back (\(failure.message)); a wrong port or "
                            + "baud rate, a device that is off or runs no firmware",
                        code: .silentDevice, sent: failure.sent, seen: nil, expected: failure.expected))
            }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let result = CaseResult(
                name: testCase.name, section: testCase.section, outcome: outcome, seconds: seconds, runs: runs)
            results.append(result)
            progress(result)
        }
        await probe.stop()
        return results
    }

    /// What a case's time limit allows for on a slow line: the time these bytes take on it (the most a case
    /// sends at once is `long-garbage-then-request`'s 15,001; 17 s at 9600 baud).
    public static let slowLineBytes = 16_384

    /// The most runs of one case: a second when its first lost the session while one side was stalled, a
    /// third only when the second lost it while the probe itself was (a starved host, as on a CI machine
    /// running emulators beside the suite).
    public static let maximumRuns = 3

    /// True when the host's own longest silence, `silence`, came within one heartbeat interval of the
    /// device's dead timeout (4 intervals, §8): then the delay of one frame on a loaded machine is enough for
    /// the device to declare the link dead, rightly. The probe sends at least every half interval when it
    /// runs (1.25 intervals at most between frames, §8), so 3 intervals is a stall of its own.
    static func hostWasSilent(_ silence: Duration, interval: Duration) -> Bool {
        silence >= interval * 3
    }

    /// True when `failure` shows the device answering FAILED_PRECONDITION: a case that expects that status
    /// passes when it gets it, so in a failure it means the session was gone (unless the case saw the session
    /// go on after it, or ended it itself: ``ConformanceFailure/noSessionLost``).
    static func lostSession(_ failure: ConformanceFailure) -> Bool {
        guard !failure.noSessionLost, let seen = failure.seen, let body = try? COBS.decode(seen.dropLast()),
            let packet = try? PacketDecoder.decode(unstuffed: body)
        else { return false }
        return packet.type == .error && packet.status == .failedPrecondition
    }

    private static func runOne(
        _ testCase: ConformanceCase, probe: Probe, decisions: Set<String>, prompter: (any ConformancePrompter)?,
        timeout: Duration
    ) async -> CaseOutcome {
        await probe.resetFrameViolations()  // what the case's own handshake and run show
        await prepare(probe)
        var handshake: HandshakeResponse
        do {
            handshake = try await probe.handshake()
        } catch {
            // A previous case may have left the link dead or busy: let it settle, then try once more.
            try? await Task.sleep(for: .milliseconds(300))
            do {
                handshake = try await probe.handshake()
            } catch let failure as ConformanceFailure {
                return .fail(
                    ConformanceFailure(
                        "no session for the case: \(failure.message)", code: failure.code, sent: failure.sent, seen: failure.seen,
                        expected: failure.expected))
            } catch {
                return .fail(ConformanceFailure("no session for the case: \(error)", code: .link))
            }
        }
        let capabilities = handshake.capabilities ?? Capabilities()
        if let reason = skipReason(testCase, capabilities: capabilities, decisions: decisions, interactive: prompter != nil) {
            return .skip(reason)
        }
        let context = CaseContext(probe: probe, capabilities: capabilities, handshake: handshake, prompter: prompter)
        let body = testCase.body
        let sessionStarted = ContinuousClock.now
        // Known from this handshake's response on, for the first case and a case run alone too.
        let timeout = timeout + (await probe.lineTime(bytes: slowLineBytes))
        let outcome = await withTaskGroup(of: CaseOutcome?.self) { group in
            group.addTask {
                do {
                    try await body(context)
                    return .pass
                } catch let failure as ConformanceFailure {
                    return .fail(failure)
                } catch let skip as CaseSkipped {
                    return .skip(skip.reason)
                } catch {
                    return .fail(ConformanceFailure("\(error)", code: .link))
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .fail(ConformanceFailure("the case did not finish within \(timeout)", code: .noAnswer))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .fail(ConformanceFailure("the case was cancelled", code: .link))
        }
        // A case that saw nothing, or "no session", may have met a device that restarted in the middle of it.
        if case .fail(var failure) = outcome, failure.seen == nil || lostSession(failure), !(await probe.isClosed),
            let restart = await restartNote(probe, sessionStarted: sessionStarted)
        {
            failure.message += restart
            return .fail(failure)
        }
        return outcome
    }

    /// The device's configuration and, when it serves them, the user's settings: what a case that changes
    /// them (``ConformanceCase/changesDeviceState``) is put back to when it fails half-way.
    struct DeviceState: Hashable, Sendable {
        var config: Config
        var settings: Settings?
    }

    /// The probe as a session begins: acknowledging, heartbeats off until the handshake, and a delimiter that
    /// ends any half frame the case before left behind.
    private static func prepare(_ probe: Probe) async {
        await probe.setAcknowledges(true)
        await probe.setHeartbeatsHeld(false)  // a case that ended early (frame-arriving-keeps-link) may have held them
        await probe.setHeartbeats(false)
        try? await probe.sendRaw([0])
    }

    /// The device's state, read in a session of its own; nil when the device does not give it. A diagnosis
    /// around a case, not a check: a device slow to answer gets a second and the answer's time on the line.
    static func readState(_ probe: Probe) async -> DeviceState? {
        await prepare(probe)
        let wait = Duration.seconds(1) + (await probe.lineTime(bytes: 1_024))
        func answer<Message: WireMessage>(_ method: MethodID, _ payload: [UInt8] = []) async -> Message? {
            guard let (_, reply) = try? await probe.call(method, payload, within: wait), let packet = reply?.packet,
                packet.type == .response
            else { return nil }
            return try? Message(serializedBytes: packet.payload)
        }
        guard let handshake = try? await probe.handshake(), let config: Config = await answer(.configGetConfig) else {
            return nil
        }
        guard handshake.capabilities?.hasSettings == true else { return DeviceState(config: config, settings: nil) }
        let response: SettingsResponse? = await answer(.configGetSettings, GetSettingsRequest().serializedBytes())
        guard let settings = response?.settings else { return nil }
        return DeviceState(config: config, settings: settings)
    }

    /// After a case that changes the device's state failed: puts `saved` back where the device's state
    /// differs from it (the settings first: a Light-Press Force moves a threshold of the configuration).
    /// Returns what it did, for the failure's message; nil when nothing had changed.
    static func putBack(_ saved: DeviceState, probe: Probe) async -> String? {
        guard let now = await readState(probe) else {
            return "; the suite could not read the device's configuration after the case (it may be left changed)"
        }
        guard now != saved else { return nil }
        let wait = Duration.seconds(1) + (await probe.lineTime(bytes: 1_024))
        if let settings = saved.settings, settings != now.settings {
            _ = try? await probe.call(.configSetSettings, SetSettingsRequest(settings: settings).serializedBytes(), within: wait)
        }
        _ = try? await probe.call(.configConfigure, ConfigureRequest(config: saved.config).serializedBytes(), within: wait)
        guard await readState(probe) == saved else {
            return "; the case left the device's configuration or settings changed, and the suite could not put them back"
        }
        return "; the suite put back the configuration and settings the case had changed"
    }

    /// After a case failed: a new handshake and `GetCounters` ask the device how long it has run. An uptime
    /// shorter than the time since the case's session began, by more than the answer's time on the line and
    /// a heartbeat interval, means the device restarted during the case (a reboot ends the session, §9, and
    /// `uptime_us` restarts only then): the note says so. Nil when it did not, or did not answer.
    static func restartNote(_ probe: Probe, sessionStarted: ContinuousClock.Instant) async -> String? {
        // A diagnosis, not a check: a device slow to answer gets a second, not the answer wait of a case.
        let wait = Duration.seconds(1) + (await probe.lineTime(bytes: 256))
        guard (try? await probe.handshake()) != nil, let counters = try? await probe.counters(within: wait) else { return nil }
        let elapsed = ContinuousClock.now - sessionStarted
        let uptime = Duration.microseconds(Int64(clamping: counters.uptimeMicros))
        let margin = await probe.heartbeatInterval + probe.lineTime(bytes: 256)  // a Counters answer's frame, with room
        guard uptime + margin < elapsed else { return nil }
        func seconds(_ duration: Duration) -> String {
            let millis = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
            return "\(millis / 1_000).\(String(millis % 1_000 + 1_000).dropFirst()) s"
        }
        return "; the device restarted during the case: its uptime is \(seconds(uptime)), its session for the case began "
            + "\(seconds(elapsed)) before"
    }
}

/// Thrown by a case body that finds at run time that it cannot run (e.g. the person declined a prompt).
public struct CaseSkipped: Error, Sendable {
    /// Why.
    public var reason: String
    /// A skip with `reason`.
    public init(_ reason: String) { self.reason = reason }
}
