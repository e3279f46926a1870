import Testing
@testable import SDP

@Suite struct SDPLineTests {
    @Test func splitsCRLFAndLFAndTrimsTrailingWhitespace() throws {
        let text = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-  \nt=0 0\t\r\na=rtpmap:111 opus/48000/2\r\na=rtcp-mux\r\n\r\n"
        let lines = try SDPLine.split(text)
        try #require(lines.map(\.type) == ["v", "o", "s", "t", "a", "a"])
        #expect(lines[1].value == "- 4611731400430051336 2 IN IP4 127.0.0.1")
        #expect(lines[2].value == "-")
        #expect(lines[3].value == "0 0")
        #expect(lines[4].attributeName == "rtpmap")
        #expect(lines[4].attributeValue == "111 opus/48000/2")
        #expect(lines[5].attributeName == "rtcp-mux")
        #expect(lines[5].attributeValue == nil)
        #expect(lines[0].attributeName == nil)
        #expect(lines.map(\.number) == [1, 2, 3, 4, 5, 6])
    }

    @Test func aLineWithoutTypeAndEqualsNamesItsNumber() {
        #expect(throws: SDPError.malformedLine(number: 3, line: "garbage", expected: "<letter a-z>=<value>")) {
            try SDPLine.split("v=0\ns=-\ngarbage\n")
        }
        #expect(throws: SDPError.malformedLine(number: 1, line: "V=0", expected: "<letter a-z>=<value>")) {
            try SDPLine.split("V=0\n")
        }
    }

    @Test func errorTextNamesLineAndExpectation() {
        let e = SDPError.malformedLine(number: 4, line: "m", expected: "<letter a-z>=<value>")
        #expect(e.description == "SDP line 4 \"m\": expected <letter a-z>=<value>")
    }
}
