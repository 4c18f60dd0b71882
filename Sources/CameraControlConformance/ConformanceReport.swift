/// Reports of a conformance run: a human report, JSON lines and JUnit XML.
public enum ConformanceReport {
    /// One case for a person: `PASS  name  §`, and on FAIL the message and the bytes seen against expected.
    public static func human(_ result: CaseResult) -> String {
        var line = "\(result.outcome.label)  \(result.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(result.section)"
        if result.runs == 2 {
            line += "  (run twice: the first run lost its session while the probe or the simulated device was stalled)"
        } else if result.runs > 2 {
            line +=
                "  (run \(result.runs) times: each earlier run lost its session while a side was stalled, the last while the probe itself was)"
        }
        switch result.outcome {
        case .pass: break
        case .skip(let reason): line += "\n      skipped: \(reason)"
        case .fail(let failure):
            line += "\n" + failure.description.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
        }
        return line
    }

    /// One JSON object (one line) for `result`.
    public static func json(_ result: CaseResult) -> String {
        var fields = [
            "\"case\":\(quoted(result.name))", "\"section\":\(quoted(result.section))",
            "\"result\":\(quoted(result.outcome.label))", "\"seconds\":\(rounded(result.seconds))",
            "\"retried\":\(result.retried)", "\"runs\":\(result.runs)",
        ]
        switch result.outcome {
        case .pass: break
        case .skip(let reason): fields.append("\"reason\":\(quoted(reason))")
        case .fail(let f):
            fields.append("\"message\":\(quoted(f.message))")
            fields.append("\"code\":\(quoted(f.code.rawValue))")
            if let sent = f.sent { fields.append("\"sent\":\(quoted(hex(sent)))") }
            fields.append("\"seen\":\(f.seen.map { quoted(hex($0)) } ?? "null")")
            fields.append("\"expected\":\(quoted(f.expected))")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// JUnit XML (the schema every CI reads: `testsuite`/`testcase`/`failure`/`skipped`).
    public static func junit(_ results: [CaseResult], suite: String) -> String {
        let failures = results.filter { $0.outcome.label == "FAIL" }.count
        let skipped = results.filter { $0.outcome.label == "SKIP" }.count
        let time = rounded(results.reduce(0) { $0 + $1.seconds })
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(time)\">\n"
        xml +=
            "  <testsuite name=\(attribute(suite)) tests=\"\(results.count)\" failures=\"\(failures)\" skipped=\"\(skipped)\" errors=\"0\" time=\"\(time)\">\n"
        for r in results {
            xml += "    <testcase classname=\(attribute(r.section)) name=\(attribute(r.name)) time=\"\(rounded(r.seconds))\""
            switch r.outcome {
            case .pass: xml += "/>\n"
            case .skip(let reason): xml += ">\n      <skipped message=\(attribute(reason))/>\n    </testcase>\n"
            case .fail(let f):
                xml +=
                    ">\n      <failure message=\(attribute(f.message)) type=\(attribute(f.code.rawValue))>\(escape(f.description))</failure>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// `N cases: P passed, F failed, S skipped`.
    public static func summary(_ results: [CaseResult]) -> String {
        let count = { (label: String) in results.filter { $0.outcome.label == label }.count }
        return "\(results.count) cases: \(count("PASS")) passed, \(count("FAIL")) failed, \(count("SKIP")) skipped"
    }

    static func rounded(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        let frac = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }

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
                // XML 1.0 forbids most control characters, even escaped.
                out += scalar.value < 0x20 ? "?" : String(scalar)
            }
        }
        return out
    }

    static func attribute(_ text: String) -> String { "\"" + escape(text).replacingOccurrences(of: "\n", with: "&#10;") + "\"" }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 {
                    let h = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
