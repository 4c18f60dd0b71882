import CameraControlDevice
import CameraControlHost
import CameraControlPorts
import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTransport
import CameraControlWire
import Foundation

/// PORT arguments (a path, a bare device name, `auto`, a serial number) and `camctl ports`.
enum Ports {
    static let command = Command(
        name: "ports", summary: "list serial ports (with USB ids); --probe shows which answer our handshake",
        usage: "[--probe] [--json]",
        details: """
            Each line is a name that any PORT argument accepts, then how it is attached and its USB vendor:product,
            serial number and product. Pseudo-terminals are not serial ports and are not listed; paths in
            CAMCTL_PORTS (colon-separated) are listed and probed too.
              --probe   open each port and handshake (1 s): prints the device that answers, or why none did
              --json    one object per port: {"port", "attachment", "usbVendorId", "usbProductId",
                        "usbSerialNumber", "usbProduct", "probe": {"answered", "vendor", "model",
                        "serialNumber", "firmwareVersion", "error"}}
            """,
        examples: ["ports", "ports --probe", "ports --probe --json", "info auto   # the one port that answers"],
        run: run)

    /// One candidate port: its path and what libserialport knows.
    struct Candidate: Sendable {
        var path: String
        var info: SerialPortInfo?
    }

    /// What a handshake on a port gave.
    enum Probe: Sendable {
        case answered(DeviceInfo)
        case failed(CLIFailure)
    }

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["probe", "json"], positionals: [])
        let candidates = try Self.candidates()
        let probes: [String: Probe] = args.flag("probe") ? await probeAll(candidates.map(\.path)) : [:]
        if candidates.isEmpty && !args.flag("json") { print("no serial ports") }
        for candidate in candidates {
            let probe = probes[candidate.path]
            if args.flag("json") {
                print(json(candidate, probe: probe).compactText)
            } else {
                print(text(candidate, probe: probe))
            }
        }
    }

    /// The serial ports, then the CAMCTL_PORTS paths.
    static func candidates() throws -> [Candidate] {
        var out = try SerialPorts.list().map { Candidate(path: $0.name, info: $0) }
        let extra = ProcessInfo.processInfo.environment["CAMCTL_PORTS"] ?? ""
        for path in extra.split(separator: ":").map(String.init) where !out.contains(where: { $0.path == path }) {
            out.append(Candidate(path: path, info: nil))
        }
        return out
    }

    static func text(_ candidate: Candidate, probe: Probe?) -> String {
        var columns = [padded(candidate.path, to: 16)]
        if let info = candidate.info {
            columns.append(padded(info.attachment.rawValue, to: 9))
            if let vendor = info.usbVendorID, let product = info.usbProductID {
                columns.append(String(format: "%04x:%04x", vendor, product))
            }
            if let serial = info.usbSerialNumber { columns.append("serial \(serial)") }
            if let product = info.usbProduct ?? (info.description != info.name ? info.description : nil) {
                columns.append(product)
            }
        } else {
            columns.append("CAMCTL_PORTS")
        }
        switch probe {
        case .answered(let device)?:
            let id = device.identity
            columns.append("→ answers: \(id.vendor) \(id.model), serial \(id.serialNumber), firmware \(id.firmwareVersion)")
        case .failed(let failure)?:
            columns.append("→ " + (failure.status == .noAnswer ? "no answer" : failure.message))
        case nil:
            break
        }
        return columns.joined(separator: "  ")
    }

    /// `text` with spaces after it up to `width` characters; a longer text is kept whole (a port's name
    /// is what a PORT argument takes).
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    static func json(_ candidate: Candidate, probe: Probe?) -> JSONValue {
        var members = [JSONMember("port", .string(candidate.path))]
        if let info = candidate.info {
            members.append(JSONMember("attachment", .string(info.attachment.rawValue)))
            if let vendor = info.usbVendorID { members.append(JSONMember("usbVendorId", .integer(vendor))) }
            if let product = info.usbProductID { members.append(JSONMember("usbProductId", .integer(product))) }
            if let serial = info.usbSerialNumber { members.append(JSONMember("usbSerialNumber", .string(serial))) }
            if let product = info.usbProduct { members.append(JSONMember("usbProduct", .string(product))) }
        } else {
            members.append(JSONMember("attachment", .string("CAMCTL_PORTS")))
        }
        switch probe {
        case .answered(let device)?:
            let id = device.identity
            members.append(
                JSONMember(
                    "probe",
                    .object([
                        JSONMember("answered", .bool(true)), JSONMember("vendor", .string(id.vendor)),
                        JSONMember("model", .string(id.model)), JSONMember("serialNumber", .string(id.serialNumber)),
                        JSONMember("firmwareVersion", .string(id.firmwareVersion)),
                    ])))
        case .failed(let failure)?:
            members.append(
                JSONMember("probe", .object([JSONMember("answered", .bool(false)), JSONMember("error", .string(failure.message))])))
        case nil:
            break
        }
        return .object(members)
    }

    /// Opens `path` and handshakes once (1 s), then closes.
    static func probe(_ path: String) async -> Probe {
        do {
            let transport = try Transports.open(path: path)
            let session = try await DeviceSession.connect(transport: transport, hostName: "camctl probe", attempts: 1)
            let info = session.info
            await session.close()
            return .answered(info)
        } catch let error as TransportError {
            return .failed(Failures.classify(error, path: path))
        } catch let error as DeviceError {
            return .failed(Failures.classify(error))
        } catch {
            return .failed(CLIFailure(status: .failure, message: "\(error)"))
        }
    }

    /// Probes every path at once.
    static func probeAll(_ paths: [String]) async -> [String: Probe] {
        await withTaskGroup(of: (String, Probe).self) { group in
            for path in paths { group.addTask { (path, await probe(path)) } }
            var out: [String: Probe] = [:]
            for await (path, result) in group { out[path] = result }
            return out
        }
    }

    /// The path a PORT argument names: a path as is; a bare name under /dev (`ttyACM0`); `auto`, the one
    /// port whose device answers the handshake; otherwise a serial number: a USB serial number, or the
    /// serial number a device announces in its handshake.
    ///
    /// - Throws: ``CLIFailure`` with ``ExitStatus/noAnswer`` when `auto` finds no device that answers,
    ///   ``ExitStatus/failure`` when a name is no port (not a path, not under /dev, no device with that serial
    ///   number: a port not found, as README's exit-status table says), ``ExitStatus/usage`` when `auto` finds
    ///   several.
    static func resolve(_ port: String) async throws(CLIFailure) -> String {
        if port.contains("/") { return port }
        if port != "auto", FileManager.default.fileExists(atPath: "/dev/\(port)") { return "/dev/\(port)" }
        // A name in the working folder (`camctl-sim --link dev0`, then `camctl info dev0`).
        if port != "auto", FileManager.default.fileExists(atPath: port) { return port }
        let candidates: [Candidate]
        do {
            candidates = try Self.candidates()
        } catch {
            throw CLIFailure(status: .failure, message: "cannot list serial ports: \(error)")
        }
        if port != "auto" {
            let usb = candidates.filter { $0.info?.usbSerialNumber == port }
            if usb.count == 1 { return usb[0].path }
        }
        let probes = await probeAll(candidates.map(\.path))
        let answered = candidates.compactMap { candidate -> (String, DeviceInfo)? in
            if case .answered(let info)? = probes[candidate.path] { return (candidate.path, info) }
            return nil
        }
        // Ports another program holds could not be asked: saying so beats blaming the baud rate.
        let held = candidates.compactMap { candidate -> String? in
            guard case .failed(let failure)? = probes[candidate.path], failure.message.contains("in use") else { return nil }
            return failure.message
        }
        if port == "auto" {
            if answered.count == 1 { return answered[0].0 }
            if answered.isEmpty, !held.isEmpty {
                throw CLIFailure(
                    status: .failure,
                    message: "auto: no free device answered on \(candidates.count) port(s); "
                        + "\(held.count) in use: \(held.joined(separator: "; "))",
                    hint: "quit the program holding the port, or name the port")
            }
            if answered.isEmpty {
                throw CLIFailure(
                    status: .noAnswer, message: "auto: no device answered on \(candidates.count) port(s)",
                    hint: "`camctl ports --probe` shows each port's answer; " + Failures.noAnswerHint)
            }
            throw CLIFailure(
                status: .usage,
                message: "auto: \(answered.count) devices answered: "
                    + answered.map { "\($0.0) (serial \($0.1.identity.serialNumber))" }.joined(separator: ", "),
                hint: "name one by its path or serial number")
        }
        if let match = answered.first(where: { $0.1.identity.serialNumber == port }) { return match.0 }
        if !held.isEmpty {
            throw CLIFailure(
                status: .failure,
                message: "no free device with serial number '\(port)' answered; \(held.count) port(s) in use: "
                    + held.joined(separator: "; "),
                hint: "the device may be on a port another program holds: quit it, or name the port")
        }
        throw CLIFailure(
            status: .failure,
            message: "no port '\(port)': not a path, not /dev/\(port), not in this folder, and no device with that serial number answered",
            hint: "`camctl ports --probe` lists the ports and the serial numbers that answer")
    }

    /// Resolves PORT and opens a session on it. A handshake that gets no answer tells apart silence from
    /// bytes that are no frames (the wrong baud rate, or another protocol on the port).
    static func open(_ port: String, hostName: String = "camctl") async throws -> DeviceSession {
        try await open(path: try await resolve(port), hostName: hostName)
    }

    /// Resolves PORT and starts a ``CameraControlHost`` on it (`CameraControlHost.connect(configuration:prepare:opener:)`:
    /// every session, the first and each reconnect to the resolved path, on the host's event loop; a
    /// pseudo-terminal that closed is not reopened: `PortReopener`, and the host stops). The
    /// first open's failure is classified as ``open(path:hostName:eventLoop:)``'s: a port that sends bytes
    /// but no frames gets the wrong-baud hint. Returns once the host is connected and its clock estimated;
    /// `prepare` runs before the host starts on the first session (what it attaches misses nothing of it).
    static func connectHost(
        _ port: String, hostName: String, configuration: CameraControlHost.Configuration = .init(),
        prepare: @Sendable (CameraControlHost) async -> Void = { _ in }
    ) async throws -> (host: CameraControlHost, path: String) {
        let path = try await resolve(port)
        // Never a pseudo-terminal that is not the one lost (its number taken by another program's): the
        // host gives up on a pty named by itself, and waits for a new link on a symlink left behind.
        let host = try await connectHost(
            reopening: PortReopener(path: path), hostName: hostName, configuration: configuration, prepare: prepare)
        return (host, path)
    }

    /// ``connectHost(_:hostName:configuration:prepare:)`` on a resolved path, opened (first and at every
    /// reconnect) by `reopener`: a process that opens one port many times (`camctl serve`, which lets it go
    /// to apps and takes it back) shares one, so no open takes a pseudo-terminal that is not the one lost.
    static func connectHost(
        reopening reopener: PortReopener, hostName: String, configuration: CameraControlHost.Configuration = .init(),
        prepare: @Sendable (CameraControlHost) async -> Void = { _ in }
    ) async throws -> CameraControlHost {
        do {
            return try await CameraControlHost.connect(configuration: configuration, prepare: prepare) {
                loop async throws(DeviceError) -> DeviceSession in
                try await DeviceSession.open(reopening: reopener, hostName: hostName, eventLoop: loop)
            }
        } catch {
            throw failure(error, path: reopener.path)
        }
    }

    /// Opens a session on an already resolved `path` (see ``open(_:hostName:)``), on `eventLoop` or a loop
    /// of the port's own.
    static func open(path: String, hostName: String, eventLoop: (any EventLoop)? = nil) async throws -> DeviceSession {
        do {
            return try await DeviceSession.open(path: path, hostName: hostName, eventLoop: eventLoop)
        } catch {
            throw failure(error, path: path)
        }
    }

    /// A failed open, for the command line: a handshake that bytes but no frame answered gets the wrong-baud
    /// hint (the device layer counted them: `DeviceError.unframedBytesHeard`).
    static func failure(_ error: DeviceError, path: String) -> CLIFailure {
        var failure = Failures.classify(error)
        failure.isGoneForGood = error.transportError?.code == .gone
        if failure.status == .noAnswer, let heard = error.unframedBytesHeard {
            failure.message = "no answer to the handshake from \(path): \(heard) bytes came back, but no frame of ours"
            failure.hint =
                "the wrong baud rate? The link is 115200 baud 8N1. Or another program or protocol is on this port: "
                + "`camctl ports --probe` shows which ports answer"
        }
        return failure
    }
}
