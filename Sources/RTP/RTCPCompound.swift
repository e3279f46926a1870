// RTCPCompound: compound RTCP packets split and parsed, strictly or skipping a bad packet by its length (RFC 3550 §6.1, RFC 5506 §3).
import Bytes

/// A compound RTCP packet (RFC 3550 §6.1): RTCP packets back to back, each
/// sized by its length field. A reduced-size packet (RFC 5506 §3), a single
/// packet that is not SR/RR, is accepted too; the parser does not insist that
/// the first packet be an SR or RR.
public enum RTCPCompound {
    /// Splits `bytes` into RTCP packets and parses each.
    ///
    /// Throws ``RTCPError`` with offsets from the start of `bytes`:
    /// `.empty` (no bytes), `.lengthBeyondBuffer` (a length field lies),
    /// `.trailingBytes` (1–3 bytes after the last packet), `.badVersion`
    /// (including garbage of 4+ bytes after the last packet), `.countInconsistentWithLength`,
    /// `.truncated`, `.badPadding`, `.missingREMBIdentifier`.
    public static func parse(_ bytes: [UInt8]) throws(RTCPError) -> [RTCPPacket] {
        guard !bytes.isEmpty else { throw .empty }
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            let left = bytes.count - offset
            guard left >= 4 else { throw .trailingBytes(offset: offset, count: left) }
            let rest = Array(bytes[offset...])
            do {
                let p = try RTCPPacket(parsing: rest)
                var r = ByteReader(rest)
                let h = try RTCPHeader.read(&r)
                packets.append(p)
                offset += h.packetLength
            } catch {
                throw error.shifted(by: offset)
            }
        }
        return packets
    }

    /// Splits `bytes` into RTCP packets as ``parse(_:)`` does, but one packet that does not
    /// parse never costs the others (RFC 3550 §6.1: each packet is sized by its own length
    /// field): a packet whose header is sound (version 2, length within the buffer) but
    /// whose body is malformed is skipped by its length and counted; packets of unknown
    /// type or format come back as ``RTCPPacket/unknown(header:bytes:)``. Where the split
    /// itself fails — a header that is not version 2, a length field past the end, 1–3
    /// trailing bytes — the rest is dropped and what came before it kept. Never throws.
    /// A reduced-size packet (RFC 5506 §3) is a compound of one.
    public static func parseSkipping(_ bytes: [UInt8]) -> RTCPCompoundParse {
        var result = RTCPCompoundParse()
        guard !bytes.isEmpty else {
            result.rest = .empty
            return result
        }
        var offset = 0
        while offset < bytes.count {
            let left = bytes.count - offset
            guard left >= 4 else {
                result.rest = .trailingBytes(offset: offset, count: left)
                break
            }
            var r = ByteReader(bytes, offset: offset)
            let length: Int
            do {
                length = try RTCPHeader.read(&r).packetLength
            } catch {
                result.rest = error
                break
            }
            guard length <= left else {
                result.rest = .lengthBeyondBuffer(offset: offset + 2, length: length, available: left)
                break
            }
            do {
                result.packets.append(try RTCPPacket(parsing: Array(bytes[offset..<offset + length])))
            } catch {
                result.skipped += 1
                if result.firstSkipped == nil { result.firstSkipped = error.shifted(by: offset) }
            }
            offset += length
        }
        return result
    }

    /// Concatenates the packets' wire forms into one compound packet.
    public static func serialize(_ packets: [RTCPPacket]) -> [UInt8] {
        packets.flatMap { $0.serialized() }
    }
}

/// What ``RTCPCompound/parseSkipping(_:)`` made of a compound RTCP packet: the packets
/// that parsed, how many were skipped, and where the split stopped, if it did.
public struct RTCPCompoundParse: Equatable, Sendable {
    /// The packets that parsed, in their order (unknown types as ``RTCPPacket/unknown(header:bytes:)``).
    public var packets: [RTCPPacket] = []
    /// Packets with a sound header whose body did not parse, skipped by their length field.
    public var skipped = 0
    /// The error of the first skipped packet, offsets from the compound's start.
    public var firstSkipped: RTCPError?
    /// Why the rest of the compound could not be split (`.empty`, `.badVersion`,
    /// `.lengthBeyondBuffer`, `.trailingBytes`), nil when every byte was accounted for;
    /// what came before it is in ``packets``.
    public var rest: RTCPError?

    /// An empty result.
    public init() {}

    /// Packets dropped as malformed: the skipped ones, and one for an unsplittable rest.
    public var malformed: Int { skipped + (rest == nil ? 0 : 1) }
}
