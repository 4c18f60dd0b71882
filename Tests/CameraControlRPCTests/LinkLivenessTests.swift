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

    @Test("a frame still arriving keeps the link alive; when its bytes stop for the dead timeout, the link is dead")
    func frameArriving() {
        var liveness = liveness()
        liveness.heard(at: .ms(10))
        for now in stride(from: 20, through: 400, by: 20) {  // a long frame's bytes, every 20 ms
            liveness.bytesArrived(at: .ms(now), frameArriving: true, frameBegan: now == 20)
            liveness.sent(at: .ms(now))
            let result = liveness.poll(now: .ms(now))
            #expect(result == .none, "\(now) ms: a frame is arriving")
        }
        #expect(liveness.nextTime == .ms(400 + 40), "the next heartbeat; death waits for the frame's bytes")
        for now in stride(from: 420, through: 540, by: 20) {  // its bytes stop
            liveness.sent(at: .ms(now))
            let result = liveness.poll(now: .ms(now))
            #expect(result == .none, "\(now) ms: \(now - 400) ms since the last byte")
        }
        let dead = liveness.poll(now: .ms(560))
        #expect(dead == .dead(silence: .ms(550)))
    }

    @Test("bytes that end a frame and start none leave the dead timeout to the last valid frame")
    func frameEnded() {
        var liveness = liveness()
        for now in stride(from: 20, through: 140, by: 20) {
            // bytes of a frame from 60 ms; at 120 it ends (a bad check: nothing heard)
            if now >= 60 { liveness.bytesArrived(at: .ms(now), frameArriving: now < 120, frameBegan: now == 60) }
            liveness.sent(at: .ms(now))
            _ = liveness.poll(now: .ms(now))
        }
        liveness.sent(at: .ms(160))
        let result = liveness.poll(now: .ms(160))
        #expect(result == .dead(silence: .ms(160)))
    }

    @Test("garbage cut by delimiters, each read ending inside its next frame, keeps nothing: the link dies on time")
    func garbageCutByDelimiters() {
        var liveness = liveness()
        liveness.heard(at: .ms(10))
        var died: Duration?
        for now in stride(from: 20, through: 400, by: 10) {
            // each read ends one failed "frame" and begins the next
            liveness.bytesArrived(at: .ms(now), frameArriving: true, frameBegan: true)
            liveness.sent(at: .ms(now))
            if case .dead = liveness.poll(now: .ms(now)), died == nil { died = .ms(now) }
        }
        #expect(died == .ms(170), "dead at 10 + 160 ms, not kept alive by the garbage")
    }

    @Test("a frame that began after the link went quiet keeps nothing, even while its bytes keep coming")
    func frameBegunLateKeepsNothing() {
        var liveness = liveness()
        liveness.heard(at: .ms(10))
        liveness.bytesArrived(at: .ms(175), frameArriving: true, frameBegan: true)  // 165 ms after the last packet
        liveness.sent(at: .ms(175))
        let result = liveness.poll(now: .ms(175))
        #expect(result == .dead(silence: .ms(165)))
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

@Suite("ConnectionCore on a slow line")
struct SlowLineTests {
    @Test("a valid frame that takes longer than the dead timeout to arrive keeps the link alive and is delivered")
    func longFrame() {
        var core = ConnectionCore(configuration: ConnectionConfiguration(heartbeatInterval: .ms(50)))
        core.markSessionEstablished(now: .zero)
        _ = core.takeEvents()
        var device = DeviceFrames()
        // 330 bytes at 9600 baud: about 344 ms on the wire, 10 bytes every ~10 ms.
        let frame = device.message(CallID(rawValue: 9), Array(repeating: 7, count: 320))
        var now = 0
        for start in stride(from: 0, to: frame.count, by: 10) {
            now += 10
            core.receive(frame[start..<min(start + 10, frame.count)], now: .ms(now))
            core.poll(now: .ms(now))
        }
        #expect(now > 200, "longer than the 200 ms dead timeout")
        #expect(core.linkState == .established)
        #expect(!core.takeEvents().contains(.linkDead))
        #expect(core.counters.unknownCallPackets == 1, "the frame arrived whole and valid")
    }

    @Test("a frame whose bytes stop arriving does not keep the link alive")
    func stalledFrame() {
        var core = ConnectionCore(configuration: ConnectionConfiguration(heartbeatInterval: .ms(50)))
        core.markSessionEstablished(now: .zero)
        var device = DeviceFrames()
        let frame = device.message(CallID(rawValue: 9), Array(repeating: 7, count: 320))
        core.receive(frame.prefix(100), now: .ms(100))
        for now in stride(from: 110, through: 290, by: 10) { core.poll(now: .ms(now)) }
        #expect(core.linkState == .established, "190 ms since its last byte (dead timeout 200 ms)")
        core.poll(now: .ms(300))
        #expect(core.linkState == .dead, "200 ms since its last byte, 300 ms since the last valid frame")
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
