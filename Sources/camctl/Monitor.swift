import CameraControlCapture
import CameraControlDevice
import Foundation

/// `camctl monitor PORT`: input events, gestures and capture events as they arrive. Rides through an
/// unplug: the press in flight is cancelled, and when the device is back (the same path: a serial port,
/// or `camctl-sim --link PATH` restarted) the monitor carries on with the new session.
enum Monitor {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["seconds"], switches: ["no-reconnect"])
        let port = try args.required(0, "PORT")
        let seconds = try args.integer("seconds", default: 0)
        // The first connect must work (a typo in PORT is an error, not an endless retry).
        let first = try await DeviceSession.open(path: port)
        let printer = EventPrinter()
        let interaction = CaptureEventInteraction(
            soundPlayer: first,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        interaction.setSessionRunning(true)

        let sessions = SessionHandOff(first)
        let connection = DeviceConnection(retryDelay: .milliseconds(250)) { () async throws(DeviceError) -> DeviceSession in
            if let session = sessions.take() { return session }
            return try await DeviceSession.open(path: port)
        }
        if seconds > 0 {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                await connection.stop()
            }
        }
        await connection.start()

        var pipeline: LivePipeline?
        var ticker: Task<Void, Never>?
        var lostForGood = false
        for await activity in connection.activity {
            switch activity {
            case .connected(let info):
                guard let session = await connection.session else { continue }
                print(info.summary)
                print("")
                printer.resetOrigin()
                let live = LivePipeline(session: session, interaction: interaction, controls: nil, printer: printer)
                await live.synchroniseClocks()
                pipeline = live
                ticker = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(5))
                        await live.tick()
                    }
                }
            case .input(let event):
                await pipeline?.handle(event)
            case .disconnected(let error):
                ticker?.cancel()
                await pipeline?.deviceLost()
                await pipeline?.finish()
                pipeline = nil
                printer.note("device lost: \(error)")
                if args.flag("no-reconnect") {
                    lostForGood = true
                    await connection.stop()
                } else {
                    printer.note("waiting for \(port) to come back…")
                }
            case .connectFailed:
                break
            }
        }
        ticker?.cancel()
        await pipeline?.finish()
        if lostForGood {
            throw DeviceError(.closed, "the device went away")
        }
    }
}

/// Hands the session opened up front to the connection's first connect, once.
final class SessionHandOff: @unchecked Sendable {
    private let lock = NSLock()
    private var session: DeviceSession?
    init(_ session: DeviceSession) { self.session = session }
    func take() -> DeviceSession? {
        lock.withLock {
            defer { session = nil }
            return session
        }
    }
}
