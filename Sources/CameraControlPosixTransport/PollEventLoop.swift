import CameraControlTransport
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One thread that runs the links registered on it and the jobs of everything that uses it as its
/// executor: the ``EventLoop`` of serial ports and pseudo-terminals.
///
/// The thread sleeps in one `poll()` over every registered descriptor and a wake-up pipe, with the
/// earliest of the links' timers as its timeout. When it wakes it hands each read to its link's
/// ``EventLoopDelegate`` in place, writes what a device can take, fires due timers, and runs the jobs
/// that were enqueued meanwhile: those of actors whose executor it is (`unownedExecutor`) and of tasks
/// that prefer it (`withTaskExecutorPreference`). A job resumed by a delegate call (a stream's consumer,
/// an actor reading input events) runs right after that call on the same thread: from the device's
/// bytes to an app's handler, no thread hop.
///
/// ```
///   poll() ──▶ read ──▶ delegate (RPC core) ──▶ resumes a job ──▶ job runs (actor, handler) ──┐
///     ▲                                                                                       │
///     └──────────────── next due timer, next byte, a job enqueued from another thread ◀───────┘
/// ```
///
/// Jobs must not block: while one runs, no link is read. ``shutdown()`` lets the thread end once its
/// links have ended; jobs enqueued after that run in order on a serial dispatch queue, so an actor on a
/// finished loop still works (without the loop's thread).
public final class PollEventLoop: EventLoop, @unchecked Sendable {
    /// The thread's name for the OS.
    public let name: String
    /// The OS calls the loop and its links make.
    let system: SystemCalls
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// Where jobs run once the thread has ended, one at a time, in order.
    private let fallback: DispatchQueue

    // Under `lock`:
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private var registrations: [LoopRegistration] = []
    private var shuttingDown = false
    private var threadEnded = false
    /// The loop's thread while it runs (``threadID(_:)``), 0 before and after: read without the lock, so
    /// ``isCurrent`` (asked several times on every message's way to its handler) takes none.
    private let runningThread = Atomic<UInt>(0)
    /// The thread is (about to be) asleep in `poll()` until this time (nil: no timeout) — a registration
    /// whose timer comes earlier, or a job from another thread, must wake it.
    private var asleep = false
    private var sleepingUntil: ContinuousClock.Instant?
    /// The scheduled bodies (``schedule(after:_:)``), earliest first.
    private var timers = TimerHeap()
    /// `CLOCK_MONOTONIC` in nanoseconds when the thread's last `poll()` returned: `camctl-bench paced` takes
    /// a handler's time minus this as the host's own work on the wake-up that brought a press. Read it on
    /// the loop's thread (in a delegate call, a job or a handler); elsewhere it is a moving value.
    package private(set) var lastWakeUpNanos: UInt64 = 0

    /// A loop with its own thread named `name` (at most 15 characters are kept on Linux).
    ///
    /// - Throws: ``TransportError/Code/openFailed`` when no wake-up pipe can be made.
    public convenience init(name: String = "cc-event-loop") throws(TransportError) {
        try self.init(name: name, system: .live)
    }

    /// A loop whose OS calls go through `system`.
    package init(name: String, system: SystemCalls) throws(TransportError) {
        let ends: (read: Int32, write: Int32)
        switch system.pipe() {
        case .success(let pipe): ends = pipe
        case .failure(let error):
            throw TransportError(code: .openFailed, message: "cannot create the event loop's wake-up pipe", errno: error.rawValue)
        }
        for end in [ends.read, ends.write] {
            _ = system.setCloseOnExec(end)
            _ = system.setNonblocking(end)
        }
        self.name = name
        self.system = system
        self.wakeRead = ends.read
        self.wakeWrite = ends.write
        self.fallback = DispatchQueue(label: "cameracontrol.\(name).after-end")
        startNamedThread(name) { [self] in run() }
    }

    /// Lets the thread end once no link is registered any more (at once when none is). Idempotent.
    public func shutdown() {
        lock.lock()
        let wakeNeeded = !shuttingDown && !threadEnded && !onLoopThread
        shuttingDown = true
        lock.unlock()
        if wakeNeeded { wake() }
    }

    deinit {
        // Closed only now: a pipe closed when the thread ends could be written to by a late wake() (a
        // SIGPIPE, or a write into whatever reused the descriptor).
        _ = system.close(wakeRead)
        _ = system.close(wakeWrite)
    }

    // MARK: Executors

    /// Queues `job` for the loop's thread (run after the current delegate call or job, in order).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        if threadEnded {
            lock.unlock()
            fallback.async { [self] in run(job) }
            return
        }
        jobs.append(job)
        let wakeNeeded = jobs.count == 1 && asleep && !onLoopThread
        lock.unlock()
        if wakeNeeded { wake() }
    }

    /// The loop as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The loop as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the process unless the caller runs on the loop (its thread, or its queue after the end).
    public func checkIsolated() {
        precondition(isCurrent, "not on the event loop \(name)")
    }

    /// True on the loop's thread, or (once it ended) on the queue that runs its jobs.
    public var isCurrent: Bool {
        if onLoopThread { return true }
        lock.lock()
        let ended = threadEnded
        lock.unlock()
        guard ended else { return false }
        return DispatchQueue.getSpecific(key: Self.fallbackKey) == ObjectIdentifier(self)
    }

    private static let fallbackKey = DispatchSpecificKey<ObjectIdentifier>()

    private func run(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    // MARK: Timers

    /// Runs `body` on the loop's thread `delay` from now, unless cancelled (see
    /// ``EventLoop/schedule(after:_:)``). After the thread has ended, on the queue that runs its jobs.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> LoopTimer {
        let timer = LoopTimer()
        let deadline = ContinuousClock.now.advanced(by: max(delay, .zero))
        lock.lock()
        if threadEnded {
            lock.unlock()
            let (seconds, attoseconds) = max(delay, .zero).components
            let nanos = Int(min(seconds, 86_400 * 365)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            fallback.asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
                if !timer.isCancelled { body() }
            }
            return timer
        }
        timers.insert(deadline: deadline, timer: timer, body: body)
        let wakeNeeded = timerMovedLocked(to: deadline)
        lock.unlock()
        if wakeNeeded { wake() }
        return timer
    }

    /// Takes the scheduled bodies due by `now` (under `lock`), and returns the next deadline after them.
    private func takeDueTimersLocked(now: ContinuousClock.Instant, into due: inout [@Sendable () -> Void]) -> ContinuousClock.Instant? {
        while let first = timers.first {
            if first.timer.isCancelled {
                timers.removeFirst()
                continue
            }
            guard first.deadline <= now else { return first.deadline }
            timers.removeFirst()
            due.append(first.body)
        }
        return nil
    }

    // MARK: Links

    /// Registers `descriptor` (open, non-blocking) for `delegate`: from now on the loop reads it, writes
    /// to it and times it. `onEnd` runs on the loop's thread after the delegate heard the ending, once the
    /// loop no longer touches the descriptor.
    package func register(
        descriptor: Int32, name: String, delegate: any EventLoopDelegate, onEnd: @escaping @Sendable () -> Void
    ) -> LoopRegistration {
        let registration = LoopRegistration(
            loop: self, descriptor: descriptor, name: name, isTerminal: system.isTerminal(descriptor), delegate: delegate,
            onEnd: onEnd)
        lock.lock()
        let accepted = !threadEnded
        if accepted { registrations.append(registration) }
        let wakeNeeded = accepted && !onLoopThread
        lock.unlock()
        if wakeNeeded {
            wake()
        } else if !accepted {
            fallback.async {
                registration.delegate.eventLoopEnded(TransportError(code: .closed, message: "the event loop has ended"))
                onEnd()
            }
        }
        return registration
    }

    // MARK: Inside

    /// True on the loop's own thread (one atomic load, no lock).
    var onLoopThread: Bool {
        let running = runningThread.load(ordering: .acquiring)
        return running != 0 && running == Self.threadID(pthread_self())
    }

    /// A thread's id as a number for ``runningThread`` (never 0 for a live thread).
    private static func threadID(_ thread: pthread_t) -> UInt {
        #if canImport(Darwin)
            UInt(bitPattern: thread)
        #else
            UInt(thread)
        #endif
    }

    /// Takes the loop's lock for a registration's state (the loop's state and its links' share one lock).
    func withLock<Result>(_ body: () -> Result) -> Result {
        lock.withLock(body)
    }

    /// A registration's timer moved to `deadline` (under `lock`): true when the sleeping thread must wake
    /// for it (call ``wake()`` after unlocking).
    func timerMovedLocked(to deadline: ContinuousClock.Instant) -> Bool {
        guard asleep, !onLoopThread else { return false }
        return sleepingUntil.map { deadline < $0 } ?? true
    }

    /// A registration needs the thread's attention (bytes to write, an ending) — true when it must be woken.
    func attentionNeededLocked() -> Bool {
        asleep && !onLoopThread
    }

    /// Wakes the thread out of `poll()` (one byte on the self-pipe; a full pipe wakes it already).
    func wake() {
        let one: [UInt8] = [1]
        _ = one.withUnsafeBytes { system.write(wakeWrite, $0) }
    }

    /// `CLOCK_MONOTONIC`, ns (the vDSO: no system call).
    private static func monotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// A `poll()` timeout in whole milliseconds that does not end before `remaining` (at most a day).
    static func pollTimeout(_ remaining: Duration) -> Int32 {
        let (seconds, attoseconds) = remaining.components
        if seconds >= 86_400 { return 86_400_000 }
        let millis = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(1, millis))
    }

    /// Runs the jobs queued so far; true when any ran. The thread is awake.
    private func runJobs() -> Bool {
        lock.lock()
        asleep = false
        sleepingUntil = nil
        guard !jobs.isEmpty else {
            lock.unlock()
            return false
        }
        let ready = jobs
        jobs.removeAll(keepingCapacity: true)
        lock.unlock()
        for job in ready { run(job) }
        return true
    }

    /// The thread's body.
    private func run() {
        runningThread.store(Self.threadID(pthread_self()), ordering: .releasing)
        fallback.setSpecific(key: Self.fallbackKey, value: ObjectIdentifier(self))
        var fds: [pollfd] = []
        var polled: [LoopRegistration] = []
        var due: [LoopRegistration] = []
        var dueBodies: [@Sendable () -> Void] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            while runJobs() {}
            // Links that ended (closed, failed writes) leave; due timers fire.
            lock.lock()
            let now = ContinuousClock.now
            var ended: [LoopRegistration] = []
            var earliest: ContinuousClock.Instant?
            registrations.removeAll { registration in
                if registration.endingLocked != nil {
                    // A local close still sends what was written before it (the ACK of the last reply),
                    // and keeps the descriptor open while those bytes are on the line.
                    if let lingering = registration.lingerAfterCloseLocked(now: now) {
                        if earliest.map({ lingering < $0 }) ?? true { earliest = lingering }
                        return false
                    }
                    ended.append(registration)
                    return true
                }
                return false
            }
            due.removeAll(keepingCapacity: true)
            for registration in registrations where registration.endingLocked == nil {
                // What was written on this thread (during delegate calls and jobs) goes out now.
                if registration.wantsToWriteLocked { registration.flushPendingLocked() }
                guard let deadline = registration.timerDeadlineLocked else { continue }
                if deadline <= now {
                    registration.timerDeadlineLocked = nil
                    due.append(registration)
                } else if earliest.map({ deadline < $0 }) ?? true {
                    earliest = deadline
                }
            }
            dueBodies.removeAll(keepingCapacity: true)
            if let next = takeDueTimersLocked(now: now, into: &dueBodies), earliest.map({ next < $0 }) ?? true {
                earliest = next
            }
            if !ended.isEmpty || !due.isEmpty || !jobs.isEmpty || !dueBodies.isEmpty {
                lock.unlock()
                for registration in ended { registration.finish() }
                for registration in due { registration.delegate.eventLoopTimerFired() }
                for body in dueBodies { body() }
                continue
            }
            if shuttingDown && registrations.isEmpty {
                threadEnded = true
                // The ending thread's id may be given to the next thread the process makes: from now on
                // only the fallback queue is the loop (`isCurrent`, `checkIsolated`). No job is left for
                // this thread (`jobs` was empty just above, and later ones go to the queue).
                runningThread.store(0, ordering: .releasing)
                lock.unlock()
                break
            }
            fds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            for registration in registrations where registration.endingLocked == nil {
                let events = (registration.readingLocked ? POLLIN : 0) | (registration.wantsToWriteLocked ? POLLOUT : 0)
                fds.append(pollfd(fd: registration.descriptor, events: Int16(events), revents: 0))
                polled.append(registration)
            }
            asleep = true
            sleepingUntil = earliest
            lock.unlock()
            let timeout = earliest.map { Self.pollTimeout(now.duration(to: $0)) } ?? -1
            let result = system.poll(&fds, timeout)
            lastWakeUpNanos = Self.monotonicNanos()
            // `asleep` stays set until the next lock of the loop (``runJobs()``): what the wake-up brought
            // is read first, with no lock before it. Another thread meanwhile may write a wake-up byte it
            // did not need; the next poll() drains it.
            if case .failure(let failure) = result {
                if failure.rawValue == EINTR || failure.rawValue == EAGAIN { continue }
                // poll() itself failed: every link ends with the error.
                let error = TransportError(code: .io, message: "poll in \(name) failed", errno: failure.rawValue)
                for registration in polled { registration.end(with: error) }
                continue
            }
            if fds[0].revents != 0 {
                _ = drain.withUnsafeMutableBytes { system.read(wakeRead, $0) }
            }
            for (index, registration) in polled.enumerated() {
                let events = Int32(fds[index + 1].revents)
                if events != 0 { registration.handle(events: events, buffer: &buffer, system: system) }
            }
        }
        // Ended: what is still queued runs here; later jobs run on the fallback queue, and so do the
        // bodies still scheduled, at their time.
        while runJobs() {}
        lock.lock()
        var left: [TimerHeap.Entry] = []
        while let first = timers.first {
            timers.removeFirst()
            left.append(first)
        }
        lock.unlock()
        let now = ContinuousClock.now
        for entry in left where !entry.timer.isCancelled {
            let (seconds, attoseconds) = max(now.duration(to: entry.deadline), .zero).components
            let nanos = Int(min(seconds, 86_400 * 365)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            fallback.asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
                if !entry.timer.isCancelled { entry.body() }
            }
        }
    }
}

/// The loop's scheduled bodies as a binary min-heap on (deadline, order set): the earliest is first,
/// ties in the order they were scheduled.
struct TimerHeap {
    /// One scheduled body.
    struct Entry {
        var deadline: ContinuousClock.Instant
        var order: UInt64
        var timer: LoopTimer
        var body: @Sendable () -> Void

        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && order < other.order)
        }
    }

    private var entries: [Entry] = []
    private var nextOrder: UInt64 = 0

    /// The earliest entry.
    var first: Entry? { entries.first }

    /// Adds a body due at `deadline`.
    mutating func insert(deadline: ContinuousClock.Instant, timer: LoopTimer, body: @escaping @Sendable () -> Void) {
        entries.append(Entry(deadline: deadline, order: nextOrder, timer: timer, body: body))
        nextOrder &+= 1
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the earliest entry.
    mutating func removeFirst() {
        guard !entries.isEmpty else { return }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].precedes(entries[smallest]) { smallest = left }
            if right < entries.count && entries[right].precedes(entries[smallest]) { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// A descriptor registered on a ``PollEventLoop``: its delegate, its timer, its queue of bytes to write
/// and its reading state. Its mutable state is guarded by the loop's lock.
package final class LoopRegistration: EventLoopControl, @unchecked Sendable {
    /// How many bytes may wait to be written before the link ends with ``TransportError/Code/io``.
    package static let writeQueueLimit = 1 << 20

    let loop: PollEventLoop
    let descriptor: Int32
    let name: String
    let isTerminal: Bool
    let delegate: any EventLoopDelegate
    private let onEnd: @Sendable () -> Void

    // Under the loop's lock:
    /// When ``EventLoopDelegate/eventLoopTimerFired()`` is due.
    var timerDeadlineLocked: ContinuousClock.Instant?
    /// Why the link ends (set once): it leaves the loop at the next turn.
    var endingLocked: TransportError? {
        didSet { hasEnding.store(endingLocked != nil, ordering: .releasing) }
    }
    /// Whether ``endingLocked`` is set, readable without the lock: the loop's thread checks it before every
    /// read, the first thing it does when a device's bytes wake it.
    private let hasEnding = Atomic<Bool>(false)
    /// Whether the loop reads the descriptor (``setReading(_:)``).
    var readingLocked = true
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var finished = false
    /// The link ends by a local ``close(_:)``: what waits to be written still goes, once.
    private var closing = false
    /// When the bytes written so far have left on the line (at ``lineNanosPerByte``).
    private var lineFreeAt: ContinuousClock.Instant?
    /// Until when a closed link stays open, fixed at its first turn after ``close(_:)``.
    private var lingerUntil: ContinuousClock.Instant?

    // The loop's thread only:
    private var emptyReads = 0

    init(
        loop: PollEventLoop, descriptor: Int32, name: String, isTerminal: Bool, delegate: any EventLoopDelegate,
        onEnd: @escaping @Sendable () -> Void
    ) {
        self.loop = loop
        self.descriptor = descriptor
        self.name = name
        self.isTerminal = isTerminal
        self.delegate = delegate
        self.onEnd = onEnd
    }

    /// Bytes wait to be written (under the loop's lock).
    var wantsToWriteLocked: Bool { pendingStart < pending.count }

    /// The loop's thread, as the link's task executor.
    package var taskExecutor: any TaskExecutor { loop }

    // MARK: EventLoopControl

    /// Writes what the descriptor takes now and queues the rest (see ``EventLoopControl/write(_:)``).
    ///
    /// On the loop's own thread (a delegate call, a job) the bytes are queued and written once the jobs
    /// ready to run have run, just before the loop sleeps: an `ACK` goes out after the handler of the
    /// message it acknowledges, not before it.
    package func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        let wakeNeeded: Bool = loop.withLock {
            guard endingLocked == nil, !finished else { return false }
            let wasIdle = pendingStart == pending.count
            var offset = 0
            if wasIdle && !loop.onLoopThread { offset = writeSomeLocked(bytes) }
            if endingLocked != nil { return loop.attentionNeededLocked() }
            guard offset < bytes.count else { return false }
            if wasIdle {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if pending.count - pendingStart > Self.writeQueueLimit {
                endingLocked = TransportError(
                    code: .io, message: "\(name) does not read: \(Self.writeQueueLimit) bytes wait to be written")
            }
            return loop.attentionNeededLocked()
        }
        if wakeNeeded { loop.wake() }
    }

    /// The system's monotonic time (see ``EventLoopControl/now``).
    package var now: Duration { LoopTime.now }

    /// True: ``now`` is `CLOCK_MONOTONIC` (``LoopTime``).
    package var readsSystemClock: Bool { true }

    /// Stops or resumes reading the descriptor (a consumer whose buffer is full, then drained); writes,
    /// the timer and the end of the stream still work while reading is off.
    package func setReading(_ reading: Bool) {
        let wakeNeeded: Bool = loop.withLock {
            guard readingLocked != reading else { return false }
            readingLocked = reading
            return reading && endingLocked == nil && loop.attentionNeededLocked()
        }
        if wakeNeeded { loop.wake() }
    }

    /// Why the link ends or ended, once it does.
    package var ending: TransportError? { loop.withLock { endingLocked } }

    /// Sets the link's timer (see ``EventLoopControl/setTimer(after:)``).
    package func setTimer(after delay: Duration?) {
        let deadline = delay.map { ContinuousClock.now.advanced(by: $0) }
        let wakeNeeded: Bool = loop.withLock {
            timerDeadlineLocked = deadline
            guard let deadline, endingLocked == nil else { return false }
            return loop.timerMovedLocked(to: deadline)
        }
        if wakeNeeded { loop.wake() }
    }

    // MARK: Ending

    /// Ends the link (a local close, or a failure found off the loop's thread): it leaves the loop at its
    /// next turn and its delegate hears `error`. Only the first ending counts.
    package func end(with error: TransportError) {
        let wakeNeeded: Bool = loop.withLock {
            guard endingLocked == nil, !finished else { return false }
            endingLocked = error
            return loop.attentionNeededLocked()
        }
        if wakeNeeded { loop.wake() }
    }

    /// Ends the link by a local close: like ``end(with:)``, but the bytes written before (an `ACK`, a
    /// `CANCEL`) are still written once, as far as the descriptor takes them without blocking, before the
    /// link leaves the loop. A peer that stops reading loses them, never the loop its time.
    package func close(_ error: TransportError) {
        let wakeNeeded: Bool = loop.withLock {
            guard endingLocked == nil, !finished else { return false }
            endingLocked = error
            closing = true
            return loop.attentionNeededLocked()
        }
        if wakeNeeded { loop.wake() }
    }

    /// The time one byte takes on the line at the protocol's 115200 baud, 8N1 (10 bits): a closed link
    /// stays open this long per byte it wrote last, so a device modelling its line hears them whole.
    static let lineNanosPerByte: Int64 = 10 * 1_000_000_000 / 115_200
    /// The longest a closed link lingers, counted from the loop's first turn after the close.
    static let maxLinger: Duration = .milliseconds(250)

    /// On the loop's thread, as a closed link leaves (see ``close(_:)``): writes once what waits, then
    /// returns the time until which the descriptor stays open (the bytes are on the line), or nil when the
    /// link may leave now. That time is fixed at the first call: a link that wrote faster than the modelled
    /// line (a pty takes a second's worth of 115200 baud in microseconds) still leaves after ``maxLinger``.
    func lingerAfterCloseLocked(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard closing else { return nil }
        if pendingStart < pending.count {
            let ending = endingLocked
            endingLocked = nil
            flushPendingLocked()
            endingLocked = ending
            pending = []
            pendingStart = 0
        }
        if lingerUntil == nil { lingerUntil = min(lineFreeAt ?? now, now.advanced(by: Self.maxLinger)) }
        guard let until = lingerUntil, until > now else {
            closing = false
            return nil
        }
        return until
    }

    /// On the loop's thread, once it left the loop: tells the delegate, then the link's owner.
    func finish() {
        let error: TransportError? = loop.withLock {
            guard !finished else { return nil }
            finished = true
            timerDeadlineLocked = nil
            pending = []
            pendingStart = 0
            return endingLocked
        }
        guard let error else { return }
        delegate.eventLoopEnded(error)
        onEnd()
    }

    // MARK: I/O on the loop's thread

    /// `poll()` reported `events` on the descriptor: write what waits, read what came.
    func handle(events: Int32, buffer: inout [UInt8], system: SystemCalls) {
        if events & Int32(POLLNVAL) != 0 {
            end(with: TransportError(code: .io, message: "\(name): descriptor is not open"))
            return
        }
        if events & Int32(POLLOUT) != 0 {
            loop.withLock { flushPendingLocked() }
        }
        guard events & Int32(POLLIN | POLLHUP | POLLERR) != 0 else { return }
        guard !hasEnding.load(ordering: .acquiring) else { return }
        switch FileDescriptorLink.readOnce(
            system: system, descriptor: descriptor, name: name, into: &buffer, events: events, isTerminal: isTerminal,
            emptyReads: &emptyReads)
        {
        case .bytes(let count):
            buffer.withUnsafeBytes { delegate.eventLoopReceived(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        case .again:
            break
        case .end(let error):
            end(with: error)
        }
    }

    /// Writes from `bytes` until the descriptor would block; returns how many were written. A failure ends
    /// the link. Call under the loop's lock.
    private func writeSomeLocked(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while offset < bytes.count {
            switch loop.system.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .success(let written):
                offset += written
                let now = ContinuousClock.now
                lineFreeAt = max(lineFreeAt ?? now, now).advanced(by: .nanoseconds(Int64(written) * Self.lineNanosPerByte))
            case .failure(let failure):
                switch failure.rawValue {
                case EINTR:
                    continue
                case EAGAIN:
                    return offset
                case EIO, EPIPE:
                    endingLocked = TransportError(code: .closed, message: "the peer of \(name) closed", errno: failure.rawValue)
                    return offset
                default:
                    endingLocked = TransportError(code: .io, message: "write to \(name) failed", errno: failure.rawValue)
                    return offset
                }
            }
        }
        return offset
    }

    /// Writes queued bytes now that the descriptor takes some. Call under the loop's lock.
    func flushPendingLocked() {
        guard pendingStart < pending.count, endingLocked == nil else { return }
        let written = pending.withUnsafeBytes { writeSomeLocked(UnsafeRawBufferPointer(rebasing: $0[pendingStart...])) }
        pendingStart += written
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            pendingStart = 0
        }
    }
}
