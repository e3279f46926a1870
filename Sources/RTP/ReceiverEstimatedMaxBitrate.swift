// ReceiverEstimatedMaxBitrate: REMB, PSFB FMT 15 with the "REMB" identifier (draft-alvestrand-rmcat-remb-03).
import Bytes

/// Receiver Estimated Maximum Bitrate, PSFB (packet type 206) FMT 15 with the
/// "REMB" identifier (draft-alvestrand-rmcat-remb-03 §2.2).
///
/// After sender SSRC and media SSRC (0): "REMB", Num SSRC (8 bits),
/// BR Exp (6 bits), BR Mantissa (18 bits), then Num SSRC SSRCs.
/// The bitrate is `mantissa << exp` bits per second.
public struct ReceiverEstimatedMaxBitrate: Equatable, Sendable {
    /// SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// The estimated maximum total bitrate, bits per second (as decoded; exact when built from exp/mantissa).
    public var bitrate: UInt64
    /// The media SSRCs the estimate applies to.
    public var ssrcs: [UInt32]

    /// Creates a REMB.
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Parses one REMB. Throws ``RTCPError``: `.wrongPacketType` (not 206/FMT 15),
    /// `.missingREMBIdentifier`, `.countInconsistentWithLength` (Num SSRC × 4 exceeds the length),
    /// `.lengthBeyondBuffer`, `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try FeedbackHeader.open(bytes, packetType: 206, format: 15)
        let idAt = r.offset
        let id = try rtcp { () throws(ByteReaderError) in try r.take(4, "REMB identifier") }
        guard id == Array("REMB".utf8) else { throw .missingREMBIdentifier(offset: idAt) }
        let countAt = r.offset
        let count = Int(try rtcp { () throws(ByteReaderError) in try r.u8("REMB Num SSRC") })
        let bitrateAt = r.offset
        let word = try rtcp { () throws(ByteReaderError) in try r.u24("REMB BR Exp/Mantissa") }
        let exp = UInt64(word >> 18)
        let mantissa = UInt64(word & 0x3_FFFF)
        guard count * 4 <= r.remaining else {
            throw .countInconsistentWithLength(offset: countAt, count: count, length: h.header.packetLength)
        }
        var ssrcs: [UInt32] = []
        for _ in 0..<count { ssrcs.append(try rtcp { () throws(ByteReaderError) in try r.u32("REMB SSRC") }) }
        // exp is at most 63; an 18-bit mantissa shifted past bit 63 is no real bitrate.
        guard exp <= 46 || mantissa == 0 else { throw .rembBitrateOverflow(offset: bitrateAt, exponent: Int(exp)) }
        let bitrate = exp > 46 ? 0 : mantissa << exp
        self.init(senderSSRC: h.senderSSRC, bitrate: bitrate, ssrcs: ssrcs)
    }

    /// The packet on the wire; the bitrate is encoded with the smallest exponent
    /// whose 18-bit mantissa holds it (rounded down).
    public func serialized() -> [UInt8] {
        var exp: UInt64 = 0
        while bitrate >> exp > 0x3_FFFF { exp += 1 }
        let mantissa = UInt32(bitrate >> exp)
        let list = ssrcs.prefix(255)
        return FeedbackHeader.serialize(format: 15, packetType: 206, senderSSRC: senderSSRC, mediaSSRC: 0) { w in
            w.append(Array("REMB".utf8))
            w.u8(UInt8(list.count))
            w.u24(UInt32(exp) << 18 | mantissa)
            for x in list { w.u32(x) }
        }
    }
}
