import CameraControlConformance
import CameraControlSerialTransport
import CameraControlTools
import CameraControlTransport
import Foundation

/// `camctl conformance PORT`: runs the conformance suite (docs/CONFORMANCE.md) against a device through the
/// public protocol only, and reports every case: PASS, FAIL (bytes seen against bytes expected) or SKIP.
enum Conformance {
    static let command = Command(
        name: "conformance", summary: "certify a device against docs/PROTOCOL.md (docs/CONFORMANCE.md)",
        usage:
            "PORT|--sim [--sim-path PATH] [--sim-arg ARG]... [--list [--verbose]] [--case NAME]... [--decision ID]... "
            + "[--junit FILE] [--json] [--interactive] [--quiet]",
        details: """
              --sim             start camctl-sim and test it (--sim-path PATH for another binary,
                                --sim-arg ARG passes an argument to it, e.g. --sim-arg --break=no-ack)
              --list            list the cases (name, spec section, requirement) and exit;
                                with --verbose, what each one checks
              --case NAME       run only this case (repeatable)
              --decision ID     also run the cases of protocol decision ID (repeatable; `all` for every one)
              --junit FILE      write JUnit XML to FILE
              --json            print one JSON object per case instead of the report
              --interactive     prompt a person at the device for the cases that need one
              --quiet           only the summary line (and failures)
            """,
        examples: [
            "conformance /dev/ttyACM0 --junit conformance.xml", "conformance --sim", "conformance --sim --list --verbose",
            "conformance /dev/ttyACM0 --interactive",
        ],
        // Its own: a failed case is 1, and 3 says the port was silent from the first byte.
        exitStatus: """
            exit status: 0 when no case failed, 1 when one did (or the port would not open), 2 on bad arguments,
            3 when nothing answered on the port (the first two cases heard not one byte; the others are not run),
            130 or 143 interrupted (Ctrl-C, SIGTERM)
            """,
        run: run)

    static func run(_ argv: [String]) async throws {
        var rest: [String] = []
        var only: [String] = []
        var decisions = ConformanceSuite.implementedDecisions
        var simArgs: [String] = []
        var index = 0
        while index < argv.count {
            let arg = argv[index]
            let repeatable = ["--case", "--decision", "--sim-arg"]
            if repeatable.contains(arg) || repeatable.contains(where: { arg.hasPrefix($0 + "=") }) {
                let name = arg.contains("=") ? String(arg[..<arg.firstIndex(of: "=")!]) : arg
                let value: String
                if let eq = arg.firstIndex(of: "=") {
                    value = String(arg[arg.index(after: eq)...])
                } else {
                    guard index + 1 < argv.count else { throw Arguments.Failure(description: "option \(arg) needs a value") }
                    index += 1
                    value = argv[index]
                }
                switch name {
                case "--case": only.append(value)
                case "--decision":
                    guard value == "all" || ConformanceSuite.allDecisions.contains(value) else {
                        throw Arguments.Failure(
                            description:
                                "no decision '\(value)' (decisions: \(ConformanceSuite.allDecisions.sorted().joined(separator: ", ")), all)"
                        )
                    }
                    decisions.formUnion(value == "all" ? ConformanceSuite.allDecisions : [value])
                default: simArgs.append(value)
                }
            } else {
                rest.append(arg)
            }
            index += 1
        }
        let args = try Arguments(
            rest, valued: ["junit", "sim-path"], switches: ["sim", "list", "verbose", "json", "interactive", "quiet", "help"])
        if args.flag("help") {
            print(command.help, terminator: "")
            return
        }
        let all = ConformanceSuite.cases
        if args.flag("list") {
            for c in all {
                var notes = [c.section]
                if c.requirement != .none { notes.append("needs \(c.requirement)") }
                if let d = c.decision { notes.append("decision \(d)") }
                if let d = c.supersededBy { notes.append("superseded by \(d)") }
                print("\(c.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(notes.joined(separator: ", "))")
                if args.flag("verbose") { print("    \(c.summary)") }
            }
            return
        }
        var selected = all
        if !only.isEmpty {
            for name in only where ConformanceSuite.named(name) == nil {
                throw Arguments.Failure(description: "no case named '\(name)' (see --list)")
            }
            selected = all.filter { only.contains($0.name) }
        }

        var simulator: SimulatorProcess?
        let port: String
        guard args.positional.count <= (args.flag("sim") ? 0 : 1) else {
            throw Arguments.Failure(description: args.flag("sim") ? "--sim takes no PORT" : "conformance takes one PORT")
        }
        if args.flag("sim") {
            let path = args.value("sim-path") ?? Demo.siblingExecutable("camctl-sim")
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw Arguments.Failure(description: "camctl-sim not found at \(path) (run `swift build`, or pass --sim-path PATH)")
            }
            simulator = try SimulatorProcess(path: path, seed: 1, extraArguments: simArgs)
            port = simulator!.ptyPath
        } else {
            port = try args.required(0, "PORT (or --sim)")
        }
        defer { simulator?.terminate() }

        let transport = try Transports.open(path: port)
        defer { transport.close() }
        let json = args.flag("json")
        let quiet = args.flag("quiet")
        if !json && !quiet { print("conformance: \(selected.count) cases against \(port)") }
        let prompter: (any ConformancePrompter)? = args.flag("interactive") ? StdinPrompter() : nil
        let results = await ConformanceSuite.run(selected, over: transport, decisions: decisions, prompter: prompter) { result in
            if json {
                print(ConformanceReport.json(result))
            } else if !quiet || result.outcome.label == "FAIL" {
                print(ConformanceReport.human(result))
            }
        }
        if let file = args.value("junit") {
            do {
                try BoundedFiles.write(Array(ConformanceReport.junit(results, suite: "camctl conformance \(port)").utf8), to: file)
            } catch {
                throw CLIFailure(status: .failure, message: error.description)
            }
        }
        let summary = ConformanceReport.summary(results)
        if json {
            StandardStreams.error(summary)
        } else {
            print(summary)
        }
        simulator?.terminate()
        transport.close()
        if results.contains(where: { if case .fail(let failure) = $0.outcome { failure.code == .silentDevice } else { false } }) {
            throw CLIFailure(
                status: .noAnswer, message: "nothing answered on \(port): not one byte came back; the other cases were not run",
                hint: Failures.noAnswerHint)
        }
        if results.contains(where: { $0.outcome.label == "FAIL" }) { exit(1) }
    }
}

/// Prompts on stdout and waits for a line on stdin (`s` skips).
struct StdinPrompter: ConformancePrompter {
    func ask(_ instruction: String) async -> Bool {
        StandardStreams.output(">>> \(instruction), then press Enter (s to skip): ")
        guard let line = readLine() else { return false }
        return line.trimmingCharacters(in: .whitespaces).lowercased() != "s"
    }
}
