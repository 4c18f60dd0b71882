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

    @Test("the app in front reconnecting (a lost link) is relayed again, and is in front")
    func frontReconnects() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        // Its connection ended: it left the front; 100, between reconnects, is next (its next connection relayed).
        #expect(apps.disconnected(2, nowMicros: 10) == [])
        // Back before 100: it attaches anew, in front.
        #expect(apps.connected(3, processID: 200, nowMicros: 250_000, isOpen: Self.closedByTheApp) == [.relay(3)])
        #expect(apps.front?.connection == 3 && apps.apps.map(\.processID) == [100, 200])
    }

    /// serve held the device for nobody for the grace time (5 s) when the app in front closed its connection
    /// while its process ran on (a host stopped), and 5 s more when the app before it had left the same way.
    @Test("the app in front closing its connection leaves at once: the one before comes to the front, or the service holds the device")
    func frontConnectionEndedHandsOverAtOnce() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        #expect(apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp) == [.park(3)])
        // 200's host stops (its process runs on): 100 is in front at once, its parked connection closed for a
        // fresh one (its host reconnects at once).
        #expect(apps.disconnected(2, nowMicros: 1_000) { _ in true } == [.close(3)])
        #expect(apps.apps.map(\.processID) == [100] && apps.front?.connection == nil)
        #expect(apps.connected(4, processID: 100, nowMicros: 250_000, isOpen: Self.closedByTheApp) == [.relay(4)])
        // 100's host stops too: nobody is attached, the service holds the device, with no grace time.
        #expect(apps.disconnected(4, nowMicros: 300_000) { _ in true } == [.hold])
        #expect(apps.apps.isEmpty)
    }

    /// The device unplugged while an app was in front: its host reconnected at every handshake deadline, and each
    /// time it counted as gone, the app before it was brought to the front (for a device that was not there).
    @Test("the app in front whose connection ended for want of a device keeps the front for the grace time, and its reconnect is relayed")
    func frontKeepsItsPlaceWhileTheDeviceIsGone() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // parked
        #expect(apps.disconnected(2, nowMicros: 1_000, frontStays: true) { _ in true } == [])
        #expect(apps.apps.map(\.processID) == [100, 200] && apps.apps.map(\.connection) == [3, nil])
        #expect(apps.connected(4, processID: 200, nowMicros: 250_000, isOpen: Self.closedByTheApp) == [.relay(4)])
        // Not back within the grace time: gone, and 100 comes to the front.
        #expect(apps.disconnected(4, nowMicros: 300_000, frontStays: true) { _ in true } == [])
        let grace = ForegroundApps.reconnectGraceMicros
        #expect(apps.expire(nowMicros: 300_000 + grace - 1) { _ in true } == [])
        #expect(apps.expire(nowMicros: 300_000 + grace) { _ in true } == [.close(3)])
    }

    @Test("two apps leaving close together: the one in the background closed its parked connection first, and leaves with the front")
    func twoAppsLeavingTogether() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // parked
        _ = apps.connected(4, processID: 300, nowMicros: 200, isOpen: Self.closedByTheApp)  // 200 to the background
        _ = apps.connected(5, processID: 200, nowMicros: 300, isOpen: Self.closedByTheApp)  // parked
        // 300 leaves; 200 had closed its parked connection (its host stopped): it left too, and 100 is next.
        #expect(apps.disconnected(4, nowMicros: 1_000) { $0 != 5 } == [.close(5), .close(3)])
        #expect(apps.apps.map(\.processID) == [100])
        // The same through expire (300's process ended), 100 having closed its parked connection as well.
        var again = ForegroundApps()
        _ = again.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = again.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = again.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // parked
        #expect(again.expire(nowMicros: 1_000, isRunning: { $0 != 200 }, isOpen: { _ in false }) == [.close(2), .close(3), .hold])
        #expect(again.apps.isEmpty)
    }

    @Test("an app in the background whose connection ends keeps its place for the grace time; the front stays")
    func backgroundConnectionEnded() {
        var apps = ForegroundApps()
        _ = apps.connected(1, processID: 100, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(2, processID: 200, nowMicros: 0, isOpen: Self.closedByTheApp)
        _ = apps.connected(3, processID: 100, nowMicros: 100, isOpen: Self.closedByTheApp)  // parked
        #expect(apps.disconnected(3, nowMicros: 1_000) == [])
        #expect(apps.apps.map(\.processID) == [100, 200] && apps.front?.connection == 2)
        #expect(apps.connected(4, processID: 100, nowMicros: 250_000, isOpen: Self.closedByTheApp) == [.park(4)])
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
        #expect(apps.disconnected(3, nowMicros: 2_000_000) == [])  // serve's own close: no news
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
        let grace = ForegroundApps.reconnectGraceMicros
        // 100's connection was closed when 200 attached (at 0) and it never reconnected: a microsecond short of
        // the grace time it stays, then it has left; 200 stays in front.
        #expect(apps.expire(nowMicros: grace - 1) { _ in true } == [])
        #expect(apps.apps.map(\.processID) == [100, 200])
        #expect(apps.expire(nowMicros: grace) { _ in true } == [])
        #expect(apps.apps.map(\.processID) == [200])
        // An app brought to the front (its parked connection closed for a fresh one) that does not reconnect.
        _ = apps.connected(3, processID: 300, nowMicros: grace, isOpen: Self.closedByTheApp)
        _ = apps.connected(4, processID: 200, nowMicros: grace, isOpen: Self.closedByTheApp)  // parked
        #expect(apps.disconnected(3, nowMicros: 2 * grace) { _ in true } == [.close(4)])
        #expect(apps.expire(nowMicros: 3 * grace - 1) { _ in true } == [])
        #expect(apps.expire(nowMicros: 3 * grace) { _ in true } == [.hold])
    }

    @Test("connections from an unknown process are apps of their own")
    func unknownProcesses() {
        var apps = ForegroundApps()
        #expect(apps.connected(1, processID: nil, nowMicros: 0, isOpen: Self.closedByTheApp) == [.relay(1)])
        #expect(apps.connected(2, processID: nil, nowMicros: 0, isOpen: Self.closedByTheApp) == [.close(1), .relay(2)])
        #expect(apps.apps.count == 2)
        // A closed connection of an unknown process cannot come back: the one in front leaves at once, the
        // one it had sent to the background (closed at 0) after the grace time.
        #expect(apps.disconnected(2, nowMicros: 5) == [])
        #expect(apps.apps.count == 1)
        #expect(apps.expire(nowMicros: ForegroundApps.reconnectGraceMicros) { _ in true } == [.hold])
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
        #expect(apps.disconnected(2, nowMicros: 20) == [])
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
        #expect(apps.disconnected(9, nowMicros: 10) == [])
        #expect(apps.front?.connection == 1)
    }
}
