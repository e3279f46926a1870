// VP8PayloadDescriptor: the VP8 payload descriptor at the start of every VP8 RTP payload — X, N, S, PID, PictureID, TL0PICIDX, TID, KEYIDX (RFC 7741 §4.2).
import Bytes

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
