/// A small command-line parser: positional arguments and `--flag` / `--option value` pairs.
///
/// No outside packages may be used, and camctl's needs are small: commands take a port or a file and a
/// handful of options. Unknown options are errors, so a typo never silently changes behaviour.
struct Arguments {
    /// Positional arguments, in order.
    private(set) var positional: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// What went wrong while parsing or reading arguments.
    struct Failure: Error, CustomStringConvertible {
        /// Why.
        var description: String
    }

    /// Parses `argv` (without the program and command names). `valued` lists options that take a value,
    /// `switches` those that do not.
    init(_ argv: [String], valued: Set<String>, switches: Set<String>) throws(Failure) {
        var index = argv.startIndex
        while index < argv.endIndex {
            let arg = argv[index]
            index += 1
            if arg == "--" {
                positional += argv[index...]
                break
            }
            if arg.hasPrefix("--") {
                var name = String(arg.dropFirst(2))
                var inlineValue: String?
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valued.contains(name) {
                    if let inlineValue {
                        options[name] = inlineValue
                    } else if index < argv.endIndex {
                        options[name] = argv[index]
                        index += 1
                    } else {
                        throw Failure(description: "option --\(name) needs a value")
                    }
                } else if switches.contains(name), inlineValue == nil {
                    flags.insert(name)
                } else {
                    throw Failure(description: "unknown option --\(name)")
                }
            } else {
                positional.append(arg)
            }
        }
    }

    /// The value of `--name`, if given.
    func value(_ name: String) -> String? { options[name] }

    /// True when `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer, or `default` when absent.
    func integer(_ name: String, default defaultValue: Int) throws(Failure) -> Int {
        guard let text = options[name] else { return defaultValue }
        guard let value = Int(text) else { throw Failure(description: "--\(name) wants an integer, not '\(text)'") }
        return value
    }

    /// Positional argument `index`, or a failure naming what is missing.
    func required(_ index: Int, _ what: String) throws(Failure) -> String {
        guard index < positional.count else { throw Failure(description: "missing \(what)") }
        return positional[index]
    }
}
