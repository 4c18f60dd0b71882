import CameraControlDevice
import Foundation

/// A scenario longer than one request frame, played in pieces: a board with small frames (the micro:bit's
/// 256 bytes) takes about 230 bytes of steps per `RunScenario`, and playing a scenario replaces the one playing,
/// so each piece is sent once the previous one has ended (docs/SIMULATOR.md, "Limits").
extension ScenarioFiles {
    /// What a scenario played in pieces amounts to.
    struct Played: Sendable {
        /// Steps queued, all pieces together.
        var steps: UInt32
        /// The pieces' durations added up, microseconds (the gaps between pieces not counted).
        var durationMicros: UInt64
        /// How long the last piece still plays after ``play(inPiecesOf:file:on:)`` returned, microseconds.
        var remainingMicros: UInt64
        /// The number of `RunScenario` requests.
        var pieces: Int
    }

    /// Steps that let time pass with the finger as it is: a piece ends after one of them where it can.
    static let timeSteps: Set<String> = ["pause", "wait", "hold"]
    /// Steps that leave the finger down (until `release`); every other gesture lifts it again. A piece ends
    /// only where the finger is up: the simulator lifts it when a scenario ends.
    static let fingerDownSteps: Set<String> = ["touch", "force"]

    /// Most steps in one piece: the smallest step table a board builds with (`CCSIM_MAX_STEPS` 24 on the
    /// micro:bit) with room to spare.
    static let maxStepsPerPiece = 16

    /// Scenario text a request frame of `maxFrameBytes` holds, after the envelope, the check and the
    /// request's own field header (kept on the safe side).
    static func textBudget(maxFrameBytes: Int) -> Int { max(64, maxFrameBytes - 32) }

    /// `steps` cut into pieces of at most `maxBytes` bytes of text and ``maxStepsPerPiece`` steps, each ending
    /// where the finger is up, after a `pause`, `wait` or `hold` where there is one (between gestures, not
    /// inside one); a single piece when the whole text fits. Each piece keeps the file's line numbers.
    static func pieces(of steps: Steps, maxBytes: Int) -> [Steps] {
        let lines = steps.text.split(separator: "\n").map(String.init)
        guard steps.text.utf8.count > maxBytes else { return [steps] }  // one request, as the simulator takes it
        var pieces: [Steps] = []
        // down[i]: the finger is down after line i
        var fingerDown = false
        let down: [Bool] = lines.map { line in
            let word = line.split(separator: " ").first.map(String.init) ?? ""
            if fingerDownSteps.contains(word) { fingerDown = true } else if word == "release" { fingerDown = false }
            return fingerDown
        }
        var start = 0
        while start < lines.count {
            var end = start  // exclusive
            var bytes = 0
            var afterPause: Int?
            var afterGesture: Int?
            while end < lines.count, end - start < maxStepsPerPiece, bytes + lines[end].utf8.count + 1 <= maxBytes {
                bytes += lines[end].utf8.count + 1
                end += 1
                guard !down[end - 1] else { continue }
                afterGesture = end
                if let word = lines[end - 1].split(separator: " ").first, timeSteps.contains(String(word)) {
                    afterPause = end
                }
            }
            if end < lines.count, let cut = afterPause ?? afterGesture { end = cut }
            if end == start { end = start + 1 }  // one over-long line: the device answers for it
            let slice = start..<end
            let fileLines = slice.map { $0 < steps.fileLines.count ? steps.fileLines[$0] : 0 }
            pieces.append(
                Steps(text: lines[slice].joined(separator: "\n") + "\n", fileLines: fileLines, source: steps.source))
            start = end
        }
        return pieces
    }

    /// Plays `steps` on the device in pieces that fit its frames: each piece once the simulator reports the
    /// previous one has ended (`GetSimulatorStatus`). A device's parse error names the file's line.
    static func play(inPiecesOf steps: Steps, file: String, on session: DeviceSession) async throws -> Played {
        let budget = textBudget(maxFrameBytes: Int(session.info.capabilities.maxFrameBytes))
        let pieces = pieces(of: steps, maxBytes: budget)
        var played = Played(steps: 0, durationMicros: 0, remainingMicros: 0, pieces: 0)
        for (index, piece) in pieces.enumerated() {
            if index > 0 { try await waitUntilEnded(on: session, expectedMicros: played.remainingMicros) }
            let response = try await play(piece, file: file, on: session)
            played.steps += response.steps
            played.durationMicros += response.durationMicros
            played.remainingMicros = response.durationMicros
            played.pieces += 1
        }
        return played
    }

    /// How long a command that stops after its scenario listens once the device has played it and the host
    /// has what the device sent until then: for the host's own deadlines after the last input (an idle slide
    /// ends 300 ms after its last move), with room to spare.
    static let listenAfterScenarioMicros: UInt64 = 1_000_000

    /// Returns once the scenario the simulator plays has ended, the host has everything the device sent until
    /// then, and ``listenAfterScenarioMicros`` more have passed: what `monitor`, `record` and `shoot` wait for
    /// before they stop "after the scenario". Not a guess on the wall clock: on a busy machine the simulator
    /// and the link run late, and a capture at the scenario's end would be cut off. The simulator is asked
    /// until it reports the scenario over (``waitUntilEnded(on:expectedMicros:)``), then pinged: the answer
    /// comes after every event the device sent before it. A device that cannot say (no status, the session
    /// gone) is given the scenario's duration instead.
    static func waitForScenarioEnd(on session: DeviceSession, remainingMicros: UInt64) async {
        let start = ContinuousClock.now
        do {
            try await waitUntilEnded(on: session, expectedMicros: remainingMicros)
            _ = try await session.ping()
        } catch {
            try? await Task.sleep(until: start + .microseconds(Int64(clamping: remainingMicros)))
        }
        try? await Task.sleep(for: .microseconds(Int64(listenAfterScenarioMicros)))
    }

    /// Where a scenario a command played ends: the session it plays on and how long it still plays.
    typealias ScenarioEnd = (session: DeviceSession, remainingMicros: UInt64)

    /// Calls `stop` when a command's run is over: `seconds` from now when given (more than 0), else once the
    /// scenario it played has ended (``waitForScenarioEnd(on:remainingMicros:)``); with neither, never (the
    /// command runs until Ctrl-C or its device is gone).
    static func stop(
        afterSeconds seconds: Int, orAfter scenarioEnd: ScenarioEnd?, by stop: @escaping @Sendable () async -> Void
    ) {
        if seconds > 0 {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                await stop()
            }
        } else if let (session, remaining) = scenarioEnd {
            Task {
                await waitForScenarioEnd(on: session, remainingMicros: remaining)
                await stop()
            }
        }
    }

    /// Sleeps for most of the piece's duration, then asks the simulator every 20 ms until it has ended (at
    /// most the piece's duration and 5 s more).
    static func waitUntilEnded(on session: DeviceSession, expectedMicros: UInt64) async throws {
        let lead = expectedMicros > 50_000 ? expectedMicros - 50_000 : 0
        // The lead in slices: a device lost meanwhile ends the wait at once, not after the piece's duration.
        let leadEnds = ContinuousClock.now + .microseconds(Int64(clamping: lead))
        while ContinuousClock.now < leadEnds {
            guard !session.client.isClosed else { throw DeviceError(.closed, "the device was lost while the scenario played") }
            try await Task.sleep(for: min(.milliseconds(200), leadEnds - ContinuousClock.now))
        }
        let deadline = ContinuousClock.now + .microseconds(Int64(expectedMicros)) + .seconds(5)
        while try await session.simulatorStatus().isScenarioRunning {
            guard ContinuousClock.now < deadline else {
                throw CLIFailure(status: .failure, message: "the simulator still plays a scenario piece after \(expectedMicros / 1000) ms")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
