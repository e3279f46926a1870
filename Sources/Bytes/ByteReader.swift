// ByteReader: a bounds-checked cursor over received bytes, and its error type
// ByteReaderError. Big-endian reads are network byte order (RFC 3550 §4); the
// little-endian ones serve RIFF/WAV, IVF and the Ogg Opus headers (RFC 7845 §5).

/// A cursor over received bytes that every RTP/RTCP/STUN parser shares, so no
/// parser does index arithmetic of its own. Multi-byte integers are network
/// byte order (big-endian, RFC 3550 §4). Reading past the end throws, naming the
/// byte offset and what was wanted; it never traps.
public struct ByteReader {
    /// The bytes being read.
    public let bytes: [UInt8]
    /// Offset of the next byte to read, in bytes from the start of ``bytes``.
    public private(set) var offset: Int

    /// Starts reading `bytes` at `offset` (default 0).
    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Bytes left to read.
    public var remaining: Int { bytes.count - offset }

    /// Reads one byte. Throws ``ByteReaderError/truncated(offset:wanted:available:field:)``.
    public mutating func u8(_ field: String = "byte") throws(ByteReaderError) -> UInt8 {
        try need(1, field)
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a 16-bit big-endian integer.
    public mutating func u16(_ field: String = "u16") throws(ByteReaderError) -> UInt16 {
        try need(2, field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// Reads a 24-bit big-endian integer into the low bits of a `UInt32`.
    public mutating func u24(_ field: String = "u24") throws(ByteReaderError) -> UInt32 {
        try need(3, field)
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    /// Reads a 32-bit big-endian integer.
    public mutating func u32(_ field: String = "u32") throws(ByteReaderError) -> UInt32 {
        try need(4, field)
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// Reads a 64-bit big-endian integer (NTP timestamps, RFC 3550 §4).
    public mutating func u64(_ field: String = "u64") throws(ByteReaderError) -> UInt64 {
        try need(8, field)
        defer { offset += 8 }
        return bytes[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads a 16-bit little-endian integer (the byte order of RIFF/WAV, IVF and the
    /// Ogg Opus headers, RFC 7845 §5; not of RTP). Throws
    /// ``ByteReaderError/truncated(offset:wanted:available:field:)``.
    public mutating func u16le(_ field: String = "u16le") throws(ByteReaderError) -> UInt16 {
        try need(2, field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// Reads a 32-bit little-endian integer (RIFF/WAV, IVF, Ogg Opus headers). Throws
    /// ``ByteReaderError/truncated(offset:wanted:available:field:)``.
    public mutating func u32le(_ field: String = "u32le") throws(ByteReaderError) -> UInt32 {
        try need(4, field)
        defer { offset += 4 }
        return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Reads a 64-bit little-endian integer (IVF frame timestamps). Throws
    /// ``ByteReaderError/truncated(offset:wanted:available:field:)``.
    public mutating func u64le(_ field: String = "u64le") throws(ByteReaderError) -> UInt64 {
        try need(8, field)
        defer { offset += 8 }
        return bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads `count` bytes.
    public mutating func take(_ count: Int, _ field: String = "bytes") throws(ByteReaderError) -> [UInt8] {
        try need(count, field)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int, _ field: String = "bytes") throws(ByteReaderError) {
        try need(count, field)
        offset += count
    }

    private func need(_ count: Int, _ field: String) throws(ByteReaderError) {
        guard count >= 0, count <= remaining else {
            throw .truncated(offset: offset, wanted: count, available: remaining, field: field)
        }
    }
}

/// Errors of ``ByteReader``.
public enum ByteReaderError: Error, Equatable, CustomStringConvertible {
    /// `field` needed `wanted` bytes at byte `offset` but only `available` were left.
    case truncated(offset: Int, wanted: Int, available: Int, field: String)

    /// One line naming the field, the byte offset and the bytes wanted and left.
    public var description: String {
        switch self {
        case let .truncated(offset, wanted, available, field):
            return "truncated \(field) at byte \(offset): wanted \(wanted) bytes, \(available) left"
        }
    }
}
