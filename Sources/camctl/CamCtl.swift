import CSystemShim
import CameraControlPosixTransport
import CameraControlTools
import CameraControlWire
import Foundation

/// One subcommand of camctl: its help and how to run it.
///
/// A command is added with one entry in ``CamCtl/commands``. In its own file:
///
/// ```swift
/// enum Record {
///     static let command = Command(
///         name: "record", summary: "record a session as pcapng", usage: "PORT -o FILE [--seconds N]",
///         details: "  -o FILE      where to write\n  --seconds N  stop after N seconds",
///         examples: ["record /dev/ttyACM0 -o session.pcapng --seconds 10"], run: run)
///
///     static func run(_ argv: [String]) async throws {
///         let args = try Arguments(argv, valued: ["o", "seconds"], switches: ["json"], positionals: ["PORT"])
///         let session = try await Ports.open(try args.required(0, "PORT"))  // path, auto or serial number
///         …
///     }
/// }
/// ```
///
/// and `Record.command,` in ``CamCtl/commands``. `run` gets the arguments after the
/// command's name; camctl itself answers `--help`/`-h` (and `camctl help NAME`) from `usage`, `details`
/// and `examples`, and turns what `run` throws into a message and an exit status (``ExitStatus``).
struct Command: Sendable {
    /// The name typed after `camctl`.
    var name: String
    /// One line for the command list.
    var summary: String
    /// The arguments, e.g. `PORT [--count N] [--json]`.
    var usage: String
    /// What it does and its options, as lines of help text.
    var details: String = ""
    /// Example command lines (after `camctl `), each with an optional `# comment`.
    var examples: [String] = []
    /// The exit-status paragraph of its help, when the command's own differs from ``CamCtl/exitStatusHelp``.
    var exitStatus: String? = nil
    /// Runs the command with its arguments.
    var run: @Sendable ([String]) async throws -> Void

    /// The full help text of `camctl help NAME`.
    var help: String {
        var text = "usage: camctl \(name) \(usage)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        if !examples.isEmpty {
            text += "\nexamples:\n" + examples.map { "  camctl \($0)" }.joined(separator: "\n") + "\n"
        }
        return text + "\n" + (exitStatus ?? CamCtl.exitStatusHelp) + "\n"
    }
}

/// camctl's exit statuses (documented in `camctl help` and the README).
enum ExitStatus: Int32 {
    /// Done.
    case ok = 0
    /// A runtime failure: the port would not open, the device refused a call, a file is bad.
    case failure = 1
    /// A usage error: an unknown command, option or field, a missing or extra argument.
    case usage = 2
    /// No device answered: nothing replied to the handshake or to a call in time.
    case noAnswer = 3
}

/// A failure with its exit status and a hint of what to do next.
struct CLIFailure: Error, CustomStringConvertible {
    /// The exit status.
    var status: ExitStatus
    /// What went wrong.
    var message: String
    /// What to do about it, when known.
    var hint: String?
    /// The device cannot come back under its path (a pseudo-terminal that closed): trying again is no use.
    var isGoneForGood = false

    /// `message`, then the hint on its own line.
    var description: String { hint.map { "\(message)\n  hint: \($0)" } ?? message }
}

/// `camctl`: the CameraControl command-line tool.
@main
struct CamCtl {
    /// Every command, in the order `camctl help` lists them. Add a command with one entry here.
    static let commands: [Command] = [
        Demo.command,
        Commands.infoCommand,
        Monitor.command,
        Serve.command,
        Commands.pingCommand,
        Commands.countersCommand,
        SettingsCommand.command,
        SchemaCommands.describeCommand,
        SchemaCommands.callCommand,
        Commands.scenarioCommand,
        TestCommand.command,
        Ports.command,
        Shoot.command,
        Record.command,
        Replay.command,
        Decode.command,
        Plot.command,
        Export.command,
        Conformance.command,
        Diagnose.command,
        Relay.command,
    ]

    /// The exit statuses, as help text.
    static let exitStatusHelp = """
        exit status: 0 ok, 1 runtime failure (the port would not open, the device refused, a bad file),
        2 usage error (unknown command, option or field; missing or extra argument), 3 no device answered,
        130 or 143 interrupted (Ctrl-C, SIGTERM; the port's lock file removed first); monitor, record and relay
        stop cleanly on the first signal instead (0), ping prints its summary
        """

    /// The overview of `camctl help`.
    static var usage: String {
        let width = (commands.map(\.name.count).max() ?? 8) + 2
        let list = commands.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.summary }
        return """
            usage: camctl <command> [arguments]      camctl help <command>, camctl <command> --help

            commands:
            \(list.joined(separator: "\n"))

            PORT is a serial port (/dev/ttyACM0, /dev/cu.usbmodem…, or just ttyACM0), a pseudo-terminal or a
            symlink to one (camctl-sim --link PATH), `auto` (the one device that answers the handshake), or a
            device's serial number (USB, or the one it announces). `camctl ports` lists them;
            CAMCTL_PORTS=PATH:PATH… adds paths (a simulator's pty) to what `auto` and serial numbers search.
            Commands that print events or results take --json: one JSON object per line (README, "JSON").

            \(exitStatusHelp)
            """
    }

    static func main() async {
        cc_shim_line_buffer_stdout()  // a pipe (`camctl demo | tee log`) sees each line as it happens
        Interrupts.install()  // Ctrl-C and SIGTERM leave no lock file, socket or link behind
        let status = await run(Array(CommandLine.arguments.dropFirst()))
        // A command that failed after it opened a port may still hold it: `flock` and exclusive mode end
        // with the process, a UUCP lock file would stay behind (only files naming this process are removed).
        PortLock.removeHeldLockFiles()
        // What was printed must have been written (a full disk, /dev/full): otherwise a runtime failure.
        let flushed = cc_shim_flush_stdout()
        if flushed != 0 {
            let reason = flushed > 0 ? String(cString: strerror(flushed)) : "a write failed"
            StandardStreams.error("camctl: cannot write standard output: \(reason)")
            exit(status == .ok ? ExitStatus.failure.rawValue : status.rawValue)
        }
        exit(status.rawValue)
    }

    /// Runs one command line (without the program name) and returns the exit status.
    static func run(_ argv: [String]) async -> ExitStatus {
        guard let name = argv.first else {
            StandardStreams.error(usage)
            return .usage
        }
        if name == "help" || name == "--help" || name == "-h" {
            return help(Array(argv.dropFirst()))
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            var text = "unknown command '\(name)'"
            if let near = NearMatch.best(for: name, among: commands.map(\.name)) { text += "; did you mean '\(near)'?" }
            return report(CLIFailure(status: .usage, message: text, hint: "`camctl help` lists the commands"), command: nil)
        }
        let rest = Array(argv.dropFirst())
        if Arguments.asksForHelp(rest) {
            print(command.help, terminator: "")
            return .ok
        }
        do {
            try await command.run(rest)
            return .ok
        } catch {
            return report(Failures.classify(error, command: command), command: command.name)
        }
    }

    /// `camctl help [COMMAND]`.
    static func help(_ argv: [String]) -> ExitStatus {
        guard let name = argv.first else {
            print(usage)
            return .ok
        }
        guard argv.count == 1, let command = commands.first(where: { $0.name == name }) else {
            var text = argv.count > 1 ? "help takes one command name" : "no command '\(name)'"
            if let near = NearMatch.best(for: name, among: commands.map(\.name)) { text += "; did you mean '\(near)'?" }
            return report(CLIFailure(status: .usage, message: text, hint: "`camctl help` lists the commands"), command: nil)
        }
        print(command.help, terminator: "")
        return .ok
    }

    /// Prints `camctl[ COMMAND]: message` (and its hint) on stderr; returns the failure's status.
    static func report(_ failure: CLIFailure, command: String?) -> ExitStatus {
        let prefix = command.map { "camctl \($0)" } ?? "camctl"
        StandardStreams.error("\(prefix): \(failure)")
        return failure.status
    }
}
