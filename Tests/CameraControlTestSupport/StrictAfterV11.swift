/// Protocol v1.1 (requests reliable and deduplicated, stream opening confirmed, handshake retried, every
/// packet deduplicated by sequence number, a host window covering the retransmission budget, events
/// waited for by `reliable_event_number`, heartbeats while streaming: docs/PROTOCOL.md) makes all of
/// issue 9's guarantees hold, and the fault-injection property test (CameraControlSimulationTests) asserts them, with faults covering the handshake too. Off:
/// only what v1.0 already guaranteed (no phantom, no duplicate, every began closed once), the rest
/// printed; the relay test (IntegrationTests/RelayTests.swift) then uses milder faults too.
package let strictAfterV11 = true
