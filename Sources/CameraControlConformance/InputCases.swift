import CameraControlWire

/// Input-level cases: the gestures of docs/SIMULATOR.md's scenarios, through `SimulatorService`, and the same
/// checks with a person at a real device (`--interactive`).
enum InputCases {
    /// The kinds the spec sends RELIABLE (PROTOCOL.md §6).
    static func isReliableKind(_ kind: InputEventKind) -> Bool {
        switch kind {
        case .lightPressDown, .lightPressUp, .fullPressDown, .fullPressUp, .buttonDown, .buttonUp, .remoteClick: true
        default: false
        }
    }

    /// Checks every event's RELIABLE flag against its kind.
    static func checkFlags(_ c: CaseContext, _ events: [(frame: ReceivedFrame, packet: Packet, event: InputEvent)]) throws {
        for e in events {
            try c.require(
                e.packet.isReliable == isReliableKind(e.event.kind),
                "\(e.event.kind) sent \(e.packet.isReliable ? "RELIABLE" : "best-effort")", seen: e.frame.wire,
                expected: isReliableKind(e.event.kind) ? "RELIABLE" : "best-effort")
        }
    }

    /// Checks `reliable_event_number` along consecutive events (PROTOCOL.md §6): at least 2 on a reliable kind,
    /// never 0, one more than the event before on a reliable kind, the same on a best-effort one.
    static func checkReliableCounts(
        _ c: CaseContext, _ events: [(frame: ReceivedFrame, packet: Packet, event: InputEvent)]
    ) throws {
        for e in events {
            let least: UInt32 = isReliableKind(e.event.kind) ? 2 : 1
            try c.require(
                e.event.reliableEventNumber >= least, "\(e.event.kind) with reliable_event_number \(e.event.reliableEventNumber)",
                seen: e.frame.wire, expected: "at least \(least)")
        }
        let ordered = events.sorted { $0.event.eventNumber < $1.event.eventNumber }
        for (a, b) in zip(ordered, ordered.dropFirst()) where b.event.eventNumber == a.event.eventNumber + 1 {
            let expected = a.event.reliableEventNumber + (isReliableKind(b.event.kind) ? 1 : 0)
            try c.require(
                b.event.reliableEventNumber == expected,
                "\(b.event.kind) #\(b.event.eventNumber) has reliable_event_number \(b.event.reliableEventNumber) after \(a.event.kind) #\(a.event.eventNumber) with \(a.event.reliableEventNumber)",
                seen: b.frame.wire, expected: "\(expected)")
        }
    }

    /// A case playing `scenario` and expecting exactly `kinds` (touch and slide events ignored) from `source`.
    static func gesture(
        _ name: String, _ scenario: String, _ kinds: [InputEventKind], sources: [InputSource], _ summary: String
    ) -> ConformanceCase {
        ConformanceCase(name, "SIMULATOR.md §3, PROTOCOL.md §6", summary, requires: .simulatorService) { c in
            let events = try await c.inputEvents(of: "noise off\n" + scenario)
            try checkFlags(c, events)
            let pressed = events.filter { $0.event.kind != .slide && $0.event.kind != .touchDown && $0.event.kind != .touchUp }
            try c.require(
                pressed.map(\.event.kind) == kinds, "events \(pressed.map(\.event.kind.description))",
                seen: pressed.first?.frame.wire, expected: kinds.map(\.description).joined(separator: ", "))
            for (e, source) in zip(pressed, sources) {
                try c.require(
                    e.event.source == source, "\(e.event.kind) from \(e.event.source)", seen: e.frame.wire, expected: "source \(source)")
            }
            // §9 (v1.2): every source besides the Camera Control that sent an event is announced in Capabilities.buttons.
            try await c.requireFrameRules(.sourcesListed)
        }
    }

    static let all: [ConformanceCase] = [
        gesture(
            "input-full-click", "full-click\n", [.lightPressDown, .fullPressDown, .fullPressUp, .lightPressUp],
            sources: Array(repeating: .cameraControl, count: 4), "A full click: light down, full down, full up, light up, all RELIABLE."),
        gesture(
            "input-light-press", "light-press\n", [.lightPressDown, .lightPressUp], sources: [.cameraControl, .cameraControl],
            "A light press: light down, light up, RELIABLE."),
        gesture(
            "input-click-and-hold", "click-and-hold 300ms\n", [.lightPressDown, .fullPressDown, .fullPressUp, .lightPressUp],
            sources: Array(repeating: .cameraControl, count: 4), "Click and hold: the full press lasts the hold."),
        gesture(
            "input-buttons", "button volume-up\nbutton volume-down\nbutton action\n",
            [.buttonDown, .buttonUp, .buttonDown, .buttonUp, .buttonDown, .buttonUp],
            sources: [.volumeUp, .volumeUp, .volumeDown, .volumeDown, .actionButton, .actionButton],
            "Each button: BUTTON_DOWN then BUTTON_UP, RELIABLE, from the right source."),
        gesture(
            "input-remote-click", "remote-click count=2\n", [.remoteClick, .remoteClick], sources: [.remote, .remote],
            "Two remote clicks: two REMOTE_CLICK events, RELIABLE, source REMOTE."),
        ConformanceCase(
            "input-slide", "SIMULATOR.md §1, §3", "A slide from 0.1 to 0.9: best-effort SLIDE events moving up the strip.",
            requires: .simulatorService
        ) { c in
            let events = try await c.inputEvents(of: "noise off\ntouch at=0.1\nslide to=0.9 over=300ms\nrelease\n")
            try checkFlags(c, events)
            let slides = events.filter { $0.event.kind == .slide }
            try c.require(slides.count >= 5, "\(slides.count) SLIDE events", expected: "one per slide interval")
            let positions = slides.map(\.event.position)
            try c.require(
                positions.first! < positions.last! && positions.last! > 700, "positions \(positions.prefix(3))…\(positions.suffix(3))",
                seen: slides.last?.frame.wire, expected: "rising to about 920")
        },
        ConformanceCase(
            "input-event-order", "SIMULATOR.md §1",
            "In event_number order (the order events carry, §6) the numbers count up by one (skipping only best-effort messages dropped and counted in tx_dropped, §7) and timestamp_us never goes back.",
            requires: .simulatorService
        ) { c in
            let before = try await c.probe.counters()
            // Packets are delivered as they arrive: a retransmission, or a reliable event that waited for room
            // on a slow line, comes after events produced later (§6). The events carry their own order.
            let events = try await c.inputEvents(of: "full-click\nbutton action\nremote-click\n").sorted {
                $0.event.eventNumber < $1.event.eventNumber
            }
            var skipped = 0
            for (a, b) in zip(events, events.dropFirst()) {
                try c.require(
                    b.event.eventNumber > a.event.eventNumber && b.event.timestampMicros >= a.event.timestampMicros,
                    "event \(b.event.eventNumber) at \(b.event.timestampMicros) µs after event \(a.event.eventNumber) at \(a.event.timestampMicros) µs",
                    seen: b.frame.wire, expected: "event \(a.event.eventNumber + 1), not earlier")
                skipped += Int(b.event.eventNumber - a.event.eventNumber - 1)
            }
            guard skipped > 0 else { return }
            // A line too slow for the stream (9600 baud) fills the device's queue of best-effort messages: it
            // drops them and counts each in tx_dropped (§7), and their numbers are gone. Any other gap is a lost event.
            let after = try await c.probe.counters()
            let dropped = Int(after.txDropped) - Int(before.txDropped)
            try c.require(
                skipped <= dropped, "\(skipped) event numbers skipped, and tx_dropped grew by \(dropped)", seen: nil,
                expected: "event_number counting up by one, or each number skipped counted in tx_dropped")
        },
        ConformanceCase(
            "several-event-streams", "PROTOCOL.md §7",
            "With two StreamInputEvents calls open, each gets the remote click, each copy a packet of its own with the same event_number (v1.2).",
            requires: .simulatorService
        ) { c in
            let first = try await c.openStream(.inputStreamInputEvents)
            let second = try await c.openStream(.inputStreamInputEvents)
            let (request, reply) = try await c.probe.call(
                .simulatorRunScenario, RunScenarioRequest(scenario: "remote-click\n").serializedBytes())
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(request), sent: request, "RunScenario")
            let run = try RunScenarioResponse(serializedBytes: packet.payload)
            let frames = try await c.framesUntilScenarioEnd(scenarioMicros: run.durationMicros, settle: .milliseconds(150))
            try await c.cancel(first.callID)
            try await c.cancel(second.callID)
            func clicks(_ call: UInt32) -> [(frame: ReceivedFrame, event: InputEvent)] {
                var seen = Set<UInt16>()
                return frames.compactMap { frame in
                    guard let p = frame.packet, p.callID == call, p.type == .streamMessage, seen.insert(p.sequence).inserted,
                        let e = try? InputEvent(serializedBytes: p.payload), e.kind == .remoteClick
                    else { return nil }
                    return (frame, e)
                }
            }
            let a = clicks(first.callID)
            let b = clicks(second.callID)
            try c.require(
                a.count == 1 && b.count == 1, "REMOTE_CLICK events: \(a.count) on the first stream, \(b.count) on the second",
                seen: (a.first ?? b.first)?.frame.wire, expected: "one on each stream")
            try c.require(
                a[0].event.eventNumber == b[0].event.eventNumber && a[0].frame.packet?.sequence != b[0].frame.packet?.sequence,
                "event_number \(a[0].event.eventNumber) and \(b[0].event.eventNumber)", seen: b[0].frame.wire,
                expected: "the same event, in two packets")
        },
        ConformanceCase(
            "reliable-event-number", "PROTOCOL.md §6",
            "reliable_event_number is 1 + the reliable events since boot: one more on each reliable kind, the same on best-effort ones, unchanged by retransmissions, counting events with no stream open and across a new session.",
            requires: .simulatorService
        ) { c in
            // Unacknowledged, so every reliable event is retransmitted (a lost ACK); the first copy counts.
            await c.probe.setAcknowledges(false)
            let first = try await c.inputEvents(of: "noise off\nfull-click\n")
            await c.probe.setAcknowledges(true)
            try checkReliableCounts(c, first)
            guard let last = first.last else {
                throw ConformanceFailure("the full click sent no events", code: .noAnswer)
            }
            // Two clicks with no stream open, then a new session: the counts go on since boot.
            let (request, reply) = try await c.probe.call(
                .simulatorRunScenario, RunScenarioRequest(scenario: "remote-click count=2\n").serializedBytes())
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(request), sent: request, "RunScenario")
            let run = try RunScenarioResponse(serializedBytes: packet.payload)
            _ = try await c.framesUntilScenarioEnd(scenarioMicros: run.durationMicros, settle: .milliseconds(100))
            _ = try await c.probe.handshake()
            let later = try await c.inputEvents(of: "remote-click\n")
            try checkReliableCounts(c, later)
            guard let click = later.first(where: { $0.event.kind == .remoteClick }) else {
                throw ConformanceFailure("the remote click sent no event", code: .noAnswer)
            }
            let skipped = click.event.eventNumber &- last.event.eventNumber
            try c.require(
                skipped >= 3 && click.event.reliableEventNumber == last.event.reliableEventNumber + 3,
                "reliable_event_number \(click.event.reliableEventNumber) after \(last.event.reliableEventNumber), event_number \(click.event.eventNumber) after \(last.event.eventNumber)",
                seen: click.frame.wire,
                expected: "reliable_event_number \(last.event.reliableEventNumber + 3): two clicks with no stream open, then this one")
        },
        ConformanceCase(
            "input-interactive", "PROTOCOL.md §6, SIMULATOR.md §1",
            "A person presses volume up, makes a light press, slides to the top and clicks the remote; each event comes from the right input.",
            requires: .person
        ) { c in
            guard let prompter = c.prompter else { throw CaseSkipped("no person") }
            let steps: [(String, InputEventKind, InputSource)] = [
                ("press volume up now", .buttonDown, .volumeUp),
                ("make a light press on the Camera Control", .lightPressDown, .cameraControl),
                ("slide to the top of the Camera Control", .slide, .cameraControl),
                ("click the remote", .remoteClick, .remote),
            ]
            let stream = try await c.openStream(.inputStreamInputEvents)
            for (instruction, kind, source) in steps {
                guard await prompter.ask(instruction) else { throw CaseSkipped("the person skipped “\(instruction)”") }
                let frame = await c.probe.next(within: .seconds(10)) { frame in
                    guard let p = frame.packet, p.callID == stream.callID, p.type == .streamMessage,
                        let e = try? InputEvent(serializedBytes: p.payload)
                    else { return false }
                    return e.kind == kind
                }
                guard let frame, let packet = frame.packet else {
                    throw ConformanceFailure("no \(kind) within 10 s of “\(instruction)”", code: .noAnswer, sent: stream.wire)
                }
                let event = try InputEvent(serializedBytes: packet.payload)
                try c.require(event.source == source, "\(kind) came from \(event.source)", seen: frame.wire, expected: "source \(source)")
                try c.require(packet.isReliable == isReliableKind(kind), "\(kind) RELIABLE flag \(packet.isReliable)", seen: frame.wire)
                await c.probe.drain()
            }
            try await c.cancel(stream.callID)
        },
    ]
}
