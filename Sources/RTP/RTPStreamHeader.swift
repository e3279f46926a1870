// RTPStreamHeader: what one stream adds to a shared packetized frame — its RTP header (SSRC, sequence number, timestamp offset, header extension; RFC 3550 §5.1, RFC 8285) written in front of the shared payload into the stream's SRTP buffer.

/// The RTP header fields of one stream (one connection's sender) that sends shared
/// ``PacketizedFrame``s: the SSRC, payload type, running sequence number, the stream's
/// timestamp offset and its header extension (e.g. the mid, RFC 8843 §15), serialized
/// once when set. Building a packet is one header write and one copy of the shared
/// payload into the caller's buffer (``write(_:packet:into:reserving:)``), which SRTP then
/// protects in place; nothing else is allocated per packet once the buffer has its size.
public struct RTPStreamHeader: Sendable, Equatable {
    /// The stream's SSRC (RFC 3550 §5.1).
    public let ssrc: UInt32
    /// Payload type (0–127); a renegotiation may renumber it for later packets.
    public var payloadType: UInt8 { didSet { payloadType &= 0x7F } }
    /// Sequence number the next new packet gets; increases by one per packet and wraps.
    public private(set) var nextSequenceNumber: UInt16
    /// Added to every frame's media timestamp (random per stream, RFC 3550 §5.1), modulo 2^32.
    public let timestampOffset: UInt32
    /// The header extension as written on the wire (profile, length in words, body), empty
    /// for none: serialized once by ``setHeaderExtension(_:)``.
    public private(set) var extensionBytes: [UInt8] = []

    /// A stream's header: `sequenceNumber` is its first packet's number, `timestampOffset`
    /// what it adds to media timestamps, `headerExtension` what every packet carries.
    public init(ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16, timestampOffset: UInt32,
                headerExtension: RTPHeaderExtension? = nil) {
        self.ssrc = ssrc
        self.payloadType = payloadType & 0x7F
        nextSequenceNumber = sequenceNumber
        self.timestampOffset = timestampOffset
        setHeaderExtension(headerExtension)
    }

    /// Sets the header extension the following packets carry (nil: none); serialized here,
    /// once (RFC 8285 §4.2/§4.3: elements that do not fit their form are left out).
    public mutating func setHeaderExtension(_ headerExtension: RTPHeaderExtension?) {
        guard let ext = headerExtension else {
            extensionBytes = []
            return
        }
        let body = ext.body
        let words = body.count / 4
        guard words <= Int(UInt16.max) else {
            extensionBytes = []
            return
        }
        extensionBytes = [UInt8(ext.profile >> 8), UInt8(ext.profile & 0xFF), UInt8(words >> 8), UInt8(words & 0xFF)] + body
    }

    /// Bytes of RTP header this stream writes per packet: 12 plus the extension.
    public var headerLength: Int { 12 + extensionBytes.count }

    /// The stream's RTP timestamp of `frame` (its media time plus ``timestampOffset``, mod 2^32).
    public func rtpTimestamp(of frame: PacketizedFrame) -> UInt32 {
        timestampOffset &+ UInt32(truncatingIfNeeded: frame.timestamp)
    }

    /// Writes packet `index` of `frame` as this stream's next packet into `buffer` (its
    /// contents replaced, its storage kept): the 12-byte header and extension, then the
    /// shared payload, one copy. `trailer` more bytes of capacity are reserved behind it
    /// (`SRTPProfile.maxTrailerLength`), so SRTP protects the buffer in place without
    /// growing it. Advances ``nextSequenceNumber``; returns the packet's sequence number,
    /// or nil (nothing written, no number used) for an index outside the frame.
    @discardableResult
    public mutating func write(_ frame: PacketizedFrame, packet index: Int, into buffer: inout [UInt8],
                               reserving trailer: Int = 0) -> UInt16? {
        let seq = nextSequenceNumber
        guard write(frame, packet: index, sequenceNumber: seq, timestamp: rtpTimestamp(of: frame),
                    into: &buffer, reserving: trailer) else { return nil }
        nextSequenceNumber &+= 1
        return seq
    }

    /// Writes packet `index` of `frame` with the given `sequenceNumber` and RTP `timestamp`
    /// (a retransmission as first sent, RFC 4588 §1) into `buffer`, as
    /// ``write(_:packet:into:reserving:)`` does, without advancing the sequence number.
    /// False (buffer emptied) for an index outside the frame.
    public func write(_ frame: PacketizedFrame, packet index: Int, sequenceNumber: UInt16, timestamp: UInt32,
                      into buffer: inout [UInt8], reserving trailer: Int = 0) -> Bool {
        buffer.removeAll(keepingCapacity: true)
        guard frame.packets.indices.contains(index) else { return false }
        let p = frame.packets[index]
        buffer.reserveCapacity(headerLength + p.length + max(0, trailer))
        buffer.append(0x80 | (extensionBytes.isEmpty ? 0 : 0x10))
        buffer.append((p.marker ? 0x80 : 0) | payloadType)
        buffer.append(UInt8(sequenceNumber >> 8))
        buffer.append(UInt8(sequenceNumber & 0xFF))
        for shift in stride(from: 24, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: ssrc >> UInt32(shift))) }
        buffer.append(contentsOf: extensionBytes)
        buffer.append(contentsOf: frame.storage[p.offset..<p.offset + p.length])
        return true
    }
}
