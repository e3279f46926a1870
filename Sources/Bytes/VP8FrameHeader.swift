// VP8FrameHeader: the start of a VP8 frame, the 3-byte frame tag and the key frame
// header (start code, width, height), RFC 6386 §9.1; read by the depayloader
// (RFC 7741 §4.3), the IVF files and the encoder.

/// The start of a VP8 frame (RFC 6386 §9.1, RFC 7741 §4.3): the 3-byte frame tag and,
/// for key frames, the start code 9d 01 2a and the 14-bit width and height.
///
/// ```
///  byte 0: |Size0|H| VER |P|   P = 0: key frame; H: show_frame; VER: version
///  byte 1: Size1   byte 2: Size2   first partition size = Size0 + 8·Size1 + 2048·Size2
///  key frames only: bytes 3–5 = 9d 01 2a, bytes 6–7 = width (LE, low 14 bits, top 2 = scale),
///                   bytes 8–9 = height (LE, low 14 bits, top 2 = scale)
/// ```
public struct VP8FrameHeader: Equatable, Sendable {
    /// True when the P bit (bit 0 of byte 0) is 0: an intra (key) frame.
    public var isKeyframe: Bool
    /// The 3-bit version field (0–3 are defined; decoders treat others as 3).
    public var version: UInt8
    /// show_frame: whether the decoder shows this frame.
    public var showFrame: Bool
    /// Size of the first partition in bytes (19 bits).
    public var firstPartitionSize: Int
    /// Key frames: the width in pixels (low 14 bits of bytes 6–7). `nil` for inter frames.
    public var width: Int?
    /// Key frames: the height in pixels (low 14 bits of bytes 8–9). `nil` for inter frames.
    public var height: Int?

    /// True when `frame` is non-empty and its first byte's P bit is 0 (a key frame); no other
    /// byte is checked (for deciding whether a decoder may start, before a full parse).
    public static func isKeyframe(_ frame: [UInt8]) -> Bool {
        guard let first = frame.first else { return false }
        return first & 0x01 == 0
    }

    /// Parses the frame tag (and key frame header) at the start of `frame`.
    ///
    /// Throws ``VP8PayloadError``: `.truncated` (fewer than 3 bytes, or fewer than 10
    /// for a key frame), `.badStartCode` (a key frame whose bytes 3–5 are not 9d 01 2a).
    public init(parsing frame: [UInt8]) throws(VP8PayloadError) {
        var r = ByteReader(frame)
        func read(_ n: Int, _ field: String) throws(VP8PayloadError) -> [UInt8] {
            do { return try r.take(n, field) } catch { throw .truncated(error) }
        }
        let tag = try read(3, "VP8 frame tag")
        isKeyframe = tag[0] & 0x01 == 0
        version = (tag[0] >> 1) & 0x07
        showFrame = tag[0] & 0x10 != 0
        firstPartitionSize = Int(tag[0] >> 5) | Int(tag[1]) << 3 | Int(tag[2]) << 11
        guard isKeyframe else { width = nil; height = nil; return }
        let code = try read(3, "VP8 key frame start code")
        guard code == [0x9D, 0x01, 0x2A] else {
            throw .badStartCode(offset: 3, value: UInt32(code[0]) << 16 | UInt32(code[1]) << 8 | UInt32(code[2]))
        }
        let w = try read(2, "VP8 key frame width")
        let h = try read(2, "VP8 key frame height")
        width = Int(w[1] & 0x3F) << 8 | Int(w[0])
        height = Int(h[1] & 0x3F) << 8 | Int(h[0])
    }
}
