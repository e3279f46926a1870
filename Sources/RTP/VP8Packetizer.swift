// VP8Packetizer: encoded VP8 frames split into RTP packets with 15-bit PictureIDs (RFC 7741 §4.1, §4.4, §5).
import Bytes

/// Splits encoded VP8 frames into RTP packets (RFC 7741 §4.1, §4.4, §5).
///
/// Every packet carries a 4-byte payload descriptor: X = 1, I = 1 with a 15-bit
/// PictureID (M = 1), N = 0, PID = 0; S = 1 only on the frame's first packet. The frame
/// is cut into the fewest packets that fit ``maximumPayloadSize`` and the bytes are
/// spread evenly (packet sizes differ by at most one byte). All packets of a frame share
/// the caller's RTP timestamp (90 kHz); the last one has the marker bit. Sequence
/// numbers increase by one per packet and wrap at 2^16; the PictureID increases by one
/// per frame and wraps at 2^15.
public struct VP8Packetizer: Sendable {
    /// The default maximum RTP payload size in bytes (descriptor included): 1200.
    public static let defaultMaximumPayloadSize = 1200
    /// Length in bytes of the descriptor this packetizer writes (X, I with M = 1).
    public static let descriptorLength = 4

    /// SSRC written into every packet.
    public let ssrc: UInt32
    /// Payload type (0–127) written into every packet.
    public var payloadType: UInt8 { didSet { payloadType &= 0x7F } }
    /// Maximum RTP payload size in bytes, descriptor included (RTP header and header extension not counted).
    public let maximumPayloadSize: Int
    /// Sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// PictureID (0–32767) the next frame gets.
    public private(set) var nextPictureID: UInt16

    /// Creates a packetizer. `pictureID` is the first frame's 15-bit PictureID (only the
    /// low 15 bits are used); `maximumPayloadSize` is in bytes, descriptor included.
    ///
    /// Throws ``VP8PayloadError/payloadSizeTooSmall(maximumPayloadSize:descriptorLength:)``
    /// when `maximumPayloadSize` is not larger than the 4-byte descriptor.
    public init(ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16, pictureID: UInt16,
                maximumPayloadSize: Int = VP8Packetizer.defaultMaximumPayloadSize) throws(VP8PayloadError) {
        guard maximumPayloadSize > Self.descriptorLength else {
            throw .payloadSizeTooSmall(maximumPayloadSize: maximumPayloadSize, descriptorLength: Self.descriptorLength)
        }
        self.ssrc = ssrc
        self.payloadType = payloadType & 0x7F
        self.maximumPayloadSize = maximumPayloadSize
        self.nextSequenceNumber = sequenceNumber
        self.nextPictureID = pictureID & 0x7FFF
    }

    /// The number of packets a frame of `frameSize` bytes is split into.
    public func packetCount(frameSize: Int) -> Int {
        let room = maximumPayloadSize - Self.descriptorLength
        return max(1, (frameSize + room - 1) / room)
    }

    /// Packetizes one encoded VP8 frame (`frame`: the encoder's bytes, starting with the
    /// frame tag) with RTP timestamp `timestamp` (90 kHz ticks). `headerExtension`, if
    /// given, is put on every packet (it does not count against ``maximumPayloadSize``).
    /// Advances ``nextSequenceNumber`` by the packet count and ``nextPictureID`` by one.
    ///
    /// Throws ``VP8PayloadError/emptyFrame`` for an empty frame.
    public mutating func packetize(_ frame: [UInt8], timestamp: UInt32,
                                   headerExtension: RTPHeaderExtension? = nil) throws(VP8PayloadError) -> [RTPPacket] {
        guard !frame.isEmpty else { throw .emptyFrame }
        let count = packetCount(frameSize: frame.count)
        let base = frame.count / count, extra = frame.count % count
        let pictureID = nextPictureID
        var packets: [RTPPacket] = []
        packets.reserveCapacity(count)
        // The descriptor is the same on every packet but for S: serialized once for the
        // first packet and once for the rest, and each payload allocated once at its size.
        let first = VP8PayloadDescriptor(startOfPartition: true, partitionIndex: 0,
                                         pictureID: .fifteenBit(pictureID)).serialized()
        let rest = VP8PayloadDescriptor(startOfPartition: false, partitionIndex: 0,
                                        pictureID: .fifteenBit(pictureID)).serialized()
        var at = 0
        for i in 0..<count {
            let size = base + (i < extra ? 1 : 0)
            let descriptor = i == 0 ? first : rest
            var payload: [UInt8] = []
            payload.reserveCapacity(descriptor.count + size)
            payload += descriptor
            payload += frame[at..<at + size]
            at += size
            packets.append(RTPPacket(marker: i == count - 1, payloadType: payloadType,
                                     sequenceNumber: nextSequenceNumber, timestamp: timestamp, ssrc: ssrc,
                                     headerExtension: headerExtension, payload: payload))
            nextSequenceNumber &+= 1
        }
        nextPictureID = (pictureID + 1) & 0x7FFF
        return packets
    }
}
