import Synchronization

/// A `Mutex` in a class so it can be shared by reference; the one lock type this module uses.
///
/// Rule for every type here: never call out (device, executor, observer, action) while holding a lock.
final class Locked<State: Sendable>: Sendable {
    private let mutex: Mutex<State>

    init(_ state: State) { mutex = Mutex(state) }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try mutex.withLock { state in try body(&state) }
    }
}
