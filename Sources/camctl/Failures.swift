import CameraControlDevice
import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Foundation

/// Turns what a command throws into a message, an exit status and a hint of what to do next.
enum Failures {
    /// The hint for a device that does not answer.
    static let noAnswerHint =
        "is the firmware running on it? The link is 115200 baud 8N1: a board at another baud rate never answers. "
        + "Reset the board or replug it, and try `camctl ports --probe` to see which ports answer"

    static func classify(_ error: any Error, command: Command) -> CLIFailure {
        switch error {
        case let failure as CLIFailure:
            return failure
        case let failure as Arguments.Failure:
            return CLIFailure(
                status: .usage, message: failure.description,
                hint: "usage: camctl \(command.name) \(command.usage) (`camctl help \(command.name)` for more)")
        case let failure as ProtoJSONError:
            return CLIFailure(status: .usage, message: failure.description, hint: "`camctl describe` lists each message's fields")
        case let failure as DeviceError:
            return classify(failure)
        case let failure as RPCError:
            return classify(failure)
        case let failure as TransportError:
            return classify(failure, path: nil)
        default:
            return CLIFailure(status: .failure, message: String(describing: error))
        }
    }

    static func classify(_ error: DeviceError) -> CLIFailure {
        if let transport = error.transportError, error.code == .transport {
            var failure = classify(transport, path: nil)
            failure.message = error.message
            return failure
        }
        if error.code == .handshakeFailed, let rpc = error.rpcError, rpc.code == .deadlineExceeded || rpc.code == .unavailable {
            return CLIFailure(status: .noAnswer, message: "no answer to the handshake: \(error.message)", hint: noAnswerHint)
        }
        switch error.code {
        case .versionMismatch:
            return CLIFailure(
                status: .failure, message: error.description,
                hint: "the device speaks another major protocol version: update its firmware or camctl")
        case .closed:
            return CLIFailure(
                status: .failure, message: error.description, hint: "the device went away: check the cable, then run the command again")
        default:
            return CLIFailure(status: .failure, message: error.description)
        }
    }

    /// The hint for a call unanswered after a good handshake: port and baud rate are right then.
    static let unansweredCallHint =
        "it answered the handshake, so the port and baud rate are right: is it busy or stuck? "
        + "`camctl counters PORT` shows its error counters; resetting the board clears a stuck state"

    /// A call's failure. Calls run only after a good handshake (its own failure is a ``DeviceError``), so
    /// an unanswered call gets no wrong-baud hint.
    static func classify(_ error: RPCError) -> CLIFailure {
        switch error.code {
        case .unavailable where error.message.contains("the transport ended"):
            // The port itself went (unplugged, the simulator ended), not a silent device.
            return CLIFailure(status: .failure, message: "the device went away: \(error.message)")
        case .deadlineExceeded, .unavailable:
            return CLIFailure(status: .noAnswer, message: "the device did not answer: \(error)", hint: unansweredCallHint)
        case .unimplemented:
            return CLIFailure(
                status: .failure, message: error.description,
                hint: "the device does not offer this method (its capabilities: `camctl info PORT`)")
        case .invalidArgument, .outOfRange:
            return CLIFailure(
                status: .failure, message: error.description, hint: "the device refused the values; `camctl describe` shows the fields")
        default:
            return CLIFailure(status: .failure, message: error.description)
        }
    }

    static func classify(_ error: TransportError, path: String?) -> CLIFailure {
        let message = path.map { "cannot open \($0): \(error)" } ?? error.description
        switch error.code {
        case .inUse:
            let who = error.holderPID.map { "process \($0) (`ps -p \($0)`)" } ?? "another program"
            return CLIFailure(
                status: .failure, message: message,
                hint: "\(who) holds the port: quit it (a `camctl monitor`, picocom, screen, ModemManager) or pick another port")
        case .openFailed where error.errno == EACCES || error.errno == EPERM:
            return CLIFailure(
                status: .failure, message: message,
                hint: "no permission: add yourself to the port's group, `sudo usermod -aG dialout $USER`, then log in again")
        case .notFound:
            return CLIFailure(status: .failure, message: message, hint: "`camctl ports` lists the serial ports")
        case .notATerminal:
            return CLIFailure(
                status: .failure, message: message, hint: "PORT must be a serial port or pseudo-terminal; `camctl ports` lists them")
        case .configurationFailed:
            return CLIFailure(
                status: .failure, message: message, hint: "the port would not take 115200 baud 8N1; is it a serial port?")
        default:
            return CLIFailure(status: .failure, message: message)
        }
    }

    /// What a file that is not a regular file is, as a message names it (`a FIFO (named pipe)`).
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFDIR: "a directory"
        default: "a special file"
        }
    }

    /// Reads a text file (`-`: stdin) through a bound, or fails with a plain message (not a Foundation
    /// error dump): more than `maxBytes` bytes is refused as soon as they are read, and `checkLine` sees
    /// each whole line (its 1-based number and bytes, without the newline) as it arrives and may throw to
    /// stop reading there. A path that names a FIFO, a device or a socket is refused at once, before any
    /// read (it could block for ever, or never end): a pipe is read as `-`.
    /// Too much input fails with `oversizeStatus` (a runtime failure unless the caller says it is a usage error).
    static func readText(
        _ path: String, what: String = "file", maxBytes: Int, oversizeStatus: ExitStatus = .failure,
        checkLine: (_ number: Int, _ line: ArraySlice<UInt8>) throws(CLIFailure) -> Void = { _, _ throws(CLIFailure) in }
    ) throws(CLIFailure) -> String {
        let handle: FileHandle
        let name = path == "-" ? "stdin" : path
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                // The working folder only helps with a relative path.
                throw CLIFailure(
                    status: .failure, message: "no such \(what) \(path)",
                    hint: path.hasPrefix("/")
                        ? "check the path" : "check the path (relative to \(FileManager.default.currentDirectoryPath))")
            }
            guard !isDirectory.boolValue else { throw CLIFailure(status: .failure, message: "\(path) is a directory, not a \(what)") }
            // Opened without blocking, then checked: a FIFO would block the open (and then each read) like
            // `cat` until some writer came and went. Only a regular file is read by name; a pipe goes in as
            // `-`, on stdin.
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CLIFailure(
                    status: .failure, message: "cannot read \(path): \(String(cString: strerror(errno)))", hint: "check its permissions")
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                let kind = Self.fileKind(info.st_mode)
                _ = close(descriptor)
                throw CLIFailure(
                    status: .failure, message: "\(path) is \(kind), not a \(what): only a regular file is read by name",
                    hint: "to read a pipe, give - and connect it to stdin")
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        }
        defer { if path != "-" { try? handle.close() } }
        var bytes: [UInt8] = []
        var lineStart = 0
        var scanned = 0
        var lineNumber = 0
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: 64 * 1024)
            } catch {
                throw CLIFailure(status: .failure, message: "cannot read \(name): \((error as NSError).localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            guard bytes.count + chunk.count <= maxBytes else {
                throw CLIFailure(
                    status: oversizeStatus,
                    message: "\(name) is larger than \(maxBytes / 1024) KiB, more than any \(what) holds; not read further")
            }
            bytes.append(contentsOf: chunk)
            while let newline = bytes[max(lineStart, scanned)...].firstIndex(of: 10) {
                lineNumber += 1
                try checkLine(lineNumber, bytes[lineStart..<newline])
                lineStart = newline + 1
            }
            scanned = bytes.count
        }
        if lineStart < bytes.count {
            try checkLine(lineNumber + 1, bytes[lineStart...])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIFailure(status: .failure, message: "\(name) is not UTF-8 text")
        }
        return text
    }
}
