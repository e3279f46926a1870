// IVFHeader: the 32-byte file header of IVF, the simple VP8 container of libvpx
// (vpxenc/vpxdec; no RFC: the layout below is libvpx's). Layout, all little-endian:
//
//   file header, 32 bytes
//     0  4  signature "DKIF"
//     4  2  version (0)
//     6  2  header size in bytes (32)
//     8  4  FourCC ("VP80")
//    12  2  width in pixels
//    14  2  height in pixels
//    16  4  time base denominator, "rate" (90000 here: ticks per second)
//    20  4  time base numerator, "scale" (1 here: a tick is scale/rate seconds)
//    24  4  frame count
//    28  4  unused (0)
//   then per frame, a 12-byte frame header and the frame:
//     0  4  frame size in bytes
//     4  8  timestamp (presentation time in time-base ticks)
//    12  …  the VP8 frame (RFC 6386)

import Bytes

/// The 32-byte IVF file header (field order in the comment at the top of this file).
public struct IVFHeader: Equatable, Sendable {
    /// Bytes in the file header.
    public static let size = 32
    /// Bytes in each frame header (32-bit size, 64-bit timestamp).
    public static let frameHeaderSize = 12

    /// Header version (bytes 4–5); 0.
    public var version: Int
    /// Header size in bytes (bytes 6–7); 32.
    public var headerSize: Int
    /// FourCC (bytes 8–11), e.g. "VP80".
    public var fourCC: String
    /// Width in pixels (bytes 12–13); 0 when the writer never saw a key frame.
    public var width: Int
    /// Height in pixels (bytes 14–15); 0 when the writer never saw a key frame.
    public var height: Int
    /// Time base denominator, ticks per second (bytes 16–19); 90000 for our files.
    public var timeBaseRate: UInt32
    /// Time base numerator (bytes 20–23): one tick is `timeBaseScale / timeBaseRate` s; 1 for our files.
    public var timeBaseScale: UInt32
    /// Frame count as the writer last recorded it (bytes 24–27).
    public var frameCount: UInt32

    /// A header from its fields.
    public init(version: Int = 0, headerSize: Int = IVFHeader.size, fourCC: String = "VP80", width: Int, height: Int,
                timeBaseRate: UInt32 = 90_000, timeBaseScale: UInt32 = 1, frameCount: UInt32) {
        self.version = version
        self.headerSize = headerSize
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.timeBaseRate = timeBaseRate
        self.timeBaseScale = timeBaseScale
        self.frameCount = frameCount
    }

    /// Parses and validates the first 32 bytes of a file.
    ///
    /// Throws ``IVFError/truncatedHeader(bytesFound:)`` for fewer than 32 bytes,
    /// ``IVFError/badSignature(found:)``, ``IVFError/unsupportedVersion(_:)`` (not 0),
    /// ``IVFError/badHeaderSize(_:)`` (below 32), ``IVFError/unsupportedFourCC(_:)``
    /// (anything but VP80), ``IVFError/badDimensions(width:height:)`` (above 16384) and
    /// ``IVFError/badTimeBase(rate:scale:)`` (a zero field).
    public init(parsing bytes: [UInt8]) throws(IVFError) {
        guard bytes.count >= IVFHeader.size else { throw .truncatedHeader(bytesFound: bytes.count) }
        var r = ByteReader(bytes)
        let count = bytes.count
        func take(_ n: Int, _ field: String) throws(IVFError) -> [UInt8] {
            do { return try r.take(n, field) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        func u16(_ field: String) throws(IVFError) -> Int {
            do { return Int(try r.u16le(field)) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        func u32(_ field: String) throws(IVFError) -> UInt32 {
            do { return try r.u32le(field) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        let signature = try take(4, "IVF signature")
        guard signature == Array("DKIF".utf8) else { throw .badSignature(found: signature) }
        version = try u16("IVF version")
        guard version == 0 else { throw .unsupportedVersion(version) }
        headerSize = try u16("IVF header size")
        guard headerSize >= IVFHeader.size else { throw .badHeaderSize(headerSize) }
        fourCC = String(decoding: try take(4, "IVF FourCC"), as: UTF8.self)
        guard fourCC == "VP80" else { throw .unsupportedFourCC(fourCC) }
        width = try u16("IVF width")
        height = try u16("IVF height")
        guard width <= 16384, height <= 16384 else { throw .badDimensions(width: width, height: height) }
        timeBaseRate = try u32("IVF time base rate")
        timeBaseScale = try u32("IVF time base scale")
        guard timeBaseRate > 0, timeBaseScale > 0 else { throw .badTimeBase(rate: timeBaseRate, scale: timeBaseScale) }
        frameCount = try u32("IVF frame count")
    }

    /// The 32 header bytes (the unused last 4 are zero; the FourCC is padded or cut to 4 bytes).
    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: IVFHeader.size)
        w.append(Array("DKIF".utf8))
        w.u16le(UInt16(truncatingIfNeeded: version))
        w.u16le(UInt16(truncatingIfNeeded: headerSize))
        w.append(Array((Array(fourCC.utf8) + [0x20, 0x20, 0x20, 0x20]).prefix(4)))
        w.u16le(UInt16(truncatingIfNeeded: width))
        w.u16le(UInt16(truncatingIfNeeded: height))
        w.u32le(timeBaseRate)
        w.u32le(timeBaseScale)
        w.u32le(frameCount)
        w.u32le(0)
        return w.bytes
    }
}
