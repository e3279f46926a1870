import Testing
@testable import SDP

/// `SDPLine.newlineSeparated` (the UTF-8 scan behind `SDPLine.split`, which made the SDP
/// fuzz target twice as fast) cuts exactly where the Character split it replaced did.
@Suite struct LineSplitEquivalenceTests {
    static func characterSplit(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    }

    @Test func sameLinesAsTheCharacterSplit() {
        let pieces = ["a=x", "\r", "\n", "\r\n", "\n\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", "\u{2027}",
                      "\u{0301}", "\u{0600}", " ", "\t", "é", "\u{1F600}", "\u{200D}", "\u{C2}", "\u{E2}", "v=0", ""]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5000 {
            var text = ""
            for _ in 0..<8 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(state >> 33) % pieces.count]
            }
            #expect(SDPLine.newlineSeparated(text) == Self.characterSplit(text), "\(text.debugDescription)")
        }
    }
}
