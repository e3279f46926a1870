// VP8PayloadError: the errors of the VP8 payload format (RFC 7741) and of the VP8
// frame header (RFC 6386 §9.1); here, beside VP8FrameHeader, which throws it.

/// Errors of the VP8 payload format (RFC 7741). Every parse error names the byte
/// offset from the start of the RTP payload (or of the VP8 frame for the frame header).
public enum VP8PayloadError: Error, Equatable, CustomStringConvertible {
    /// A field ran past the end of the payload (the reader error names offset and field).
    case truncated(ByteReaderError)
    /// The descriptor ends at byte `offset`, the end of the payload: no VP8 bytes follow.
    case emptyPayload(offset: Int)
    /// A key frame's bytes at `offset` (3) are `value`, not the start code 0x9d012a.
    case badStartCode(offset: Int, value: UInt32)
    /// The packetizer's maximum payload size `maximumPayloadSize` (bytes) leaves no room
    /// for VP8 bytes after the `descriptorLength`-byte descriptor.
    case payloadSizeTooSmall(maximumPayloadSize: Int, descriptorLength: Int)
    /// The packetizer was given an empty frame (0 bytes).
    case emptyFrame

    /// A one-line message naming the problem, the byte offset and the offending value.
    public var description: String {
        switch self {
        case let .truncated(e): return "VP8: \(e)"
        case let .emptyPayload(o): return "VP8: no payload after the \(o)-byte descriptor (byte \(o))"
        case let .badStartCode(o, v):
            return "VP8: key frame start code at byte \(o) is 0x\(String(v, radix: 16)), expected 0x9d012a"
        case let .payloadSizeTooSmall(m, d):
            return "VP8: maximum payload size \(m) bytes leaves no room after the \(d)-byte descriptor"
        case .emptyFrame: return "VP8: cannot packetize an empty frame"
        }
    }
}
