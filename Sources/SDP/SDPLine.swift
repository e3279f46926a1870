// SDPLine: one line of a session description (RFC 8866 §5), and SDPError, what the parser refuses (outside text in it escaped and cut).
import Bytes

/// One line of a session description (RFC 8866 §5): `<type>=<value>`, with its
/// 1-based line number kept for error messages.
public struct SDPLine: Equatable, Sendable {
    /// The one-letter type: `v`, `o`, `s`, `c`, `t`, `m`, `a`, …
    public var type: Character
    /// Everything after `=`, trailing spaces and tabs removed.
    public var value: String
    /// 1-based line number in the text it came from.
    public var number: Int

    /// For an `a=` line, the attribute name (`rtpmap` in `a=rtpmap:111 opus/48000/2`,
    /// `rtcp-mux` in `a=rtcp-mux`); nil for other types.
    public var attributeName: Substring? {
        guard type == "a" else { return nil }
        guard let colon = value[...].firstIndex(ofASCII: UInt8(ascii: ":")) else { return value[...] }
        return value[..<colon]
    }

    /// For an `a=name:value` line, the part after the first colon; nil when there is none.
    public var attributeValue: Substring? {
        guard type == "a", let colon = value[...].firstIndex(ofASCII: UInt8(ascii: ":")) else { return nil }
        return value[value.index(after: colon)...]
    }

    /// ``attributeName`` as a String (empty for other types than `a`) and
    /// ``attributeValue``, from one search for the colon.
    var attribute: (name: String, value: String?) {
        guard type == "a" else { return ("", nil) }
        // nil: the colon has a non-ASCII neighbour, so look for it by Character (see UTF8Scan.swift).
        let cut = value.utf8.withContiguousStorageIfAvailable { bytes -> (String, String?)? in
            let colon = firstOffset(of: UInt8(ascii: ":"), in: bytes, from: 0)
            if colon == bytes.count { return (value, nil) }
            return hasNonASCIINeighbour(bytes, colon) ? nil : (utf8String(bytes, 0, colon), utf8String(bytes, colon + 1, bytes.count))
        } ?? nil
        if let cut { return cut }
        guard let colon = value.firstIndex(of: ":") else { return (value, nil) }
        return (String(value[..<colon]), String(value[value.index(after: colon)...]))
    }

    /// Splits SDP text into lines. Accepts CRLF or LF line ends and trailing
    /// white space; blank lines (such as the one after the final CRLF) are skipped.
    /// - Throws: ``SDPError/malformedLine(number:line:expected:)`` for a line that is
    ///   not a single letter a–z followed by `=`.
    public static func split(_ text: String) throws(SDPError) -> [SDPLine] {
        let utf8 = text.utf8
        let result = utf8.withContiguousStorageIfAvailable { lines(text, $0) }
            ?? Array(utf8).withUnsafeBufferPointer { lines(text, $0) }
        return try result.get()
    }

    /// ``split(_:)`` of `text`, whose UTF-8 is `bytes`.
    private static func lines(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Result<[SDPLine], SDPError> {
        let pieces = lineRanges(bytes)
        var lines: [SDPLine] = []
        lines.reserveCapacity(pieces.count)
        var number = 0
        let utf8 = text.utf8
        for piece in pieces {
            number += 1
            do {
                let line = piece.isASCII
                    ? try asciiLine(bytes, piece.start, piece.end, number)
                    : try characterLine(text[utf8.index(utf8.startIndex, offsetBy: piece.start)..<utf8.index(utf8.startIndex, offsetBy: piece.end)], number)
                if let line { lines.append(line) }
            } catch {
                return .failure(error)
            }
        }
        return .success(lines)
    }

    /// The line in `raw` (no newline inside), line `number`, nil when blank: trailing
    /// CR, space and tab removed, then `<letter a-z>=`. Works on Characters.
    private static func characterLine(_ raw: Substring, _ number: Int) throws(SDPError) -> SDPLine? {
        var line = raw
        while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
        if line.isEmpty { return nil }
        let chars = Array(line.prefix(2))
        guard chars.count == 2, chars[1] == "=", let type = chars.first,
              type.isASCII, type.isLowercase else {
            throw .malformedLine(number: number, line: String(line), expected: "<letter a-z>=<value>")
        }
        return SDPLine(type: type, value: String(line.dropFirst(2)), number: number)
    }

    /// ``characterLine(_:_:)`` for the all-ASCII line `bytes[start..<end]`, on its bytes:
    /// there every byte is a Character (CR LF, the one ASCII pair that is not, cannot be
    /// inside a line).
    private static func asciiLine(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int,
                                  _ number: Int) throws(SDPError) -> SDPLine? {
        var end = end
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0D { end -= 1 }
        if end == start { return nil }
        let type = bytes[start]
        guard end - start >= 2, bytes[start + 1] == UInt8(ascii: "="), type >= UInt8(ascii: "a"), type <= UInt8(ascii: "z") else {
            throw .malformedLine(number: number, line: utf8String(bytes, start, end), expected: "<letter a-z>=<value>")
        }
        return SDPLine(type: Character(Unicode.Scalar(type)), value: utf8String(bytes, start + 2, end), number: number)
    }

    /// `text` cut at every `Character.isNewline` character, empty pieces kept: the same
    /// pieces as `text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)`,
    /// found in the UTF-8 without grapheme breaking. The newlines are LF, VT, FF, CR (CR LF
    /// is one), U+0085, U+2028 and U+2029; each is a grapheme of its own (or CR LF), so
    /// cutting at them cuts at Character boundaries. In valid UTF-8 the bytes C2 85 and
    /// E2 80 A8/A9 can only be those scalars.
    static func newlineSeparated(_ text: String) -> [Substring] {
        let utf8 = text.utf8
        let pieces = utf8.withContiguousStorageIfAvailable(lineRanges) ?? Array(utf8).withUnsafeBufferPointer(lineRanges)
        return pieces.map { text[utf8.index(utf8.startIndex, offsetBy: $0.start)..<utf8.index(utf8.startIndex, offsetBy: $0.end)] }
    }

    /// The byte ranges of the pieces ``newlineSeparated(_:)`` cuts valid UTF-8 `bytes`
    /// into (CR LF counted as one newline), each with whether all its bytes are ASCII.
    /// Eight bytes at a time up to the next one that may matter (below 0x0E or above 0x7F).
    private static func lineRanges(_ bytes: UnsafeBufferPointer<UInt8>) -> [(start: Int, end: Int, isASCII: Bool)] {
        var pieces: [(start: Int, end: Int, isASCII: Bool)] = []
        let n = bytes.count
        var start = 0
        var isASCII = true
        var i = 0
        while i < n {
            i = firstControlOrNonASCII(in: bytes, from: i)
            guard i < n else { break }
            let b = bytes[i]
            var length = 0
            if b < 0x80 {
                if b >= 0x0A { length = b == 0x0D && i + 1 < n && bytes[i + 1] == 0x0A ? 2 : 1 }
            } else {
                isASCII = false
                if b == 0xC2 {
                    if i + 1 < n, bytes[i + 1] == 0x85 { length = 2 }
                } else if b == 0xE2 {
                    if i + 2 < n, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 { length = 3 }
                }
            }
            if length > 0 {
                pieces.append((start, i, isASCII))
                i += length
                start = i
                isASCII = true
            } else {
                i += 1
            }
        }
        pieces.append((start, n, isASCII))
        return pieces
    }
}

/// Errors met while reading a session description. Each names the line number
/// (1-based), the line itself and what was expected there.
public enum SDPError: Error, Equatable, CustomStringConvertible {
    /// Line `number` (`line`) is not of the form the RFC requires; `expected` says which.
    case malformedLine(number: Int, line: String, expected: String)
    /// The description is larger than ``SDPLimits`` allow: `what` (bytes, m-sections)
    /// came to `actual`, more than `limit`.
    case limitExceeded(what: String, limit: Int, actual: Int)

    public var description: String {
        switch self {
        case let .malformedLine(number, line, expected):
            return "SDP line \(number) \"\(Untrusted.quoted(line))\": expected \(expected)"
        case let .limitExceeded(what, limit, actual):
            return "SDP refused: \(actual) \(what), more than the \(limit) accepted"
        }
    }
}
