import CameraControlDevice
import CameraControlEmbedded
import CameraControlRPC
import CameraControlSimulation
import CameraControlTools
import CameraControlWire
import Foundation
import Synchronization

/// The simple commands: one session, one job.
enum Commands {
    static let infoCommand = Command(
        name: "info", summary: "handshake and print identity, protocol version and capabilities",
        usage: "PORT [--json]",
        details: """
              --json    one object: {"port", "deviceVersion", "negotiatedVersion", "identity", "capabilities",
                        "sessionId", "deviceTimeUs"}, the handshake's messages in protobuf's JSON mapping
            """,
        examples: ["info /dev/ttyACM0", "info auto", "info SIM-00000001 --json"], run: info)

    static let pingCommand = Command(
        name: "ping", summary: "round trips to the device", usage: "PORT [--count N] [--json]",
        details: """
              --count N   pings to send (default 10)
              --json      one object per ping {"type": "ping", "sequence", "rttMs"}, then
                          {"type": "summary", "sent", "received", "lost", "minMs", "medianMs", "maxMs"}
                          (the times only when a ping was answered)
            """,
        examples: ["ping /dev/ttyACM0", "ping auto --count 100 --json"], run: ping)

    static let countersCommand = Command(
        name: "counters", summary: "the device's link and call counters", usage: "PORT [--reset] [--json]",
        details: """
              --reset   read and zero them
              --json    the Counters message in protobuf's JSON mapping, every field printed
            """,
        examples: ["counters /dev/ttyACM0", "counters auto --reset --json"], run: counters)

    static let scenarioCommand = Command(
        name: "scenario", summary: "play a scenario on a simulator, or check one offline",
        usage: "PORT FILE [--json] | --check FILE...",
        details: """
            FILE is a scenario (docs/SIMULATOR.md); `-` reads standard input. It is checked with the firmware's own
            parser before it is sent, so errors name the file's lines: FILE:LINE:COLUMN: what was expected, found 'token'.
            The command returns once the simulator has taken the scenario, which then plays on its own for its
            duration (its line says how long: `playing N steps, T ms`). A scenario sent while another plays replaces
            it, and the finger stays where the first left it (pressed, if it was): send `release` first, or wait for
            the first to end (`camctl monitor PORT --scenario FILE` plays one and stops after it).
              --check   check the files offline (no device): FILE: N steps, M expectations for each good one, the
                        error for each bad one (every file is checked); exit 1 if any has an error
              --json    {"steps", "durationUs"} after playing, or with --check one object per file: {"file", "ok",
                        "steps", "expectations"} / {"file", "ok": false, "line", "column", "reason", "token"} /
                        {"file", "ok": false, "reason"} (a file that cannot be read)
            """,
        examples: [
            "scenario --check Firmware-sim/scenarios/full-click.scenario",
            "scenario /tmp/camctl0 Firmware-sim/scenarios/full-click.scenario",
        ], run: scenario)

    static func info(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"], positionals: ["PORT"])
        let port = try args.required(0, "PORT")
        let session = try await Ports.open(port)
        let info = session.info
        await session.close()
        if args.flag("json") {
            print(
                JSONValue.object([
                    JSONMember("port", .string(port)),
                    JSONMember("deviceVersion", info.deviceVersion.jsonValue(includingDefaults: true)),
                    JSONMember("negotiatedVersion", info.negotiatedVersion.jsonValue(includingDefaults: true)),
                    JSONMember("identity", info.identity.jsonValue(includingDefaults: true)),
                    JSONMember("capabilities", info.capabilities.jsonValue(includingDefaults: true)),
                    JSONMember("sessionId", .integer(info.sessionID)),
                    JSONMember("deviceTimeUs", info.deviceTimeMicros.jsonValue),
                ]).compactText)
        } else {
            print(info.summary)
        }
    }

    static func ping(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["count"], switches: ["json"], positionals: ["PORT"])
        let port = try args.required(0, "PORT")
        let count = try args.integer("count", default: 10)
        guard count > 0 else { throw Arguments.Failure(description: "--count wants a number above 0, not \(count)") }
        let json = args.flag("json")
        let session = try await Ports.open(port)
        var times: [Double] = []
        let clock = ContinuousClock()
        // Ctrl-C ends the pings early: the summary counts those sent.
        let interrupted = Mutex(false)
        Interrupts.onInterrupt { interrupted.withLock { $0 = true } }
        var sent = 0
        for index in 0..<count where !interrupted.withLock({ $0 }) {
            sent += 1
            let payload = (0..<8).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            let start = clock.now
            let result: Result<PingResponse, RPCError>
            do {
                result = .success(try await session.ping(payload, deadline: .seconds(1)))
            } catch {
                result = .failure(error)
            }
            guard case .success(let reply) = result else {
                if case .failure(let error) = result, error.code != .deadlineExceeded { throw error }
                continue  // a lost round trip (after the retransmissions): counted, not fatal
            }
            let elapsed = start.duration(to: clock.now)
            guard reply.payload == payload else {
                throw RPCError(code: .dataLoss, message: "ping \(index): the echo differs from the payload")
            }
            let millis = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
            times.append(millis)
            if json {
                print(
                    JSONValue.object([
                        JSONMember("type", .string("ping")), JSONMember("sequence", .integer(index)),
                        JSONMember("rttMs", .number(format(millis))),
                    ]).compactText)
            }
        }
        await session.close()
        // Lost round trips are counted, not fatal (PROTOCOL.md §6: each was retransmitted first).
        let sorted = times.sorted()
        let lost = sent - times.count
        let figures = sorted.isEmpty ? nil : (sorted.first!, sorted[sorted.count / 2], sorted.last!)
        if json {
            var members = [
                JSONMember("type", .string("summary")), JSONMember("sent", .integer(sent)),
                JSONMember("received", .integer(times.count)), JSONMember("lost", .integer(lost)),
            ]
            if let (low, median, high) = figures {
                members += [
                    JSONMember("minMs", .number(format(low))), JSONMember("medianMs", .number(format(median))),
                    JSONMember("maxMs", .number(format(high))),
                ]
            }
            print(JSONValue.object(members).compactText)
        } else {
            let summary = "\(sent) sent, \(times.count) received, \(lost) lost"
            if let (low, median, high) = figures {
                print("\(summary); min \(format(low)) ms, median \(format(median)) ms, max \(format(high)) ms")
            } else {
                print(summary)
            }
        }
        if times.isEmpty { throw CLIFailure(status: .noAnswer, message: "no ping was answered", hint: nil) }
    }

    static func counters(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["reset", "json"], positionals: ["PORT"])
        let port = try args.required(0, "PORT")
        let session = try await Ports.open(port)
        let counters = args.flag("reset") ? try await session.resetCounters() : try await session.counters()
        await session.close()
        print(args.flag("json") ? counters.jsonText(includingDefaults: true) : describe(counters))
    }

    static func scenario(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["check", "json"], positionals: ["PORT", "FILE"], variadic: true)
        let json = args.flag("json")
        if args.flag("check") {
            guard !args.positional.isEmpty else { throw Arguments.Failure(description: "missing FILE") }
            // Every file is checked: a bad one (or one that cannot be read) is reported as it comes, its own JSON
            // object with --json, and the command fails after the last. One file alone fails with its own error.
            var failures: [CLIFailure] = []
            for file in args.positional {
                let text: String
                do {
                    text = try ScenarioFiles.read(file)
                } catch {
                    if json {
                        print(
                            JSONValue.object([
                                JSONMember("file", .string(file)), JSONMember("ok", .bool(false)),
                                JSONMember("reason", .string(error.message)),
                            ]).compactText)
                    }
                    failures.append(error)
                    if args.positional.count > 1 { _ = CamCtl.report(error, command: "scenario") }
                    continue
                }
                do {
                    let script = try ScenarioScript(text)
                    let expectations = script.expectations.count
                    print(
                        json
                            ? JSONValue.object([
                                JSONMember("file", .string(file)), JSONMember("ok", .bool(true)),
                                JSONMember("steps", .integer(script.timeline.count)),
                                JSONMember("expectations", .integer(expectations)),
                            ]).compactText
                            : "\(file): \(script.timeline.count) step\(script.timeline.count == 1 ? "" : "s"), \(expectations) expectation\(expectations == 1 ? "" : "s")"
                    )
                } catch {
                    if json { print(ScenarioFiles.json(error, file: file, text: text).compactText) }
                    let failure = ScenarioFiles.failure(error, file: file, text: text)
                    failures.append(failure)
                    if args.positional.count > 1 { _ = CamCtl.report(failure, command: "scenario") }
                }
            }
            if args.positional.count == 1, let failure = failures.first { throw failure }
            guard failures.isEmpty else {
                throw CLIFailure(status: .failure, message: "\(failures.count) of \(args.positional.count) files have errors")
            }
            return
        }
        guard args.positional.count <= 2 else {
            throw Arguments.Failure(description: "unexpected argument '\(args.positional[2])' (to check several files: --check)")
        }
        let port = try args.required(0, "PORT")
        let file = try args.required(1, "FILE")
        let steps = try ScenarioFiles.load(file)
        let session = try await Ports.open(port)
        // Closed before the command returns (the process may exit right after): the ACK of the last reply
        // goes out first.
        let result: RunScenarioResponse
        do {
            result = try await ScenarioFiles.play(steps, file: file, on: session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        if json {
            print(
                JSONValue.object([
                    JSONMember("steps", .integer(result.steps)), JSONMember("durationUs", result.durationMicros.jsonValue),
                ]).compactText)
        } else {
            print("playing \(result.steps) step\(result.steps == 1 ? "" : "s"), \(format(Double(result.durationMicros) / 1000)) ms")
        }
    }

    static func describe(_ c: Counters) -> String {
        let rows = Counters.fields.map { ($0.name, $0.value(c)) }
        return rows.map { name, value in name.padding(toLength: 22, withPad: " ", startingAt: 0) + "\(value)" }
            .joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        String(format: "%.3f", value)
    }
}

/// Scenario files: checked offline with the firmware's parser, sent without comments, and errors
/// reported at the file's own lines and columns.
enum ScenarioFiles {
    /// A scenario's steps (comments, blank lines, `expect` and `host` lines removed: a frame holds ~1 KB)
    /// and, for each line of the steps, the line of the file it came from.
    struct Steps: Sendable {
        var text: String
        var fileLines: [Int]
        var source: String
    }

    /// Strips comments and blank lines, remembering where each kept line was.
    static func steps(of text: String) -> Steps {
        var kept: [String] = []
        var lines: [Int] = []
        for (index, line) in ScenarioParser.lines(of: text).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), !ScenarioScript.isHostSideLine(line) else { continue }
            kept.append(trimmed)
            lines.append(index + 1)
        }
        return Steps(text: kept.joined(separator: "\n") + "\n", fileLines: lines, source: text)
    }

    /// The largest scenario file read: 128 steps and as many comment lines, each of at most 200 bytes,
    /// fit in far less.
    static let maxFileBytes = 256 * 1024

    /// Reads `file` (`-` is stdin) through the scenario's bounds, checked line by line while reading: a
    /// line over ``ScenarioParser/maxLineBytes``, a step over ``ScenarioParser/maxSteps`` or a file over
    /// ``maxFileBytes`` stops the reading there with the line's number.
    static func read(_ file: String) throws(CLIFailure) -> String {
        var steps = 0
        return try Failures.readText(file, what: "scenario file", maxBytes: maxFileBytes) { number, line throws(CLIFailure) in
            let name = file == "-" ? "stdin" : file
            let content = line.last == 13 ? line.dropLast() : line
            // No text holds a NUL: a binary file (a recording given for a scenario) is said to be one, not
            // reported by whichever of its "lines" first runs too long.
            if let nul = content.firstIndex(of: 0) {
                throw CLIFailure(
                    status: .failure,
                    message: "\(name):\(number):\(nul - content.startIndex + 1): a NUL byte: not a scenario (a binary file, "
                        + "such as a recording?); not read further")
            }
            guard content.count <= ScenarioParser.maxLineBytes else {
                throw CLIFailure(
                    status: .failure,
                    message: "\(name):\(number): line too long (at most \(ScenarioParser.maxLineBytes) bytes); not read further")
            }
            let code = content.prefix { $0 != UInt8(ascii: "#") }
            let words = code.split { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard let first = words.first, !first.elementsEqual("seed".utf8), !first.elementsEqual("expect".utf8),
                !first.elementsEqual("host".utf8)
            else { return }
            steps += 1
            guard steps <= ScenarioParser.maxSteps else {
                throw CLIFailure(
                    status: .failure, message: "\(name):\(number): too many steps (at most \(ScenarioParser.maxSteps)); not read further")
            }
        }
    }

    /// Reads and checks `file` (`-` is stdin) offline; throws the located error.
    static func load(_ file: String) throws -> Steps {
        let text = try read(file)
        do {
            _ = try ScenarioScript(text)  // the steps (the firmware's parser) and the expect lines
        } catch {
            throw failure(error, file: file, text: text)
        }
        return steps(of: text)
    }

    /// Plays checked steps; a device's parse error (a device with other limits) is mapped to the file's line.
    static func play(_ steps: Steps, file: String, on session: DeviceSession) async throws -> RunScenarioResponse {
        let result: Result<RunScenarioResponse, RPCError>
        do {
            result = .success(try await session.runScenario(steps.text))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let response):
            return response
        case .failure(let error):
            if error.code == .invalidArgument, let located = relocated(error, steps: steps, file: file) { throw located }
            if error.code == .resourceExhausted, error.cause != nil {
                // The request did not fit one frame (the client refused it before sending).
                throw CLIFailure(
                    status: .failure,
                    message: "\(file): its steps are \(steps.text.utf8.count) bytes of text, more than one RunScenario "
                        + "takes on this device (\(session.info.capabilities.maxFrameBytes)-byte frames)",
                    // Only demo sends pieces: `test --port` needs one piece for its expectations.
                    hint: "split it into files of fewer steps, or play it with `camctl demo --port PORT --scenario \(file)`, "
                        + "which sends it in pieces (`camctl test \(file)` checks its expectations in virtual time)")
            }
            throw error
        }
    }

    /// A device's `line N: reason` answer as the file's FILE:LINE: reason.
    static func relocated(_ error: RPCError, steps: Steps, file: String) -> CLIFailure? {
        guard let range = error.message.range(of: #"line [0-9]+: "#, options: .regularExpression),
            let line = Int(error.message[range].dropFirst(5).dropLast(2)), line >= 1, line <= steps.fileLines.count
        else { return nil }
        let reason = String(error.message[range.upperBound...])
        return CLIFailure(status: .failure, message: "\(file):\(steps.fileLines[line - 1]): \(reason) (the device refused the scenario)")
    }

    /// The word at `column` (1-based) of `line` of `text`, when there is one.
    static func token(_ error: ScenarioError, in text: String) -> String? {
        let lines = ScenarioParser.lines(of: text)
        guard error.line >= 1, error.line <= lines.count, error.column >= 1 else { return nil }
        let bytes = Array(lines[error.line - 1].utf8)
        guard error.column <= bytes.count else { return nil }
        let word = bytes[(error.column - 1)...].prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != 13 }
        return word.isEmpty ? nil : String(decoding: word, as: UTF8.self)
    }

    /// `FILE:LINE:COLUMN: reason, found 'token'` with the line and a caret under the column.
    static func failure(_ error: ScenarioError, file: String, text: String) -> CLIFailure {
        let found = token(error, in: text)
        var message = "\(file):\(error.line):\(max(error.column, 1)): \(error.reason)"
        if let found { message += ", found '\(StandardStreams.visible(found))'" }
        var hint: String?
        if error.reason == "unknown step", let found {
            let near = NearMatch.best(for: found, among: ScenarioParser.stepNames)
            hint =
                (near.map { "did you mean '\($0)'? " } ?? "")
                + "steps: \(ScenarioParser.stepNames.joined(separator: ", ")) (docs/SIMULATOR.md)"
        }
        let lines = ScenarioParser.lines(of: text)
        if error.line >= 1, error.line <= lines.count, error.column >= 1 {
            // The line as the terminal shows it (its control characters escaped), and the caret under the
            // column's character: a space for each character before it, a tab for a tab.
            let line = lines[error.line - 1]
            let before = StandardStreams.visible(String(decoding: Array(line.utf8).prefix(error.column - 1), as: UTF8.self))
            let padding = String(before.map { $0 == "\t" ? "\t" : " " })
            message += "\n    \(StandardStreams.visible(line))\n    \(padding)^"
        }
        return CLIFailure(status: .failure, message: message, hint: hint)
    }

    /// The error as a JSON object, for `scenario --check --json`.
    static func json(_ error: ScenarioError, file: String, text: String) -> JSONValue {
        var members = [
            JSONMember("file", .string(file)), JSONMember("ok", .bool(false)), JSONMember("line", .integer(error.line)),
            JSONMember("column", .integer(error.column)), JSONMember("reason", .string(error.reason)),
        ]
        if let found = token(error, in: text) { members.append(JSONMember("token", .string(found))) }
        return .object(members)
    }
}
