import CameraControlDevice
import CameraControlEmbedded
import CameraControlRPC
import CameraControlTools
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

@testable import camctl

/// camctl's argument parser and command framework, in-process (no device).
@Suite("camctl arguments")
struct CamctlArgumentsTests {
    private func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func optionsSwitchesAndPositionals() throws {
        let args = try Arguments(
            ["PORT", "--count", "3", "--json", "-o", "out.pcapng", "--seconds=5", "--", "--not-an-option"],
            valued: ["count", "o", "seconds"], switches: ["json"], positionals: ["PORT", "REST"])
        #expect(args.positional == ["PORT", "--not-an-option"])
        #expect(try args.integer("count", default: 0) == 3)
        #expect(try args.integer("seconds", default: 0) == 5)
        #expect(try args.integer("missing", default: 9) == 9)
        #expect(args.value("o") == "out.pcapng")
        #expect(args.flag("json"))
        #expect(!args.flag("probe"))
        #expect(args.optional(5) == nil)
        // `-` (stdin) and negative numbers are positionals, not options.
        #expect(try Arguments(["-", "-5", "-0.5"], valued: [], switches: []).positional == ["-", "-5", "-0.5"])
    }

    @Test func unknownOptionsGetANearMatch() {
        let message = failure { _ = try Arguments(["--josn"], valued: ["count"], switches: ["json"]) }
        #expect(message == "unknown option --josn; did you mean --json?")
        #expect(failure { _ = try Arguments(["--frobnicate"], valued: [], switches: ["json"]) } == "unknown option --frobnicate")
        #expect(failure { _ = try Arguments(["-x"], valued: ["o"], switches: []) } == "unknown option -x")
    }

    @Test func extraArgumentsAndBadValuesAreRefused() {
        #expect(
            failure { _ = try Arguments(["a", "b"], valued: [], switches: [], positionals: ["PORT"]) }
                == "unexpected argument 'b' (this command takes PORT)")
        #expect(
            failure { _ = try Arguments(["a"], valued: [], switches: [], positionals: []) }
                == "unexpected argument 'a' (this command takes no arguments)")
        #expect(failure { _ = try Arguments(["a", "b", "c"], valued: [], switches: [], positionals: ["FILE"], variadic: true) } == nil)
        #expect(failure { _ = try Arguments(["--count"], valued: ["count"], switches: []) } == "option --count needs a value")
        #expect(failure { _ = try Arguments(["--json=1"], valued: [], switches: ["json"]) } == "option --json takes no value")
        #expect(
            failure { _ = try Arguments(["--count", "x"], valued: ["count"], switches: []).integer("count", default: 0) }
                == "--count wants an integer, not 'x'")
        #expect(failure { _ = try Arguments([], valued: [], switches: []).required(0, "PORT") } == "missing PORT")
    }

    /// `test --replay` refuses what it would ignore (`--quiet` printed every line regardless), and its usage
    /// names what it takes.
    @Test func testReplayRefusesWhatItIgnores() async {
        for (argv, says) in [
            (["--replay", "x.pcapng", "--quiet"], "--replay takes no --quiet"),
            (["--replay", "x.pcapng", "--virtual"], "--replay takes no --virtual"),
            (["--replay", "x.pcapng", "--settle-ms", "5"], "--replay takes no --settle-ms"),
        ] {
            do {
                try await TestCommand.run(argv)
                Issue.record("\(argv) ran")
            } catch {
                #expect("\(error)" == says, "\(argv)")
            }
        }
        #expect(TestCommand.command.usage.hasSuffix("--replay FILE.pcapng [--seed N] [--events] [--junit FILE]"))
    }

    /// `export` refuses to write its output over its input, under that name or another (a symlink): the
    /// recording stays as it was. So do `plot`, `record` and `test`.
    @Test func exportDoesNotOverwriteItsRecording() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-export-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("s.pcapng").path
        // A recording with no frames: a section header (28 bytes) and a USER0 interface (20), little-endian.
        let bytes = Data(
            [0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0]
                + [UInt8](repeating: 0xFF, count: 8) + [28, 0, 0, 0]
                + [1, 0, 0, 0, 20, 0, 0, 0, 147, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0])
        try bytes.write(to: URL(fileURLWithPath: recording))
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: recording)
        for argv in [[recording, "--vcd", recording], [recording, "--samples", link], [link, "--vcd", directory.path + "/./s.pcapng"]] {
            do {
                try await Export.run(argv)
                Issue.record("\(argv) ran")
            } catch {
                #expect("\(error)".contains("itself: writing it would replace the recording"), "\(argv): \(error)")
            }
        }
        #expect(FileManager.default.contents(atPath: recording) == bytes)

        // So do plot (its -o over the recording), record (-o over the port or the scenario it plays) and test
        // (--junit over a scenario or the recording it replays): each refuses before it reads or opens anything.
        let scenario = directory.appendingPathComponent("one.scenario").path
        let scenarioText = Data("button volume-down hold=60ms\n".utf8)
        try scenarioText.write(to: URL(fileURLWithPath: scenario))
        let plotLink = directory.appendingPathComponent("trace.svg").path
        try FileManager.default.createSymbolicLink(atPath: plotLink, withDestinationPath: recording)
        let refusals: [(argv: [String], run: ([String]) async throws -> Void, what: String)] = [
            ([recording, "-o", plotLink], Plot.parseAndRun, "the recording"),
            ([scenario, "-o", scenario], Record.run, "the port"),
            ([directory.appendingPathComponent("no-such-port").path, "-o", scenario, "--scenario", scenario], Record.run, "the scenario"),
            ([scenario, "--junit", scenario], TestCommand.run, "the scenario"),
            (["--replay", recording, "--junit", link], TestCommand.run, "the recording"),
        ]
        for (argv, run, what) in refusals {
            do {
                try await run(argv)
                Issue.record("\(argv) ran")
            } catch {
                #expect(error is Arguments.Failure, "\(argv): \(error)")
                #expect("\(error)".contains("itself: writing it would replace \(what)"), "\(argv): \(error)")
            }
        }
        #expect(FileManager.default.contents(atPath: recording) == bytes)
        #expect(FileManager.default.contents(atPath: scenario) == scenarioText)
    }

    /// An empty PORT or FILE is named as such, not opened (`camctl info ""` tried `/dev/`, a directory).
    @Test func emptyPositionalIsAUsageError() throws {
        let args = try Arguments([""], valued: [], switches: [], positionals: ["PORT"])
        #expect(throws: Arguments.Failure.self) { try args.required(0, "PORT") }
        do {
            _ = try args.required(0, "PORT")
        } catch {
            #expect(error.description == "empty PORT")
        }
    }

    /// `describe PORT SYMBOL` checks the symbol before it opens the port: a typo is a usage error with a near
    /// match, and the device is not touched (here a port that does not exist would fail otherwise).
    @Test func describeChecksItsSymbolFirst() async throws {
        do {
            try await SchemaCommands.describe(["/dev/no-such-camctl-port", "Conifg"])
            Issue.record("describe ran")
        } catch {
            #expect(error is Arguments.Failure, "\(error)")
            #expect("\(error)".contains("no service, method or message 'Conifg'"), "\(error)")
        }
    }

    /// `shoot --camera` with none of its forms is a usage error (exit 2), before the camera or the port.
    @Test func shootNamesAnUnknownCameraAsUsage() async throws {
        do {
            try await Shoot.run(["/dev/no-such-camctl-port", "--camera", "tst"])
            Issue.record("shoot ran")
        } catch {
            #expect(error is Arguments.Failure, "\(error)")
            #expect("\(error)".contains("unknown camera 'tst'"), "\(error)")
        }
    }

    /// A binary file given for a scenario (a recording) is named as one at its first NUL, not by whichever of
    /// its "lines" first runs over 200 bytes.
    @Test func binaryFileIsNoScenario() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-binary-\(getpid()).scenario").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = Array("full-click\n".utf8) + [0x0A, 0x0D, 0x0D, 0x0A, 0x1C, 0, 0, 0] + [UInt8](repeating: 0x41, count: 300)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try ScenarioFiles.read(path)
            Issue.record("a binary file was read as a scenario")
        } catch {
            #expect(error.message == "\(path):4:2: a NUL byte: not a scenario (a binary file, such as a recording?); not read further")
        }
    }

    @Test func helpIsAskedForBeforeDoubleDash() {
        #expect(Arguments.asksForHelp(["PORT", "--help"]))
        #expect(Arguments.asksForHelp(["-h"]))
        #expect(!Arguments.asksForHelp(["--", "--help"]))
        #expect(!Arguments.asksForHelp(["PORT"]))
    }

    /// Every command is registered once, with a summary, usage and examples of itself, and its help
    /// documents the exit statuses.
    @Test func everyCommandHasHelpWithExamples() {
        let names = CamCtl.commands.map(\.name)
        #expect(Set(names).count == names.count, "duplicate command names: \(names)")
        for command in CamCtl.commands {
            #expect(!command.summary.isEmpty && !command.usage.isEmpty, "\(command.name)")
            #expect(!command.examples.isEmpty, "\(command.name) has no examples")
            for example in command.examples {
                #expect(
                    example == command.name || example.hasPrefix(command.name + " ") || example.contains("# "),
                    "\(command.name): \(example)")
            }
            #expect(command.help.contains("usage: camctl \(command.name) "))
            // One exit-status paragraph: the command's own (conformance's), or the generic one.
            #expect(command.help.components(separatedBy: "exit status:").count == 2, "\(command.name)")
            if let own = command.exitStatus {
                #expect(command.help.contains(own), "\(command.name)")
                continue
            }
            #expect(command.help.contains("exit status: 0 ok, 1 runtime failure"))
            #expect(command.help.contains("3 no device answered"))
        }
        #expect(CamCtl.usage.contains("exit status"))
    }

    @Test func dispatchStatuses() async {
        #expect(await CamCtl.run(["pign"]) == .usage)
        #expect(await CamCtl.run([]) == .usage)
        #expect(await CamCtl.run(["help", "ping"]) == .ok)
        #expect(await CamCtl.run(["help", "pign"]) == .usage)
        #expect(await CamCtl.run(["ping", "--help"]) == .ok)
        #expect(await CamCtl.run(["info"]) == .usage)
        #expect(await CamCtl.run(["info", "a", "b"]) == .usage)
        #expect(await CamCtl.run(["ports", "--frobnicate"]) == .usage)
        #expect(await CamCtl.run(["describe", "--json"]) == .ok)
        #expect(await CamCtl.run(["describe", "Confg"]) == .usage)
    }

    /// Every method of the schema is found by its full name, and by its method name alone.
    @Test func methodsAreFoundByName() throws {
        for method in MethodInfo.allV1 {
            #expect(try SchemaCommands.method(named: method.name).id == method.id)
            #expect(try SchemaCommands.method(named: method.methodName).id == method.id)
        }
        let message = failure { _ = try SchemaCommands.method(named: "Pnig") }
        #expect(message?.contains("did you mean 'DeviceService/Ping'?") == true, "\(message ?? "")")
    }

    @Test func fieldValuePairsBecomeJSON() throws {
        let haptic = try SchemaCommands.requestJSON(["pattern=detent", "intensityPercent=80"], for: PlayHapticRequest.self)
        #expect(try PlayHapticRequest(json: haptic) == PlayHapticRequest(pattern: .detent, intensityPercent: 80))
        let configure = try SchemaCommands.requestJSON(
            ["config.sampleRateHz=500", "config.thresholds.lightPressOnMn=900"], for: ConfigureRequest.self)
        let request = try ConfigureRequest(json: configure)
        #expect(request.config?.sampleRateHertz == 500)
        #expect(request.config?.thresholds?.lightPressOnMillinewtons == 900)
        let ping = try SchemaCommands.requestJSON(["payload=hi"], for: PingRequest.self)
        #expect(try PingRequest(json: ping).payload == Array("hi".utf8))
        #expect(
            try SchemaCommands.requestJSON([#"{"pattern": 2}"#], for: PlayHapticRequest.self)
                == .object([JSONMember("pattern", .number("2"))]))
        do {
            _ = try SchemaCommands.requestJSON(["patern=detent"], for: PlayHapticRequest.self)
            Issue.record("a misspelt field was accepted")
        } catch let error as ProtoJSONError {
            #expect(error.code == .unknownField)
            #expect(error.suggestion == "pattern")
        }
        // A misspelt enum value reaches the mapping, which refuses it.
        let bad = try SchemaCommands.requestJSON(["pattern=detnet"], for: PlayHapticRequest.self)
        #expect(throws: ProtoJSONError.self) { try PlayHapticRequest(json: bad) }
    }

    /// Comments and blank lines are not sent; the lines kept remember where they were in the file, so a
    /// device's `line N` becomes the file's line.
    @Test func scenarioLinesMapBackToTheFile() {
        let steps = ScenarioFiles.steps(of: "# a tour\n\nfull-click\n  # more\nbutton volume-up\n")
        #expect(steps.text == "full-click\nbutton volume-up\n")
        #expect(steps.fileLines == [3, 5])
        let error = RPCError(code: .invalidArgument, message: "line 2: unknown button")
        #expect(ScenarioFiles.relocated(error, steps: steps, file: "f.scenario")?.message.hasPrefix("f.scenario:5: unknown button") == true)
        #expect(ScenarioFiles.relocated(RPCError(code: .invalidArgument, message: "other"), steps: steps, file: "f") == nil)
    }

    /// A CRLF file is read line by line as an LF one: its `expect` lines are not sent, its lines map back, and
    /// an error shows its line and caret.
    @Test func crlfScenarioLinesMapBackToTheFile() throws {
        let steps = ScenarioFiles.steps(of: "# a tour\r\n\r\nfull-click\r\nexpect no capture\r\nbutton volume-up\r\n")
        #expect(steps.text == "full-click\nbutton volume-up\n")
        #expect(steps.fileLines == [3, 5])
        let text = "# header\r\nfull-click\r\nslide to=0.5 ovr=200ms\r\n"
        do {
            _ = try ScenarioParser.check(text)
            Issue.record("a bad scenario parsed")
        } catch {
            let failure = ScenarioFiles.failure(error, file: "x.scenario", text: text)
            #expect(failure.message.hasPrefix("x.scenario:3:14: unknown parameter for this step, found 'ovr=200ms'"), "\(failure)")
            #expect(failure.message.hasSuffix("\n    slide to=0.5 ovr=200ms\n                 ^"), "\(failure)")
        }
    }

    /// A file's control bytes quoted in an error are escaped (an ESC sequence would recolour or clear the
    /// terminal, a NUL would vanish), and the caret stays under the column, a tab under a tab.
    @Test func scenarioErrorsQuoteControlBytesEscaped() throws {
        for (text, shown, caret, found) in [
            ("full-click\u{1B}[31mred\n", "full-click\\x1B[31mred", "          ^", "\\x1B[31mred"),
            ("full-click\u{0}\n", "full-click\\x00", "          ^", "\\x00"),
            ("full-click\tforce=a\u{7F}c\n", "full-click\tforce=a\\x7Fc", "          \t       ^", "\\x7Fc"),
        ] {
            do {
                _ = try ScenarioParser.check(text)
                Issue.record("a bad scenario parsed: \(text)")
            } catch {
                let message = ScenarioFiles.failure(error, file: "x.scenario", text: text).message
                #expect(!message.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" || $0.value == 0x7F }, "\(message)")
                #expect(message.contains(", found '\(found)'"), "\(message)")
                #expect(message.hasSuffix("\n    \(shown)\n    \(caret)"), "\(message)")
            }
        }
    }

    @Test func scenarioErrorsNameFileLineColumnAndToken() throws {
        let text = "# header\nfull-click\nslide to=0.5 ovr=200ms\n"
        do {
            _ = try ScenarioParser.check(text)
            Issue.record("a bad scenario parsed")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 14)
            let failure = ScenarioFiles.failure(error, file: "x.scenario", text: text)
            #expect(failure.message.hasPrefix("x.scenario:3:14: unknown parameter for this step, found 'ovr=200ms'"), "\(failure)")
            #expect(failure.message.contains("\n    slide to=0.5 ovr=200ms\n                 ^"), "\(failure)")
        }
        do {
            _ = try ScenarioParser.check("lite-press\n")
        } catch {
            let failure = ScenarioFiles.failure(error, file: "y", text: "lite-press\n")
            #expect(failure.hint?.hasPrefix("did you mean 'light-press'?") == true)
        }
        #expect(try ScenarioParser.check("seed 3\nfull-click\n") == ScenarioParser.Summary(steps: 1, seed: 3))
        // The hint's list of steps is the parser's: each name parses as a step (or the seed line).
        for name in ScenarioParser.stepNames {
            do {
                _ = try ScenarioParser.check(name + "\n")
            } catch {
                #expect(error.reason != "unknown step", "\(name) is no step of the parser")
            }
        }
    }

    /// Failures map to their exit status, with a hint of what to do next.
    @Test func failuresSayWhatToDoNext() {
        let denied = Failures.classify(TransportError(code: .openFailed, message: "cannot open /dev/ttyACM0", errno: EACCES), path: nil)
        #expect(denied.status == .failure)
        #expect(denied.hint?.contains("dialout") == true)
        let busy = Failures.classify(TransportError(code: .inUse, message: "/dev/ttyACM0 is in use by PID 42", holderPID: 42), path: nil)
        #expect(busy.hint?.contains("process 42") == true)
        let missing = Failures.classify(TransportError(code: .notFound, message: "no such file /dev/ttyACM9"), path: nil)
        #expect(missing.hint?.contains("camctl ports") == true)
        let silent = Failures.classify(
            DeviceError(.handshakeFailed, "handshake failed", rpcError: RPCError(code: .deadlineExceeded, message: "late")))
        #expect(silent.status == .noAnswer)
        #expect(silent.hint?.contains("115200") == true)
        #expect(Failures.classify(RPCError(code: .deadlineExceeded, message: "late")).status == .noAnswer)
        #expect(Failures.classify(RPCError(code: .unimplemented, message: "no")).status == .failure)
        let usage = Failures.classify(Arguments.Failure(description: "missing PORT"), command: Commands.infoCommand)
        #expect(usage.status == .usage)
        #expect(usage.hint == "usage: camctl info PORT [--json] (`camctl help info` for more)")
        #expect(Failures.classify(ProtoJSONError(.unknownField, "x"), command: Commands.infoCommand).status == .usage)
    }
}
