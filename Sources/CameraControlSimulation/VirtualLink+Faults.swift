import CameraControlWire

/// A ``LinkFaults`` model installed on a ``VirtualLink``: one ``FaultInjector`` per direction, fed
/// and drained in the link's virtual time.
///
/// ```swift
/// let link = VirtualLink(seed: 1)
/// let faults = VirtualLinkFaults(try LinkFaults(spec: "corrupt=1%,drop-frame=1%,dup=1%"))
/// faults.install(on: link)
/// ```
///
/// Bytes a fault holds back (a stall, a frame held for reordering) leave with the next chunk that
/// crosses the link in the same direction after they fall due: heartbeats keep both directions moving.
/// ``LinkFaults/resetEveryMicros`` and ``LinkFaults/unplugEveryMicros`` are not applied here (a
/// harness reboots or unplugs the device itself, see ``ReliabilityRun``).
public final class VirtualLinkFaults {
    /// Host → device.
    public private(set) var toDevice: FaultInjector
    /// Device → host.
    public private(set) var toHost: FaultInjector
    /// False: bytes pass untouched (and uncounted), e.g. while connecting.
    public var isActive = true

    /// Injectors for `faults`, one per direction.
    public init(_ faults: LinkFaults) {
        toDevice = FaultInjector(faults: faults, stream: 1)
        toHost = FaultInjector(faults: faults, stream: 2)
    }

    /// What both directions did, added up.
    public var counts: FaultInjector.Counts { toDevice.counts + toHost.counts }

    /// Makes this the link's ``VirtualLink/linkFilter``.
    public func install(on link: VirtualLink) {
        link.linkFilter = { [unowned self, unowned link] direction, bytes in
            self.filter(direction, &bytes, now: link.nowMicros)
        }
    }

    /// Forgets bytes in flight both ways (an unplugged cable).
    public func flush() {
        toDevice.flush()
        toHost.flush()
    }

    private func filter(_ direction: VirtualLink.Direction, _ bytes: inout [UInt8], now: UInt64) {
        guard isActive else { return }
        switch direction {
        case .toDevice:
            toDevice.feed(bytes, atMicros: now)
            bytes = toDevice.take(atMicros: now)
        case .toHost:
            toHost.feed(bytes, atMicros: now)
            bytes = toHost.take(atMicros: now)
        }
    }
}

extension FaultInjector.Counts {
    /// Field-by-field sum.
    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.frames += rhs.frames
        sum.bytes += rhs.bytes
        sum.corruptedBytes += rhs.corruptedBytes
        sum.droppedBytes += rhs.droppedBytes
        sum.droppedFrames += rhs.droppedFrames
        sum.duplicatedFrames += rhs.duplicatedFrames
        sum.reorderedFrames += rhs.reorderedFrames
        sum.garbageBursts += rhs.garbageBursts
        sum.garbageBytes += rhs.garbageBytes
        sum.stalls += rhs.stalls
        sum.baudDamagedBytes += rhs.baudDamagedBytes
        return sum
    }
}
