// IVFError: the errors of the IVF reader and writer (the container's layout is in
// IVFHeader.swift); each names the offending values, the frame index and byte offset.

import Foundation

/// Errors of ``IVFReader`` and ``IVFWriter``; each names the offending values and where.
public enum IVFError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// The file has fewer than the 32 header bytes.
    case truncatedHeader(bytesFound: Int)
    /// The first 4 bytes are not "DKIF".
    case badSignature(found: [UInt8])
    /// A header version other than 0.
    case unsupportedVersion(Int)
    /// A header size below 32 bytes.
    case badHeaderSize(Int)
    /// A codec other than VP8 ("VP80").
    case unsupportedFourCC(String)
    /// Header width or height above 16384.
    case badDimensions(width: Int, height: Int)
    /// A time base with a zero rate or scale.
    case badTimeBase(rate: UInt32, scale: UInt32)
    /// Frame `index` (0-based) at byte `offset` has only `bytesLeft` of its 12 header bytes.
    case truncatedFrameHeader(index: Int, offset: Int64, bytesLeft: Int64)
    /// Frame `index` at byte `offset` declares `size` bytes but only `bytesLeft` follow its header.
    case frameBeyondEnd(index: Int, offset: Int64, size: Int64, bytesLeft: Int64)
    /// Frame `index` at byte `offset` is not a VP8 frame: shorter than the 3-byte frame tag, or a key
    /// frame without the start code 9d 01 2a and size fields (RFC 6386 §9.1); `size` is its length.
    case badFrame(index: Int, offset: Int64, size: Int)
    /// ``IVFWriter/write(_:)`` after ``IVFWriter/close()``.
    case closed(path: String)
    /// Frame `index` at byte `offset` has timestamp `value` (in the file's time base) beyond
    /// ±2^53 ticks, in the file or once converted to 90 kHz (or, from a looping ``IVFSource``,
    /// its timestamp would pass the 64-bit range).
    case badTimestamp(index: Int, offset: Int64, value: Int64)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "IVF: \(e)"
        case let .truncatedHeader(n): return "IVF: truncated header, \(n) of 32 bytes"
        case let .badSignature(found):
            return "IVF: bad signature \(found.map { String(format: "%02x", $0) }.joined(separator: " ")), expected DKIF"
        case let .unsupportedVersion(v): return "IVF: header version \(v), expected 0"
        case let .badHeaderSize(s): return "IVF: header size \(s), expected 32"
        case let .unsupportedFourCC(f): return "IVF: codec FourCC \"\(f)\" not supported, only VP80"
        case let .badDimensions(w, h): return "IVF: header size \(w)x\(h) above 16384"
        case let .badTimeBase(r, s): return "IVF: time base \(s)/\(r) has a zero field"
        case let .truncatedFrameHeader(i, o, left): return "IVF: frame \(i) at byte \(o): \(left) of 12 frame-header bytes"
        case let .frameBeyondEnd(i, o, s, left):
            return "IVF: frame \(i) at byte \(o) declares \(s) bytes, only \(left) left in the file"
        case let .badFrame(i, o, s): return "IVF: frame \(i) at byte \(o) (\(s) bytes) is not a VP8 frame"
        case let .closed(p): return "IVF: \(p) is closed"
        case let .badTimestamp(i, o, v): return "IVF: frame \(i) at byte \(o) has timestamp \(v), beyond ±2^53 ticks"
        }
    }
}
