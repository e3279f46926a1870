// SharedVP8Packetizer: encoded VP8 frames cut once into the RTP payloads every stream sending them shares — payload descriptor with a 15-bit PictureID, even split (RFC 7741 §4.2, §4.4, §5).
import Bytes

/// Cuts encoded VP8 frames into the RTP payloads of a ``PacketizedFrame``, once for every
/// stream that sends them (RFC 7741): the same payloads ``VP8Packetizer`` makes — a 4-byte
/// descriptor (X = 1, I = 1 with a 15-bit PictureID, S = 1 on the first packet only,
/// PID = 0), the fewest packets that fit ``maximumPayloadSize``, bytes spread evenly, the
/// marker on the last — but without the RTP header, which each stream writes itself.
///
/// The PictureID is the source's, increasing by one per frame and wrapping at 2^15, so
/// every stream of a source carries the same PictureIDs (RFC 7741 §4.2 asks only that they
/// increase within a stream; a stream joining late starts from a key frame at whatever
/// PictureID it has, as one starting at a random value would).
public struct SharedVP8Packetizer: Sendable {
    /// Maximum RTP payload size in bytes, descriptor included (not the RTP header).
    public let maximumPayloadSize: Int
    /// PictureID (0–32767) the next frame gets.
    public private(set) var nextPictureID: UInt16
    /// Number the next frame gets (``PacketizedFrame/sequence``).
    public private(set) var nextSequence: UInt64 = 0

    /// A packetizer whose first frame gets PictureID `pictureID` (low 15 bits used).
    ///
    /// Throws ``VP8PayloadError/payloadSizeTooSmall(maximumPayloadSize:descriptorLength:)``
    /// when `maximumPayloadSize` leaves no room after the 4-byte descriptor.
    public init(pictureID: UInt16, maximumPayloadSize: Int = VP8Packetizer.defaultMaximumPayloadSize) throws(VP8PayloadError) {
        guard maximumPayloadSize > VP8Packetizer.descriptorLength else {
            throw .payloadSizeTooSmall(maximumPayloadSize: maximumPayloadSize, descriptorLength: VP8Packetizer.descriptorLength)
        }
        self.maximumPayloadSize = maximumPayloadSize
        nextPictureID = pictureID & 0x7FFF
    }

    /// Cuts one encoded VP8 frame (`frame`: the encoder's bytes from the frame tag) with
    /// media time `timestamp` (90 kHz ticks from the source's start) into one shared
    /// buffer: every payload is written once, with its descriptor, and never copied again
    /// until a stream copies it into its SRTP buffer. `isKeyframe`, `width` and `height`
    /// are the frame's (RFC 6386 §9.1). Advances ``nextPictureID`` and ``nextSequence``.
    ///
    /// Throws ``VP8PayloadError/emptyFrame`` for an empty frame.
    public mutating func packetize(_ frame: [UInt8], timestamp: Int64, isKeyframe: Bool,
                                   width: Int? = nil, height: Int? = nil) throws(VP8PayloadError) -> PacketizedFrame {
        guard !frame.isEmpty else { throw .emptyFrame }
        let descriptorLength = VP8Packetizer.descriptorLength
        let room = maximumPayloadSize - descriptorLength
        let count = max(1, (frame.count + room - 1) / room)
        let base = frame.count / count, extra = frame.count % count
        let pictureID = nextPictureID
        // X = 1 | S on the first; I = 1; M = 1 with the PictureID's high 7 bits; its low 8.
        let first: [UInt8] = [0x90, 0x80, 0x80 | UInt8(pictureID >> 8), UInt8(pictureID & 0xFF)]
        var storage: [UInt8] = []
        storage.reserveCapacity(frame.count + count * descriptorLength)
        var packets: [PacketizedFrame.Packet] = []
        packets.reserveCapacity(count)
        var at = 0
        for i in 0..<count {
            let size = base + (i < extra ? 1 : 0)
            let offset = storage.count
            storage.append(i == 0 ? first[0] : 0x80)
            storage.append(contentsOf: first[1...])
            storage.append(contentsOf: frame[at..<at + size])
            at += size
            packets.append(.init(offset: offset, length: descriptorLength + size, marker: i == count - 1))
        }
        nextPictureID = (pictureID + 1) & 0x7FFF
        defer { nextSequence += 1 }
        return PacketizedFrame(storage: storage, packets: packets, timestamp: timestamp, clockRate: 90_000,
                               isKeyframe: isKeyframe, sequence: nextSequence, pictureID: pictureID,
                               width: width, height: height)
    }
}
