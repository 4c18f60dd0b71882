import CameraControlRPC
import CameraControlWire
import Testing

/// PROTOCOL.md §8 (v1.1, a host rule): the host answers a device `HEARTBEAT` in the same wake-up once
/// half an interval passed since it last sent, and after such an answer its own timer waits 1.25
/// intervals for the device's next heartbeat; any other packet resets that to one interval.
@Suite("ConnectionCore answers the device's heartbeats")
struct HeartbeatAnswerTests {
    /// A core in a session since t = 0 (heartbeat 40 ms: half is 20, a quarter 10), output drained.
    func core(answering: Bool = true) -> ConnectionCore {
        var core = ConnectionCore(configuration: ConnectionConfiguration(answersHeartbeats: answering))
        core.markSessionEstablished(heartbeatInterval: .ms(40), now: .zero)
        _ = core.takeEvents()
        return core
    }

    @Test("a device heartbeat after half an interval of host silence is answered at once; before that, not")
    func answersAfterHalfAnInterval() {
        var core = core()
        var device = DeviceFrames()
        core.receive(device.heartbeat(), now: .ms(19))
        #expect(core.takeOutbound().isEmpty, "19 ms of silence: too early to answer")
        core.receive(device.heartbeat(), now: .ms(20))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        #expect(core.counters.heartbeatsSent == 1)
    }

    @Test("after an answer the host's own heartbeat waits 1.25 intervals; the device's next one is answered instead")
    func answeredHeartbeatsSetThePace() {
        var core = core()
        var device = DeviceFrames()
        core.receive(device.heartbeat(), now: .ms(30))
        _ = core.takeOutbound()
        #expect(core.nextPollTime == .ms(30 + 50), "1.25 × 40 ms after the answer")
        core.poll(now: .ms(70))  // one interval: not yet
        #expect(core.takeOutbound().isEmpty)
        core.receive(device.heartbeat(), now: .ms(71))  // the device's next heartbeat: answered
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        // The device goes quiet: the host's own timer sends at 1.25 intervals, then every interval.
        core.poll(now: .ms(71 + 50))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        #expect(core.nextPollTime == .ms(121 + 40))
        core.poll(now: .ms(161))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        #expect(core.counters.heartbeatsSent == 4)
    }

    @Test("any other packet the host sends brings the next heartbeat back to one interval")
    func otherPacketsResetTheGrace() throws {
        var core = core()
        var device = DeviceFrames()
        core.receive(device.heartbeat(), now: .ms(30))
        _ = core.takeOutbound()
        _ = try core.startCall(method: .devicePing, request: [], now: .ms(35))
        let request = core.takeOutbound()
        #expect(core.nextPollTime == .ms(35 + 20), "the request's retransmission comes first")
        core.receive(device.acks(of: request), now: .ms(36))
        #expect(core.nextPollTime == .ms(35 + 40), "one interval after the REQUEST, no grace")
    }

    @Test("answersHeartbeats false: heartbeats on the host's own timer only, one interval apart")
    func answeringCanBeTurnedOff() {
        var core = core(answering: false)
        var device = DeviceFrames()
        core.receive(device.heartbeat(), now: .ms(30))
        #expect(core.takeOutbound().isEmpty)
        core.poll(now: .ms(40))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        #expect(core.nextPollTime == .ms(80))
    }

    @Test("on an idle link the host sends no more heartbeats than the device, all in the device's wake-ups")
    func oneWakeUpPerInterval() {
        var core = core()
        var device = DeviceFrames()
        var ownTimerHeartbeats = 0
        // The device's heartbeats every 40 ms, arriving 3 ms after each of the host's due times would
        // have been (the racing phase that two free-running timers settle into).
        var time = 3
        for _ in 0..<50 {
            time += 40
            if let due = core.nextPollTime, due <= .ms(time) {
                core.poll(now: due)
                ownTimerHeartbeats += hostPackets(core.takeOutbound()).count
            }
            core.receive(device.heartbeat(), now: .ms(time))
            _ = core.takeOutbound()
        }
        #expect(ownTimerHeartbeats <= 1, "after the first answer the host never needs a wake-up of its own")
        #expect(core.counters.heartbeatsSent >= 49)
        #expect(core.isSessionEstablished)
    }
}

@Suite("ConnectionCore output and events without copies")
struct ConnectionCoreDrainTests {
    @Test("drainOutbound hands the same bytes as takeOutbound, once, and nothing when empty")
    func drainOutbound() throws {
        var first = ConnectionCore()
        var second = ConnectionCore()
        _ = try first.startCall(method: .devicePing, request: [1, 2], now: .zero)
        _ = try second.startCall(method: .devicePing, request: [1, 2], now: .zero)
        var drained: [UInt8] = []
        var calls = 0
        first.drainOutbound { bytes in
            drained += bytes
            calls += 1
        }
        #expect(drained == second.takeOutbound())
        #expect(calls == 1)
        first.drainOutbound { _ in calls += 1 }
        #expect(calls == 1, "nothing left: the body is not called")
    }

    @Test("takeEvents(into:) moves the events out in order and leaves the core empty")
    func takeEventsInto() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        core.receive(device.message(call, [1]) + device.message(call, [2]), now: .ms(1))
        #expect(core.hasEvents)
        var events: [ConnectionEvent] = []
        core.takeEvents(into: &events)
        #expect(events == [.streamMessage(call, [1]), .streamMessage(call, [2])])
        #expect(!core.hasEvents)
        #expect(core.takeEvents().isEmpty)
    }
}
