import CameraControlRPC
import CameraControlWire
import Testing

/// PROTOCOL.md §8 on its own: ``LinkLiveness`` with a 40 ms heartbeat (half 20, 1.25 × 50, dead 160,
/// starved gap 80), no core around it.
@Suite("LinkLiveness: heartbeats and link death, as a value")
struct LinkLivenessTests {
    func liveness(answering: Bool = true) -> LinkLiveness {
        var liveness = LinkLiveness(
            ConnectionConfiguration(heartbeatInterval: .ms(40), answersHeartbeats: answering))
        liveness.sessionStarted(at: .zero)
        return liveness
    }

    @Test("a quiet host sends a heartbeat one interval after its last packet, and not before")
    func heartbeatAfterOneInterval() {
        var liveness = liveness()
        liveness.sent(at: .ms(5))
        #expect(liveness.nextTime == .ms(45))
        do {
            let result = liveness.poll(now: .ms(44))
            #expect(result == .none)
        }
        do {
            let result = liveness.poll(now: .ms(45))
            #expect(result == .sendHeartbeat)
        }
    }

    @Test("the session's start is the first packet when the host sent none; a packet sent before it counts")
    func sessionStartSeedsTheTimer() {
        var fresh = LinkLiveness(ConnectionConfiguration(heartbeatInterval: .ms(40)))
        fresh.sessionStarted(at: .ms(100))
        #expect(fresh.lastSent == .ms(100))
        #expect(fresh.lastReceived == .ms(100))
        var sentBefore = LinkLiveness(ConnectionConfiguration(heartbeatInterval: .ms(40)))
        sentBefore.sent(at: .ms(90))
        sentBefore.sessionStarted(at: .ms(100))
        #expect(sentBefore.nextTime == .ms(130))
    }

    @Test("a device heartbeat is answered after half an interval of host silence, then the host waits 1.25 intervals")
    func answeringHeartbeats() {
        var liveness = liveness()
        do {
            let result = liveness.heardHeartbeat(at: .ms(19))
            #expect(!result)
        }
        do {
            let result = liveness.heardHeartbeat(at: .ms(20))
            #expect(result)
        }
        liveness.sent(at: .ms(20), answeringHeartbeat: true)
        #expect(liveness.heartbeatDelay == .ms(50))
        do {
            let result = liveness.poll(now: .ms(69))
            #expect(result == .none)
        }
        do {
            let result = liveness.poll(now: .ms(70))
            #expect(result == .sendHeartbeat)
        }
        liveness.sent(at: .ms(70))  // any other packet: back to one interval
        #expect(liveness.heartbeatDelay == .ms(40))
    }

    @Test("a host that does not answer heartbeats never waits more than one interval")
    func notAnswering() {
        var liveness = liveness(answering: false)
        do {
            let result = liveness.heardHeartbeat(at: .ms(30))
            #expect(!result)
        }
        #expect(liveness.heartbeatDelay == .ms(40))
    }

    @Test("nothing heard for 4 intervals is death, with the silence measured; a packet heard restarts the count")
    func death() {
        var liveness = liveness()
        liveness.heard(at: .ms(30))
        for now in stride(from: 40, through: 180, by: 20) {  // the host runs every 20 ms: no starvation
            liveness.sent(at: .ms(now))
            do {
                let result = liveness.poll(now: .ms(now))
                #expect(result == .none, "\(now) ms: \(now - 30) ms of silence")
            }
        }
        do {
            let result = liveness.poll(now: .ms(190))
            #expect(result == .dead(silence: .ms(160)))
        }
    }

    @Test("a host that did not run for more than two intervals gives the device one interval from its return")
    func starvedHost() {
        var liveness = liveness()
        do {
            let result = liveness.poll(now: .ms(10))
            #expect(result == .none)
        }
        liveness.sent(at: .ms(10))
        // Suspended for 490 ms: the device's 500 ms of silence are the host's.
        do {
            let result = liveness.poll(now: .ms(500))
            #expect(result == .sendHeartbeat)
        }
        liveness.sent(at: .ms(500))
        #expect(liveness.lastReceived == .ms(500 - 160 + 40))
        do {
            let result = liveness.poll(now: .ms(539))
            #expect(result == .none)
        }
        do {
            let result = liveness.poll(now: .ms(540))
            #expect(result == .dead(silence: .ms(160)))
        }
    }

    @Test("a new configuration changes the durations and keeps what was sent and heard")
    func reconfigured() {
        var liveness = liveness()
        liveness.sent(at: .ms(10))
        liveness.configure(ConnectionConfiguration(heartbeatInterval: .ms(100)))
        #expect(liveness.lastSent == .ms(10))
        #expect(liveness.nextTime == .ms(110))
    }
}

@Suite("ConnectionCore's link state")
struct LinkStateTests {
    @Test("noSession → established → dead → established → closed, and a closed link stays closed")
    func transitions() throws {
        var core = ConnectionCore(configuration: ConnectionConfiguration(heartbeatInterval: .ms(40)))
        #expect(core.linkState == .noSession)
        #expect(!core.isSessionEstablished && !core.isClosed)
        core.markSessionEstablished(now: .zero)
        #expect(core.linkState == .established)
        core.poll(now: .ms(20))
        core.poll(now: .ms(100))
        core.poll(now: .ms(160))
        #expect(core.linkState == .dead)
        #expect(core.takeEvents().contains(.linkDead))
        _ = try core.startCall(method: .deviceHandshake, request: [], now: .ms(170))  // calls start again
        core.markSessionEstablished(now: .ms(180))
        #expect(core.linkState == .established)
        core.closeLink(now: .ms(190))
        #expect(core.linkState == .closed)
        core.markSessionEstablished(now: .ms(200))
        #expect(core.linkState == .closed)
        #expect(throws: RPCError.self) { _ = try core.startCall(method: .devicePing, request: [], now: .ms(210)) }
    }
}
