import CameraControlTools
import CameraControlWire

/// A small command-line parser: positional arguments and `--flag` / `--option value` pairs (`-o value`
/// for one-letter names, `--option=value` too; `--` ends the options).
///
/// No outside packages may be used, and camctl's needs are small: commands take a port or a file and a
/// handful of options. Unknown options are errors with a near match ("did you mean --json?"), and so
/// are more positional arguments than the command takes, so a typo never silently changes behaviour.
struct Arguments {
    /// Positional arguments, in order.
    private(set) var positional: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// A usage error: what is wrong with the command line (exit status 2).
    struct Failure: Error, CustomStringConvertible {
        /// Why.
        var description: String
    }

    /// Parses `argv` (without the program and command names). `valued` lists options that take a value,
    /// `switches` those that do not (one-letter names are given as `-x`, longer ones as `--name`).
    /// `positionals` names the positional arguments the command takes, in order (`["PORT", "FILE"]`);
    /// more are refused, unless `variadic` (the last one repeats). With `positionals` nil, any number is
    /// accepted.
    init(
        _ argv: [String], valued: Set<String>, switches: Set<String>, positionals: [String]? = nil,
        variadic: Bool = false
    ) throws(Failure) {
        var index = argv.startIndex
        while index < argv.endIndex {
            let arg = argv[index]
            index += 1
            if arg == "--" {
                positional += argv[index...]
                break
            }
            guard let (name, inlineValue) = Self.option(arg) else {
                positional.append(arg)
                continue
            }
            let spelled = Self.spelling(name)
            if valued.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else if index < argv.endIndex {
                    options[name] = argv[index]
                    index += 1
                } else {
                    throw Failure(description: "option \(spelled) needs a value")
                }
            } else if switches.contains(name) {
                guard inlineValue == nil else { throw Failure(description: "option \(spelled) takes no value") }
                flags.insert(name)
            } else {
                var text = "unknown option \(spelled)"
                if let near = NearMatch.best(for: name, among: (valued.union(switches)).sorted()) {
                    text += "; did you mean \(Self.spelling(near))?"
                }
                throw Failure(description: text)
            }
        }
        if let positionals, !variadic, positional.count > positionals.count {
            let extra = positional[positionals.count...].map { "'\($0)'" }.joined(separator: " ")
            let takes = positionals.isEmpty ? "takes no arguments" : "takes \(positionals.joined(separator: " "))"
            throw Failure(description: "unexpected argument \(extra) (this command \(takes))")
        }
    }

    /// `--name[=value]` or `-x[=value]` as (name, value); nil for a positional (including `-` and
    /// negative numbers).
    private static func option(_ arg: String) -> (String, String?)? {
        guard arg.hasPrefix("-"), arg != "-" else { return nil }
        var body = arg.dropFirst(arg.hasPrefix("--") ? 2 : 1)
        if !arg.hasPrefix("--"), let first = body.first, first.isNumber || first == "." { return nil }
        var value: String?
        if let eq = body.firstIndex(of: "=") {
            value = String(body[body.index(after: eq)...])
            body = body[..<eq]
        }
        return (String(body), value)
    }

    /// `-o` for one-letter names, `--name` otherwise.
    static func spelling(_ name: String) -> String { name.count == 1 ? "-\(name)" : "--\(name)" }

    /// True when `argv` asks for help (`--help` or `-h` before any `--`).
    static func asksForHelp(_ argv: [String]) -> Bool {
        argv.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
    }

    /// The value of `--name`, if given.
    func value(_ name: String) -> String? { options[name] }

    /// True when `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer, or `default` when absent.
    func integer(_ name: String, default defaultValue: Int) throws(Failure) -> Int {
        guard let text = options[name] else { return defaultValue }
        guard let value = Int(text) else {
            throw Failure(description: "\(Self.spelling(name)) wants an integer, not '\(text)'")
        }
        return value
    }

    /// `--NAME N` within `range` (`default` when not given).
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(Failure) -> Int {
        let value = try integer(name, default: defaultValue)
        guard range.contains(value) else {
            let wanted = range.upperBound == Int.max ? "\(range.lowerBound) or more" : "\(range.lowerBound)…\(range.upperBound)"
            throw Failure(description: "\(Self.spelling(name)) wants \(wanted), not \(value)")
        }
        return value
    }

    /// `--seconds N`: how long a command runs, at least 1 second; 0 when not given (until Ctrl-C, the end
    /// of its scenario or the device).
    func seconds() throws(Failure) -> Int {
        let seconds = try integer("seconds", default: 0)
        guard options["seconds"] == nil || seconds >= 1 else {
            throw Failure(description: "--seconds wants at least 1, not \(seconds) (leave it out to run until Ctrl-C)")
        }
        return seconds
    }

    /// Positional argument `index`, or a failure naming what is missing (or empty: `camctl info ""` is no
    /// port, not `/dev/`).
    func required(_ index: Int, _ what: String) throws(Failure) -> String {
        guard index < positional.count else { throw Failure(description: "missing \(what)") }
        guard !positional[index].isEmpty else { throw Failure(description: "empty \(what)") }
        return positional[index]
    }

    /// Positional argument `index`, or nil when not given.
    func optional(_ index: Int) -> String? {
        index < positional.count ? positional[index] : nil
    }

    /// Refuses `output` (given with `option`) when it names one of `inputs` (as `what`: "the recording"),
    /// under that name or another (a symlink, a hard link, `./`): writing it would replace what the
    /// command reads, often a session not to be had again. Nothing to refuse when `output` is nil.
    static func refuseOverwriting(_ output: String?, option: String, inputs: [String], what: String) throws(Failure) {
        guard let output else { return }
        for input in inputs where BoundedFiles.isSameFile(input, output) {
            throw Failure(description: "\(option) \(output) is \(input) itself: writing it would replace \(what)")
        }
    }
}
