import CameraControlWire

/// Call-level cases modelled on gRPC's interop suite (docs/CONFORMANCE.md).
enum InteropCases {
    /// The batches of a StreamRawSamples stream (default batch) over 300 ms, or while `scenario` plays and
    /// 50 ms more of the device's clock, in time order, one per sequence number.
    static func rawBatches(_ c: CaseContext, scenario: String?) async throws -> [(frame: ReceivedFrame, batch: RawSampleBatch)] {
        let stream = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest().serializedBytes())
        var frames: [ReceivedFrame]
        if let scenario {
            let (sent, reply) = try await c.probe.call(.simulatorRunScenario, RunScenarioRequest(scenario: scenario).serializedBytes())
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "RunScenario")
            let run = try RunScenarioResponse(serializedBytes: packet.payload)
            frames = try await c.framesUntilScenarioEnd(scenarioMicros: run.durationMicros, settle: .milliseconds(50))
        } else {
            // On a slow line, 300 ms more than three batches take on it.
            frames = await c.probe.collect(for: .milliseconds(300) + c.lineTime(bytes: 3 * 130), atLeast: 3) {
                $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage
            }
        }
        try await c.cancel(stream.callID)
        frames += try await c.probe.framesBeforeBarrier().frames ?? []
        var seen: Set<UInt16> = []
        var batches: [(frame: ReceivedFrame, batch: RawSampleBatch)] = []
        for frame in frames where frame.packet?.callID == stream.callID && frame.packet?.type == .streamMessage {
            guard seen.insert(frame.packet!.sequence).inserted else { continue }
            batches.append((frame, try RawSampleBatch(serializedBytes: frame.packet!.payload)))
        }
        try c.require(batches.count >= 3, "\(batches.count) raw batches", sent: stream.wire, expected: "a batch every 25 ms")
        return batches.sorted { $0.batch.firstTimestampMicros < $1.batch.firstTimestampMicros }
    }

    static let all: [ConformanceCase] = [
        ConformanceCase("empty-unary", "PROTOCOL.md §7", "Ping with an empty request gets one RESPONSE with an empty echo.") { c in
            let (sent, reply) = try await c.probe.call(.devicePing, [])
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "empty Ping")
            let response = try PingResponse(serializedBytes: packet.payload)
            try c.require(response.payload.isEmpty, "the echo is \(response.payload.count) bytes", sent: sent, seen: reply?.wire)
            try await c.expectSilence(after: sent, for: .milliseconds(60), "after the RESPONSE")
        },
        ConformanceCase(
            "large-unary-max-frame", "PROTOCOL.md §2",
            "A request frame of exactly max_frame_bytes is answered, and a response of exactly max_frame_bytes arrives whole."
        ) { c in
            let max = c.maxFrame
            // request frame = 3 + call id (1) + 2 + Ping body + 2; Ping body = 1 + len(n) + n
            func bodyFor(frame: Int, overhead: Int) -> [UInt8] {
                var n = frame - overhead - 3
                while n > 0 && 1 + (n >= 128 ? 2 : 1) + n > frame - overhead { n -= 1 }
                while 1 + (n >= 128 ? 2 : 1) + n < frame - overhead { n += 1 }
                return pingBody(count: n)
            }
            let body = bodyFor(frame: max, overhead: 8)
            let id = await c.probe.nextCallID() % 100 + 1
            // On a slow line the request and its echo each take their time on the line (2.1 s at 9600 baud).
            let bothWays = await c.lineTime(bytes: 2 * (max + max / 254 + 2))
            let (_, sent) = try await c.probe.request(.devicePing, body, callID: id)
            let reply = await c.probe.reply(to: id, within: .seconds(2) + bothWays)
            // Its echo cannot fit the response frame, so RESOURCE_EXHAUSTED is the right answer; silence is not.
            if reply?.packet?.type != .response {
                try c.expect(reply, .error, status: .resourceExhausted, callID: id, sent: sent, "a request of max_frame_bytes")
            }
            // Measure the response's overhead, then ask for an echo that makes the RESPONSE exactly max_frame_bytes.
            var measured = false
            for _ in 0..<3 {
                let probeID = await c.probe.nextCallID() % 100 + 1
                // A Ping that fits both ways at every legal size (at 128 bytes a 200-byte one is over the limit).
                let count = Swift.min(200, max / 2)
                let (_, small) = try await c.probe.request(.devicePing, pingBody(count: count), callID: probeID)
                let smallReply = await c.probe.reply(to: probeID)
                try c.expect(smallReply, .response, callID: probeID, sent: small, "Ping with \(count) bytes")
                let overhead = try COBS.decode(smallReply!.wire.dropLast()).count - count
                let id2 = await c.probe.nextCallID() % 100 + 1
                let (_, sent2) = try await c.probe.request(.devicePing, pingBody(count: max - overhead), callID: id2)
                let reply2 = await c.probe.reply(to: id2, within: .seconds(2) + bothWays)
                // device_time_us's varint gains a byte when the clock passes 2^21 µs (2.1 s), 2^28 µs...: between
                // the two Pings on a slow machine. The echo then cannot fit, and RESOURCE_EXHAUSTED is the right
                // answer to it (as above): measure again.
                if reply2?.packet?.type == .error, reply2?.packet?.status == .resourceExhausted { continue }
                try c.expect(reply2, .response, callID: id2, sent: sent2, "a Ping whose response is max_frame_bytes")
                let size2 = try COBS.decode(reply2!.wire.dropLast()).count
                if size2 == max {
                    measured = true
                    break
                }
                try c.require(size2 < max, "a response of \(size2) bytes, over max_frame_bytes \(max)", sent: sent2, seen: reply2?.wire)
            }
            try c.require(measured, "no response of exactly max_frame_bytes in three tries (device_time_us grew a byte each time?)")
        },
        ConformanceCase(
            "over-max-refused", "PROTOCOL.md §2",
            "A frame one byte over max_frame_bytes is dropped unanswered and counted (oversized_frames); the next frame is fine."
        ) { c in
            let before = try await c.probe.counters()
            let max = c.maxFrame
            var n = max + 1 - 8 - 3
            while 1 + (n >= 128 ? 2 : 1) + n > max + 1 - 8 { n -= 1 }
            while 1 + (n >= 128 ? 2 : 1) + n < max + 1 - 8 { n += 1 }
            // Built by hand: at max_frame_bytes 4093 the frame is over what PacketEncoder (rightly) builds. Its
            // sequence number does not matter: the frame is dropped before its envelope is read.
            let envelope: [UInt8] = [PacketType.request.rawValue, 0xFF, 0xFF, 100, MethodID.devicePing.service, MethodID.devicePing.method]
            let sent = Probe.frame(body: envelope + pingBody(count: n))
            try await c.probe.sendRaw(sent)
            try await c.expectSilence(after: sent, "a frame of max_frame_bytes + 1")
            if await c.mayOutlastDeadTimeout(bytes: sent.count) {
                // A frame that fails keeps the link alive only while it arrives (§8): on a line this slow (1.07 s
                // for 1,025 bytes at 9600 baud) the device rightly ends the session when it turns oversized. The
                // counters outlive sessions.
                try await c.probe.handshake()
            }
            let after = try await c.probe.counters()
            try c.expectDelta("oversized_frames", \.oversizedFrames, before, after, 1, sent: sent)
        },
        ConformanceCase(
            "raw-batch-timing", "input.proto, PROTOCOL.md §7",
            "After a sample-rate change every RawSampleBatch carries the new nominal interval, and no batch starts earlier than the samples before it allow (one interval of jitter).",
            requires: .forceSensor, changesDeviceState: true
        ) { c in
            let (sentGet, got) = try await c.probe.call(.configGetConfig)
            let original = try Config(
                serializedBytes: try c.expect(got, .response, callID: Probe.callIDOf(sentGet), sent: sentGet, "GetConfig").payload)
            var config = original
            config.sampleRateHertz = original.sampleRateHertz == 250 ? 500 : 250
            let (sentConfig, configured) = try await c.probe.call(.configConfigure, ConfigureRequest(config: config).serializedBytes())
            try c.expect(configured, .response, callID: Probe.callIDOf(sentConfig), sent: sentConfig, "Configure")
            let stream = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 5).serializedBytes())
            let frames = await c.probe.collect(for: .milliseconds(250), atLeast: 4) {
                $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage
            }
            try await c.cancel(stream.callID)
            _ = try await c.probe.call(.configConfigure, ConfigureRequest(config: original).serializedBytes())
            let interval = UInt64(1_000_000 / config.sampleRateHertz)
            var batches: [(frame: ReceivedFrame, batch: RawSampleBatch)] = []
            var seen: Set<UInt16> = []
            for frame in frames where frame.packet?.callID == stream.callID && frame.packet?.type == .streamMessage {
                guard seen.insert(frame.packet!.sequence).inserted else { continue }
                batches.append((frame, try RawSampleBatch(serializedBytes: frame.packet!.payload)))
            }
            batches.sort { $0.frame.packet!.sequence < $1.frame.packet!.sequence }  // order is server-stream-in-order's
            try c.require(batches.count >= 4, "\(batches.count) batches in 2.25 s", sent: stream.wire, expected: "a batch every 20 ms")
            for (frame, batch) in batches {
                try c.require(
                    UInt64(batch.sampleIntervalMicros) == interval,
                    "sample_interval_us \(batch.sampleIntervalMicros) at \(config.sampleRateHertz) Hz",
                    sent: sentConfig, seen: frame.wire, expected: "\(interval) (1,000,000 / sample_rate_hz)")
            }
            for (a, b) in zip(batches, batches.dropFirst()) {
                // Sample k of a batch is read at first_timestamp_us + k × interval, late by less than one interval
                // (or re-anchored when the device fell behind): the next batch cannot start before this bound.
                let count = UInt64(a.batch.decodedSamples.count) + UInt64(b.batch.droppedBefore)
                let earliest = a.batch.firstTimestampMicros + count * interval - interval
                try c.require(
                    b.batch.firstTimestampMicros >= earliest,
                    "a batch starts at \(b.batch.firstTimestampMicros) µs; \(count) samples of \(interval) µs from \(a.batch.firstTimestampMicros) µs",
                    seen: b.frame.wire, expected: "first_timestamp_us ≥ \(earliest)")
            }
        },
        ConformanceCase(
            "raw-samples-delta", "input.proto RawSampleBatch, PROTOCOL.md §7, §11",
            "A 1.1 session gets 4-byte records only; a 1.2 session gets delta_samples whenever shorter, canonical and in range; with SimulatorService (noise off) the decoded force runs on smoothly across batch boundaries.",
            requires: .forceSensor
        ) { c in
            // A 1.1 session: records, never delta_samples.
            _ = try await c.probe.handshake(major: 1, minor: 1)
            for (frame, batch) in try await rawBatches(c, scenario: nil) {
                try c.require(
                    batch.deltaSamples.isEmpty && !batch.samples.isEmpty && !batch.hasPartialRecord,
                    "a 1.1 session's batch carries \(batch.samples.count) record bytes and \(batch.deltaSamples.count) delta bytes",
                    seen: frame.wire, expected: "4-byte records in samples, no delta_samples (v1.2 only)")
            }
            let session = try await c.probe.handshake(major: 1, minor: 2)
            guard let negotiated = session.negotiatedVersion, negotiated.minor >= 2 else {
                throw CaseSkipped("the device speaks 1.\(session.deviceVersion?.minor ?? 0): no delta coding")
            }
            let scenario =
                c.capabilities.isSimulator
                ? "noise off\ntouch at=0.3\nforce 1500mN over=150ms\nwait 400ms\nrelease\nwait 100ms\n" : nil
            let batches = try await rawBatches(c, scenario: scenario)
            var series: [(frame: ReceivedFrame, batch: RawSampleBatch, samples: [RawSample])] = []
            for (frame, batch) in batches {
                let records = batch.samples.count / RawSample.recordBytes
                if batch.deltaSamples.isEmpty {
                    let coded = RawSampleDeltaCoding.encode(batch.decodedSamples).count
                    try c.require(
                        coded >= batch.samples.count && !batch.hasPartialRecord,
                        "a 1.2 batch of \(records) records whose delta coding takes \(coded) bytes", seen: frame.wire,
                        expected: "delta_samples whenever shorter than the records (PROTOCOL.md §7)")
                    series.append((frame, batch, batch.decodedSamples))
                    continue
                }
                let samples: [RawSample]
                do {
                    samples = try RawSampleDeltaCoding.decode(batch.deltaSamples)
                } catch {
                    throw ConformanceFailure("delta_samples does not decode: \(error)", seen: frame.wire, expected: "input.proto's coding")
                }
                try c.require(
                    batch.samples.isEmpty, "a batch carries both samples and delta_samples", seen: frame.wire, expected: "one of them")
                try c.require(
                    RawSampleDeltaCoding.encode(samples) == batch.deltaSamples && batch.deltaSamples.count < samples.count * 4,
                    "delta_samples of \(samples.count) samples in \(batch.deltaSamples.count) bytes is not the canonical coding",
                    seen: frame.wire, expected: "minimal varints, moved set exactly when the position changed, shorter than the records")
                let resolution = c.capabilities.slideResolution
                if let bad = samples.first(where: { resolution > 0 && UInt32($0.position) >= resolution }) {
                    throw ConformanceFailure(
                        "a sample at position \(bad.position)", seen: frame.wire, expected: "below slide_resolution \(resolution)")
                }
                series.append((frame, batch, samples))
            }
            guard scenario != nil else { return }
            // The scenario outlasts the collection's settle (50 ms), so every batch after its start has noise off
            // (a scenario's `noise` step ends with it).
            // Noise off, the force moves smoothly: the step from one batch's last sample to the next batch's first
            // (no sample between them) is at most twice its neighbours (the last step inside the one, the first
            // inside the other) and 2 mN. A coding that drifts within a batch jumps back at each boundary.
            func step(_ x: RawSample, _ y: RawSample) -> Int { abs(Int(y.forceMillinewtons) - Int(x.forceMillinewtons)) }
            var boundaries = 0
            for (a, b) in zip(series, series.dropFirst()) {
                let interval = UInt64(a.batch.sampleIntervalMicros)
                // No sample between them: none dropped, none skipped (a skip shifts the schedule by a whole
                // interval or more; a sample is otherwise late or early by less than one, §7).
                let span = Int64(bitPattern: b.batch.firstTimestampMicros &- a.batch.firstTimestampMicros)
                let drift = span - Int64(a.samples.count) * Int64(interval)
                guard b.batch.droppedBefore == 0, a.samples.count >= 2, b.samples.count >= 2, abs(drift) < Int64(interval)
                else { continue }
                boundaries += 1
                let (last, first) = (a.samples[a.samples.count - 1], b.samples[0])
                let bound = 2 * max(step(a.samples[a.samples.count - 2], last), step(first, b.samples[1])) + 2
                try c.require(
                    step(last, first) <= bound, "force steps \(last.forceMillinewtons) → \(first.forceMillinewtons) mN between batches",
                    seen: b.frame.wire, expected: "a step of at most \(bound) mN (twice the steps beside it, + 2)")
            }
            // A loaded device skips samples it fell behind on (§7): of some 24 boundaries, one without a gap is enough.
            try c.require(boundaries >= 1, "no batch boundary without a gap in 600 ms", expected: "consecutive batches")
        },
        ConformanceCase(
            "raw-button-levels", "input.proto RawSampleBatch.button_levels, PROTOCOL.md §7",
            "Every raw batch's button_levels are canonical: in sample order, each a change, the first sample's only when a level is 1, none past the last sample; with SimulatorService a 100 ms volume-up press shows in the raw levels as volume up alone, held 100 ms give or take its contacts' bounce, and a batch that starts while it is held starts with it.",
            requires: .forceSensor
        ) { c in
            let scenario = c.capabilities.isSimulator ? "button volume-up hold=100ms\nwait 60ms\n" : nil
            var heldSamples = 0
            var startsHeld = 0
            var unseen = 0  // samples dropped or skipped between batches (a loaded device skips, §7)
            var interval = 1_000
            var end: UInt64?  // where the batch before ended by the formula
            for (frame, batch) in try await rawBatches(c, scenario: scenario) {
                let levels: [RawButtonLevels]
                do {
                    levels = try RawButtonLevels.decode(batch.buttonLevels, sampleCount: batch.decodedSamples.count)
                } catch {
                    throw ConformanceFailure(
                        "button_levels \(batch.buttonLevels) do not decode: \(error)", seen: frame.wire,
                        expected: "entries sample_index × 16 + levels, in sample order, below the sample count")
                }
                try c.require(
                    RawButtonLevels.encode(levels) == batch.buttonLevels,
                    "button_levels \(batch.buttonLevels) over \(levels.count) samples are not canonical", seen: frame.wire,
                    expected: "an entry only where the levels change, the first sample's only when a level is 1")
                guard scenario != nil else { continue }
                if let other = levels.first(where: { !$0.subtracting(.volumeUp).isEmpty }) {
                    throw ConformanceFailure(
                        "raw levels \(other.rawValue) while only volume up was pressed", seen: frame.wire,
                        expected: "bit 1 (volume up) alone")
                }
                heldSamples += levels.filter { $0.contains(.volumeUp) }.count
                if levels.first?.contains(.volumeUp) == true { startsHeld += 1 }
                interval = max(1, Int(batch.sampleIntervalMicros))
                if let end, batch.firstTimestampMicros > end {
                    unseen += Int((batch.firstTimestampMicros - end) / UInt64(interval))
                }
                end = batch.timestampMicros(ofSample: levels.count)
            }
            guard scenario != nil else { return }
            // The simulator's contacts chatter for 1 to 4 ms after each edge (docs/SIMULATOR.md §2): the raw level
            // is down for 100 ms, ± 4 ms at each edge; samples the link dropped or a late device skipped are not seen.
            let heldMicros = heldSamples * interval
            try c.require(
                heldMicros <= 108_000 && heldMicros + unseen * interval >= 92_000,
                "volume up held \(heldMicros) µs in the raw levels (\(unseen) samples not seen between batches)",
                expected: "100 ms, ± 4 ms of bounce at each edge")
            try c.require(
                startsHeld >= 1, "no batch starts with volume up held (\(heldMicros) µs held)",
                expected: "each batch decoded on its own: one starting within the press says so at its first sample")
        },
        ConformanceCase(
            "server-stream-in-order", "PROTOCOL.md §7",
            "StreamRawSamples: batches arrive in order (sequence numbers and first_timestamp_us increasing).",
            requires: .forceSensor
        ) { c in
            let stream = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 10).serializedBytes())
            // On a slow line, 150 ms more than six batches take on it (a line too slow for the stream carries
            // fewer batches: the device drops and counts the rest, §7).
            let frames = await c.probe.collect(for: .milliseconds(150) + c.lineTime(bytes: 6 * 80), atLeast: 5) {
                $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage
            }
            try await c.cancel(stream.callID)
            let batches = frames.filter { $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage }
            try c.require(
                batches.count >= 5, "\(batches.count) batches in 2.15 s", sent: stream.wire, seen: batches.first?.wire,
                expected: "a batch every 10 ms")
            var last: (UInt16, UInt64)?
            for frame in batches {
                let batch = try RawSampleBatch(serializedBytes: frame.packet!.payload)
                if let (seq, time) = last {
                    try c.require(
                        frame.packet!.sequence &- seq < 0x8000 && batch.firstTimestampMicros > time,
                        "batch at \(batch.firstTimestampMicros) µs (sequence \(frame.packet!.sequence)) after one at \(time) µs (sequence \(seq))",
                        sent: stream.wire, seen: frame.wire, expected: "increasing sequence and first_timestamp_us")
                }
                last = (frame.packet!.sequence, batch.firstTimestampMicros)
            }
            // §7 (v1.2): the suite's sessions are at 1.0, where no empty RESPONSE confirms the stream.
            try await c.requireFrameRules(.noStreamConfirmationAt10)
        },
        ConformanceCase(
            "cancel-after-begin", "PROTOCOL.md §7",
            "A stream cancelled right after its REQUEST sends nothing more, and cancelled_calls counts it.", requires: .forceSensor
        ) { c in
            let before = try await c.probe.counters()
            let stream = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 5).serializedBytes())
            let cancel = try await c.cancel(stream.callID)
            try await c.expectNothingMoreAfterCancel(stream.callID, cancel: cancel)
            let after = try await c.probe.counters()
            try c.expectDelta("cancelled_calls", \.cancelledCalls, before, after, 1, sent: cancel)
        },
        ConformanceCase(
            "cancel-after-first-response", "PROTOCOL.md §7",
            "A stream cancelled after its first message sends nothing more, and cancelled_calls counts it.", requires: .forceSensor
        ) { c in
            let before = try await c.probe.counters()
            let stream = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 5).serializedBytes())
            let first = await c.probe.next { $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage }
            try c.require(first != nil, "no stream message", sent: stream.wire)
            let cancel = try await c.cancel(stream.callID)
            try await c.expectNothingMoreAfterCancel(stream.callID, cancel: cancel)
            let after = try await c.probe.counters()
            try c.expectDelta("cancelled_calls", \.cancelledCalls, before, after, 1, sent: cancel)
            // §7 (v1.2): a 1.0 session's stream is not confirmed by an empty RESPONSE, before or after its first message.
            try await c.requireFrameRules(.noStreamConfirmationAt10)
        },
        ConformanceCase(
            "deadline-slow-call", "PROTOCOL.md §7",
            "A call whose host deadline passes (DEADLINE_EXCEEDED on the host, then CANCEL) leaves the device healthy and counting it."
        ) { c in
            let before = try await c.probe.counters()
            let stream = try await c.openStream(.inputStreamInputEvents)
            // The host's deadline (100 ms) passes with no answer: it fails the call itself and cancels it.
            let early = await c.probe.collect(for: .milliseconds(100)).filter {
                $0.packet?.callID == stream.callID && $0.packet?.type != .streamMessage
            }
            try c.require(
                early.isEmpty, "the device ended a call the host still waits for", sent: stream.wire, seen: early.first?.wire,
                expected: "nothing: deadlines are the host's")
            let cancel = try await c.cancel(stream.callID)
            try await c.probe.ping()
            let after = try await c.probe.counters()
            try c.expectDelta("cancelled_calls", \.cancelledCalls, before, after, 1, sent: cancel)
        },
        ConformanceCase(
            "status-propagation", "PROTOCOL.md §5, §7",
            "An invalid Configure gets ERROR INVALID_ARGUMENT with a UTF-8 message; invalid_arguments counts it; the old configuration stays. So does a Configure whose full_press_on_mn is one above the announced force_max_mn, and a PlayHaptic of intensity_percent 101 with a pattern the device announces.",
            changesDeviceState: true
        ) { c in
            let before = try await c.probe.counters()
            let bad = ConfigureRequest(config: Config(sampleRateHertz: 123)).serializedBytes()
            let (sent, reply) = try await c.probe.call(.configConfigure, bad)
            let packet = try c.expect(
                reply, .error, status: .invalidArgument, callID: Probe.callIDOf(sent), sent: sent, "Configure sample_rate_hz 123")
            try c.require(
                !packet.payload.isEmpty && String(bytes: packet.payload, encoding: .utf8) != nil,
                "the status message is empty or not UTF-8", sent: sent, seen: reply?.wire)
            var invalid = 1
            // §7: full_press_on_mn above the device's force range (Capabilities.force_max_mn), all else valid.
            let forceMax = c.capabilities.forceMaxMillinewtons
            if c.capabilities.hasForceSensor, forceMax > 0, forceMax < UInt32.max {
                let (sentGet, got) = try await c.probe.call(.configGetConfig)
                let current = try Config(
                    serializedBytes: try c.expect(got, .response, callID: Probe.callIDOf(sentGet), sent: sentGet, "GetConfig").payload)
                var config = current
                var thresholds = current.thresholds ?? Thresholds()
                thresholds.fullPressOnMillinewtons = forceMax + 1
                config.thresholds = thresholds
                let (sentOver, over) = try await c.probe.call(.configConfigure, ConfigureRequest(config: config).serializedBytes())
                if over?.packet?.type == .response {
                    // Accepted: put the configuration back, or the cases after this one press against it (§9:
                    // the configuration outlives the session).
                    _ = try? await c.probe.call(.configConfigure, ConfigureRequest(config: current).serializedBytes())
                }
                try c.expect(
                    over, .error, status: .invalidArgument, callID: Probe.callIDOf(sentOver), sent: sentOver,
                    "Configure full_press_on_mn \(forceMax + 1), one above force_max_mn \(forceMax)")
                invalid += 1
                let (sentAgain, again) = try await c.probe.call(.configGetConfig)
                let now = try c.expect(again, .response, callID: Probe.callIDOf(sentAgain), sent: sentAgain, "GetConfig")
                try c.require(
                    now.payload == got?.packet?.payload, "the refused Configure changed the configuration", sent: sentOver,
                    seen: again?.wire, expected: "the configuration before it")
            }
            // §7: intensity_percent above 100 is an invalid argument, with a pattern the actuator plays. With one
            // it lacks, a device MAY answer FAILED_PRECONDITION before it looks at the arguments (§7 counts a
            // pattern not in haptic_patterns as hardware the device lacks), so that is not asked. A device
            // without an actuator announces no pattern: not asked either.
            if let pattern = c.capabilities.hapticPatterns.first(where: { $0 != .unspecified }) {
                var request = PlayHapticRequest()
                request.pattern = pattern
                request.intensityPercent = 101
                let (sentHaptic, haptic) = try await c.probe.call(.feedbackPlayHaptic, request.serializedBytes())
                let what = "PlayHaptic \(pattern) (announced) at intensity_percent 101"
                if haptic?.packet?.status == .failedPrecondition {
                    // Not "no session": a Ping proves the session goes on (a failure without it would be taken for
                    // a lost session and run again).
                    try await c.probe.ping()
                    var failure = ConformanceFailure(
                        "\(what): FAILED_PRECONDITION for a pattern the device announces", sent: sentHaptic, seen: haptic?.wire,
                        expected: "ERROR INVALID_ARGUMENT on call \(Probe.callIDOf(sentHaptic))")
                    failure.noSessionLost = true
                    throw failure
                }
                try c.expect(
                    haptic, .error, status: .invalidArgument, callID: Probe.callIDOf(sentHaptic), sent: sentHaptic, what)
                invalid += 1
            }
            let after = try await c.probe.counters()
            try c.expectDelta("invalid_arguments", \.invalidArguments, before, after, invalid, sent: sent)
        },
        ConformanceCase(
            "unimplemented-method", "PROTOCOL.md §7", "Method 99 of DeviceService gets ERROR UNIMPLEMENTED; unimplemented_calls counts it."
        ) { c in
            let before = try await c.probe.counters()
            let (sent, reply) = try await c.probe.call(MethodID(service: 1, method: 99))
            try c.expect(reply, .error, status: .unimplemented, callID: Probe.callIDOf(sent), sent: sent, "DeviceService method 99")
            let after = try await c.probe.counters()
            try c.expectDelta("unimplemented_calls", \.unimplementedCalls, before, after, 1, sent: sent)
        },
        ConformanceCase("unimplemented-service", "PROTOCOL.md §7", "Service 99 gets ERROR UNIMPLEMENTED; the link goes on.") { c in
            let (sent, reply) = try await c.probe.call(MethodID(service: 99, method: 1))
            try c.expect(reply, .error, status: .unimplemented, callID: Probe.callIDOf(sent), sent: sent, "service 99")
            try await c.probe.ping()
        },
        ConformanceCase(
            "concurrency-limit", "PROTOCOL.md §7",
            "With max_concurrent_calls streams open, one more call gets ERROR RESOURCE_EXHAUSTED (calls_refused); after a cancel there is room again."
        ) { c in
            let before = try await c.probe.counters()
            var open: [UInt32] = []
            for _ in 0..<Int(c.capabilities.maxConcurrentCalls) {
                open.append(try await c.openStream(.inputStreamInputEvents).callID)
            }
            let (sent, reply) = try await c.probe.call(.devicePing, [])
            try c.expect(reply, .error, status: .resourceExhausted, callID: Probe.callIDOf(sent), sent: sent, "one call over the limit")
            try await c.cancel(open.removeLast())
            try await c.probe.ping()
            for id in open { try await c.cancel(id) }
            let after = try await c.probe.counters()
            try c.expectDelta("calls_refused", \.callsRefused, before, after, 1, sent: sent)
        },
        ConformanceCase(
            "limit-before-method", "PROTOCOL.md §7",
            "At max_concurrent_calls an unknown method gets RESOURCE_EXHAUSTED, not UNIMPLEMENTED: the limit is checked first (v1.2)."
        ) { c in
            var open: [UInt32] = []
            for _ in 0..<Int(c.capabilities.maxConcurrentCalls) {
                open.append(try await c.openStream(.inputStreamInputEvents).callID)
            }
            let (sent, reply) = try await c.probe.call(MethodID(service: 2, method: 99), [])
            for id in open { try await c.cancel(id) }
            try c.expect(
                reply, .error, status: .resourceExhausted, callID: Probe.callIDOf(sent), sent: sent, "an unknown method over the limit")
        },
        ConformanceCase(
            "reused-call-id", "PROTOCOL.md §7",
            "A REQUEST on a call id still in flight gets ERROR ALREADY_EXISTS and the earlier call goes on.", supersededBy: "R3"
        ) { c in
            let stream = try await c.openStream(.inputStreamInputEvents)
            let (_, sent) = try await c.probe.request(.devicePing, [], callID: stream.callID)
            let reply = await c.probe.reply(to: stream.callID)
            try c.expect(reply, .error, status: .alreadyExists, callID: stream.callID, sent: sent, "a reused call id")
            // The earlier call goes on: cancelling it is counted.
            let before = try await c.probe.counters()
            let cancel = try await c.cancel(stream.callID)
            let after = try await c.probe.counters()
            try c.expectDelta("cancelled_calls", \.cancelledCalls, before, after, 1, sent: cancel)
        },
        ConformanceCase(
            "calls-after-cancelled-stream", "PROTOCOL.md §7", "After a cancelled stream, a new stream and unary calls on new ids work.",
            requires: .forceSensor
        ) { c in
            let first = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 5).serializedBytes())
            _ = await c.probe.next { $0.packet?.callID == first.callID }
            try await c.cancel(first.callID)
            try await c.probe.ping()
            let second = try await c.openStream(.inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 5).serializedBytes())
            let message = await c.probe.next { $0.packet?.callID == second.callID }
            try c.expect(message, .streamMessage, callID: second.callID, sent: second.wire, "a second stream")
            try await c.cancel(second.callID)
        },
        ConformanceCase(
            "reset-counters", "DiagnosticsService (diagnostics.proto)",
            "ResetCounters answers with the counters as they were just before the reset; afterwards they restart from zero, uptime_us excepted."
        ) { c in
            let sentBefore = await c.probe.framesSent
            let (sent, reply) = try await c.probe.call(.diagnosticsResetCounters)
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "ResetCounters")
            let old = try Counters(serializedBytes: packet.payload)
            try c.require(
                old.framesReceived > 0, "the answer has frames_received 0: not the counters before the reset", sent: sent, seen: reply?.wire
            )
            let now = try await c.probe.counters()
            // At most the frames the probe sent since the reset (its heartbeats and ACKs meanwhile, and the
            // GetCounters request), however long a loaded machine took.
            let since = await c.probe.framesSent - sentBefore - 1  // not the reset request itself
            try c.require(
                Int(now.framesReceived) <= since && now.uptimeMicros >= old.uptimeMicros,
                "after the reset frames_received is \(now.framesReceived), uptime_us \(now.uptimeMicros) (before: \(old.uptimeMicros))",
                sent: sent, expected: "frames_received ≤ \(since), the frames sent since the reset")
        },
        ConformanceCase(
            "frames-received", "PROTOCOL.md §9 (Diagnostics)",
            "frames_received counts every frame that passed the check and the envelope — a duplicate, a device-bound "
                + "type and an unknown type included — and no empty, short, bad-check or undecodable frame."
        ) { c in
            let sentBefore = await c.probe.framesSent  // before the first GetCounters request
            let before = try await c.probe.counters()
            // Valid frames, each of a kind the rule names.
            let (pingID, ping) = try await c.probe.request(.devicePing, PingRequest().serializedBytes())
            _ = await c.probe.reply(to: pingID)
            try await c.probe.sendRaw(ping)  // the same packet again: a duplicate, dropped and counted
            try await c.probe.send(Packet(type: .response, callID: 77))  // device-bound: dropped, counted
            try await c.probe.send(Packet(type: PacketType(rawValue: 9), callID: 0))  // unknown type, unanswered
            let valid = 4
            // Invalid frames: each has its own counter, none is frames_received's. Six bad checks, each a
            // two-bit error (CRC-16/CCITT detects every such pair): the check byte and one byte of the body.
            var good = try PacketEncoder.encodeUnstuffed(
                Packet(type: .request, sequence: await c.probe.sequence, callID: 901, address: .devicePing))
            good[good.count - 1] ^= 0x5A
            var invalid: [[UInt8]] = (0..<6).map { index in
                var bad = good
                if index > 0 { bad[index - 1] ^= 0x01 }
                return COBS.encode(bad) + [0]
            }
            invalid += [
                [0x01, 0x00],  // an empty frame
                Probe.frame(body: [0x08, 0x01, 0x00]),  // shorter than an envelope
                [0x41, 0x42, 0x43, 0x00],  // not COBS: a block running past the delimiter
            ]
            for wire in invalid { try await c.probe.sendRaw(wire) }
            let (afterID, afterRequest) = try await c.probe.request(.diagnosticsGetCounters)
            let sentAfter = await c.probe.framesSent  // read at once: what the probe sends later is not counted yet
            let reply = await c.probe.reply(to: afterID)
            guard let packet = reply?.packet, packet.type == .response else {
                throw ConformanceFailure(
                    "GetCounters was not answered", sent: afterRequest, seen: reply?.wire, expected: "RESPONSE Counters")
            }
            let after = try Counters(serializedBytes: packet.payload)
            let counted = Int(after.framesReceived) - Int(before.framesReceived)
            // At least the valid frames above (the second GetCounters request may be counted after its answer);
            // at most every valid frame the probe sent meanwhile: its heartbeats and ACKs too, and the second
            // request, but not the first one (counted before its answer) nor the invalid frames.
            let most = sentAfter - sentBefore - 1 - invalid.count
            try c.require(
                counted >= valid && counted <= most,
                "frames_received grew by \(counted) for \(valid) deliberate valid frames and \(invalid.count) invalid ones "
                    + "(the probe sent \(sentAfter - sentBefore) frames in all)",
                sent: ping, expected: "between \(valid) and \(most)")
        },
    ]
}
