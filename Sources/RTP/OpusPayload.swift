// The Opus RTP payload format (RFC 7587): one Opus packet (RFC 6716) per RTP packet,
// timestamps on a 48 kHz clock whatever the audio's sample rate, no payload header.

import Bytes

/// Puts Opus packets into RTP packets (RFC 7587 §4): one Opus packet per RTP packet,
/// marker bit clear unless asked (the first packet after DTX silence, RFC 7587 §4.1,
/// RFC 3551 §4.1), sequence numbers increasing by one and wrapping at 2^16, the
/// timestamp (48 kHz ticks) given by the caller.
public struct OpusPacketizer: Sendable {
    /// The RTP clock rate of Opus: always 48 000 Hz (RFC 7587 §4.1).
    public static let clockRate = 48_000

    /// SSRC written into every packet.
    public let ssrc: UInt32
    /// Payload type (0–127) written into every packet.
    public var payloadType: UInt8 { didSet { payloadType &= 0x7F } }
    /// Sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16

    /// Creates a packetizer whose first packet gets `sequenceNumber`.
    public init(ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16) {
        self.ssrc = ssrc
        self.payloadType = payloadType & 0x7F
        self.nextSequenceNumber = sequenceNumber
    }

    /// Wraps one Opus packet (`opusPacket`, starting with its TOC byte) with RTP timestamp
    /// `timestamp` (48 kHz ticks); `marker` sets the RTP marker bit — true for the first
    /// packet after a silence period with DTX (RFC 7587 §4.1, RFC 3551 §4.1), false
    /// otherwise (default); `headerExtension`, if given, goes on the packet.
    ///
    /// Throws ``OpusPayloadError/emptyPacket`` for an empty packet.
    public mutating func packetize(_ opusPacket: [UInt8], timestamp: UInt32, marker: Bool = false,
                                   headerExtension: RTPHeaderExtension? = nil) throws(OpusPayloadError) -> RTPPacket {
        guard !opusPacket.isEmpty else { throw .emptyPacket }
        defer { nextSequenceNumber &+= 1 }
        return RTPPacket(marker: marker, payloadType: payloadType, sequenceNumber: nextSequenceNumber,
                         timestamp: timestamp, ssrc: ssrc, headerExtension: headerExtension, payload: opusPacket)
    }
}

/// The Opus depayloader (RFC 7587): takes the RTP packets of one SSRC in arrival order
/// and returns the Opus packets in sequence number order, with a ``Gap`` wherever
/// packets are missing so the caller can run packet-loss concealment (or FEC) for them.
///
/// Sequence numbers are unwrapped to 64 bits. A missing packet is waited for until a
/// packet at least ``reorderWindow`` sequence numbers after it has arrived (default 5
/// packets, 100 ms at 20 ms packets); then it is declared missing. Duplicates and packets
/// arriving after their place was passed are dropped and counted. A packet with an
/// empty payload counts as missing. Silence (DTX) shows as a timestamp jump with no
/// sequence gap and is not reported.
public struct OpusDepayloader: Sendable {
    /// One Opus packet out of the depayloader.
    public struct Packet: Equatable, Sendable {
        /// The Opus packet (the whole RTP payload).
        public var data: [UInt8]
        /// Its RTP timestamp (48 kHz ticks).
        public var timestamp: UInt32
        /// Its RTP sequence number.
        public var sequenceNumber: UInt16
        /// Its duration in samples per channel at 48 kHz, from the TOC byte (`nil` if that is malformed).
        public var sampleCount: Int?

        /// Creates a packet value.
        public init(data: [UInt8], timestamp: UInt32, sequenceNumber: UInt16, sampleCount: Int?) {
            self.data = data
            self.timestamp = timestamp
            self.sequenceNumber = sequenceNumber
            self.sampleCount = sampleCount
        }
    }

    /// Packets missing between two delivered packets.
    public struct Gap: Equatable, Sendable {
        /// How many sequence numbers are missing.
        public var missingPackets: Int
        /// The first missing sequence number.
        public var firstSequenceNumber: UInt16
        /// RTP timestamp (48 kHz) where the missing audio starts: the previous packet's
        /// timestamp plus its duration (estimated when there is no usable previous packet).
        public var timestamp: UInt32
        /// Length of the missing audio in 48 kHz ticks (samples per channel): up to the next packet's timestamp.
        public var duration: UInt32
        // Made only by the depayloader (its memberwise init is internal).
    }

    /// What the depayloader hands back, in sequence number order: `.delivered` an Opus
    /// packet to decode, `.missing` a gap to conceal (before the packet that follows it).
    public typealias Event = Depayloaded<Packet, Gap>

    /// Running totals since creation (``DepayloadCounts``: the Opus depayloader keeps
    /// nothing beyond what every depayloader counts).
    public typealias Counters = DepayloadCounts

    /// Packets: how far past a missing sequence number the stream must get before it is declared missing.
    public let reorderWindow: Int
    /// Running totals.
    public private(set) var counters = Counters()

    private var reorderBuffer: ReorderBuffer<RTPPacket>
    private var last: (timestamp: UInt32, duration: Int?)?
    private var missing = 0
    private var firstMissing: Int64 = 0

    /// Creates a depayloader; `reorderWindow` is in packets (at least 1, default 5).
    public init(reorderWindow: Int = 5) {
        self.reorderWindow = max(1, reorderWindow)
        reorderBuffer = ReorderBuffer(reorderWindow: reorderWindow)
    }

    /// Takes one received RTP packet and returns the Opus packets and gaps it makes
    /// ready, in sequence number order (often none or one).
    public mutating func push(_ packet: RTPPacket) -> [Event] {
        guard reorderBuffer.admit(ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, counters: &counters,
                            entry: { packet }) != nil else { return [] }
        return drain(force: false)
    }

    /// Ends the stream: delivers everything buffered, reporting the holes as gaps.
    public mutating func flush() -> [Event] {
        drain(force: true)
    }

    private mutating func drain(force: Bool) -> [Event] {
        var out: [Event] = []
        while let c = reorderBuffer.cursor, c <= reorderBuffer.highest {
            if let p = reorderBuffer.consume(c) {
                reorderBuffer.advance(to: c + 1)
                guard !p.payload.isEmpty else {
                    counters.emptyPackets += 1
                    addMissing(c, 1)
                    continue
                }
                let duration = try? OpusTOC(parsing: p.payload).sampleCount
                if missing > 0 { out.append(.missing(gap(before: p.timestamp, nextDuration: duration))) }
                counters.delivered += 1
                out.append(.delivered(Packet(data: p.payload, timestamp: p.timestamp,
                                          sequenceNumber: UInt16(truncatingIfNeeded: c), sampleCount: duration)))
                last = (p.timestamp, duration)
            } else if force || reorderBuffer.isOverdue(c) {
                let next = reorderBuffer.firstSequence(after: c) ?? reorderBuffer.highest + 1
                addMissing(c, Int(next - c))
                reorderBuffer.advance(to: next)
            } else {
                break
            }
        }
        if force && missing > 0 {
            // Holes (empty packets) at the very end: estimate from the last packet's duration.
            let per = last?.duration ?? 960
            let start = (last.map { $0.timestamp &+ UInt32(truncatingIfNeeded: $0.duration ?? per) }) ?? 0
            out.append(.missing(makeGap(start: start, duration: UInt32(truncatingIfNeeded: per * missing))))
        }
        reorderBuffer.trimConsumed()
        return out
    }

    private mutating func addMissing(_ from: Int64, _ count: Int) {
        if missing == 0 { firstMissing = from }
        missing += count
    }

    /// The gap of ``missing`` packets ending where the packet at `next` (48 kHz) starts.
    private mutating func gap(before next: UInt32, nextDuration: Int?) -> Gap {
        let start: UInt32
        if let last, let d = last.duration {
            start = last.timestamp &+ UInt32(truncatingIfNeeded: d)
        } else if let last {
            start = last.timestamp &+ (next &- last.timestamp) / UInt32(missing + 1)
        } else {
            start = next &- UInt32(truncatingIfNeeded: (nextDuration ?? 960) * missing)
        }
        let span = next &- start
        return makeGap(start: start, duration: Int32(bitPattern: span) < 0 ? 0 : span)
    }

    private mutating func makeGap(start: UInt32, duration: UInt32) -> Gap {
        let g = Gap(missingPackets: missing, firstSequenceNumber: UInt16(truncatingIfNeeded: firstMissing),
                    timestamp: start, duration: duration)
        counters.packetsMissing += missing
        counters.missingReports += 1
        missing = 0
        return g
    }
}
