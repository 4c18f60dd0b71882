import CameraControlTools
import Testing

@Suite("ForegroundApps: which app attached to camctl serve is in front")
struct ForegroundAppsTests {
    /// Every connection before is closed at the app's end (a reconnect).
    static func closedByTheApp(_ connection: ForegroundApps.ConnectionID) -> Bool { false }

    @Test("the app that attached last is in front; the one before is closed, reconnects and waits in the background")
    func lastAttachedIsInFront() {
        var apps = ForegroundApps()
        #expect(apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp) == [.relay(1)])
        #expect(apps.front?.processID == 100)
        // A second app: the first one's connection ends (its press in flight is cancelled by that), the new one is relayed.
        #expect(apps.connected(2, processID: 200, nowMicros: 1_000, isOpen: Self.closedByTheApp) == [.close(1), .relay(2)])
        #expect(apps.front?.processID == 200)
        // The first app reconnects: the same process keeps its place, in the background.
        #expect(apps.connected(3, processID: 100, nowMicros: 300_000, isOpen: Self.closedByTheApp) == [.park(3)])
        #expect(apps.apps.map(\.processID) == [100, 200])
        // It reconnects again (its handshake gave up on the parked connection): the old connection is closed.
        #expect(apps.connected(4, processID: 100, nowMicros: 3_500_000, isOpen: Self.closedByTheApp) == [.close(3), .park(4)])
        #expect(apps.front?.processID == 200 && apps.front?.connection == 2)
    }

    @Test("the app in front reconnecting (a lost link) is relayed again, and stays in front")
    func frontReconnects() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        apps.disconnected(2, nowMicros: 10)
        #expect(apps.connected(3, processID: 200, nowMicros: 250_000, isOpen: Self.closedByTheApp) == [.relay(3)])
        #expect(apps.front?.connection == 3)
    }

    @Test("the app in front leaving (its process ended) hands the front to the one before: its parked connection is closed for a fresh one")
    func leavingHandsOver() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // parked
        // Both running: nothing changes.
        #expect(apps.expire(nowMicros: 1_000_000) { _ in true } == [])
        // 200 ended: its connection is closed, and 100's parked one for a fresh one.
        #expect(apps.expire(nowMicros: 2_000_000) { $0 != 200 } == [.close(2), .close(3)])
        #expect(apps.apps.map(\.processID) == [100])
        apps.disconnected(3, nowMicros: 2_000_000)
        #expect(apps.connected(4, processID: 100, nowMicros: 2_250_000, isOpen: Self.closedByTheApp) == [.relay(4)])
        // The last app leaves: its connection closed, the service holds the device.
        #expect(apps.expire(nowMicros: 3_000_000) { _ in false } == [.close(4), .hold])
        #expect(apps.apps.isEmpty && apps.front == nil)
    }

    @Test("an app in the background leaving: its parked connection is closed (never read, its end is never seen); the front stays")
    func backgroundAppLeaving() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // 100 reconnected: parked in the background
        #expect(apps.expire(nowMicros: 1_000_000) { $0 != 100 } == [.close(3)])
        #expect(apps.apps.map(\.processID) == [200] && apps.front?.connection == 2)
    }

    @Test("an app without a connection for the grace time leaves even if its process runs; within it, it stays")
    func graceTime() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        apps.disconnected(2, nowMicros: 1_000_000)
        let grace = ForegroundApps.reconnectGraceMicros
        // 100's connection was closed when 200 attached (at 0) and it never reconnected: it has left; 200, a
        // microsecond short of the grace time, stays in front.
        #expect(apps.expire(nowMicros: 1_000_000 + grace - 1) { _ in true } == [])
        #expect(apps.apps.map(\.processID) == [200])
        #expect(apps.expire(nowMicros: 1_000_000 + grace) { _ in true } == [.hold])
    }

    @Test("connections from an unknown process are apps of their own")
    func unknownProcesses() {
        var apps = ForegroundApps()
        #expect(apps.connected(1, processID: nil, nowMicros: 0, isOpen: Self.closedByTheApp) == [.relay(1)])
        #expect(apps.connected(2, processID: nil, nowMicros: 0, isOpen: Self.closedByTheApp) == [.close(1), .relay(2)])
        #expect(apps.apps.count == 2)
        // A closed connection of an unknown process cannot come back: it leaves after the grace time.
        apps.disconnected(2, nowMicros: 5)
        #expect(apps.expire(nowMicros: 5 + ForegroundApps.reconnectGraceMicros) { _ in true } == [.hold])
    }

    /// Two hosts in one process: each one's reconnect closed the other's connection, and the two took the
    /// device from each other every 250 ms.
    @Test("a second connection from a process whose connection is still open is refused; the app keeps its place and its connection")
    func secondConnectionOfOneProcess() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        #expect(apps.connected(2, processID: 100, nowMicros: 10) { $0 == 1 } == [.refuse(2)])
        #expect(apps.apps.count == 1 && apps.front?.connection == 1)
        // The refused connection ending changes nothing; once the app closed its connection, a new one is a reconnect.
        apps.disconnected(2, nowMicros: 20)
        #expect(apps.front?.connection == 1)
        #expect(apps.connected(3, processID: 100, nowMicros: 30, isOpen: Self.closedByTheApp) == [.close(1), .relay(3)])
        // In the background too.
        _ = apps.connected(4, processID: 200, nowMicros: 40, isOpen: Self.closedByTheApp)
        _ = apps.connected(5, processID: 100, nowMicros: 50, isOpen: Self.closedByTheApp)  // parked
        #expect(apps.connected(6, processID: 100, nowMicros: 60) { $0 == 5 } == [.refuse(6)])
        #expect(apps.apps.map(\.connection) == [5, 4])
    }

    @Test("a connection the rules do not know ending changes nothing")
    func unknownConnection() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        apps.disconnected(9, nowMicros: 10)
        #expect(apps.front?.connection == 1)
    }
}
