// Untrusted.quoted: control characters of outside text escaped as \u00XX, the text cut to its limit with the whole length given.
import Testing
import Bytes

@Suite struct UntrustedTests {
    @Test func controlCharactersAreEscaped() {
        #expect(Untrusted.quoted("a\u{1B}[2Jb\u{07}\u{7F}\u{85}\n") == "a\\u001B[2Jb\\u0007\\u007F\\u0085\\u000A")
        #expect(Untrusted.quoted("plain: é ✓ 日本") == "plain: é ✓ 日本")
        #expect(Untrusted.quoted("") == "")
        #expect(Untrusted.quoted("a\u{202E}b\u{2066}c\u{2028}") == "a\\u202Eb\\u2066c\\u2028", "bidi overrides and line separators")
        #expect(Untrusted.quoted("x\r\ny") == "x\\u000D\\u000Ay", "a CR LF (one character) is escaped scalar by scalar")
    }

    @Test func longTextIsCutWithItsLength() {
        let long = String(repeating: "A", count: 200_000)
        #expect(Untrusted.quoted(long) == String(repeating: "A", count: 200) + "… (200000 bytes)")
        #expect(Untrusted.quoted(String(repeating: "é", count: 201)) == String(repeating: "é", count: 200) + "… (402 bytes)")
        #expect(Untrusted.quoted(String(repeating: "B", count: 200)) == String(repeating: "B", count: 200), "at the limit: whole")
        #expect(Untrusted.quoted("abcdef", limit: 3) == "abc… (6 bytes)")
        #expect(Untrusted.quoted("e\u{301}e\u{301}", limit: 1) == "e\u{301}… (6 bytes)", "a cut keeps whole characters")
    }
}
