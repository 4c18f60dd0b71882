import CameraControlConformance
import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The conformance suite (docs/CONFORMANCE.md) against `camctl-sim`: every case for the tree's protocol passes,
/// every `--break` fails exactly its cases, the CLI's reports are valid, and `--strict` catches a broken host.
@Suite(.serialized)
struct ConformanceTests {
    /// The cases a run against this tree's simulator executes (the rest skip: decisions not implemented yet,
    /// or a person needed).
    static func runnable(_ cases: [ConformanceCase]) -> [ConformanceCase] {
        let caps = Capabilities(hasForceSensor: true, isSimulator: true)
        return cases.filter {
            ConformanceSuite.skipReason($0, capabilities: caps, decisions: ConformanceSuite.implementedDecisions, interactive: false) == nil
        }
    }

    /// One case's outcome as `camctl conformance --json` printed it.
    struct Outcome {
        /// The case's name.
        var name: String
        /// `PASS`, `FAIL` or `SKIP`.
        var label: String
        /// The JSON line (a failure's message, bytes seen and expected).
        var line: String
    }

    /// Runs `cases` with `camctl conformance --sim --json` against a fresh `camctl-sim` started with `arguments`,
    /// in processes of their own: the cases wait on a real-time line, and this test process's cooperative
    /// threads are shared with every other test of the parallel step (one held by a long computation would
    /// stall a case and fail it falsely). Killed after five minutes: a hang fails the test, never the suite.
    static func run(_ cases: [ConformanceCase], simulatorArguments arguments: [String] = []) async throws -> [Outcome] {
        let sim = try BuiltProducts.executable("camctl-sim")
        var argv = ["conformance", "--sim", "--sim-path", sim, "--json"]
        for argument in arguments { argv += ["--sim-arg", argument] }
        if cases.count != ConformanceSuite.cases.count {
            for c in cases { argv += ["--case", c.name] }
        }
        let run = try await runTool("camctl", argv, timeout: .seconds(300))
        var outcomes: [Outcome] = []
        for line in run.standardOutput.split(separator: "\n").map(String.init) {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let name = object["case"] as? String, let label = object["result"] as? String
            else {
                Issue.record("camctl conformance printed a line that is not a case's JSON object: \(line)")
                continue
            }
            outcomes.append(Outcome(name: name, label: label, line: line))
        }
        #expect(outcomes.count == cases.count, "\(outcomes.count) results for \(cases.count) cases; stderr: \(run.standardError)")
        #expect(run.status == (outcomes.contains { $0.label == "FAIL" } ? 1 : 0), "exit \(run.status): \(run.standardError)")
        return outcomes
    }

    static func failed(_ results: [Outcome]) -> Set<String> {
        Set(results.filter { $0.label == "FAIL" }.map(\.name))
    }

    @Test("every case the tree implements passes against camctl-sim, and at least 40 run")
    func allCasesPass() async throws {
        let results = try await Self.run(ConformanceSuite.cases)
        for result in results where result.label == "FAIL" {
            Issue.record("\(result.line)")
        }
        let passed = results.filter { $0.label == "PASS" }.count
        #expect(passed >= 40, "only \(passed) cases passed")
        #expect(ConformanceSuite.cases.count >= 40)
        #expect(Set(ConformanceSuite.cases.map(\.name)).count == ConformanceSuite.cases.count, "case names repeat")
    }

    /// The cases whose waits and sessions follow the line's speed (docs/CONFORMANCE.md, "Line speeds"), the
    /// two that need the device to forget a cancelled stream's queued batches, and the one a faster line skips
    /// (`heartbeat-after-long-frame`): at 9600 baud each failed before (a fast line's waits, a session the
    /// device rightly ended, a late answer taken for a handshake's, the batches sent after the `CANCEL`, the
    /// heartbeats queued behind a long frame). `long-garbage-then-request` (17 s at this speed) is left out.
    @Test("on a 9600-baud line the cases that time the line pass against camctl-sim")
    func slowLineCasesPass() async throws {
        let names: Set = [
            "resync-after-garbage", "over-max-refused", "large-unary-max-frame", "server-stream-in-order",
            "raw-samples-delta", "cancel-after-begin", "cancel-after-first-response", "heartbeat-after-long-frame",
        ]
        let cases = ConformanceSuite.cases.filter { names.contains($0.name) }
        #expect(cases.count == names.count)
        let results = try await Self.run(cases, simulatorArguments: ["--baud", "9600"])
        for result in results where result.label != "PASS" {
            Issue.record("\(result.line)")
        }
    }

    /// The breakers camctl-sim lists, with the cases each must fail and the line speed those cases need to see
    /// it ("(at --baud N)" after the cases; nil for any line).
    static func breakers() async throws -> [(name: String, cases: Set<String>, baud: Int?)] {
        let run = try await runTool("camctl-sim", ["--list-breaks"])
        let text = run.standardOutput
        let lines = text.split(separator: "\n").map(String.init)
        var result: [(String, Set<String>, Int?)] = []
        for (rule, caught) in zip(
            lines.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), lines.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        ) {
            let name = String(rule.split(separator: " ")[0])
            let list = caught.components(separatedBy: "caught by:").last!.components(separatedBy: " (at --baud ")
            let cases = list[0].split(separator: " ").map(String.init)
            let baud = list.count > 1 ? Int(list[1].dropLast()) : nil
            #expect(list.count == 1 || baud != nil, "--list-breaks: \(caught)")
            result.append((name, Set(cases), baud))
        }
        return result
    }

    /// The cases no breaker fails, each with its reason (docs/CONFORMANCE.md, "Cases without a breaker").
    static let exemptFromBreakers: [String: String] = [
        "input-interactive": "needs a person pressing the device's inputs (--interactive); it cannot run against camctl-sim unattended",
        "stream-end": "always skipped: no v1 method ends a stream by itself (decision S4), so there is nothing to break",
    ]

    @Test("every case is failed by some camctl-sim --break, except the documented exemptions")
    func everyCaseHasABreaker() async throws {
        let breakers = try await Self.breakers()
        let covered = breakers.reduce(into: Set<String>()) { $0.formUnion($1.cases) }
        let all = Set(ConformanceSuite.cases.map(\.name))
        let exempt = Set(Self.exemptFromBreakers.keys)
        #expect(exempt.isSubset(of: all), "exemptions name unknown cases: \(exempt.subtracting(all).sorted())")
        let uncovered = all.subtracting(covered).subtracting(exempt)
        #expect(uncovered.isEmpty, "no --break fails \(uncovered.sorted()): add a breaker, or an exemption with its reason")
        // An exemption is only for a case that cannot run against the simulator; one that can must be broken.
        let runnable = Set(Self.runnable(ConformanceSuite.cases).map(\.name))
        #expect(exempt.isDisjoint(with: runnable), "exempt but runnable: \(exempt.intersection(runnable).sorted())")
        #expect(exempt.isDisjoint(with: covered), "exempt but broken by a breaker: \(exempt.intersection(covered).sorted())")
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/CONFORMANCE.md")
        let doc = try String(contentsOf: docs, encoding: .utf8)
        let section =
            doc.components(separatedBy: "### Cases without a breaker").dropFirst().first?.components(separatedBy: "\n#").first ?? ""
        for name in exempt.sorted() {
            #expect(section.contains("`\(name)`"), "docs/CONFORMANCE.md's \"Cases without a breaker\" does not give \(name)'s reason")
        }
        // The breaker table lists each breaker with exactly the cases camctl-sim names.
        for (name, cases, _) in breakers {
            let row = doc.split(separator: "\n").first { $0.hasPrefix("| `\(name)` |") }
            let named = row.map { line in
                let column = line.split(separator: "|").last.map(String.init) ?? ""
                let before = column.components(separatedBy: "(").first ?? ""
                return Set(before.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
            }
            #expect(
                named == cases, "docs/CONFORMANCE.md's row for --break \(name) lists \(named?.sorted() ?? []), camctl-sim \(cases.sorted())"
            )
        }
        let listed = section.components(separatedBy: "- `").dropFirst().compactMap { $0.split(separator: "`").first.map(String.init) }
        #expect(Set(listed) == exempt, "docs/CONFORMANCE.md exempts \(listed.sorted()), the test \(exempt.sorted())")
    }

    @Test("each camctl-sim --break fails exactly its cases, and every other case passes")
    func everyBreakIsCaught() async throws {
        let breakers = try await Self.breakers()
        #expect(breakers.count >= 30)
        let all = ConformanceSuite.cases
        let runnable = Set(Self.runnable(all).map(\.name))
        for (name, cases, _) in breakers {
            #expect(cases.isSubset(of: Set(all.map(\.name))), "\(name) names unknown cases: \(cases.subtracting(all.map(\.name)))")
        }
        // Slow cases (seconds each) run only against the breakers that target them. A breaker that only a slow
        // line shows runs its own cases on that line (the others pass there: slowLineCasesPass).
        let jobs = breakers.map { breaker in
            (
                breaker.name, breaker.cases, breaker.baud,
                all.filter { breaker.baud == nil ? !$0.slow || breaker.cases.contains($0.name) : breaker.cases.contains($0.name) }
            )
        }
        var outcomes: [(String, Set<String>, Set<String>, Set<String>, [Outcome])] = []
        // Eight simulators at a time: the cases mostly wait on the line, and a run (camctl-sim and the
        // conformance client) takes under a second of CPU in its ~17 s, so eight take about 0.4 of one core.
        // Passed with the machine's other core kept busy (the test command's fuzz job beside this step).
        try await withThrowingTaskGroup(of: (String, Set<String>, Set<String>, Set<String>, [Outcome]).self) { group in
            var pending = jobs[...]
            func startNext() {
                guard let (name, expected, baud, cases) = pending.popFirst() else { return }
                group.addTask {
                    let line = baud.map { ["--baud", String($0)] } ?? []
                    let results = try await Self.run(cases, simulatorArguments: ["--break", name] + line)
                    let ran = Set(results.filter { $0.label != "SKIP" }.map(\.name))
                    return (name, expected, ran, Self.failed(results), results)
                }
            }
            for _ in 0..<8 { startNext() }
            for try await outcome in group {
                outcomes.append(outcome)
                startNext()
            }
        }
        // No second run: a breaker is judged on its one run. The suite itself runs a case again only when the
        // probe proves one side stalled (ConformanceSuite.hostWasSilent), and a breaker fails that second run too.
        for (name, expected, ran, failed, results) in outcomes {
            let mustFail = expected.intersection(ran)
            if mustFail.isEmpty {
                // Only breakers whose every case checks a decision this tree does not implement yet.
                let gated = expected.allSatisfy { ConformanceSuite.named($0)?.decision != nil && !runnable.contains($0) }
                #expect(gated, "--break \(name): none of its cases ran")
                continue
            }
            #expect(failed == mustFail, "--break \(name): failed \(failed.sorted()), expected \(mustFail.sorted())")
            // What an unexpected failure saw, so that a false failure can be told from a real one.
            for result in results where failed.subtracting(mustFail).contains(result.name) {
                Issue.record("--break \(name), unexpected: \(result.line)")
            }
        }
    }

    /// Runs `camctl conformance ARGS` (killed after two minutes: a hung run fails the test, never the suite)
    /// and returns its exit status and stdout.
    static func camctl(_ arguments: [String], stdin: String? = nil) async throws -> (status: Int32, output: String) {
        var input: FileHandle?
        if let stdin {
            let pipe = Pipe()
            pipe.fileHandleForWriting.write(Data(stdin.utf8))  // a few bytes: the pipe holds them
            try pipe.fileHandleForWriting.close()
            input = pipe.fileHandleForReading
        }
        let run = try await runTool("camctl", ["conformance"] + arguments, timeout: .seconds(120), standardInput: input)
        return (run.status, run.standardOutput)
    }

    /// Parses `file` with /usr/bin/python3's XML parser; returns its report (`tests failures skipped`).
    static func validateXML(_ file: String) async throws -> String {
        let script = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            cases = root.findall('./testsuite/testcase')
            print(len(cases), len(root.findall('./testsuite/testcase/failure')), len(root.findall('./testsuite/testcase/skipped')))
            """
        let run = try await runTool("/usr/bin/python3", ["-c", script, file])
        #expect(run.status == 0, "python3 could not parse \(file) as XML: \(run.standardError)")
        return run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("camctl conformance --sim: the human report, --junit XML that parses, exit 1 on a failure")
    func cliReportsAndJUnit() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sim = try BuiltProducts.executable("camctl-sim")
        let good = folder + "/good.xml"
        let (status, output) = try await Self.camctl([
            "--sim", "--sim-path", sim, "--case", "handshake", "--case", "empty-unary", "--case", "input-interactive", "--junit", good,
        ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("PASS  handshake") && output.contains("SKIP  input-interactive"), "\(output)")
        #expect(try await Self.validateXML(good) == "3 0 1")

        // docs/CONFORMANCE.md's example run, which must show what the command prints (but the pty's name).
        let bad = folder + "/bad.xml"
        let (failStatus, failOutput) = try await Self.camctl([
            "--sim", "--sim-path", sim, "--sim-arg=--break=no-ack", "--case", "handshake", "--case", "acks-reliable-requests",
            "--case", "input-interactive", "--junit", bad,
        ])
        #expect(failStatus == 1, "\(failOutput)")
        #expect(failOutput.contains("FAIL  acks-reliable-requests") && failOutput.contains("seen "), "\(failOutput)")
        #expect(try await Self.validateXML(bad) == "3 1 1")
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/CONFORMANCE.md")
        let command =
            "$ camctl conformance --sim --sim-arg=--break=no-ack --case handshake --case acks-reliable-requests --case input-interactive\n"
        let example = try String(contentsOf: docs, encoding: .utf8).components(separatedBy: command).dropFirst().first?
            .components(separatedBy: "```").first
        func withoutPTY(_ text: String) -> String {
            text.replacing(/against \/dev\/pts\/[0-9]+/, with: "against PTY")
        }
        #expect(
            example.map(withoutPTY) == withoutPTY(failOutput),
            "docs/CONFORMANCE.md's example, then the output:\n\(example ?? "(not found)")\n\(failOutput)")
    }

    @Test("a device gone in the middle of a run: one failure says so, the cases after it are not run, exit 1")
    func deviceGoneMidRun() async throws {
        let simulator = try SimulatorProcess(seed: 77)
        defer { simulator.kill() }
        let run = Process()
        run.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
        run.arguments = ["conformance", simulator.ptyPath]
        run.standardInput = FileHandle.nullDevice
        let out = Pipe()
        run.standardOutput = out
        run.standardError = FileHandle.nullDevice
        try run.run()
        defer { if run.isRunning { signalProcess(run.processIdentifier, SIGKILL) } }
        let output = PipeCollector(out.fileHandleForReading)
        #expect(await eventually(within: .seconds(60)) { output.text.contains("PASS  ") }, "\(output.text)")
        simulator.kill()
        #expect(await eventually(within: .seconds(120)) { !run.isRunning }, "still running: \(output.text.suffix(400))")
        run.waitUntilExit()
        _ = await eventually(within: .seconds(5)) { output.isEnded }
        #expect(run.terminationStatus == 1, "\(output.text.suffix(800))")
        #expect(output.text.contains("the port closed before this case: the device went away"), "\(output.text.suffix(800))")
        #expect(output.text.contains("not run: the port closed during an earlier case"), "\(output.text.suffix(800))")
    }

    @Test("camctl conformance --json: one object per case; --list names every case with its section")
    func cliJSONAndList() async throws {
        let sim = try BuiltProducts.executable("camctl-sim")
        let (status, output) = try await Self.camctl(["--sim", "--sim-path", sim, "--json", "--case", "handshake", "--case", "stream-end"])
        #expect(status == 0)
        let objects = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.map { $0["case"] as? String } == ["handshake", "stream-end"])
        #expect(objects.map { $0["result"] as? String } == ["PASS", "SKIP"])
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/CONFORMANCE.md")
        let doc = try String(contentsOf: docs, encoding: .utf8)
        for c in ConformanceSuite.cases {
            #expect(doc.contains("| `\(c.name)` | \(c.section) |"), "docs/CONFORMANCE.md does not list \(c.name) with \(c.section)")
        }
        let (_, list) = try await Self.camctl(["--list"])
        for c in ConformanceSuite.cases {
            #expect(list.contains(c.name) && list.contains(c.section), "--list lacks \(c.name)")
        }
    }

    @Test("--interactive prompts a person step by step (scripted stdin)")
    func interactivePrompts() async throws {
        let sim = try BuiltProducts.executable("camctl-sim")
        // The person answers the first prompt with Enter and nothing happens on the device; a test cannot
        // press volume up, so the run ends at that first step... unless skipped: "s" skips the case.
        let (status, output) = try await Self.camctl(
            ["--sim", "--sim-path", sim, "--interactive", "--case", "input-interactive"], stdin: "s\n")
        #expect(status == 0, "\(output)")
        #expect(output.contains(">>> press volume up now"), "\(output)")
        #expect(output.contains("SKIP  input-interactive") && output.contains("the person skipped"), "\(output)")
    }

    @Test("camctl-sim --strict catches a broken host: counts and first offending bytes of each violation")
    func strictCatchesABrokenHost() async throws {
        let simulator = try await StrictSimulator()
        defer { try? FileManager.default.removeItem(atPath: simulator.folder) }

        // A broken host, as raw bytes.
        let transport = try PTYTransport(path: simulator.link)
        let probe = Probe(transport: transport)
        await probe.start()
        let (early, _) = try await probe.call(.devicePing, [])  // a request before the handshake
        try await probe.handshake()
        let stream = try await probe.request(.inputStreamInputEvents)
        let (_, reused) = try await probe.request(.devicePing, [], callID: stream.callID)  // a call id still live
        // The same packet again (its number and bytes): a copy, which the device drops as a duplicate (§6),
        // as it does a reliable request's retransmission; not a second reuse (the count below stays 1).
        try await probe.sendRaw(reused)
        let large = Probe.frame(body: [0x08, 0x00, 0x01, 0x00] + [UInt8](repeating: 0x41, count: 1100))
        try await probe.sendRaw(large)  // a frame over the announced 1024 bytes
        await probe.setAcknowledges(false)  // the next reliable event is never acknowledged
        _ = try await probe.call(.simulatorRunScenario, RunScenarioRequest(scenario: "remote-click\n").serializedBytes())
        try await Task.sleep(for: .milliseconds(400))
        // Silent for 135 ms (2.7 heartbeat intervals: late, within the 4-interval dead timeout with 65 ms to
        // spare for a late wake-up), back, and silent again: the first late heartbeat of a session is reported
        // and not counted, the second is a violation.
        await probe.setHeartbeats(false)
        try await Task.sleep(for: .milliseconds(135))
        await probe.setHeartbeats(true)
        try await Task.sleep(for: .milliseconds(100))
        await probe.setHeartbeats(false)
        try await Task.sleep(for: .milliseconds(135))
        let (back, _) = try await probe.call(.devicePing, [])
        await probe.stop()
        transport.close()
        let report = try simulator.report()
        // Five kinds of violation; the reliable packets this host never ACKs are one or more (v1.1: the
        // device's replies are reliable too), so the total is at least five.
        let total = report.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "strict: "), line.hasSuffix(" violations") else { return nil }
            return Int(line[range.upperBound...].split(separator: " ").first ?? "")
        }.first
        #expect((total ?? 0) >= 5, "\(report)")
        for (rule, bytes) in [
            ("request before the handshake", early), ("call id reused while live", reused),
            ("frame over the announced max_frame_bytes", large), ("heartbeats missing", back),
        ] {
            let first = bytes.prefix(64).map { String(format: "%02x", $0) }.joined(separator: " ")
            #expect(report.contains("1 x \(rule)") && report.contains(first), "\(rule): \(report)")
        }
        #expect(report.contains("x reliable packet never acknowledged"), "\(report)")
        #expect(report.contains("1 late heartbeat, not counted"), "\(report)")
        // How long the host was silent before the offending bytes: the second late silence of the session.
        #expect(report.contains("ms before them (late heartbeat 2 of its session)"), "\(report)")
    }

    @Test("camctl-sim --strict reports nothing for the project's own host")
    func strictPassesTheRealHost() async throws {
        let simulator = try await StrictSimulator()
        defer { try? FileManager.default.removeItem(atPath: simulator.folder) }
        let ping = try await runTool("camctl", ["ping", simulator.link, "--count", "20"], timeout: .seconds(60))
        #expect(ping.status == 0, "\(ping.standardError)")
        let report = try simulator.report()
        #expect(report.contains("strict: 0 violations"), "\(report)")
    }
}
