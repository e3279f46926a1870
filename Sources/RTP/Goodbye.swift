// Goodbye: the RTCP BYE, packet type 203, with an optional reason (RFC 3550 §6.6).
import Bytes

/// An RTCP BYE, packet type 203 (RFC 3550 §6.6).
public struct Goodbye: Equatable, Sendable {
    /// The sources leaving (at most 31).
    public var sources: [UInt32]
    /// Optional reason for leaving, UTF-8 bytes (at most 255).
    public var reason: [UInt8]

    /// Creates a BYE.
    public init(sources: [UInt32], reason: [UInt8] = []) {
        self.sources = sources
        self.reason = reason
    }

    /// Parses one BYE packet. Throws ``RTCPError``: `.wrongPacketType`, `.lengthBeyondBuffer`,
    /// `.countInconsistentWithLength` (SC × 4 bytes exceed the length), `.truncated` (reason runs past), `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try RTCPHeader.open(bytes)
        guard h.packetType == 203 else { throw .wrongPacketType(offset: 1, packetType: h.packetType, format: h.count) }
        guard Int(h.count) * 4 <= r.remaining else {
            throw .countInconsistentWithLength(offset: 0, count: Int(h.count), length: h.packetLength)
        }
        var sources: [UInt32] = []
        for _ in 0..<h.count { sources.append(try rtcp { () throws(ByteReaderError) in try r.u32("BYE SSRC") }) }
        var reason: [UInt8] = []
        if r.remaining > 0 {
            reason = try rtcp { () throws(ByteReaderError) in
                let len = Int(try r.u8("BYE reason length"))
                return try r.take(len, "BYE reason")
            }
        }
        self.init(sources: sources, reason: reason)
    }

    /// The packet on the wire.
    public func serialized() -> [UInt8] {
        var w = ByteWriter()
        let s = sources.prefix(31)
        for x in s { w.u32(x) }
        if !reason.isEmpty {
            let text = reason.prefix(255)
            w.u8(UInt8(text.count)); w.append(Array(text))
        }
        return rtcpPacket(count: UInt8(s.count), packetType: 203, body: padded4(w.bytes))
    }
}
