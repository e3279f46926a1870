// RTCPHeader: the common RTCP header and the errors of parsing RTCP (RFC 3550 §6.4.1, §6).
import Bytes

/// Errors from parsing RTCP (RFC 3550 §6). Offsets are bytes from the start of
/// the buffer given to the parser (the whole compound packet for ``RTCPCompound``).
public enum RTCPError: Error, Equatable, CustomStringConvertible {
    /// A field ran past the end of the packet.
    case truncated(ByteReaderError)
    /// The version field was not 2.
    case badVersion(offset: Int, version: UInt8)
    /// The header's length field announces `length` bytes but only `available` remain.
    case lengthBeyondBuffer(offset: Int, length: Int, available: Int)
    /// Fewer than 4 bytes were left after the last whole packet of a compound packet.
    case trailingBytes(offset: Int, count: Int)
    /// The count field (RC, SC, …) needs more bytes than the packet length gives.
    case countInconsistentWithLength(offset: Int, count: Int, length: Int)
    /// The P bit is set and the padding count is zero or larger than the packet body.
    case badPadding(offset: Int, padding: Int)
    /// A type-specific parser was given a packet of another type/format.
    case wrongPacketType(offset: Int, packetType: UInt8, format: UInt8)
    /// A REMB packet lacked its "REMB" identifier.
    case missingREMBIdentifier(offset: Int)
    /// An empty buffer was given where at least one RTCP packet is required.
    case empty
    /// A report's profile-specific extension that is not whole 32-bit words (RFC 3550 §6.4.1).
    case extensionNotWordAligned(offset: Int, length: Int)

    /// A one-line message naming the field, the byte offset and the offending value.
    public var description: String {
        switch self {
        case let .truncated(e): return "RTCP: \(e)"
        case let .badVersion(o, v): return "RTCP: version \(v) at byte \(o), expected 2"
        case let .lengthBeyondBuffer(o, l, a): return "RTCP: length field at byte \(o) says \(l) bytes, \(a) left"
        case let .trailingBytes(o, c): return "RTCP: \(c) trailing bytes at byte \(o)"
        case let .countInconsistentWithLength(o, c, l): return "RTCP: count \(c) at byte \(o) does not fit packet length \(l)"
        case let .badPadding(o, p): return "RTCP: bad padding count \(p) at byte \(o)"
        case let .wrongPacketType(o, pt, f): return "RTCP: unexpected packet type \(pt) format \(f) at byte \(o)"
        case let .missingREMBIdentifier(o): return "RTCP: missing REMB identifier at byte \(o)"
        case .empty: return "RTCP: empty packet"
        case let .extensionNotWordAligned(o, l): return "RTCP: profile extension of \(l) bytes at byte \(o) is not whole 32-bit words"
        }
    }

    /// The same error with every offset moved by `base` bytes.
    func shifted(by base: Int) -> RTCPError {
        switch self {
        case let .truncated(.truncated(o, w, a, f)): return .truncated(.truncated(offset: o + base, wanted: w, available: a, field: f))
        case let .badVersion(o, v): return .badVersion(offset: o + base, version: v)
        case let .lengthBeyondBuffer(o, l, a): return .lengthBeyondBuffer(offset: o + base, length: l, available: a)
        case let .trailingBytes(o, c): return .trailingBytes(offset: o + base, count: c)
        case let .countInconsistentWithLength(o, c, l): return .countInconsistentWithLength(offset: o + base, count: c, length: l)
        case let .badPadding(o, p): return .badPadding(offset: o + base, padding: p)
        case let .wrongPacketType(o, pt, f): return .wrongPacketType(offset: o + base, packetType: pt, format: f)
        case let .missingREMBIdentifier(o): return .missingREMBIdentifier(offset: o + base)
        case .empty: return .empty
        case let .extensionNotWordAligned(o, l): return .extensionNotWordAligned(offset: o + base, length: l)
        }
    }
}

/// Runs a ByteReader operation, turning its error into ``RTCPError/truncated(_:)``.
@inline(__always)
func rtcp<T>(_ body: () throws(ByteReaderError) -> T) throws(RTCPError) -> T {
    do { return try body() } catch { throw .truncated(error) }
}

/// The 4-byte common RTCP header (RFC 3550 §6.4.1):
/// `V=2 | P | count/FMT (5 bits) | packet type (8) | length (16, 32-bit words − 1)`.
public struct RTCPHeader: Equatable, Sendable {
    /// The P bit.
    public var padding: Bool
    /// The 5-bit count (RC, SC) or feedback message type (FMT, RFC 4585 §6.1).
    public var count: UInt8
    /// The packet type (200 SR, 201 RR, 202 SDES, 203 BYE, 205 RTPFB, 206 PSFB).
    public var packetType: UInt8
    /// The length field: packet length in 32-bit words minus one.
    public var length: UInt16

    /// Creates a header from its fields (`count` keeps its low 5 bits).
    public init(padding: Bool = false, count: UInt8, packetType: UInt8, length: UInt16) {
        self.padding = padding
        self.count = count & 0x1F
        self.packetType = packetType
        self.length = length
    }

    /// The whole packet's length in bytes, header included: `(length + 1) × 4`.
    public var packetLength: Int { (Int(length) + 1) * 4 }

    /// Reads a header at the reader's position. Throws `.truncated`, `.badVersion`.
    static func read(_ r: inout ByteReader) throws(RTCPError) -> RTCPHeader {
        let at = r.offset
        let b0 = try rtcp { () throws(ByteReaderError) in try r.u8("RTCP header byte 0") }
        guard b0 >> 6 == 2 else { throw .badVersion(offset: at, version: b0 >> 6) }
        let pt = try rtcp { () throws(ByteReaderError) in try r.u8("RTCP packet type") }
        let len = try rtcp { () throws(ByteReaderError) in try r.u16("RTCP length") }
        return RTCPHeader(padding: b0 & 0x20 != 0, count: b0 & 0x1F, packetType: pt, length: len)
    }

    /// Opens one RTCP packet at the start of `bytes`: checks version, that the
    /// length field fits the buffer, and strips padding. Returns the header and a
    /// reader over the packet (offsets relative to the packet start) positioned
    /// after the header; the reader's bytes end where the packet body ends.
    static func open(_ bytes: [UInt8]) throws(RTCPError) -> (RTCPHeader, ByteReader) {
        var r = ByteReader(bytes)
        let h = try read(&r)
        guard h.packetLength <= bytes.count else {
            throw .lengthBeyondBuffer(offset: 2, length: h.packetLength, available: bytes.count)
        }
        var end = h.packetLength
        if h.padding {
            let pad = Int(bytes[end - 1])
            guard pad > 0, pad <= end - 4 else { throw .badPadding(offset: end - 1, padding: pad) }
            end -= pad
        }
        return (h, ByteReader(Array(bytes[0..<end]), offset: 4))
    }

    /// Writes a header for a packet whose total length is `bytes` (a multiple of 4).
    static func write(_ w: inout ByteWriter, count: UInt8, packetType: UInt8, bytes: Int) {
        w.u8(2 << 6 | (count & 0x1F))
        w.u8(packetType)
        w.u16(UInt16(clamping: bytes / 4 - 1))
    }
}

/// Pads `body` with zero bytes to a multiple of 4.
func padded4(_ body: [UInt8]) -> [UInt8] {
    var b = body
    while b.count % 4 != 0 { b.append(0) }
    return b
}

/// Prefixes a 4-byte RTCP header to `body` (which must be a multiple of 4 bytes).
func rtcpPacket(count: UInt8, packetType: UInt8, body: [UInt8]) -> [UInt8] {
    var w = ByteWriter(capacity: body.count + 4)
    RTCPHeader.write(&w, count: count, packetType: packetType, bytes: body.count + 4)
    w.append(body)
    return w.bytes
}
