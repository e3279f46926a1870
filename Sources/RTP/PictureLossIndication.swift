import Bytes

/// A picture loss indication, PSFB (packet type 206) FMT 1 (RFC 4585 §6.3.1):
/// asks the media sender for a new key frame. No FCI; 12 bytes on the wire.
public struct PictureLossIndication: Equatable, Sendable {
    /// SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// SSRC of the media source that lost pictures.
    public var mediaSSRC: UInt32

    /// Creates a PLI.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    /// Parses one PLI. Throws ``RTCPError``: `.wrongPacketType` (not 206/FMT 1),
    /// `.lengthBeyondBuffer`, `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try RTCPHeader.open(bytes)
        guard h.packetType == 206, h.count == 1 else { throw .wrongPacketType(offset: 1, packetType: h.packetType, format: h.count) }
        let (s, m) = try rtcp { () throws(ByteReaderError) in (try r.u32("sender SSRC"), try r.u32("media SSRC")) }
        self.init(senderSSRC: s, mediaSSRC: m)
    }

    /// The packet on the wire (12 bytes).
    public func serialized() -> [UInt8] {
        var w = ByteWriter()
        w.u32(senderSSRC); w.u32(mediaSSRC)
        return rtcpPacket(count: 1, packetType: 206, body: w.bytes)
    }
}
