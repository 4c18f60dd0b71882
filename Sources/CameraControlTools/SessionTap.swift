import CameraControlWire

/// Reads a session's wire bytes as they pass by, both ways, and reports what the device streams to the host:
/// its input events and raw sample batches (`camctl serve`'s page while an app is in front: serve relays
/// that app's session and makes no call of its own). Sans-IO and bounded: frames through a ``FrameDecoder``
/// each way, at most ``maxStreams`` streams remembered, retransmissions recognised by sequence number.
package struct SessionTap: Sendable {
    /// Something the device streamed.
    package enum Item: Sendable, Equatable {
        /// A message of an `InputService/StreamInputEvents` call.
        case input(InputEvent)
        /// A message of an `InputService/StreamRawSamples` call.
        case samples(RawSampleBatch)
    }

    /// What passed by since the tap began: the page's link counters while serve relays an app's session.
    package struct Counts: Sendable, Equatable {
        /// Whole packets the host sent (retransmissions included).
        package var packetsFromHost = 0
        /// Whole packets the device sent (retransmissions included).
        package var packetsFromDevice = 0
        /// Frames from the host that did not decode (bad checksum, bad length, garbage between frames).
        package var badFramesFromHost = 0
        /// Frames from the device that did not decode.
        package var badFramesFromDevice = 0
        /// Input events the device streamed (each once).
        package var inputEvents = 0
        /// Raw sample batches the device streamed (each once).
        package var sampleBatches = 0

        /// Nothing counted yet.
        package init() {}
    }

    /// What passed by so far.
    package private(set) var counts = Counts()

    /// The most stream calls remembered at once (a host keeps few open; beyond this the oldest is forgotten).
    package static let maxStreams = 16
    /// How many of the device's recent sequence numbers are remembered to drop retransmissions.
    package static let recentSequences = 64

    private var fromHost = FrameDecoder()
    private var fromDevice = FrameDecoder()
    /// The open stream calls of interest, oldest first: call id and method.
    private var streams: [(callID: UInt32, method: MethodID)] = []
    /// The device's recent reliable sequence numbers, oldest first.
    private var recent: [UInt16] = []

    /// A tap that has seen nothing yet.
    package init() {}

    /// The host sent `bytes`: its stream requests are remembered, a handshake forgets the old session.
    package mutating func hostSent(_ bytes: [UInt8]) {
        fromHost.append(bytes)
        while let output = fromHost.next() {
            guard case .packet(let packet) = output else {
                counts.badFramesFromHost += 1
                continue
            }
            counts.packetsFromHost += 1
            guard packet.type == .request, let method = packet.address else { continue }
            switch method {
            case .deviceHandshake:
                streams.removeAll()
                recent.removeAll()
            case .inputStreamInputEvents, .inputStreamRawSamples:
                streams.removeAll { $0.callID == packet.callID }
                streams.append((packet.callID, method))
                if streams.count > Self.maxStreams { streams.removeFirst() }
            default:
                break
            }
        }
    }

    /// The device sent `bytes`: returns the stream messages they complete, each once.
    package mutating func deviceSent(_ bytes: [UInt8]) -> [Item] {
        fromDevice.append(bytes)
        var items: [Item] = []
        while let output = fromDevice.next() {
            guard case .packet(let packet) = output else {
                counts.badFramesFromDevice += 1
                continue
            }
            counts.packetsFromDevice += 1
            switch packet.type {
            case .streamMessage:
                guard let method = streams.last(where: { $0.callID == packet.callID })?.method else { continue }
                if packet.isReliable {
                    if recent.contains(packet.sequence) { continue }  // a retransmission
                    recent.append(packet.sequence)
                    if recent.count > Self.recentSequences { recent.removeFirst() }
                }
                if method == .inputStreamInputEvents, let event = try? InputEvent(serializedBytes: packet.payload) {
                    counts.inputEvents += 1
                    items.append(.input(event))
                } else if method == .inputStreamRawSamples, let batch = try? RawSampleBatch(serializedBytes: packet.payload) {
                    counts.sampleBatches += 1
                    items.append(.samples(batch))
                }
            case .streamEnd, .error:
                streams.removeAll { $0.callID == packet.callID }
            default:
                break
            }
        }
        return items
    }
}
