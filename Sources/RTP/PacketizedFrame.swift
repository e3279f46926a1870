// PacketizedFrame: one media frame cut into RTP payloads once — VP8 with its payload descriptor (RFC 7741 §4.2), or one Opus packet (RFC 7587 §4.2) — held in one buffer that every stream sending it shares.
import Bytes

/// One media frame already cut into RTP payloads, shared by every stream that sends it
/// (the media hub's unit): the payloads lie back to back in one buffer, ``storage``,
/// made once, and ``packets`` says where each one starts and ends and which carries
/// the marker bit. What a stream adds per packet is only its RTP header (SSRC, sequence
/// number, its timestamp offset, header extensions: ``RTPStreamHeader``), then SRTP.
///
/// A class, so the payload bytes exist once however many streams and retransmission
/// histories hold the frame; Swift's reference count is the frame's: the buffer is freed
/// when the last holder lets go. Immutable, so any thread may read it.
///
/// Shapes: payload offsets and lengths in bytes; ``timestamp`` in ticks of ``clockRate``
/// (90 000 for video, 48 000 for Opus, RFC 7741 §4.1 and RFC 7587 §4.1) from the source's
/// start, before any stream's offset.
public final class PacketizedFrame: Sendable {
    /// Where one RTP payload lies in ``PacketizedFrame/storage``.
    public struct Packet: Sendable, Equatable {
        /// Offset of the payload's first byte in the frame's storage.
        public let offset: Int
        /// Payload length in bytes (descriptor included for VP8).
        public let length: Int
        /// The RTP marker bit: the last packet of a video frame (RFC 7741 §4.1); for Opus,
        /// the first packet after a DTX silence (RFC 7587 §4.1).
        public let marker: Bool

        /// A payload of `length` bytes at `offset`, with its marker bit.
        public init(offset: Int, length: Int, marker: Bool) {
            self.offset = offset
            self.length = length
            self.marker = marker
        }
    }

    /// Every packet's payload, back to back, in packet order.
    public let storage: [UInt8]
    /// The packets, in the order they are sent.
    public let packets: [Packet]
    /// Media time in ticks of ``clockRate`` from the start of the source.
    public let timestamp: Int64
    /// Ticks per second of ``timestamp``: 90 000 (video) or 48 000 (Opus).
    public let clockRate: Int
    /// True for a VP8 key frame (RFC 6386 §9.1); always true for audio, where every
    /// packet can be decoded on its own, so a stream may start at any of them.
    public let isKeyframe: Bool
    /// The frame's number in its source, from 0: frames of one source keep this order.
    public let sequence: UInt64
    /// The VP8 PictureID (15 bits) written in every packet's descriptor; nil for audio.
    public let pictureID: UInt16?
    /// Width and height in pixels from a VP8 key frame's header; nil otherwise.
    public let width: Int?, height: Int?

    /// A frame from its parts, as the packetizers make it (``SharedVP8Packetizer``,
    /// ``init(opusPacket:timestamp:sequence:marker:)``). `packets` must lie inside `storage`;
    /// those that do not are left out (a packet of no payload cannot be sent).
    public init(storage: [UInt8], packets: [Packet], timestamp: Int64, clockRate: Int, isKeyframe: Bool,
                sequence: UInt64, pictureID: UInt16? = nil, width: Int? = nil, height: Int? = nil) {
        self.storage = storage
        self.packets = packets.filter { $0.offset >= 0 && $0.length > 0 && $0.offset <= storage.count - $0.length }
        self.timestamp = timestamp
        self.clockRate = clockRate
        self.isKeyframe = isKeyframe
        self.sequence = sequence
        self.pictureID = pictureID
        self.width = width
        self.height = height
    }

    /// One Opus packet (RFC 6716, TOC byte first) as the one payload of one RTP packet
    /// (RFC 7587 §4.2: no payload header), `timestamp` in 48 kHz ticks; `marker` as
    /// ``Packet/marker``.
    ///
    /// Throws ``OpusPayloadError/emptyPacket`` for an empty packet.
    public convenience init(opusPacket: [UInt8], timestamp: Int64, sequence: UInt64, marker: Bool = false) throws(OpusPayloadError) {
        guard !opusPacket.isEmpty else { throw .emptyPacket }
        self.init(storage: opusPacket, packets: [Packet(offset: 0, length: opusPacket.count, marker: marker)],
                  timestamp: timestamp, clockRate: OpusPacketizer.clockRate, isKeyframe: true, sequence: sequence)
    }

    /// Bytes of payload the frame holds (every packet's, once).
    public var payloadByteCount: Int { storage.count }

    /// The payload of packet `index` (a view of the shared storage, no copy); empty for an
    /// index out of range.
    public func payload(_ index: Int) -> ArraySlice<UInt8> {
        guard packets.indices.contains(index) else { return [] }
        let p = packets[index]
        return storage[p.offset..<p.offset + p.length]
    }
}
