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
        guard let colon = value.firstIndex(of: ":") else { return value[...] }
        return value[..<colon]
    }

    /// For an `a=name:value` line, the part after the first colon; nil when there is none.
    public var attributeValue: Substring? {
        guard type == "a", let colon = value.firstIndex(of: ":") else { return nil }
        return value[value.index(after: colon)...]
    }

    /// Splits SDP text into lines. Accepts CRLF or LF line ends and trailing
    /// white space; blank lines (such as the one after the final CRLF) are skipped.
    /// - Throws: ``SDPError/malformedLine(number:line:expected:)`` for a line that is
    ///   not a single letter a–z followed by `=`.
    public static func split(_ text: String) throws(SDPError) -> [SDPLine] {
        var lines: [SDPLine] = []
        var number = 0
        for raw in newlineSeparated(text) {
            number += 1
            var line = raw
            while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
            if line.isEmpty { continue }
            let chars = Array(line.prefix(2))
            guard chars.count == 2, chars[1] == "=", let type = chars.first,
                  type.isASCII, type.isLowercase else {
                throw .malformedLine(number: number, line: String(line), expected: "<letter a-z>=<value>")
            }
            lines.append(SDPLine(type: type, value: String(line.dropFirst(2)), number: number))
        }
        return lines
    }

    /// `text` cut at every `Character.isNewline` character, empty pieces kept: the same
    /// pieces as `text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)`,
    /// found in the UTF-8 without grapheme breaking. The newlines are LF, VT, FF, CR (CR LF
    /// is one), U+0085, U+2028 and U+2029; each is a grapheme of its own (or CR LF), so
    /// cutting at them cuts at Character boundaries. In valid UTF-8 the bytes C2 85 and
    /// E2 80 A8/A9 can only be those scalars.
    static func newlineSeparated(_ text: String) -> [Substring] {
        let ends = text.utf8.withContiguousStorageIfAvailable(lineEnds) ?? Array(text.utf8).withUnsafeBufferPointer(lineEnds)
        let utf8 = text.utf8
        var pieces: [Substring] = []
        pieces.reserveCapacity(ends.count + 1)
        var start = utf8.startIndex
        var startOffset = 0
        for (from, to) in ends {
            let cut = utf8.index(start, offsetBy: from - startOffset)
            pieces.append(text[start..<cut])
            start = utf8.index(cut, offsetBy: to - from)
            startOffset = to
        }
        pieces.append(text[start..<utf8.endIndex])
        return pieces
    }

    /// The byte ranges (start, end) of the newlines in valid UTF-8 `bytes`, CR LF as one
    /// (see ``newlineSeparated(_:)``).
    private static func lineEnds(_ bytes: UnsafeBufferPointer<UInt8>) -> [(Int, Int)] {
        var ends: [(Int, Int)] = []
        let n = bytes.count
        var i = 0
        while i < n {
            let b = bytes[i]
            var length = 0
            if b <= 0x0D {
                if b >= 0x0A { length = b == 0x0D && i + 1 < n && bytes[i + 1] == 0x0A ? 2 : 1 }
            } else if b == 0xC2 {
                if i + 1 < n, bytes[i + 1] == 0x85 { length = 2 }
            } else if b == 0xE2 {
                if i + 2 < n, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 { length = 3 }
            }
            if length > 0 {
                ends.append((i, i + length))
                i += length
            } else {
                i += 1
            }
        }
        return ends
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
            return "SDP line \(number) \"\(line)\": expected \(expected)"
        case let .limitExceeded(what, limit, actual):
            return "SDP refused: \(actual) \(what), more than the \(limit) accepted"
        }
    }
}
