// RemoteCandidates: each remote candidate taken once, at most 100, trickled ones checked against the remote description.
import SDP
import Testing
@testable import PeerAgent
@testable import PeerCall

@Suite struct RemoteCandidatesTests {
    /// A host candidate at 192.0.2.7 on `port` over `transport`.
    static func candidate(port: Int, transport: String = "udp") throws -> Candidate {
        try Candidate(parsing: "candidate:1 1 \(transport) 2122260223 192.0.2.7 \(port) typ host")
    }

    /// The same transport, address, port and type is taken once (another transport is
    /// another candidate); the 101st distinct one is refused naming the limit.
    @Test func eachCandidateOnceAndAtMostTheMaximum() throws {
        var set = RemoteCandidates()
        #expect(try set.firstSighting(Self.candidate(port: 5000)))
        #expect(try !set.firstSighting(Self.candidate(port: 5000)))
        #expect(try set.firstSighting(Self.candidate(port: 5000, transport: "tcp")))
        for port in 5001..<(5001 + RemoteCandidates.maximum - 2) { _ = try set.firstSighting(Self.candidate(port: port)) }
        #expect(throws: PeerConnectionError.invalidCandidate(candidate: try Self.candidate(port: 6000).sdpValue,
                                                            reason: "more than 100 remote candidates: dropped")) {
            try set.firstSighting(Self.candidate(port: 6000))
        }
        #expect(try !set.firstSighting(Self.candidate(port: 5001)))  // seen before: still not an error
    }

    /// Held candidates come back in order, once; the 101st held is refused.
    @Test func heldUntilTheDescription() throws {
        var set = RemoteCandidates()
        for i in 0..<RemoteCandidates.maximum { try set.hold(IceCandidateInit(candidate: "c\(i)")) }
        #expect(throws: PeerConnectionError.self) { try set.hold(IceCandidateInit(candidate: "one more")) }
        let held = set.takeHeld()
        #expect(held.count == 100 && held.first?.candidate == "c0" && held.last?.candidate == "c99")
        #expect(set.takeHeld().isEmpty)
    }

    /// A trickled candidate must name a mid (or m-line) of the remote description and,
    /// when it carries one, the current remote ufrag.
    @Test func trickledCandidatesAreChecked() throws {
        let remote = try SessionDescription(parsing: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=rtpmap:111 opus/48000/2\r\n")
        var set = RemoteCandidates()
        set.ufrag = "abcd"
        try set.check(IceCandidateInit(candidate: "x", sdpMid: "0", usernameFragment: "abcd"), against: remote)
        #expect(throws: PeerConnectionError.invalidCandidate(candidate: "x", reason: "unknown mid \"1\"")) {
            try set.check(IceCandidateInit(candidate: "x", sdpMid: "1"), against: remote)
        }
        #expect(throws: PeerConnectionError.invalidCandidate(candidate: "x", reason: "no m-line 3")) {
            try set.check(IceCandidateInit(candidate: "x", sdpMLineIndex: 3), against: remote)
        }
        #expect(throws: PeerConnectionError.invalidCandidate(candidate: "x", reason: "usernameFragment \"old1\" is not the remote ufrag \"abcd\"")) {
            try set.check(IceCandidateInit(candidate: "x", sdpMid: "0", usernameFragment: "old1"), against: remote)
        }
    }

    /// A description's candidates: component 1 of accepted m-sections, each once; a
    /// description without trickle ends them, one with trickle only by end-of-candidates.
    @Test func theCandidatesADescriptionCarries() throws {
        func sdp(trickle: Bool, end: Bool) -> String {
            "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n" + (trickle ? "a=ice-options:trickle\r\n" : "")
                + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=rtpmap:111 opus/48000/2\r\n"
                + "a=candidate:1 1 udp 2122260223 192.0.2.7 5000 typ host\r\n"
                + "a=candidate:1 2 udp 2122260222 192.0.2.7 5001 typ host\r\n"
                + (end ? "a=end-of-candidates\r\n" : "")
                + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\na=rtpmap:96 VP8/90000\r\n"
                + "a=candidate:1 1 udp 2122260223 192.0.2.7 5000 typ host\r\n"
                + "a=candidate:2 1 udp 1686052607 198.51.100.9 6000 typ srflx raddr 192.0.2.7 rport 5000\r\n"
                + "m=video 0 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:2\r\na=rtpmap:96 VP8/90000\r\n"
                + "a=candidate:3 1 udp 2122260223 192.0.2.8 7000 typ host\r\n"
        }
        let vanilla = RemoteCandidates.carried(by: try SessionDescription(parsing: sdp(trickle: false, end: false)))
        #expect(vanilla.candidates.map(\.port) == [5000, 6000])
        #expect(vanilla.endOfCandidates)
        #expect(!RemoteCandidates.carried(by: try SessionDescription(parsing: sdp(trickle: true, end: false))).endOfCandidates)
        #expect(RemoteCandidates.carried(by: try SessionDescription(parsing: sdp(trickle: true, end: true))).endOfCandidates)
    }
}
