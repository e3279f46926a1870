// Y4M: the YUV4MPEG2 reader (I420 frames of a .y4m file, a video source).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// YUV4MPEG2 (.y4m): a text header line, then per frame a "FRAME" line and the raw planes.
//
//   YUV4MPEG2 W320 H240 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n
//   FRAME[ params]\n  <Y plane W×H bytes><U plane><V plane>   (4:2:0: chroma ⌈W/2⌉×⌈H/2⌉)
//   …
//
// Header tokens are separated by single spaces: W width, H height, F rate num:den,
// I interlacing, A aspect, C colour space, X comments. Only progressive ("Ip") 8-bit
// 4:2:0 is read (C420, C420jpeg, C420paeth, C420mpeg2; no C means 420jpeg). A missing or
// zero F means 25:1 (as ffmpeg). A truncated last frame is an error
// (``Y4MError/truncatedFrame(index:offset:bytesFound:expected:)``), not a silent end.

/// Errors of ``Y4MReader``; each names the offending value and where.
public enum Y4MError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// The file does not start with "YUV4MPEG2 " (`found`: its first bytes as text).
    case badSignature(found: String)
    /// The header line has no newline within its first 4096 bytes.
    case headerTooLong
    /// A header token the reader cannot parse (`token` as written).
    case badToken(String)
    /// The header lacks the W or H token (`token` names it).
    case missingToken(String)
    /// Width or height outside 1…16384.
    case badDimensions(width: Int, height: Int)
    /// Interlacing other than "p" (progressive), e.g. "t", "b", "m" or "?".
    case unsupportedInterlacing(String)
    /// A colour space other than 420, 420jpeg, 420paeth, 420mpeg2 (e.g. "444", "422", "mono").
    case unsupportedColorspace(String)
    /// Frame `index` (0-based in the file) at byte `offset` does not start with "FRAME".
    case badFrameHeader(index: Int, offset: Int64)
    /// Frame `index` at byte `offset` starts with "FRAME" but has no newline within the first
    /// `limit` bytes of its line (frame parameters are short; 64 KiB is the reader's bound).
    case frameHeaderTooLong(index: Int, offset: Int64, limit: Int)
    /// Frame `index` at byte `offset` has `bytesFound` of its `expected` plane bytes (the file ends).
    case truncatedFrame(index: Int, offset: Int64, bytesFound: Int, expected: Int)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "Y4M: \(e)"
        case let .badSignature(f): return "Y4M: starts with \"\(f)\", expected YUV4MPEG2"
        case .headerTooLong: return "Y4M: no end of the header line in 4096 bytes"
        case let .badToken(t): return "Y4M: bad header token \"\(t)\""
        case let .missingToken(t): return "Y4M: header has no \(t) token"
        case let .badDimensions(w, h): return "Y4M: size \(w)x\(h) outside 1…16384"
        case let .unsupportedInterlacing(i): return "Y4M: interlacing \"I\(i)\" not supported, only Ip"
        case let .unsupportedColorspace(c): return "Y4M: colour space \"C\(c)\" not supported, only 4:2:0 (420, 420jpeg, 420paeth, 420mpeg2)"
        case let .badFrameHeader(i, o): return "Y4M: frame \(i) at byte \(o) does not start with FRAME"
        case let .frameHeaderTooLong(i, o, l): return "Y4M: frame \(i) at byte \(o): no end of the FRAME line in \(l) bytes"
        case let .truncatedFrame(i, o, f, e): return "Y4M: frame \(i) at byte \(o) has \(f) of \(e) bytes"
        }
    }
}

/// The stream header of a Y4M file.
public struct Y4MHeader: Equatable, Sendable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frame rate numerator (frames per `frameRateDenominator` seconds).
    public var frameRateNumerator: Int
    /// Frame rate denominator.
    public var frameRateDenominator: Int
    /// Interlacing letter ("p").
    public var interlacing: String
    /// Pixel aspect "num:den" as written, or nil.
    public var aspect: String?
    /// Colour space as written after C ("420jpeg" when absent).
    public var colorspace: String

    /// Largest frame-rate numerator or denominator accepted (2^31).
    public static let maximumRateTerm = 1 << 31

    /// The colour spaces read: 8-bit 4:2:0 with any chroma siting.
    public static let supportedColorspaces: Set<String> = ["420", "420jpeg", "420paeth", "420mpeg2"]

    /// Parses the header line without "YUV4MPEG2 " and the newline. Throws
    /// ``Y4MError/badToken(_:)`` (also for an F token whose numerator or denominator is
    /// beyond 2^31; 0 in either means 25:1), ``Y4MError/missingToken(_:)``, ``Y4MError/badDimensions(width:height:)``,
    /// ``Y4MError/unsupportedInterlacing(_:)``, ``Y4MError/unsupportedColorspace(_:)``.
    public init(parsing line: String) throws(Y4MError) {
        var w: Int?, h: Int?, num = 0, den = 0
        interlacing = "p"
        aspect = nil
        colorspace = "420jpeg"
        for token in line.split(separator: " ") {
            guard let key = token.first else { continue }
            let value = String(token.dropFirst())
            switch key {
            case "W": guard let v = Int(value) else { throw .badToken(String(token)) }; w = v
            case "H": guard let v = Int(value) else { throw .badToken(String(token)) }; h = v
            case "F":
                let parts = value.split(separator: ":")
                // Bounded so that 90 000 × den (ticks per frame × num) cannot overflow.
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]),
                      (0...Y4MHeader.maximumRateTerm).contains(n), (0...Y4MHeader.maximumRateTerm).contains(d) else {
                    throw .badToken(String(token))
                }
                (num, den) = (n, d)
            case "I": interlacing = value
            case "A": aspect = value
            case "C": colorspace = value
            default: break  // X comments and unknown tokens
            }
        }
        guard let w else { throw .missingToken("W") }
        guard let h else { throw .missingToken("H") }
        guard (1...16384).contains(w), (1...16384).contains(h) else { throw .badDimensions(width: w, height: h) }
        guard interlacing == "p" else { throw .unsupportedInterlacing(interlacing) }
        guard Y4MHeader.supportedColorspaces.contains(colorspace) else { throw .unsupportedColorspace(colorspace) }
        width = w
        height = h
        if num == 0 || den == 0 { (num, den) = (25, 1) }
        frameRateNumerator = num
        frameRateDenominator = den
    }
}

/// Reads the frames of a Y4M file one by one as ``I420Frame``s (`pread(2)`, nothing cached).
///
/// Frame `n` (counted across loops) has timestamp `n × 90000 × den / num` (90 kHz ticks)
/// from the header's frame rate `num:den`.
public final class Y4MReader {
    /// The file's path.
    public let path: String
    /// The parsed stream header.
    public let header: Y4MHeader
    /// When true, ``next()`` starts over at the end of the file.
    public var loop: Bool
    private let file: MediaFileDescriptor
    private let firstFrameOffset: Int64
    private let fileSize: Int64
    private var offset: Int64
    private var indexInFile = 0
    /// Frames returned so far (across loops); the next frame's number.
    public private(set) var framesRead = 0

    /// Opens `path` and parses its header (see ``Y4MHeader/init(parsing:)``); also throws
    /// ``Y4MError/badSignature(found:)``, ``Y4MError/headerTooLong``, ``Y4MError/io(_:)``.
    public init(path: String, loop: Bool = false) throws(Y4MError) {
        self.path = path
        self.loop = loop
        let start: [UInt8]
        do throws(MediaIOError) {
            file = try MediaFileDescriptor(path: path, writing: false)
            fileSize = try file.size()
            start = try file.read(at: 0, count: 4096)
        } catch { throw .io(error) }
        let magic = Array("YUV4MPEG2 ".utf8)
        guard start.starts(with: magic) else { throw .badSignature(found: String(decoding: start.prefix(10), as: UTF8.self)) }
        guard let newline = start.firstIndex(of: 0x0a) else { throw .headerTooLong }
        header = try Y4MHeader(parsing: String(decoding: start[magic.count..<newline], as: UTF8.self))
        firstFrameOffset = Int64(newline + 1)
        offset = firstFrameOffset
    }

    /// Longest FRAME line read, newline included: 64 KiB.
    public static let maximumFrameLineBytes = 65_536

    /// Bytes of one frame's planes.
    public var frameByteCount: Int { I420Frame.byteCount(width: header.width, height: header.height) }

    /// The next frame; nil at the end of the file (never with ``loop`` unless the file has no
    /// frame). Throws ``Y4MError/badFrameHeader(index:offset:)``,
    /// ``Y4MError/frameHeaderTooLong(index:offset:limit:)`` (no newline in 64 KiB),
    /// ``Y4MError/truncatedFrame(index:offset:bytesFound:expected:)``, ``Y4MError/io(_:)``.
    public func next() throws(Y4MError) -> I420Frame? {
        if offset >= fileSize {
            guard loop, indexInFile > 0 else { return nil }
            rewindFile()
        }
        var line: [UInt8]
        do throws(MediaIOError) { line = try file.read(at: offset, count: 256) } catch { throw .io(error) }
        if line.count == 256, line.starts(with: Array("FRAME".utf8)), !line.contains(0x0a) {
            // Long frame parameters: read on up to the bound.
            do throws(MediaIOError) { line = try file.read(at: offset, count: Y4MReader.maximumFrameLineBytes) } catch { throw .io(error) }
            if line.count == Y4MReader.maximumFrameLineBytes, !line.contains(0x0a) {
                throw .frameHeaderTooLong(index: indexInFile, offset: offset, limit: Y4MReader.maximumFrameLineBytes)
            }
        }
        guard line.starts(with: Array("FRAME".utf8)), let newline = line.firstIndex(of: 0x0a),
              newline == 5 || line[5] == 0x20 else {
            throw .badFrameHeader(index: indexInFile, offset: offset)
        }
        let dataOffset = offset + Int64(newline + 1)
        let present = max(0, fileSize - dataOffset)
        guard present >= Int64(frameByteCount) else {
            throw .truncatedFrame(index: indexInFile, offset: offset, bytesFound: Int(present), expected: frameByteCount)
        }
        let data: [UInt8]
        do throws(MediaIOError) { data = try file.read(at: dataOffset, count: frameByteCount) } catch { throw .io(error) }
        guard data.count == frameByteCount else {
            throw .truncatedFrame(index: indexInFile, offset: offset, bytesFound: data.count, expected: frameByteCount)
        }
        let timestamp = mediaRescale(Int64(framesRead), 90_000 * Int64(header.frameRateDenominator),
                                     Int64(header.frameRateNumerator))
        guard let frame = try? I420Frame(width: header.width, height: header.height, data: data, timestamp: timestamp) else {
            throw .badDimensions(width: header.width, height: header.height)
        }
        offset = dataOffset + Int64(frameByteCount)
        indexInFile += 1
        framesRead += 1
        return frame
    }

    private func rewindFile() {
        offset = firstFrameOffset
        indexInFile = 0
    }

    /// Goes back to the first frame; timestamps start again at 0.
    public func rewind() {
        rewindFile()
        framesRead = 0
    }
}
