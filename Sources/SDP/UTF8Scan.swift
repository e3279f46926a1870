// Character operations of the parser done on the UTF-8 bytes, with the same results.
//
// Searching Characters means grapheme breaking, and String's generic algorithms
// (split, firstIndex) specialised here run slowly; they were most of a parse's time
// (profile of the SDP fuzz target). An ASCII byte whose neighbours are ASCII bytes
// (or the ends of the text) is a Character of its own: no grapheme rule joins it to
// them (no ASCII scalar is Prepend, Extend, ZWJ or SpacingMark; CR LF, the only
// ASCII pair that is one Character, is never searched for), and the Characters equal
// to an ASCII one are exactly those bytes. Where a byte searched for has a non-ASCII
// neighbour, these functions fall back to the Character operation itself.
//
// The searches go eight bytes at a time (one comparison per word instead of one per
// byte, which also matters under the fuzzer's comparison tracing).

/// The offset of the first `byte` in `bytes` at or after `start`, or `bytes.count`.
func firstOffset(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    let n = bytes.count
    var i = start
    if let base = bytes.baseAddress {
        let pattern = ones &* UInt64(byte)
        while i + 8 <= n {
            let x = word(base, i) ^ pattern
            // The high bit of each zero byte of x, and of no byte below the first one.
            let zeros = (x &- ones) & ~x & highBits
            if zeros != 0 { return i + zeros.trailingZeroBitCount >> 3 }
            i += 8
        }
    }
    while i < n, bytes[i] != byte { i += 1 }
    return i
}

/// The offset of the first byte below 0x0E (the ASCII line ends are 0x0A…0x0D) or above
/// 0x7F in `bytes` at or after `start`, or `bytes.count`.
func firstControlOrNonASCII(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    let n = bytes.count
    var i = start
    if let base = bytes.baseAddress {
        while i + 8 <= n {
            let x = word(base, i)
            // The high bit of each such byte, and of no byte below the first one.
            let found = ((x &- ones &* 0x0E) | x) & highBits
            if found != 0 { return i + found.trailingZeroBitCount >> 3 }
            i += 8
        }
    }
    while i < n, bytes[i] >= 0x0E, bytes[i] < 0x80 { i += 1 }
    return i
}

private let ones: UInt64 = 0x0101_0101_0101_0101
private let highBits: UInt64 = 0x8080_8080_8080_8080

/// The eight bytes at `base + offset`, the first in the lowest bits.
@inline(__always)
private func word(_ base: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
}

/// Whether the byte at `i` has a non-ASCII neighbour in `bytes`.
@inline(__always)
func hasNonASCIINeighbour(_ bytes: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
    i > 0 && bytes[i - 1] >= 0x80 || i + 1 < bytes.count && bytes[i + 1] >= 0x80
}

/// `bytes[start..<end]` (valid UTF-8 cut at scalar boundaries) as a String.
func utf8String(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
}

extension Substring {
    /// The same pieces as `split(separator: Character(separator), maxSplits:,
    /// omittingEmptySubsequences:)`, as Strings, for an ASCII `separator` other than CR
    /// and LF, found in the UTF-8.
    func fields(_ separator: UInt8, maxSplits: Int = Int.max, omittingEmpty: Bool = true) -> [String] {
        let pieces = utf8.withContiguousStorageIfAvailable { bytes in
            Self.fieldBounds(bytes, separator, maxSplits: maxSplits, omittingEmpty: omittingEmpty)
                .map { $0.map { utf8String(bytes, $0.0, $0.1) } }
        } ?? nil
        return pieces ?? split(separator: Character(Unicode.Scalar(separator)), maxSplits: maxSplits,
                               omittingEmptySubsequences: omittingEmpty).map(String.init)
    }

    /// The byte ranges of the pieces `fields` returns, as the standard library's split
    /// finds them; nil when a separator byte has a non-ASCII neighbour.
    private static func fieldBounds(_ bytes: UnsafeBufferPointer<UInt8>, _ separator: UInt8,
                                    maxSplits: Int, omittingEmpty: Bool) -> [(Int, Int)]? {
        var pieces: [(Int, Int)] = []
        let n = bytes.count
        if maxSplits == 0 || n == 0 {
            if !(omittingEmpty && n == 0) { pieces.append((0, n)) }
            return pieces
        }
        var start = 0
        var i = firstOffset(of: separator, in: bytes, from: 0)
        while i < n {
            if hasNonASCIINeighbour(bytes, i) { return nil }
            let appended = !(omittingEmpty && start == i)
            if appended { pieces.append((start, i)) }
            start = i + 1
            if appended && pieces.count == maxSplits { break }
            i = firstOffset(of: separator, in: bytes, from: start)
        }
        if start != n || !omittingEmpty { pieces.append((start, n)) }
        return pieces
    }

    /// The same index as `firstIndex(of: Character(byte))`, for an ASCII `byte` other
    /// than CR and LF, found in the UTF-8.
    func firstIndex(ofASCII byte: UInt8) -> Index? {
        // nil: fall back to the Character search; .some(nil): not there.
        let found = utf8.withContiguousStorageIfAvailable { bytes -> Int?? in
            let i = firstOffset(of: byte, in: bytes, from: 0)
            if i == bytes.count { return .some(nil) }
            return hasNonASCIINeighbour(bytes, i) ? nil : .some(i)
        } ?? nil
        guard let found else { return firstIndex(of: Character(Unicode.Scalar(byte))) }
        return found.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }
}

extension String {
    /// ``Substring/fields(_:maxSplits:omittingEmpty:)`` of the whole string.
    func fields(_ separator: UInt8, maxSplits: Int = Int.max, omittingEmpty: Bool = true) -> [String] {
        self[...].fields(separator, maxSplits: maxSplits, omittingEmpty: omittingEmpty)
    }
}
