// FeedbackHeader: the common part of every RTCP feedback message (RFC 4585 §6.1): the
// RTCP header with FMT and packet type (205 RTPFB, 206 PSFB), then the SSRC of the
// packet sender and the SSRC of the media source; the FCI follows.

import Bytes

/// The two SSRCs that open every RTCP feedback message (RFC 4585 §6.1), read and written
/// here for ``TransportLayerNack``, ``PictureLossIndication``, ``FullIntraRequest`` and
/// ``ReceiverEstimatedMaxBitrate``.
///
/// ```
///  V=2|P|  FMT  |      PT       |          length               |
///  |                  SSRC of packet sender                        |
///  |                  SSRC of media source                         |
///  :            Feedback Control Information (FCI)                 :
/// ```
struct FeedbackHeader: Equatable, Sendable {
    /// The RTCP header (FMT in its `count`, the packet length in 32-bit words − 1).
    var header: RTCPHeader
    /// SSRC of the packet sender.
    var senderSSRC: UInt32
    /// SSRC of the media source (0 where the message's FCI names the sources: FIR, REMB).
    var mediaSSRC: UInt32

    /// Opens one feedback message at the start of `bytes` and returns its header and a
    /// reader positioned at the FCI (offsets from the packet start).
    ///
    /// Throws ``RTCPError``: `.wrongPacketType` (offset 1, when the packet type is not
    /// `packetType` or the FMT not `format`), `.lengthBeyondBuffer`, `.truncated` (no room
    /// for the two SSRCs), `.badVersion`, `.badPadding`.
    static func open(_ bytes: [UInt8], packetType: UInt8, format: UInt8) throws(RTCPError) -> (FeedbackHeader, ByteReader) {
        var (h, r) = try RTCPHeader.open(bytes)
        guard h.packetType == packetType, h.count == format else {
            throw .wrongPacketType(offset: 1, packetType: h.packetType, format: h.count)
        }
        let (s, m) = try rtcp { () throws(ByteReaderError) in (try r.u32("sender SSRC"), try r.u32("media SSRC")) }
        return (FeedbackHeader(header: h, senderSSRC: s, mediaSSRC: m), r)
    }

    /// A feedback message on the wire: RTCP header (FMT `format`, packet type
    /// `packetType`), `senderSSRC`, `mediaSSRC`, then what `fci` writes (whole 32-bit words).
    static func serialize(format: UInt8, packetType: UInt8, senderSSRC: UInt32, mediaSSRC: UInt32,
                          fci: (inout ByteWriter) -> Void) -> [UInt8] {
        var w = ByteWriter()
        w.u32(senderSSRC)
        w.u32(mediaSSRC)
        fci(&w)
        return rtcpPacket(count: format, packetType: packetType, body: w.bytes)
    }
}
