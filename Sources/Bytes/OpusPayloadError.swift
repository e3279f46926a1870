// OpusPayloadError: the errors of the Opus payload format (RFC 7587) and of the Opus
// TOC byte (RFC 6716 §3.1); here, beside OpusTOC, which throws it.

/// Errors of the Opus payload format. Parse errors name the byte offset in the Opus packet.
public enum OpusPayloadError: Error, Equatable, CustomStringConvertible {
    /// A field ran past the end of the packet.
    case truncated(ByteReaderError)
    /// A code 3 packet's frame count `count` (byte `offset`) is 0 or makes it longer than 120 ms.
    case badFrameCount(offset: Int, count: Int)
    /// The packetizer was given an empty Opus packet.
    case emptyPacket

    /// A one-line message naming the problem, the byte offset and the offending value.
    public var description: String {
        switch self {
        case let .truncated(e): return "Opus: \(e)"
        case let .badFrameCount(o, c): return "Opus: frame count \(c) at byte \(o) is 0 or longer than 120 ms"
        case .emptyPacket: return "Opus: cannot packetize an empty packet"
        }
    }
}
