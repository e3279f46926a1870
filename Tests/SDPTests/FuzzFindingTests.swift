import Testing
@testable import SDP

/// Candidate lines on which the FuzzICE harness's round trip (parse → `sdpValue` → parse)
/// broke; each is the crashing input, reduced.
@Suite struct CandidateRoundTripTests {
    /// "\r\n" is one Character, so a trailing CR LF was not trimmed and the type field read
    /// "host\r\n": the SDP line form of a candidate was refused.
    @Test func trailingCRLFIsTrimmed() throws {
        let bare = try Candidate(parsing: "candidate:1 1 udp 1 1.2.3.4 5 typ host")
        #expect(try Candidate(parsing: "a=candidate:1 1 udp 1 1.2.3.4 5 typ host\r\n") == bare)
        #expect(try Candidate(parsing: "candidate:1 1 udp 1 1.2.3.4 5 typ host \n") == bare)
    }

    /// An extension value ending in CR was kept in the middle of the line, then moved to its
    /// end by `sdpValue` (raddr is written first) and trimmed off there ("bar\r" → "bar").
    @Test func lineBreakInsideIsRefused() {
        #expect(throws: CandidateError(field: "candidate", value: "bar\r", expected: "no CR or LF inside the line")) {
            try Candidate(parsing: "candidate:1 1 udp 1 1.2.3.4 5 typ host foo bar\r raddr 1.2.3.4")
        }
    }

    /// A raddr value ending in a prepended mark (U+0600) was the last field; written before
    /// the extensions, Character splitting joined it with the space and the next field.
    @Test func fieldsAreCutAtEverySpace() throws {
        let c = try Candidate(parsing: "candidate:1 1 udp 1 1.2.3.4 5 typ host foo bar raddr 1.2.3.4\u{0600}")
        #expect(c.relatedAddress == "1.2.3.4\u{0600}")
        #expect(try Candidate(parsing: c.sdpValue) == c)
    }
}

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
