import CameraControlCapture
import CameraControlGestures
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Dispatch
import Testing

@Suite("CaptureEventInteraction")
struct CaptureEventInteractionTests {
    @Test("init(handler:): one handler gets primary and volume-up events, synchronously")
    func singleHandler() {
        let seen = Recorder<String>()
        let interaction = CaptureEventInteraction(clock: ManualClock().captureClock) { seen.append("\($0.phase.rawValue) \($0.source)") }
        interaction.setSessionRunning(true)
        interaction.handle(click(.volumeUp) + click(.volumeDown, at: 500))
        #expect(seen.values == ["began volume-up", "ended volume-up", "began volume-down", "ended volume-down"])
    }

    @Test("init(primary:secondary:): volume up goes to secondary only; without secondary to primary")
    func primarySecondary() {
        let primary = Recorder<InputSource>()
        let secondary = Recorder<InputSource>()
        let both = CaptureEventInteraction(primary: { primary.append($0.source) }, secondary: { secondary.append($0.source) })
        both.setSessionRunning(true)
        both.handle(click(.volumeUp) + click(.actionButton, at: 300) + [gesture(600, .remoteClick, .remote)])
        #expect(primary.values == [.actionButton, .actionButton, .remote, .remote])
        #expect(secondary.values == [.volumeUp, .volumeUp])

        let onlyPrimary = Recorder<InputSource>()
        let single = CaptureEventInteraction(primary: { onlyPrimary.append($0.source) })
        single.setSessionRunning(true)
        single.handle(click(.volumeUp))
        #expect(onlyPrimary.values == [.volumeUp, .volumeUp])
    }

    @Test("not running: handlers are not called, the default-action handler is")
    func notRunning() {
        let seen = Recorder<CaptureEvent>()
        let defaults = Recorder<String>()
        let interaction = CaptureEventInteraction { seen.append($0) }
        interaction.defaultActionHandler = { defaults.append("\($0.phase.rawValue) \($0.action.rawValue)") }
        interaction.handle(click(.volumeDown))
        #expect(seen.values.isEmpty)
        #expect(defaults.values == ["began volumeDown", "ended volumeDown"])
        #expect(!interaction.isSessionRunning)
    }

    @Test("isEnabled false: default action; back to true: delivered again")
    func enabledToggle() {
        let seen = Recorder<CaptureEventPhase>()
        let defaults = Recorder<DefaultAction>()
        let interaction = CaptureEventInteraction { seen.append($0.phase) }
        interaction.defaultActionHandler = { defaults.append($0.action) }
        interaction.setSessionRunning(true)
        interaction.isEnabled = false
        #expect(!interaction.isEnabled)
        interaction.handle(click(.cameraControl))
        interaction.isEnabled = true
        interaction.handle(click(.cameraControl, at: 500))
        #expect(defaults.values == [.launchCamera, .launchCamera])
        #expect(seen.values == [.began, .ended])
    }

    @Test("session stopped mid-press and device lost mid-press: cancelled")
    func cancellations() {
        let seen = Recorder<String>()
        let interaction = CaptureEventInteraction { seen.append("\($0.phase.rawValue) \($0.source)") }
        interaction.setSessionRunning(true)
        interaction.handle(gesture(0, .pressBegan, .volumeDown))
        interaction.setSessionRunning(false)
        interaction.handle(gesture(100, ended(100), .volumeDown))
        interaction.setSessionRunning(true)
        interaction.handle(gesture(200, .pressBegan, .actionButton))
        interaction.deviceLost()
        #expect(seen.values == ["began volume-down", "cancelled volume-down", "began action-button", "cancelled action-button"])
    }

    @Test("events stream: every delivered event, in order, to each subscriber")
    func eventsStream() async {
        let interaction = CaptureEventInteraction()
        let first = interaction.events
        let second = interaction.events
        interaction.setSessionRunning(true)
        interaction.handle(click(.volumeUp) + click(.cameraControl, at: 300))
        var a: [String] = []
        for await event in first {
            a.append("\(event.phase.rawValue) \(event.source)")
            if a.count == 4 { break }
        }
        var b: [CaptureEventID] = []
        for await event in second {
            b.append(event.id)
            if b.count == 4 { break }
        }
        #expect(a == ["began volume-up", "ended volume-up", "began camera-control", "ended camera-control"])
        #expect(b.count == 4 && b[0] == b[1] && b[2] == b[3] && b[0] != b[2])
    }

    @Test("an events stream ends when the interaction is released")
    func streamEndsOnRelease() async {
        var interaction: CaptureEventInteraction? = CaptureEventInteraction()
        let stream = interaction!.events
        interaction!.setSessionRunning(true)
        interaction!.handle(gesture(0, .remoteClick, .remote))
        interaction = nil
        var count = 0
        for await _ in stream { count += 1 }  // would hang if the stream were never finished
        #expect(count == 2)
    }

    @Test("a handler that calls back into the interaction does not deadlock; order holds")
    func reentrantHandler() {
        let seen = Recorder<String>()
        let box = Recorder<CaptureEventInteraction>()
        let interaction = CaptureEventInteraction { event in
            seen.append("\(event.phase.rawValue) \(event.source)")
            if event.phase == .began, let me = box.values.first { me.setSessionRunning(false) }  // stop mid-press
        }
        box.append(interaction)
        interaction.setSessionRunning(true)
        interaction.handle(gesture(0, .pressBegan, .volumeDown))
        interaction.handle(gesture(100, ended(100), .volumeDown))
        #expect(seen.values == ["began volume-down", "cancelled volume-down"])
    }

    @Test("queue delivery: handlers run on the given queue, in order")
    func queueDelivery() async {
        let queue = DispatchQueue(label: "capture-test")
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let interaction = CaptureEventInteraction(delivery: .queue(queue)) { event in
            dispatchPrecondition(condition: .onQueue(queue))
            continuation.yield("\(event.phase.rawValue) \(event.source)")
        }
        interaction.setSessionRunning(true)
        interaction.handle(click(.actionButton))
        var seen: [String] = []
        for await item in stream {
            seen.append(item)
            if seen.count == 2 { break }
        }
        #expect(seen == ["began action-button", "ended action-button"])
    }

    @Test("event.play(): through the interaction's player, only for remote clicks, only within 15 s")
    func playThroughInteraction() async throws {
        let player = RecordingSoundPlayer()
        let clock = ManualClock()
        let seen = Recorder<CaptureEvent>()
        let interaction = CaptureEventInteraction(soundPlayer: player, clock: clock.captureClock) { seen.append($0) }
        interaction.defaultCaptureSoundDisabled = true
        #expect(interaction.defaultCaptureSoundDisabled)
        interaction.setSessionRunning(true)
        interaction.handle([gesture(0, .remoteClick, .remote)] + click(.volumeDown, at: 100))
        let remoteEnded = seen.values[1]
        let buttonEnded = seen.values[3]
        #expect(remoteEnded.shouldPlaySound && !buttonEnded.shouldPlaySound)
        #expect(try await remoteEnded.play(.shutter))
        #expect(try await !buttonEnded.play(.shutter))
        clock.advance(byMicros: 15_000_001)
        #expect(try await !remoteEnded.play(.shutter))
        #expect(player.sounds == [.shutter])
    }

    @Test("the default remote-click sound is played through the player when the app does not play its own")
    func defaultSound() async {
        let player = RecordingSoundPlayer()
        let interaction = CaptureEventInteraction(soundPlayer: player) { _ in }
        interaction.setSessionRunning(true)
        interaction.handle(gesture(0, .remoteClick, .remote))
        var played: [Sound] = []
        for await sound in player.stream {
            played.append(sound)
            break
        }
        #expect(played == [.shutter])
    }

    @Test("fed from many threads at once: every began is closed exactly once")
    func concurrentFeeding() async {
        let seen = Recorder<CaptureEvent>()
        let interaction = CaptureEventInteraction { seen.append($0) }
        interaction.setSessionRunning(true)
        let sources: [InputSource] = [.volumeUp, .volumeDown, .actionButton, .cameraControl]
        await withTaskGroup(of: Void.self) { group in
            for source in sources {
                group.addTask {
                    for index in 0..<200 { interaction.handle(click(source, at: UInt64(index) * 1000)) }
                }
            }
            group.addTask {
                for index in 0..<50 { interaction.setSessionRunning(index % 2 == 1) }
                interaction.setSessionRunning(true)
            }
        }
        interaction.deviceLost()
        var phases: [CaptureEventID: [CaptureEventPhase]] = [:]
        for event in seen.values { phases[event.id, default: []].append(event.phase) }
        #expect(!phases.isEmpty)
        #expect(phases.values.allSatisfy { $0 == [.began, .ended] || $0 == [.began, .cancelled] })
    }
}
