// libFuzzer harness (scripts/fuzz pipeline): a hostile event stream into the host pipeline (HostCore:
// orderer, recogniser, capture interactions), with the app switching its session and enablement, and
// the device coming and going.
//
// The input is a script of records: `00 k s f p d` an input event (kind, source, force, position, and a
// step of the event number and of device time: repeated, skipped and out-of-order numbers and
// timestamps included), `01 t` host time passes, `02` device lost, `03` connected, `04` session
// running toggled, `05` interaction enabled toggled.
//
// Properties (the pairing guarantees): never a crash; every `began` has a fresh id; every `ended` or
// `cancelled` closes a press that began and is still open, exactly once; after the device is lost no
// press is open.
import CameraControlCapture
import CameraControlGestures
import CameraControlHost
import CameraControlWire
import Synchronization

final class PairingCheck: Sendable {
    private let state = Mutex<(open: Set<CaptureEventID>, seen: Set<CaptureEventID>)>(([], []))

    func observe(_ output: CaptureRouterOutput) {
        guard case .event(let event, _) = output else { return }
        state.withLock { state in
            switch event.phase {
            case .began:
                precondition(!state.seen.contains(event.id), "\(event.id) began twice")
                state.seen.insert(event.id)
                state.open.insert(event.id)
            case .ended, .cancelled:
                precondition(state.open.contains(event.id), "\(event.id) \(event.phase) without an open began")
                state.open.remove(event.id)
            }
        }
    }

    var openPresses: Int { state.withLock { $0.open.count } }
}

final class HostTime: Sendable {
    let micros = Atomic<UInt64>(1_000_000)
}

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPipeline(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = ArraySlice(UnsafeBufferPointer(start: data, count: size))
    let time = HostTime()
    let check = PairingCheck()
    let clock = CaptureClock { time.micros.load(ordering: .relaxed) }
    let core = HostCore()
    let interaction = CaptureEventInteraction(clock: clock, primary: { _ in }, secondary: { _ in })
    interaction.outputObserver = { check.observe($0) }
    core.attach(interaction)
    interaction.setSessionRunning(true)
    core.connected(Capabilities())
    var now: UInt64 = 1_000_000
    var deviceTime: UInt64 = 1_000_000
    var number: UInt32 = 1

    while let record = bytes.popFirst() {
        switch record % 6 {
        case 0:
            let fields = Array(bytes.prefix(5))
            bytes = bytes.dropFirst(fields.count)
            guard fields.count == 5 else { break }
            let step = fields[4]
            // Mostly the next number; sometimes a repeat, a skip or a step back.
            switch step & 0x7 {
            case 0: break
            case 1: number &+= UInt32(step >> 3)
            case 2: number &-= UInt32(step >> 3)
            default: number &+= 1
            }
            deviceTime &+= UInt64(step >> 3) * 4_000
            let kinds = InputEventKind.allCases
            let sources = InputSource.allCases
            var event = InputEvent()
            event.kind = kinds[Int(fields[0]) % kinds.count]
            event.source = sources[Int(fields[1]) % sources.count]
            event.forceMillinewtons = UInt32(fields[2]) * 40
            event.peakForceMillinewtons = UInt32(fields[2]) * 50
            event.position = UInt32(fields[3]) * 4
            event.eventNumber = number
            event.timestampMicros = deviceTime
            core.receive(event, atHostMicros: now)
        case 1:
            now += UInt64(bytes.popFirst() ?? 1) * 5_000
            time.micros.store(now, ordering: .relaxed)
        case 2:
            core.deviceLost(atHostMicros: now)
            precondition(check.openPresses == 0, "presses still open after the device was lost")
        case 3:
            core.connected(Capabilities())
        case 4:
            interaction.setSessionRunning(!interaction.isSessionRunning)
        default:
            interaction.isEnabled.toggle()
        }
        core.advance(toHostMicros: now)
    }
    core.deviceLost(atHostMicros: now)
    precondition(check.openPresses == 0, "presses still open after the device was lost")
    return 0
}
