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
        return value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first
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
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var line = Substring(raw)
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
