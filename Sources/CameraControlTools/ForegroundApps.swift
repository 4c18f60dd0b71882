/// Which of the apps attached to `camctl serve` is in front: Apple's rule for the Camera Control, where
/// only the app actively using the camera receives capture events (docs/CAPTURE.md, "Apps attached to
/// camctl serve"). Sans-IO: connections and clock ticks in, what to do with each connection out;
/// `camctl serve` carries the bytes.
///
/// - The app that attached **last** is in front: the service relays the device's bytes between it and the
///   device, and nothing to the others.
/// - An app is a **process** (the peer of its connection): a connection from a process already attached is
///   that app reconnecting (after a lost link, or after being sent to the background), which keeps its place.
///   While the app's connection is still open at its end, a new one is a second host in the same process:
///   it is **refused** (``Action/refuse(_:)``), not swapped in (each host's reconnect closed the other's
///   connection, and the two took the device from each other every retry delay).
/// - When a new app attaches, the connection of the app in front is **closed**: its host sees the device go
///   away, so a press in flight ends `cancelled` for it, never a capture; it reconnects and waits in the
///   background, its connection parked (nothing carried; the service answers its handshakes that the
///   device is held for another app).
/// - An app **leaves** when its process ends, when the app in front closes its connection (its host
///   stopped: the device goes on at once, not after a grace time; unless the device is gone, which is why),
///   or when it stays without a connection for ``reconnectGraceMicros`` (an app in the background, whose
///   connection the service closed). When the app in front leaves, the one attached before it comes to the
///   front: its parked connection is closed, and its next one (its host reconnects at once) is relayed; one
///   that had closed its parked connection itself has left as well, and the one before it comes. When the
///   last one leaves, the service holds the device itself again (``Action/hold``). An app in front that
///   closed its connection to reconnect (a lost link) attaches anew, in front again.
public struct ForegroundApps: Sendable {
    /// A connection's number, given by the service.
    public typealias ConnectionID = Int

    /// How long an attached app may be without a connection before it counts as gone: several of a host's
    /// reconnect attempts (250 ms apart by default) and a handshake's 3 s deadline.
    public static let reconnectGraceMicros: UInt64 = 5_000_000

    /// One attached app.
    public struct App: Sendable, Equatable {
        /// Its process, or a negative stand-in unique to its first connection when the OS did not say.
        public var processID: Int32
        /// Its open connection, if any.
        public var connection: ConnectionID?
        /// When its last connection ended (service time), while it has none.
        public var disconnectedAtMicros: UInt64?
    }

    /// What the service does with a connection.
    public enum Action: Sendable, Equatable {
        /// Carry the device's bytes between this connection and the device (the service lets go of the
        /// device first if it holds it); the bytes of any other connection stop.
        case relay(ConnectionID)
        /// Keep the connection and carry nothing (answer its handshakes that the device is held for another
        /// app): its app is in the background.
        case park(ConnectionID)
        /// End the connection (its app went to the background, reconnected on another, or left; or a parked
        /// one, for a fresh connection now that its app comes to the front). The rules forget it first: its
        /// end, when the service reports it, is no news.
        case close(ConnectionID)
        /// No app is attached: the service holds the device itself (and launches on a click).
        case hold
        /// Answer the connection's requests with an error that says why (its process is attached already
        /// through a connection that is still open: one process is one app); it stays until its peer closes
        /// it, and nothing else changes.
        case refuse(ConnectionID)
    }

    /// The attached apps in the order they attached; the last is in front.
    public private(set) var apps: [App] = []

    /// No app attached.
    public init() {}

    /// The app in front, if any.
    public var front: App? { apps.last }

    /// A connection was accepted from process `processID` (nil: unknown) at `nowMicros`. `isOpen` tells
    /// whether the app's connection before it is still open at the app's end (the app has not closed it);
    /// by default none is (a new connection of a known process is its reconnect).
    public mutating func connected(
        _ connection: ConnectionID, processID: Int32?, nowMicros: UInt64, isOpen: (ConnectionID) -> Bool = { _ in false }
    ) -> [Action] {
        let pid = processID ?? -Int32(truncatingIfNeeded: connection + 1)
        if let index = apps.firstIndex(where: { $0.processID == pid }) {
            if let open = apps[index].connection, isOpen(open) { return [.refuse(connection)] }
            var actions: [Action] = apps[index].connection.map { [.close($0)] } ?? []
            apps[index].connection = connection
            apps[index].disconnectedAtMicros = nil
            actions.append(index == apps.count - 1 ? .relay(connection) : .park(connection))
            return actions
        }
        var actions: [Action] = []
        if let last = apps.indices.last, let previous = apps[last].connection {
            actions.append(.close(previous))
            apps[last].connection = nil
            apps[last].disconnectedAtMicros = nowMicros
        }
        apps.append(App(processID: pid, connection: connection, disconnectedAtMicros: nil))
        actions.append(.relay(connection))
        return actions
    }

    /// `connection` ended at its app's end (the app closed it) at `nowMicros`; the end of a connection the
    /// service closed (an ``Action/close(_:)``) or refused is no news. The app in front has left: the one
    /// before it comes to the front at once (as in ``expire(nowMicros:isRunning:isOpen:)``), or the service
    /// holds the device. An app in the background keeps its place for ``reconnectGraceMicros``, and so does
    /// the app in front with `frontStays` (the service knows why its connection ended: the device is gone,
    /// and the app's host reconnects until it is back; bringing another app to the front would give it no
    /// device either). `isOpen` tells whether a parked connection is still open at its app's end; by default
    /// each one is.
    public mutating func disconnected(
        _ connection: ConnectionID, nowMicros: UInt64, frontStays: Bool = false, isOpen: (ConnectionID) -> Bool = { _ in true }
    ) -> [Action] {
        guard let index = apps.firstIndex(where: { $0.connection == connection }) else { return [] }
        guard index == apps.count - 1, !frontStays else {
            apps[index].connection = nil
            apps[index].disconnectedAtMicros = nowMicros
            return []
        }
        apps.removeLast()
        return handOver(nowMicros: nowMicros, isOpen: isOpen)
    }

    /// The app in front left: the next one's parked connection is closed for a fresh one (an app whose host
    /// closed that connection itself, stopped or between reconnects, has left too, and the next comes), or,
    /// none left, the service holds the device.
    private mutating func handOver(nowMicros: UInt64, isOpen: (ConnectionID) -> Bool) -> [Action] {
        var actions: [Action] = []
        while let last = apps.indices.last {
            // Between reconnects (the service closed its connection): its next connection is relayed.
            guard let parked = apps[last].connection else { return actions }
            actions.append(.close(parked))
            if isOpen(parked) {
                apps[last].connection = nil
                apps[last].disconnectedAtMicros = nowMicros
                return actions
            }
            apps.removeLast()
        }
        return actions + [.hold]
    }

    /// Removes the apps that left by `nowMicros`: their process ended (`isRunning` false), or they stayed
    /// without a connection for ``reconnectGraceMicros``. Returns what to do when the front changed (as
    /// ``disconnected(_:nowMicros:frontStays:isOpen:)`` says: `isOpen` tells whether a parked connection is still open at
    /// its app's end; by default each one is).
    public mutating func expire(
        nowMicros: UInt64, isRunning: (Int32) -> Bool, isOpen: (ConnectionID) -> Bool = { _ in true }
    ) -> [Action] {
        let before = front
        // A departed app's connection is closed: the end of one parked in the background is not reported to
        // these rules, so the service would keep its socket for as long as it runs.
        var closing: [Action] = []
        apps.removeAll { app in
            let gone: Bool
            if app.processID > 0 && !isRunning(app.processID) {
                gone = true
            } else if let since = app.disconnectedAtMicros {
                gone = nowMicros >= since && nowMicros - since >= Self.reconnectGraceMicros
            } else {
                gone = false
            }
            if gone, let connection = app.connection { closing.append(.close(connection)) }
            return gone
        }
        guard let before, front?.processID != before.processID else { return closing }
        // Its parked connection may hold handshakes long given up: end it, and the app's next connection
        // (at once: its host reconnects) is relayed, with a fresh handshake.
        return closing + handOver(nowMicros: nowMicros, isOpen: isOpen)
    }
}
