// PictureLossIndication: PLI, PSFB FMT 1 (RFC 4585 §6.3.1).
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
        let (h, _) = try FeedbackHeader.open(bytes, packetType: 206, format: 1)
        self.init(senderSSRC: h.senderSSRC, mediaSSRC: h.mediaSSRC)
    }

    /// The packet on the wire (12 bytes).
    public func serialized() -> [UInt8] {
        FeedbackHeader.serialize(format: 1, packetType: 206, senderSSRC: senderSSRC, mediaSSRC: mediaSSRC) { _ in }
    }
}
