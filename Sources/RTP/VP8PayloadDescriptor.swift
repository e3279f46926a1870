/// The VP8 payload descriptor (RFC 7741 §4.2): the 1–6 bytes at the start of every
/// VP8 RTP payload, before the VP8 bytes themselves.
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID | (REQUIRED)
///      +-+-+-+-+-+-+-+-+
/// X:   |I|L|T|K| RSV   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// I:   |M| PictureID   | (OPTIONAL, 7 bits, or 15 bits when M = 1)
///      +-+-+-+-+-+-+-+-+
///      |   PictureID   | (second byte only when M = 1)
///      +-+-+-+-+-+-+-+-+
/// L:   |   TL0PICIDX   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// T/K: |TID|Y| KEYIDX  | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// ```
///
/// R and RSV bits are written as zero and ignored on receive. The X byte is written
/// only when one of I, L, T, K is present; a received X byte with all four clear is
/// accepted (so such a descriptor parses to one that serializes one byte shorter).
public struct VP8PayloadDescriptor: Equatable, Sendable {
    /// N: non-reference frame (the frame can be discarded without affecting any other frame).
    public var nonReference: Bool
    /// S: start of a VP8 partition (set on the first packet of each partition).
    public var startOfPartition: Bool
    /// PID: partition index, 0–7 (only the low 3 bits are serialized).
    public var partitionIndex: UInt8
    /// PictureID (I bit): the running index of the frame, 7 or 15 bits (M bit). `nil` when absent.
    public var pictureID: VP8PictureID?
    /// TL0PICIDX (L bit): running index of the temporal base layer frames, 0–255. `nil` when absent.
    public var tl0PicIdx: UInt8?
    /// TID (T bit): temporal layer index, 0–3. `nil` when absent.
    public var tid: UInt8?
    /// Y: layer sync bit, meaningful only with ``tid`` (serialized only when ``tid`` is present).
    public var layerSync: Bool
    /// KEYIDX (K bit): temporal key frame index, 0–31. `nil` when absent.
    public var keyIdx: UInt8?

    /// True on the packet that starts a frame: S = 1 and PID = 0 (RFC 7741 §4.4).
    public var isFrameStart: Bool { startOfPartition && partitionIndex == 0 }

    /// The serialized length of this descriptor in bytes (1–6).
    public var length: Int {
        var n = 1
        if pictureID != nil || tl0PicIdx != nil || tid != nil || keyIdx != nil { n += 1 }
        if let p = pictureID { n += p.isFifteenBit ? 2 : 1 }
        if tl0PicIdx != nil { n += 1 }
        if tid != nil || keyIdx != nil { n += 1 }
        return n
    }

    /// Creates a descriptor from its fields (all optional fields absent by default).
    public init(nonReference: Bool = false, startOfPartition: Bool = false, partitionIndex: UInt8 = 0,
                pictureID: VP8PictureID? = nil, tl0PicIdx: UInt8? = nil, tid: UInt8? = nil,
                layerSync: Bool = false, keyIdx: UInt8? = nil) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex & 0x07
        self.pictureID = pictureID
        self.tl0PicIdx = tl0PicIdx
        self.tid = tid.map { $0 & 0x03 }
        self.layerSync = tid != nil && layerSync
        self.keyIdx = keyIdx.map { $0 & 0x1F }
    }

    /// Parses the descriptor at the start of a VP8 RTP payload and returns it with its
    /// length in bytes; the VP8 bytes are `payload[length...]`.
    ///
    /// Throws ``VP8PayloadError``: `.truncated` (the payload ends inside the descriptor;
    /// the error names the byte offset and field), `.emptyPayload` (no VP8 byte after
    /// the descriptor; names the offset where it should start).
    public static func parse(_ payload: [UInt8]) throws(VP8PayloadError) -> (descriptor: VP8PayloadDescriptor, length: Int) {
        var r = ByteReader(payload)
        func read(_ field: String) throws(VP8PayloadError) -> UInt8 {
            do { return try r.u8(field) } catch { throw .truncated(error) }
        }
        let b0 = try read("VP8 descriptor byte 0")
        var d = VP8PayloadDescriptor(nonReference: b0 & 0x20 != 0, startOfPartition: b0 & 0x10 != 0,
                                     partitionIndex: b0 & 0x07)
        if b0 & 0x80 != 0 {
            let x = try read("VP8 descriptor X byte (I|L|T|K)")
            if x & 0x80 != 0 {
                let p0 = try read("VP8 PictureID")
                if p0 & 0x80 != 0 {
                    let p1 = try read("VP8 PictureID second byte (M=1)")
                    d.pictureID = .fifteenBit(UInt16(p0 & 0x7F) << 8 | UInt16(p1))
                } else {
                    d.pictureID = .sevenBit(p0)
                }
            }
            if x & 0x40 != 0 { d.tl0PicIdx = try read("VP8 TL0PICIDX") }
            if x & 0x30 != 0 {
                let tk = try read("VP8 TID/Y/KEYIDX")
                if x & 0x20 != 0 {
                    d.tid = tk >> 6
                    d.layerSync = tk & 0x20 != 0
                }
                if x & 0x10 != 0 { d.keyIdx = tk & 0x1F }
            }
        }
        guard r.remaining > 0 else { throw .emptyPayload(offset: r.offset) }
        return (d, r.offset)
    }

    /// The descriptor's bytes (``length`` of them), to be followed by the VP8 bytes.
    public func serialized() -> [UInt8] {
        var w = ByteWriter(capacity: 6)
        let hasX = pictureID != nil || tl0PicIdx != nil || tid != nil || keyIdx != nil
        w.u8((hasX ? 0x80 : 0) | (nonReference ? 0x20 : 0) | (startOfPartition ? 0x10 : 0) | (partitionIndex & 0x07))
        guard hasX else { return w.bytes }
        w.u8((pictureID != nil ? 0x80 : 0) | (tl0PicIdx != nil ? 0x40 : 0) | (tid != nil ? 0x20 : 0) | (keyIdx != nil ? 0x10 : 0))
        switch pictureID {
        case let .fifteenBit(v)?: w.u16(0x8000 | (v & 0x7FFF))
        case let .sevenBit(v)?: w.u8(v & 0x7F)
        case nil: break
        }
        if let l = tl0PicIdx { w.u8(l) }
        if tid != nil || keyIdx != nil {
            let t = tid.map { ($0 & 0x03) << 6 | (layerSync ? 0x20 : 0) } ?? 0
            w.u8(t | (keyIdx ?? 0) & 0x1F)
        }
        return w.bytes
    }
}

/// A VP8 PictureID (RFC 7741 §4.2): 7 bits (M = 0) or 15 bits (M = 1). Senders here
/// always use 15 bits; receivers accept both.
public enum VP8PictureID: Equatable, Hashable, Sendable {
    /// M = 0: a 7-bit PictureID, 0–127 (only the low 7 bits are serialized).
    case sevenBit(UInt8)
    /// M = 1: a 15-bit PictureID, 0–32767 (only the low 15 bits are serialized).
    case fifteenBit(UInt16)

    /// The PictureID's value (0–127 or 0–32767).
    public var value: UInt16 {
        switch self {
        case let .sevenBit(v): return UInt16(v & 0x7F)
        case let .fifteenBit(v): return v & 0x7FFF
        }
    }

    /// True for the 15-bit form (M = 1).
    public var isFifteenBit: Bool { if case .fifteenBit = self { return true } else { return false } }

    /// The number of distinct values before the PictureID wraps: 128 or 32768.
    public var modulus: Int { isFifteenBit ? 1 << 15 : 1 << 7 }
}

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
