// ByteWriter: builds outgoing bytes, big-endian (network byte order, RFC 3550 §4) or
// little-endian (RIFF/WAV, IVF, the Ogg Opus headers of RFC 7845 §5); the writing twin
// of ByteReader.

/// Builds bytes in network byte order; the writing twin of ``ByteReader``.
public struct ByteWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer; `capacity` reserves room in bytes.
    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends one byte.
    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    // The integers are appended a byte at a time: `bytes += [a, b]` allocated a
    // temporary array per call (the VP8 descriptor's PictureID, every RTP header).
    /// Appends a 16-bit big-endian integer.
    public mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }
    /// Appends the low 24 bits of `v`, big-endian.
    public mutating func u24(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        u16(UInt16(truncatingIfNeeded: v))
    }
    /// Appends a 32-bit big-endian integer.
    public mutating func u32(_ v: UInt32) {
        u16(UInt16(truncatingIfNeeded: v >> 16))
        u16(UInt16(truncatingIfNeeded: v))
    }
    /// Appends a 64-bit big-endian integer.
    public mutating func u64(_ v: UInt64) {
        u32(UInt32(truncatingIfNeeded: v >> 32))
        u32(UInt32(truncatingIfNeeded: v))
    }
    /// Appends a 16-bit little-endian integer (RIFF/WAV, IVF, Ogg Opus headers; not RTP).
    public mutating func u16le(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }
    /// Appends a 32-bit little-endian integer (RIFF/WAV, IVF, Ogg Opus headers).
    public mutating func u32le(_ v: UInt32) {
        u16le(UInt16(truncatingIfNeeded: v))
        u16le(UInt16(truncatingIfNeeded: v >> 16))
    }
    /// Appends a 64-bit little-endian integer (IVF frame timestamps).
    public mutating func u64le(_ v: UInt64) {
        u32le(UInt32(truncatingIfNeeded: v))
        u32le(UInt32(truncatingIfNeeded: v >> 32))
    }
    /// Appends raw bytes.
    public mutating func append(_ b: [UInt8]) { bytes += b }
}
