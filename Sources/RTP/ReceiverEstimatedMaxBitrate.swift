// ReceiverEstimatedMaxBitrate: REMB, PSFB FMT 15 with the "REMB" identifier (draft-alvestrand-rmcat-remb-03).
import Bytes

/// Receiver Estimated Maximum Bitrate, PSFB (packet type 206) FMT 15 with the
/// "REMB" identifier (draft-alvestrand-rmcat-remb-03 §2.2).
///
/// After sender SSRC and media SSRC (0): "REMB", Num SSRC (8 bits),
/// BR Exp (6 bits), BR Mantissa (18 bits), then Num SSRC SSRCs.
/// The bitrate is `mantissa << exp` bits per second; a value past 64 bits (exponents up to
/// 63 allow `0x3FFFF << 63`) saturates to `UInt64.max`, "no limit" in effect.
public struct ReceiverEstimatedMaxBitrate: Equatable, Sendable {
    /// SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// The estimated maximum total bitrate, bits per second (as decoded: exact when
    /// `mantissa << exp` fits 64 bits, else `UInt64.max`).
    public var bitrate: UInt64
    /// The media SSRCs the estimate applies to.
    public var ssrcs: [UInt32]

    /// Creates a REMB.
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Parses one REMB; a bitrate whose mantissa shifted by its exponent passes 64 bits is
    /// `UInt64.max` (saturated, not refused: the sender means "more than we can count").
    /// Throws ``RTCPError``: `.wrongPacketType` (not 206/FMT 15),
    /// `.missingREMBIdentifier`, `.countInconsistentWithLength` (Num SSRC × 4 exceeds the length),
    /// `.lengthBeyondBuffer`, `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try FeedbackHeader.open(bytes, packetType: 206, format: 15)
        let idAt = r.offset
        let id = try rtcp { () throws(ByteReaderError) in try r.take(4, "REMB identifier") }
        guard id == Array("REMB".utf8) else { throw .missingREMBIdentifier(offset: idAt) }
        let countAt = r.offset
        let count = Int(try rtcp { () throws(ByteReaderError) in try r.u8("REMB Num SSRC") })
        let word = try rtcp { () throws(ByteReaderError) in try r.u24("REMB BR Exp/Mantissa") }
        let exp = UInt64(word >> 18)
        let mantissa = UInt64(word & 0x3_FFFF)
        guard count * 4 <= r.remaining else {
            throw .countInconsistentWithLength(offset: countAt, count: count, length: h.header.packetLength)
        }
        var ssrcs: [UInt32] = []
        for _ in 0..<count { ssrcs.append(try rtcp { () throws(ByteReaderError) in try r.u32("REMB SSRC") }) }
        self.init(senderSSRC: h.senderSSRC, bitrate: Self.bitrate(exponent: exp, mantissa: mantissa), ssrcs: ssrcs)
    }

    /// `mantissa << exponent` (bits per second), or `UInt64.max` when that passes 64 bits:
    /// the mantissa's highest set bit moved by the exponent lands beyond bit 63.
    static func bitrate(exponent: UInt64, mantissa: UInt64) -> UInt64 {
        guard mantissa != 0 else { return 0 }
        let bits = UInt64(UInt64.bitWidth - mantissa.leadingZeroBitCount)  // 1…18
        return bits + exponent > 64 ? UInt64.max : mantissa << exponent
    }

    /// The packet on the wire; the bitrate is encoded with the smallest exponent
    /// whose 18-bit mantissa holds it (rounded down), and `UInt64.max` (a saturated value)
    /// as the largest code, exponent 63 and mantissa 0x3FFFF, which parses back to it.
    public func serialized() -> [UInt8] {
        var exp: UInt64 = 0
        while bitrate >> exp > 0x3_FFFF { exp += 1 }
        let saturated = bitrate == UInt64.max
        let word = saturated ? 63 << 18 | 0x3_FFFF : UInt32(exp) << 18 | UInt32(bitrate >> exp)
        let list = ssrcs.prefix(255)
        return FeedbackHeader.serialize(format: 15, packetType: 206, senderSSRC: senderSSRC, mediaSSRC: 0) { w in
            w.append(Array("REMB".utf8))
            w.u8(UInt8(list.count))
            w.u24(word)
            for x in list { w.u32(x) }
        }
    }
}
