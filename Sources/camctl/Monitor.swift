import CameraControlCapture
import CameraControlDevice
import Foundation

/// `camctl monitor PORT`: input events, gestures and capture events as they arrive.
enum Monitor {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["seconds"], switches: [])
        let port = try args.required(0, "PORT")
        let seconds = try args.integer("seconds", default: 0)
        let session = try await DeviceSession.open(path: port)
        print(session.info.summary)
        print("")
        let printer = EventPrinter()
        let interaction = CaptureEventInteraction(
            soundPlayer: session,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        interaction.setSessionRunning(true)
        let pipeline = LivePipeline(session: session, interaction: interaction, controls: nil, printer: printer)
        await pipeline.synchroniseClocks()
        let clock = ContinuousClock()
        let end = seconds > 0 ? clock.now + .seconds(seconds) : nil
        do {
            try await pipeline.run(until: { end.map { clock.now >= $0 } ?? false })
        } catch {
            await pipeline.deviceLost()
            printer.note("device lost: \(error)")
            await pipeline.finish()
            await session.close()
            throw error  // exit status 1: the device went away
        }
        await pipeline.finish()
        await session.close()
    }
}
