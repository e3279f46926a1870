// Untrusted: text from outside (SDP lines, WAMP messages, arguments, files) made safe to print in a message — control characters escaped, length cut.

/// Makes outside text safe to put in an error or progress message: a hostile peer's
/// control characters and ESC sequences never reach a terminal, and a huge line never
/// floods a log.
public enum Untrusted {
    /// The most characters of outside text a message shows.
    public static let limit = 200

    /// `text` with every control character (U+0000–U+001F, U+007F–U+009F) and every
    /// character that reorders or breaks what a terminal shows (the bidi embeddings,
    /// overrides and isolates U+202A–U+202E, U+2066–U+2069; U+2028, U+2029) written as
    /// `\uXXXX`, cut to `limit` characters (whole ones: graphemes are never split); a cut
    /// one ends in `… (N bytes)`, N its UTF-8 length in full. Meant to go between quotes in
    /// a message (a quote inside is left as it is).
    public static func quoted(_ text: String, limit: Int = Untrusted.limit) -> String {
        var out = ""
        var shown = 0
        for character in text {
            if shown == limit { return out + "… (\(text.utf8.count) bytes)" }
            shown += 1
            for scalar in character.unicodeScalars {
                switch scalar.value {
                case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                default:
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
