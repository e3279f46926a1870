// FullIntraRequest: FIR, PSFB FMT 4, with its SSRC and sequence-number entries (RFC 5104 §4.3.1).
import Bytes

/// A full intra request, PSFB (packet type 206) FMT 4 (RFC 5104 §4.3.1).
/// The media SSRC field is 0; each FCI entry (8 bytes) names a target SSRC and a command sequence number.
public struct FullIntraRequest: Equatable, Sendable {
    /// One FCI entry.
    public struct Entry: Equatable, Sendable {
        /// SSRC of the media sender asked for a decoder refresh.
        public var ssrc: UInt32
        /// Command sequence number, incremented per new request (mod 256).
        public var sequenceNumber: UInt8
        /// Creates an entry.
        public init(ssrc: UInt32, sequenceNumber: UInt8) { self.ssrc = ssrc; self.sequenceNumber = sequenceNumber }
    }

    /// SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// The media SSRC field (RFC 5104 says it SHALL be 0).
    public var mediaSSRC: UInt32
    /// The FCI entries.
    public var entries: [Entry]

    /// Creates a FIR.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Parses one FIR. Throws ``RTCPError``: `.wrongPacketType` (not 206/FMT 4),
    /// `.lengthBeyondBuffer`, `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try FeedbackHeader.open(bytes, packetType: 206, format: 4)
        var entries: [Entry] = []
        while r.remaining >= 8 {
            entries.append(try rtcp { () throws(ByteReaderError) in
                let e = Entry(ssrc: try r.u32("FIR SSRC"), sequenceNumber: try r.u8("FIR sequence number"))
                try r.skip(3, "FIR reserved")
                return e
            })
        }
        self.init(senderSSRC: h.senderSSRC, mediaSSRC: h.mediaSSRC, entries: entries)
    }

    /// The packet on the wire.
    public func serialized() -> [UInt8] {
        FeedbackHeader.serialize(format: 4, packetType: 206, senderSSRC: senderSSRC, mediaSSRC: mediaSSRC) { w in
            for e in entries { w.u32(e.ssrc); w.u8(e.sequenceNumber); w.u24(0) }
        }
    }
}
