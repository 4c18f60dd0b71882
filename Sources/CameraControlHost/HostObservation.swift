import Synchronization

/// A closure registered on a ``CameraControlHost`` (``CameraControlHost/observe(_:)``,
/// ``CameraControlHost/onConnect(_:)``): ``cancel()`` removes it. Keep it for as long as the closure should
/// be called; the host holds the closure (and what it captures) until then, or until the host is gone.
public final class HostObservation: Sendable {
    private let cancelled = Atomic(false)
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Stops the calls: none starts after this returns (one running on the host's loop finishes). The host
    /// then lets go of the closure. Calling it again does nothing.
    public func cancel() {
        guard cancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        onCancel()
    }
}
