import Testing
@testable import SDP

/// A small, valid audio+video offer in Chromium's shape, lines joined with CRLF.
/// Tests change one line of it at a time.
let baseLines: [String] = [
    "v=0",
    "o=- 4611731400430051336 2 IN IP4 127.0.0.1",
    "s=-",
    "t=0 0",
    "a=group:BUNDLE 0 1",
    "a=extmap-allow-mixed",
    "a=msid-semantic: WMS stream",
    "m=audio 9 UDP/TLS/RTP/SAVPF 111 0",
    "c=IN IP4 0.0.0.0",
    "a=rtcp:9 IN IP4 0.0.0.0",
    "a=ice-ufrag:abcd",
    "a=ice-pwd:0123456789012345678901",
    "a=ice-options:trickle",
    "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":"),
    "a=setup:actpass",
    "a=mid:0",
    "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid",
    "a=sendrecv",
    "a=msid:stream track-a",
    "a=rtcp-mux",
    "a=rtpmap:111 opus/48000/2",
    "a=rtcp-fb:111 transport-cc",
    "a=fmtp:111 minptime=10;useinbandfec=1",
    "a=rtpmap:0 PCMU/8000",
    "a=ssrc:1001 cname:peer",
    "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
    "c=IN IP4 0.0.0.0",
    "a=ice-ufrag:abcd",
    "a=ice-pwd:0123456789012345678901",
    "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":"),
    "a=setup:actpass",
    "a=mid:1",
    "a=sendrecv",
    "a=rtcp-mux",
    "a=rtcp-rsize",
    "a=rtpmap:96 VP8/90000",
    "a=rtcp-fb:96 nack",
    "a=rtcp-fb:96 nack pli",
    "a=rtpmap:97 rtx/90000",
    "a=fmtp:97 apt=96",
    "a=ssrc-group:FID 2001 2002",
    "a=ssrc:2001 cname:peer",
    "a=ssrc:2002 cname:peer",
]

func sdp(_ lines: [String], separator: String = "\r\n") -> String { lines.joined(separator: separator) + separator }

/// `baseLines` with the line starting with `prefix` replaced by `replacement` (nil removes it).
func replacing(_ prefix: String, with replacement: String?, in lines: [String] = baseLines) -> [String] {
    guard let i = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else { return lines }
    var out = lines
    if let replacement { out[i] = replacement } else { out.remove(at: i) }
    return out
}

/// `baseLines` with `extra` inserted after the line starting with `prefix`.
func inserting(_ extra: String, after prefix: String, in lines: [String] = baseLines) -> [String] {
    guard let i = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else { return lines }
    var out = lines
    out.insert(extra, at: i + 1)
    return out
}

struct BadInput: CustomTestStringConvertible, Sendable {
    let name: String
    let text: String
    let line: Int
    let expected: String
    var testDescription: String { name }
}

@Suite struct QuirksTests {
    @Test func theBaseDescriptionParsesToTheRightValues() throws {
        let d = try SessionDescription(parsing: sdp(baseLines))
        #expect(d.origin.sessionId == "4611731400430051336")
        #expect(d.bundleGroup?.mids == ["0", "1"])
        #expect(d.extmapAllowMixed)
        #expect(d.msidSemantic == MsidSemantic(semantic: "WMS", identifiers: ["stream"]))
        try #require(d.media.count == 2)
        let a = d.media[0], v = d.media[1]
        #expect(a.kind == .audio && v.kind == .video)
        #expect(a.formats == ["111", "0"])
        #expect(a.payloads.map(\.payloadType) == [111, 0])
        #expect(a.payload(111) == PayloadFormat(payloadType: 111, name: "opus", clockRate: 48000, channels: 2,
                                                fmtp: "minptime=10;useinbandfec=1", rtcpFeedback: ["transport-cc"]))
        #expect(a.payload(111)?.parameters == ["minptime": "10", "useinbandfec": "1"])
        #expect(a.payload(0)?.name == "PCMU" && a.payload(0)?.channels == nil)
        #expect(a.iceUfrag == "abcd" && a.iceOptions == ["trickle"])
        #expect(a.fingerprints.first?.bytes.count == 32)
        #expect(a.setup == .actpass && a.mid == "0" && a.direction == .sendrecv)
        #expect(a.msids == [Msid(streamId: "stream", trackId: "track-a")])
        #expect(a.extmaps == [Extmap(id: 1, uri: "urn:ietf:params:rtp-hdrext:sdes:mid")])
        #expect(a.rtcp == "9 IN IP4 0.0.0.0" && a.rtcpMux && !a.rtcpRsize)
        #expect(v.rtcpRsize)
        #expect(v.payload(96)?.rtcpFeedback == ["nack", "nack pli"])
        #expect(v.payload(97)?.parameters["apt"] == "96")
        #expect(v.ssrcGroups == [SsrcGroup(semantics: "FID", ssrcs: [2001, 2002])])
        #expect(v.ssrcs.map(\.ssrc) == [2001, 2002])
        #expect(try SessionDescription(parsing: d.serialized()) == d)
    }

    static let bad: [BadInput] = [
        BadInput(name: "empty text", text: "", line: 1, expected: "v=0 as the first line"),
        BadInput(name: "missing v=", text: sdp(Array(baseLines.dropFirst())), line: 1, expected: "v=0 as the first line"),
        BadInput(name: "version 1", text: sdp(replacing("v=", with: "v=1")), line: 1, expected: "protocol version 0"),
        BadInput(name: "missing o=", text: sdp(replacing("o=", with: nil)), line: 2, expected: "o=<username>"),
        BadInput(name: "o= with five fields", text: sdp(replacing("o=", with: "o=- 1 2 IN IP4")), line: 2, expected: "6 fields"),
        BadInput(name: "o= with a non-numeric session id", text: sdp(replacing("o=", with: "o=- abc 2 IN IP4 1.2.3.4")), line: 2, expected: "decimal sess-id"),
        BadInput(name: "port above 65535", text: sdp(replacing("m=audio", with: "m=audio 70000 UDP/TLS/RTP/SAVPF 111 0")), line: 8, expected: "a port 0-65535"),
        BadInput(name: "port not a number", text: sdp(replacing("m=audio", with: "m=audio nine UDP/TLS/RTP/SAVPF 111 0")), line: 8, expected: "a port 0-65535"),
        BadInput(name: "m= without formats or proto", text: sdp(replacing("m=audio", with: "m=audio 9")), line: 8, expected: "m=<media> <port> <proto>"),
        BadInput(name: "payload type 200 on an RTP m= line", text: sdp(replacing("m=audio", with: "m=audio 9 UDP/TLS/RTP/SAVPF 200")), line: 8, expected: "payload types 0-127"),
        BadInput(name: "payload type listed twice (found by the fuzzer)", text: sdp(replacing("m=audio", with: "m=audio 9 UDP/TLS/RTP/SAVPF 111 111")), line: 8, expected: "each payload type once"),
        BadInput(name: "payload type 0 written as 00", text: sdp(replacing("m=audio", with: "m=audio 9 UDP/TLS/RTP/SAVPF 111 0 00")), line: 8, expected: "payload types 0-127 as formats, not \"00\""),
        BadInput(name: "duplicate mid", text: sdp(replacing("a=mid:1", with: "a=mid:0")), line: 32, expected: "a mid not used by an earlier m= section"),
        BadInput(name: "fingerprint without algorithm", text: sdp(replacing("a=fingerprint", with: "a=fingerprint:" + (0..<32).map { _ in "AB" }.joined(separator: ":"))), line: 14, expected: "a=fingerprint:<hash-function>"),
        BadInput(name: "fingerprint of the wrong length", text: sdp(replacing("a=fingerprint", with: "a=fingerprint:sha-256 AB:CD")), line: 14, expected: "32 bytes for sha-256"),
        BadInput(name: "fingerprint with non-hex bytes", text: sdp(replacing("a=fingerprint", with: "a=fingerprint:sha-256 ZZ:CD")), line: 14, expected: "hex bytes"),
        BadInput(name: "rtpmap for a payload type not on the m= line", text: sdp(inserting("a=rtpmap:100 telephone-event/8000", after: "a=rtpmap:0 ")), line: 25, expected: "a=rtpmap for a payload type listed on the m= line"),
        BadInput(name: "fmtp for a payload type not on the m= line", text: sdp(inserting("a=fmtp:98 apt=96", after: "a=fmtp:97")), line: 41, expected: "a=fmtp for a payload type listed"),
        BadInput(name: "rtpmap without clock rate", text: sdp(replacing("a=rtpmap:111", with: "a=rtpmap:111 opus")), line: 21, expected: "<encoding name>/<clock rate>"),
        BadInput(name: "rtpmap with zero channels", text: sdp(replacing("a=rtpmap:111", with: "a=rtpmap:111 opus/48000/0")), line: 21, expected: "channel count"),
        BadInput(name: "unknown setup role", text: sdp(replacing("a=setup", with: "a=setup:client")), line: 15, expected: "a=setup:actpass|active|passive|holdconn"),
        BadInput(name: "extmap id 300", text: sdp(replacing("a=extmap:", with: "a=extmap:300 urn:x")), line: 17, expected: "extmap id 1-255"),
        BadInput(name: "ssrc not a number", text: sdp(replacing("a=ssrc:1001", with: "a=ssrc:abc cname:x")), line: 25, expected: "a=ssrc:<ssrc-id"),
        BadInput(name: "ssrc attribute without a name", text: sdp(replacing("a=ssrc:1001", with: "a=ssrc:1 :")), line: 25, expected: "an attribute name after the ssrc id"),
        BadInput(name: "ssrc-group with a bad id", text: sdp(replacing("a=ssrc-group", with: "a=ssrc-group:FID 2001 x")), line: 41, expected: "ssrc ids"),
        BadInput(name: "a line that is not type=value", text: sdp(inserting("hello world", after: "s=")), line: 4, expected: "<letter a-z>=<value>"),
        BadInput(name: "upper-case line type", text: sdp(inserting("A=rtcp-mux", after: "s=")), line: 4, expected: "<letter a-z>=<value>"),
        BadInput(name: "candidate with a bad component", text: sdp(inserting("a=candidate:1 x udp 2122260223 127.0.0.1 5000 typ host", after: "a=mid:0")), line: 17, expected: "candidate component \"x\""),
        BadInput(name: "candidate with an unknown type", text: sdp(inserting("a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ best", after: "a=mid:0")), line: 17, expected: "candidate type \"best\""),
        BadInput(name: "candidate with a port above 65535", text: sdp(inserting("a=candidate:1 1 udp 2122260223 127.0.0.1 99999 typ host", after: "a=mid:0")), line: 17, expected: "candidate port \"99999\""),
        BadInput(name: "candidate cut short", text: sdp(inserting("a=candidate:1 1 udp 2122260223 127.0.0.1", after: "a=mid:0")), line: 17, expected: "at least 8 fields"),
        BadInput(name: "TCP candidate with a bad tcptype", text: sdp(inserting("a=candidate:1 1 tcp 1518280447 127.0.0.1 9 typ host tcptype sideways", after: "a=mid:0")), line: 17, expected: "active, passive or so"),
        BadInput(name: "second v= line", text: sdp(inserting("v=0", after: "t=")), line: 5, expected: "only one v= line"),
        BadInput(name: "t= with one number", text: sdp(replacing("t=", with: "t=0")), line: 4, expected: "t=<start-time> <stop-time>"),
        BadInput(name: "media line type not allowed in a section", text: sdp(inserting("t=0 0", after: "a=mid:1")), line: 33, expected: "media-level line type"),
    ]

    @Test(arguments: bad)
    func malformedInputGivesTheSpecificError(_ input: BadInput) {
        do {
            let d = try SessionDescription(parsing: input.text)
            Issue.record("parsed although it should not: \(d.media.count) media")
        } catch {
            guard case let .malformedLine(number, _, expected) = error else { return }
            #expect(number == input.line, "\(error)")
            #expect(expected.contains(input.expected), "\(error)")
        }
    }

    @Test func lfOnlyAndTrailingWhitespaceParseTheSame() throws {
        let crlf = try SessionDescription(parsing: sdp(baseLines))
        let lf = try SessionDescription(parsing: sdp(baseLines, separator: "\n"))
        let spaced = try SessionDescription(parsing: sdp(baseLines.map { $0 + " \t " }))
        #expect(lf == crlf)
        #expect(spaced == crlf)
    }

    @Test func fmtpAndRtcpFbBeforeRtpmapAreAccepted() throws {
        var lines = replacing("a=rtpmap:96", with: nil)
        lines = inserting("a=rtpmap:96 VP8/90000", after: "a=fmtp:97", in: lines)
        let d = try SessionDescription(parsing: sdp(lines))
        #expect(d.media[1].payload(96) == PayloadFormat(payloadType: 96, name: "VP8", clockRate: 90000,
                                                         rtcpFeedback: ["nack", "nack pli"]))
    }

    @Test func codecNamesCompareCaseInsensitively() throws {
        let d = try SessionDescription(parsing: sdp(replacing("a=rtpmap:111", with: "a=rtpmap:111 OPUS/48000/2")))
        let opus = try #require(d.media[0].payload(111))
        #expect(opus.name == "OPUS")
        #expect(opus.matches(name: "opus", clockRate: 48000, channels: 2))
        #expect(!opus.matches(name: "opus", clockRate: 48000, channels: 1))
        let vp8 = try #require(d.media[1].payload(96))
        #expect(vp8.matches(name: "vp8", clockRate: 90000))
    }

    @Test func unknownAttributesAreKeptInOrderAndWrittenBack() throws {
        var lines = inserting("a=x-google-flag:conference", after: "a=msid-semantic")
        lines = inserting("a=zeta:1", after: "a=mid:0", in: lines)
        lines = inserting("a=alpha", after: "a=zeta:1", in: lines)
        lines = inserting("a=bundle-only", after: "a=mid:1", in: lines)
        let d = try SessionDescription(parsing: sdp(lines))
        #expect(d.otherAttributes == [Attribute(name: "x-google-flag", value: "conference")])
        #expect(d.media[0].otherAttributes == [Attribute(name: "zeta", value: "1"), Attribute(name: "alpha")])
        let text = d.serialized()
        #expect(text.contains("a=x-google-flag:conference\r\n"))
        #expect(text.contains("a=zeta:1\r\na=alpha\r\n"))
        #expect(try SessionDescription(parsing: text) == d)
    }

    @Test func candidatesOfEveryFormParseToTheirValues() throws {
        let lines = [
            "a=candidate:842163049 1 udp 1677729535 198.51.100.7 54321 typ srflx raddr 192.168.1.4 rport 54321 generation 0 ufrag abcd network-id 1 network-cost 10",
            "a=candidate:1 1 UDP 2122262783 2001:db8::1 50000 typ host generation 0",
            "a=candidate:2 1 udp 2122194687 3e1f2c3a-1b2c-4d5e-8f90-a1b2c3d4e5f6.local 50001 typ host",
            "a=candidate:3 1 tcp 1518280447 127.0.0.1 9 typ host tcptype active",
            "a=candidate:4 1 TCP 1518214911 127.0.0.1 50002 typ host tcptype passive",
            "a=candidate:5 1 udp 41885439 203.0.113.9 3478 typ relay raddr 0.0.0.0 rport 0",
            "a=end-of-candidates",
        ]
        var all = baseLines
        for l in lines.reversed() { all = inserting(l, after: "a=mid:0", in: all) }
        let d = try SessionDescription(parsing: sdp(all))
        let c = d.media[0].candidates
        try #require(c.count == 6)
        #expect(d.media[0].endOfCandidates)
        #expect(c[0].type == .srflx && c[0].relatedAddress == "192.168.1.4" && c[0].relatedPort == 54321)
        #expect(c[0].priority == 1_677_729_535 && c[0].foundation == "842163049")
        #expect(c[0].generation == 0 && c[0].ufrag == "abcd")
        #expect(c[0].extensions.map(\.name) == ["generation", "ufrag", "network-id", "network-cost"])
        #expect(c[0].extensionValue("network-cost") == "10")
        #expect(c[1].addressKind == .ipv6 && c[1].address == "2001:db8::1" && c[1].transport == "UDP")
        #expect(c[2].addressKind == .mdns)
        #expect(c[0].addressKind == .ipv4)
        #expect(c[3].isTCP && c[3].tcpType == "active" && c[3].port == 9)
        #expect(c[4].isTCP && c[4].tcpType == "passive")
        #expect(c[5].type == .relay)
        #expect(c.map { "a=" + $0.sdpValue } == Array(lines.dropLast()))
        #expect(try SessionDescription(parsing: d.serialized()) == d)
    }

    @Test func portCountWildcardFeedbackAndMissingSessionLines() throws {
        var lines = replacing("m=video", with: "m=video 9/2 UDP/TLS/RTP/SAVPF 96 97")
        lines = inserting("a=rtcp-fb:* ccm fir", after: "a=rtcp-rsize", in: lines)
        lines = replacing("s=", with: nil, in: lines)
        lines = replacing("t=", with: nil, in: lines)
        let d = try SessionDescription(parsing: sdp(lines))
        #expect(d.media[1].portCount == 2)
        #expect(d.media[1].rtcpFeedbackAll == ["ccm fir"])
        #expect(d.sessionName == "-" && d.timings == [Timing(start: 0, stop: 0)])
        let text = d.serialized()
        #expect(text.contains("m=video 9/2 UDP/TLS/RTP/SAVPF 96 97\r\n"))
        #expect(text.contains("a=rtcp-fb:* ccm fir\r\n"))
        #expect(try SessionDescription(parsing: text) == d)
    }

    @Test func sessionLevelIceLiteFingerprintAndSetup() throws {
        var lines = inserting("a=ice-lite", after: "a=msid-semantic")
        lines = inserting("a=fingerprint:SHA-256 " + (0..<32).map { _ in "0a" }.joined(separator: ":"), after: "a=ice-lite", in: lines)
        lines = inserting("a=setup:passive", after: "a=ice-lite", in: lines)
        let d = try SessionDescription(parsing: sdp(lines))
        #expect(d.iceLite && d.setup == .passive)
        #expect(d.fingerprints == [Fingerprint(algorithm: "sha-256", value: (0..<32).map { _ in "0A" }.joined(separator: ":"))])
        #expect(try SessionDescription(parsing: d.serialized()) == d)
    }

    @Test func dataChannelSectionsOldAndNew() throws {
        let text = sdp([
            "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE data old",
            "m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:data",
            "a=sctp-port:5000", "a=max-message-size:262144",
            "m=application 9 DTLS/SCTP 5000", "a=mid:old", "a=sctpmap:5000 webrtc-datachannel 1024",
        ])
        let d = try SessionDescription(parsing: text)
        #expect(d.media.map(\.kind) == [.application, .application])
        #expect(!d.media[0].isRTP && d.media[0].formats == ["webrtc-datachannel"])
        #expect(d.media[0].sctpPort == 5000 && d.media[0].maxMessageSize == 262_144)
        #expect(d.media[1].sctpmaps == [SctpMap(number: 5000, app: "webrtc-datachannel", parameters: "1024")] && d.media[1].otherAttributes.isEmpty)
        #expect(JSEP.legacyForm(of: d.media[1]) == LegacyDataForm(proto: "DTLS/SCTP", advertisesMaxMessageSize: false))
        #expect(try SessionDescription(parsing: d.serialized()) == d)
    }

    @Test func standaloneCandidateErrorsNameTheField() {
        #expect(throws: CandidateError(field: "priority", value: "high", expected: "a number 1-4294967295")) {
            try Candidate(parsing: "candidate:1 1 udp high 127.0.0.1 5000 typ host")
        }
        #expect(throws: CandidateError(field: "typ", value: "type", expected: "\"typ\"")) {
            try Candidate(parsing: "candidate:1 1 udp 1 127.0.0.1 5000 type host")
        }
        #expect(throws: CandidateError(field: "generation", value: "", expected: "a value after \"generation\"")) {
            try Candidate(parsing: "candidate:1 1 udp 1 127.0.0.1 5000 typ host generation")
        }
    }
}
