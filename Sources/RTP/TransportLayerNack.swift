// TransportLayerNack: the generic NACK, RTPFB FMT 1, with its PID/BLP pairs (RFC 4585 §6.2.1).
import Bytes

/// A generic NACK, RTPFB (packet type 205) FMT 1 (RFC 4585 §6.2.1).
///
/// Each FCI entry is a pair: PID (a lost sequence number) and BLP, a bitmask
/// where bit i (least significant = 0) set means PID + i + 1 is also lost.
public struct TransportLayerNack: Equatable, Sendable {
    /// One FCI entry: packet ID and bitmask of following lost packets.
    public struct Pair: Equatable, Sendable {
        /// PID: a lost sequence number.
        public var packetID: UInt16
        /// BLP: bit i set means `packetID + i + 1` is lost too.
        public var lostPackets: UInt16
        /// Creates a pair.
        public init(packetID: UInt16, lostPackets: UInt16) { self.packetID = packetID; self.lostPackets = lostPackets }
        /// The sequence numbers this pair reports lost, ascending (mod 2^16).
        public var sequenceNumbers: [UInt16] {
            var out = [packetID]
            for i in 0..<16 where lostPackets & (1 << i) != 0 { out.append(packetID &+ UInt16(i + 1)) }
            return out
        }
    }

    /// SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// SSRC of the media source the NACK is about.
    public var mediaSSRC: UInt32
    /// The FCI entries.
    public var pairs: [Pair]

    /// Creates a NACK from its pairs.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, pairs: [Pair]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.pairs = pairs
    }

    /// Creates a NACK listing `lost` sequence numbers, packed into as few pairs
    /// as a greedy walk in the given order allows (each pair covers PID…PID+16).
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16]) {
        var pairs: [Pair] = []
        for seq in lost {
            if let last = pairs.last {
                let d = seq &- last.packetID
                if d == 0 { continue }
                if d <= 16 {
                    pairs[pairs.count - 1].lostPackets |= 1 << (d - 1)
                    continue
                }
            }
            pairs.append(Pair(packetID: seq, lostPackets: 0))
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, pairs: pairs)
    }

    /// All sequence numbers reported lost, in pair order.
    public var lostSequenceNumbers: [UInt16] { pairs.flatMap(\.sequenceNumbers) }

    /// Parses one generic NACK. Throws ``RTCPError``: `.wrongPacketType` (not 205/FMT 1),
    /// `.lengthBeyondBuffer`, `.truncated` (shorter than the 12-byte minimum), `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try FeedbackHeader.open(bytes, packetType: 205, format: 1)
        var pairs: [Pair] = []
        while r.remaining >= 4 {
            pairs.append(try rtcp { () throws(ByteReaderError) in Pair(packetID: try r.u16("PID"), lostPackets: try r.u16("BLP")) })
        }
        self.init(senderSSRC: h.senderSSRC, mediaSSRC: h.mediaSSRC, pairs: pairs)
    }

    /// The packet on the wire.
    public func serialized() -> [UInt8] {
        FeedbackHeader.serialize(format: 1, packetType: 205, senderSSRC: senderSSRC, mediaSSRC: mediaSSRC) { w in
            for p in pairs { w.u16(p.packetID); w.u16(p.lostPackets) }
        }
    }
}
