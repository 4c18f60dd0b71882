import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTransport
import CameraControlWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `camctl relay A B [--faults SPEC] [--link PATH] [--seconds N] [--quiet]`: carries bytes between a
/// host side A and a device side B, damaging them as `SPEC` says (``LinkFaults``), and logs every
/// fault it injects on stderr.
///
/// A is a port the host already has open on the other end, or `pty`: the relay makes a pseudo-terminal
/// and prints its path (and places a symlink at `--link PATH`), so `camctl monitor PATH` connects
/// through the relay. B is any port: `camctl-sim`'s pty, a real board's serial port. `unplug=D:U`
/// cuts both directions for U every D (and removes the `--link` symlink meanwhile); `reset=` needs
/// the device's cooperation and is refused here (`camctl-sim --faults reset=…` does it).
package enum Relay {
    /// Carries bytes between `hostSide` (a port, or `pty`) and `deviceSide` through `faults`, until either
    /// side ends or `seconds` (0: no limit) pass; `linkPath` is a symlink to a `pty` host side.
    package static func run(
        hostSide: String, deviceSide: String, faults: LinkFaults, linkPath requestedLink: String?, seconds: Int, quiet: Bool
    ) async throws {
        let log = RelayLog(quiet: quiet)

        let device = try Transports.open(path: deviceSide)
        let host: any ByteTransport
        var keepAlive: PseudoTerminalPair?
        var holder: Int32 = -1
        var linkPath: String?
        if hostSide == "pty" {
            let pair = try PseudoTerminalPair.open()
            // Hold the subordinate open with a descriptor nobody reads (so the master sees no hang-up
            // between hosts), and close the pair's own subordinate transport, whose reader would take
            // the bytes meant for the host.
            holder = open(pair.subordinatePath, O_RDWR | O_NOCTTY)
            pair.subordinate.close()
            keepAlive = pair
            host = pair.master
            if let path = requestedLink {
                try placeLink(path, to: pair.subordinatePath)
                linkPath = path
            }
            print("relay: host side at \(pair.subordinatePath)\(linkPath.map { " (\($0))" } ?? ""), device side \(device.name)")
        } else {
            host = try Transports.open(path: hostSide)
            print("relay: \(host.name) ⇄ \(device.name)")
        }
        print("relay: faults \(faults.isEmpty ? "none" : faults.description)")
        let cable = Cable(faults: faults, log: log, linkPath: linkPath, linkTarget: keepAlive?.subordinatePath)
        let toDevice = Direction(name: "host→device", injector: FaultInjector(faults: faults, stream: 1, keepsRecords: true), out: device)
        let toHost = Direction(name: "device→host", injector: FaultInjector(faults: faults, stream: 2, keepsRecords: true), out: host)

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await pump(from: host, into: toDevice, cable: cable, log: log) }
            group.addTask { await pump(from: device, into: toHost, cable: cable, log: log) }
            group.addTask {
                // Releases what stalls and reordering held back, and plugs and unplugs.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                    await cable.tick()
                    await toDevice.flushDue(cable: cable, log: log)
                    await toHost.flushDue(cable: cable, log: log)
                }
            }
            if seconds > 0 {
                group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            }
            await group.next()
            group.cancelAll()
            host.close()
            device.close()
        }
        let up = await toDevice.injector.counts
        let down = await toHost.injector.counts
        print("relay: host→device \(summary(up)); device→host \(summary(down))")
        if let linkPath { try? FileManager.default.removeItem(atPath: linkPath) }
        withExtendedLifetime(keepAlive) {}
        if holder >= 0 { _ = Glibc.close(holder) }
    }

    package static func summary(_ counts: FaultInjector.Counts) -> String {
        "\(counts.bytes) bytes in \(counts.frames) frames; corrupted \(counts.corruptedBytes), dropped \(counts.droppedBytes) bytes + "
            + "\(counts.droppedFrames) frames, duplicated \(counts.duplicatedFrames), reordered \(counts.reorderedFrames), "
            + "garbage \(counts.garbageBursts) bursts, stalls \(counts.stalls), baud-damaged \(counts.baudDamagedBytes)"
    }

    package static func placeLink(_ path: String, to target: String) throws {
        if let existing = try? FileManager.default.destinationOfSymbolicLink(atPath: path), !existing.isEmpty {
            try FileManager.default.removeItem(atPath: path)
        }
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    /// Reads `source` until it ends, through `direction`'s faults.
    package static func pump(from source: any ByteTransport, into direction: Direction, cable: Cable, log: RelayLog) async {
        while !Task.isCancelled {
            do {
                let bytes = try await source.receive()
                await direction.carry(bytes, cable: cable, log: log)
            } catch {
                log.note("\(direction.name): \(source.name) ended: \(error)")
                return
            }
        }
    }

    /// Microseconds since the relay started.
    package static let start = ContinuousClock.now
    package static var nowMicros: UInt64 {
        let elapsed = start.duration(to: .now).components
        return UInt64(max(0, elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000))
    }
}

/// Whether the cable is plugged in (`unplug=` faults), shared by both directions.
package actor Cable {
    private let faults: LinkFaults
    private let log: RelayLog
    private let linkPath: String?
    private let linkTarget: String?
    private var unpluggedUntil: UInt64?
    private var nextUnplug: UInt64?

    package init(faults: LinkFaults, log: RelayLog, linkPath: String?, linkTarget: String?) {
        self.faults = faults
        self.log = log
        self.linkPath = linkPath
        self.linkTarget = linkTarget
        nextUnplug = faults.unplugEveryMicros
    }

    package var isUnplugged: Bool { unpluggedUntil != nil }

    package func tick() {
        let now = Relay.nowMicros
        if let until = unpluggedUntil, now >= until {
            unpluggedUntil = nil
            if let linkPath, let linkTarget { try? Relay.placeLink(linkPath, to: linkTarget) }
            log.note("replug after \(faults.unplugForMicros / 1000) ms")
        } else if let next = nextUnplug, now >= next, unpluggedUntil == nil {
            unpluggedUntil = now + faults.unplugForMicros
            nextUnplug = now + (faults.unplugEveryMicros ?? 0) + faults.unplugForMicros
            if let linkPath { try? FileManager.default.removeItem(atPath: linkPath) }
            log.note("unplug for \(faults.unplugForMicros / 1000) ms")
        }
    }
}

/// One direction: its injector and where its bytes go.
package actor Direction {
    package let name: String
    private(set) var injector: FaultInjector
    private let out: any ByteTransport

    package init(name: String, injector: FaultInjector, out: any ByteTransport) {
        self.name = name
        self.injector = injector
        self.out = out
    }

    package func carry(_ bytes: [UInt8], cable: Cable, log: RelayLog) async {
        if await cable.isUnplugged {
            injector.flush()
            return
        }
        injector.feed(bytes, atMicros: Relay.nowMicros)
        await flushDue(cable: cable, log: log)
    }

    package func flushDue(cable: Cable, log: RelayLog) async {
        let now = Relay.nowMicros
        for record in injector.takeRecords() { log.note("\(name) \(record)", atMicros: record.atMicros) }
        if await cable.isUnplugged {
            injector.flush()
            return
        }
        let bytes = injector.take(atMicros: now)
        guard !bytes.isEmpty else { return }
        do {
            try await out.send(bytes)
        } catch {
            log.note("\(name): cannot send to \(out.name): \(error)")
        }
    }
}

/// The relay's log on stderr: `  12.345678 host→device drop-frame frame 12, 30 bytes`.
package struct RelayLog: Sendable {
    package let quiet: Bool

    package func note(_ text: String, atMicros micros: UInt64 = Relay.nowMicros) {
        guard !quiet else { return }
        let line = String(format: "%10.6f ", Double(micros) / 1_000_000) + text + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
