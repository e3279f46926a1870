// RTCPPacket: one RTCP packet of any supported type (RFC 3550 §6, RFC 4585, RFC 5104, REMB).
import Bytes

/// One RTCP packet of any supported type (RFC 3550 §6, RFC 4585, RFC 5104, REMB).
public enum RTCPPacket: Equatable, Sendable {
    /// Sender report (PT 200).
    case senderReport(SenderReport)
    /// Receiver report (PT 201).
    case receiverReport(ReceiverReport)
    /// Source description (PT 202).
    case sourceDescription(SourceDescription)
    /// BYE (PT 203).
    case goodbye(Goodbye)
    /// Generic NACK (PT 205, FMT 1).
    case nack(TransportLayerNack)
    /// Picture loss indication (PT 206, FMT 1).
    case pictureLossIndication(PictureLossIndication)
    /// Full intra request (PT 206, FMT 4).
    case fullIntraRequest(FullIntraRequest)
    /// REMB (PT 206, FMT 15, "REMB").
    case receiverEstimatedMaxBitrate(ReceiverEstimatedMaxBitrate)
    /// Any other type or format, kept as its whole packet bytes (header included).
    case unknown(header: RTCPHeader, bytes: [UInt8])

    /// Parses exactly one RTCP packet occupying the start of `bytes` (its length
    /// field decides how many bytes it uses; extra bytes are ignored). Throws
    /// the type-specific ``RTCPError`` with offsets relative to `bytes`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var r = ByteReader(bytes)
        let h = try RTCPHeader.read(&r)
        guard h.packetLength <= bytes.count else {
            throw .lengthBeyondBuffer(offset: 2, length: h.packetLength, available: bytes.count)
        }
        let packet = Array(bytes[0..<h.packetLength])
        switch (h.packetType, h.count) {
        case (200, _): self = .senderReport(try SenderReport(parsing: packet))
        case (201, _): self = .receiverReport(try ReceiverReport(parsing: packet))
        case (202, _): self = .sourceDescription(try SourceDescription(parsing: packet))
        case (203, _): self = .goodbye(try Goodbye(parsing: packet))
        case (205, 1): self = .nack(try TransportLayerNack(parsing: packet))
        case (206, 1): self = .pictureLossIndication(try PictureLossIndication(parsing: packet))
        case (206, 4): self = .fullIntraRequest(try FullIntraRequest(parsing: packet))
        case (206, 15):
            // FMT 15 is application-layer feedback; only the "REMB" kind is decoded.
            if packet.count >= 16, Array(packet[12..<16]) == Array("REMB".utf8) {
                self = .receiverEstimatedMaxBitrate(try ReceiverEstimatedMaxBitrate(parsing: packet))
            } else {
                self = .unknown(header: h, bytes: packet)
            }
        default: self = .unknown(header: h, bytes: packet)
        }
    }

    /// The packet on the wire.
    public func serialized() -> [UInt8] {
        switch self {
        case let .senderReport(p): return p.serialized()
        case let .receiverReport(p): return p.serialized()
        case let .sourceDescription(p): return p.serialized()
        case let .goodbye(p): return p.serialized()
        case let .nack(p): return p.serialized()
        case let .pictureLossIndication(p): return p.serialized()
        case let .fullIntraRequest(p): return p.serialized()
        case let .receiverEstimatedMaxBitrate(p): return p.serialized()
        case let .unknown(_, bytes): return bytes
        }
    }
}
