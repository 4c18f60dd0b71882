/// The results of one scenario file's expectations, printed as PASS/FAIL lines or written as JUnit XML
/// (`camctl test`, docs/SIMULATOR.md "Expectations").
public struct ScenarioTestReport: Sendable {
    /// The scenario file (how the report names it).
    public var file: String
    /// Each expectation's result, in file order.
    public var results: [ExpectationResult]
    /// Wall-clock seconds the run took (JUnit's `time`).
    public var seconds: Double
    /// Why the file was not run (it could not be read or parsed), in one message; nil when it ran.
    public var loadError: String?

    /// A report.
    public init(file: String, results: [ExpectationResult], seconds: Double = 0) {
        self.file = file
        self.results = results
        self.seconds = seconds
    }

    /// The report of a file that could not be read or parsed: no expectation ran; the run goes on with the
    /// other files, and the file counts as an error (a JUnit `error`, an `ERROR` line).
    public init(file: String, loadError: String) {
        self.init(file: file, results: [])
        self.loadError = loadError
    }

    /// The expectations that failed.
    public var failures: [ExpectationResult] { results.filter { !$0.passed } }

    /// One line per expectation, `PASS FILE:LINE expect … (detail)`; under a failure the events around it
    /// (the one at fault marked `>`).
    public var text: String { text(onlyFailures: false) }

    /// ``text``, or only the failures and the totals.
    public func text(onlyFailures: Bool) -> String {
        if let loadError { return "ERROR \(file): not run: \(loadError)\n" }
        // Nothing to pass: a count of "0 passed, 0 failed" would read as a pass.
        if results.isEmpty { return "\(file): no expect lines, nothing checked\n" }
        var out = ""
        for result in results where !onlyFailures || !result.passed {
            out += "\(result.skipped ? "SKIP" : result.passed ? "PASS" : "FAIL") \(file):\(result.expectation.line) \(result.expectation)"
            out += " (\(result.detail))\n"
            guard !result.passed, !result.context.isEmpty else { continue }
            out += "     events around it:\n"
            for event in result.context {
                out += "     \(event == result.matched ? ">" : " ") \(event)\n"
            }
        }
        let failed = failures.count
        let skipped = results.filter(\.skipped).count
        out += "\(file): \(results.count - failed - skipped) passed, \(failed) failed"
        out += skipped > 0 ? ", \(skipped) skipped\n" : "\n"
        return out
    }

    /// JUnit XML for several reports: one `testsuite` per scenario file, one `testcase` per expectation
    /// (its name the line and the expectation), a `failure` with the detail and the events around it.
    public static func junit(_ reports: [ScenarioTestReport]) -> String {
        let tests = reports.reduce(0) { $0 + $1.results.count }
        let failures = reports.reduce(0) { $0 + $1.failures.count }
        let skipped = reports.reduce(0) { $0 + $1.results.filter(\.skipped).count }
        let errors = reports.filter { $0.loadError != nil }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"camctl test\" tests=\"\(tests + errors)\" failures=\"\(failures)\" errors=\"\(errors)\""
        xml += " skipped=\"\(skipped)\">\n"
        for report in reports {
            if let loadError = report.loadError {
                xml += "  <testsuite name=\"\(escape(report.file))\" tests=\"1\" failures=\"0\" errors=\"1\" time=\"0\">\n"
                xml += "    <testcase classname=\"\(escape(report.file))\" name=\"the scenario file\">\n"
                xml += "      <error message=\"not run: the file could not be read or parsed\">\(escape(loadError))</error>\n"
                xml += "    </testcase>\n  </testsuite>\n"
                continue
            }
            xml += "  <testsuite name=\"\(escape(report.file))\" tests=\"\(report.results.count)\""
            xml += " failures=\"\(report.failures.count)\" time=\"\(report.seconds)\">\n"
            for result in report.results {
                let name = "line \(result.expectation.line): \(result.expectation)"
                xml += "    <testcase classname=\"\(escape(report.file))\" name=\"\(escape(name))\""
                if result.skipped {
                    xml += ">\n      <skipped message=\"\(escape(result.detail))\"/>\n    </testcase>\n"
                    continue
                }
                if result.passed {
                    xml += "/>\n"
                    continue
                }
                xml += ">\n      <failure message=\"\(escape(result.detail))\">"
                xml += escape(result.context.map { "\($0 == result.matched ? ">" : " ") \($0)" }.joined(separator: "\n"))
                xml += "</failure>\n    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    /// JUnit XML for a recording replayed into the firmware (`camctl test --replay FILE --junit OUT`): one
    /// `testsuite` named `file`, one `testcase` per comparison (`gestures`, `captures`), a `failure` with its
    /// message for one that differs.
    public static func junit(replayOf file: String, checks: [(name: String, failure: String?)]) -> String {
        let failures = checks.filter { $0.failure != nil }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"camctl test --replay\" tests=\"\(checks.count)\" failures=\"\(failures)\" errors=\"0\">\n"
        xml += "  <testsuite name=\"\(escape(file))\" tests=\"\(checks.count)\" failures=\"\(failures)\">\n"
        for check in checks {
            xml += "    <testcase classname=\"\(escape(file))\" name=\"\(escape(check.name))\""
            if let failure = check.failure {
                xml += ">\n      <failure message=\"\(escape(failure))\"/>\n    </testcase>\n"
            } else {
                xml += "/>\n"
            }
        }
        return xml + "  </testsuite>\n</testsuites>\n"
    }

    /// Text escaped for an XML attribute or element.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 { out += "?" } else { out.unicodeScalars.append(scalar) }  // not allowed in XML 1.0
            }
        }
        return out
    }
}
