// RTPError: errors from parsing an RTP packet, each naming the field and offset (RFC 3550 §5.1, RFC 8285).
import Bytes

/// Errors from parsing an RTP packet (RFC 3550 §5.1, RFC 8285). Every case names
/// the byte offset (from the start of the packet) where the problem was found.
public enum RTPError: Error, Equatable, CustomStringConvertible {
    /// A field ran past the end of the packet (fixed header shorter than 12 bytes, etc.).
    case truncated(ByteReaderError)
    /// The version field (top two bits of byte 0) was not 2.
    case badVersion(offset: Int, version: UInt8)
    /// The CC field announced `count` CSRCs (4 bytes each) but only `available` bytes follow.
    case csrcCountBeyondLength(offset: Int, count: Int, available: Int)
    /// The header extension's length (in 32-bit words, excluding its 4-byte header)
    /// needs `wanted` bytes but only `available` bytes are left.
    case extensionLengthBeyondPacket(offset: Int, wanted: Int, available: Int)
    /// An RFC 8285 extension element's length runs past the end of the extension block.
    case extensionElementBeyondBlock(offset: Int, id: UInt8, wanted: Int, available: Int)
    /// The P bit is set but the last byte (the padding count) is zero.
    case zeroPaddingCount(offset: Int)
    /// The padding count (bytes) is larger than what follows the header.
    case paddingLongerThanPayload(offset: Int, padding: Int, available: Int)

    /// A one-line message naming the field, the byte offset and the offending value.
    public var description: String {
        switch self {
        case let .truncated(e): return "RTP: \(e)"
        case let .badVersion(o, v): return "RTP: version \(v) at byte \(o), expected 2"
        case let .csrcCountBeyondLength(o, c, a): return "RTP: CSRC count \(c) at byte \(o) needs \(c * 4) bytes, \(a) left"
        case let .extensionLengthBeyondPacket(o, w, a): return "RTP: header extension at byte \(o) needs \(w) bytes, \(a) left"
        case let .extensionElementBeyondBlock(o, id, w, a): return "RTP: extension element id \(id) at byte \(o) needs \(w) bytes, \(a) left in block"
        case let .zeroPaddingCount(o): return "RTP: padding count at byte \(o) is zero"
        case let .paddingLongerThanPayload(o, p, a): return "RTP: padding count \(p) at byte \(o) exceeds the \(a) bytes after the header"
        }
    }
}
