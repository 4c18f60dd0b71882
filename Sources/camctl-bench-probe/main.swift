// camctl-bench-probe: one host taking volume-down presses from a port, for `camctl-bench presspath` to run
// under valgrind's callgrind (docs/PERFORMANCE.md).
//
//   camctl-bench-probe PORT PRESSES            this project's host: CameraControlHost and a capture interaction
//   camctl-bench-probe --c-host PORT PRESSES   the minimal C host of `camctl-bench paced` (CBenchSupport)
//
// Each host calls `cc_bench_press_handled()` once for each volume-down press: this project's in its capture
// handler (the press's `began`), the C host right after it unpacked the press's InputEvent. It exits 0 once
// PRESSES presses were handled, 1 when they did not come within their time (PRESSES × 0.2 s + 30 s: the host
// runs tens of times slower under callgrind) or the port failed, 2 for bad arguments.
//
// The main thread is synchronous and waits on a semaphore: callgrind (valgrind 3.19) stops with an internal
// error in the `sigsuspend()` an `async` main's thread parks in.
import CBenchSupport
import CameraControlCapture
import CameraControlHost
import CameraControlPorts
import Dispatch
import Foundation
import Synchronization

/// Standard error, one line, then the exit status.
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("camctl-bench-probe: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let cHost = arguments.first == "--c-host"
if cHost { arguments.removeFirst() }
guard arguments.count == 2, !arguments[0].isEmpty, let presses = Int(arguments[1]), presses > 0 else {
    fail("usage: camctl-bench-probe [--c-host] PORT PRESSES", status: 2)
}
let port = arguments[0]
let timeout = Double(presses) * 0.2 + 30

if cHost {
    var stored = [cc_bench_press_t](repeating: cc_bench_press_t(), count: presses)
    var counts = cc_bench_press_host_counts_t()
    let count = cc_bench_press_host_run(port, presses, timeout, &stored, &counts)
    guard count >= 0 else { fail("cannot open \(port): \(String(cString: strerror(errno)))", status: 1) }
    guard count == presses else { fail("\(count) of \(presses) presses came", status: 1) }
    exit(0)
}

/// The presses handled so far.
let handled = Atomic<Int>(0)
let done = DispatchSemaphore(value: 0)
/// The outcome, set once before `done` is signalled.
let outcome = Mutex<String?>(nil)
Task.detached {
    do {
        let interaction = CaptureEventInteraction { event in
            guard event.phase == .began, event.source == .volumeDown else { return }
            cc_bench_press_handled()
            if handled.add(1, ordering: .relaxed).newValue == presses { done.signal() }
        }
        // Attached before the host starts: the simulator plays its clicks once the input stream is open,
        // which under callgrind comes long before the clock estimate `connect` waits for.
        let host = try await CameraControlHost.connect(to: port, hostName: "camctl-bench-probe") { host in
            await host.attach(interaction)
            interaction.setSessionRunning(true)
        }
        try? await Task.sleep(for: .seconds(timeout))
        withExtendedLifetime(host) {}
        outcome.withLock { $0 = "\(handled.load(ordering: .relaxed)) of \(presses) presses came" }
        done.signal()
    } catch {
        outcome.withLock { $0 = "\(port): \(error)" }
        done.signal()
    }
}
done.wait()
if let failure = outcome.withLock({ $0 }) { fail(failure, status: 1) }
exit(0)
