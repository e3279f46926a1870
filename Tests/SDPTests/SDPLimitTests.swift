// SDPLimits: a description over 256 KiB or with more than 256 m-sections is refused with
// an error naming the limit; one at the limits is parsed and answered.
import Testing
@testable import SDP

@Suite struct SDPLimitTests {
    /// An offer with `count` audio m-sections (mids 0…count-1), each minimal but answerable.
    static func offer(sections count: Int) -> String {
        var lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0"]
        for i in 0..<count {
            lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:\(i)", "a=ice-ufrag:abcd",
                      "a=ice-pwd:0123456789012345678901", "a=setup:actpass",
                      "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":"),
                      "a=rtcp-mux", "a=rtpmap:111 opus/48000/2"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    @Test func fiveHundredMediaSectionsAreRefused() {
        #expect(throws: SDPError.limitExceeded(what: "m-sections", limit: 256, actual: 500)) {
            try SessionDescription(parsing: Self.offer(sections: 500))
        }
        #expect(SDPError.limitExceeded(what: "m-sections", limit: 256, actual: 500).description
                == "SDP refused: 500 m-sections, more than the 256 accepted")
    }

    /// 256 sections (about 80 KiB) parse, and the answer takes one audio section and
    /// rejects the other 255 with port 0.
    @Test func theLimitIsHandled() throws {
        let text = Self.offer(sections: 256)
        let offer = try SessionDescription(parsing: text)
        #expect(offer.media.count == 256)
        let answer = try JSEP.createAnswer(to: offer, options())
        #expect(answer.media.count == 256)
        #expect(answer.media.filter { $0.port != 0 }.count == 1)
    }

    /// 5,000 candidate lines make a description of ~390 KiB: refused by size, before any
    /// line is split.
    @Test func fiveThousandCandidatesAreRefusedBySize() {
        var text = Self.offer(sections: 1)
        for i in 0..<5_000 {
            text += "a=candidate:\(i) 1 udp 2122260223 10.\(i / 65536).\(i / 256 % 256).\(i % 256) \(10_000 + i) typ host\r\n"
        }
        let bytes = text.utf8.count
        #expect(bytes > SDPLimits.maximumBytes)
        #expect(throws: SDPError.limitExceeded(what: "bytes", limit: 262_144, actual: bytes)) {
            try SessionDescription(parsing: text)
        }
    }
}
