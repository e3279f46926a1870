import Testing
@testable import SDP

let fingerprint = Fingerprint(algorithm: "sha-256", value: (0..<32).map { _ in "5A" }.joined(separator: ":"))

func options(audio: Direction? = .sendrecv, video: Direction? = .sendrecv) -> LocalDescriptionOptions {
    var tracks: [LocalTrack] = []
    if let audio { tracks.append(LocalTrack(kind: .audio, direction: audio, ssrc: 1111, cname: "cn", streamId: "s", trackId: "ta")) }
    if let video { tracks.append(LocalTrack(kind: .video, direction: video, ssrc: 2222, cname: "cn", streamId: "s", trackId: "tv")) }
    return LocalDescriptionOptions(sessionId: 42, iceUfrag: "uFrG", icePwd: "p4ssw0rdp4ssw0rdp4ssw0", fingerprints: [fingerprint], tracks: tracks)
}

@Suite struct JSEPTests {
    @Test func offerHasOpusVP8BundleRtcpMuxAndActpass() throws {
        let offer = JSEP.createOffer(options())
        #expect(offer.bundleGroup?.mids == ["0", "1"])
        try #require(offer.media.count == 2)
        let a = offer.media[0], v = offer.media[1]
        #expect(a.kind == .audio && a.mid == "0" && v.kind == .video && v.mid == "1")
        #expect(a.proto == "UDP/TLS/RTP/SAVPF")
        #expect(a.payloads == [PayloadFormat(payloadType: 111, name: "opus", clockRate: 48000, channels: 2,
                                             fmtp: "minptime=10;useinbandfec=1")])
        #expect(v.payloads.first?.name == "VP8" && v.payloads.first?.clockRate == 90000)
        #expect(Set(v.payloads.first?.rtcpFeedback ?? []) == ["nack", "nack pli", "ccm fir"])
        for m in offer.media {
            #expect(m.setup == .actpass && m.rtcpMux && m.direction == .sendrecv)
            #expect(m.iceUfrag == "uFrG" && m.fingerprints == [fingerprint])
            #expect(m.extmaps.map(\.uri) == [JSEP.midExtension])
        }
        #expect(a.ssrcs.contains(SsrcAttribute(ssrc: 1111, name: "cname", value: "cn")))
        #expect(a.msids == [Msid(streamId: "s", trackId: "ta")])
        // Our own offer parses back and we can answer it.
        let reparsed = try SessionDescription(parsing: offer.serialized())
        #expect(reparsed == offer)
        let answer = try JSEP.createAnswer(to: reparsed, options())
        #expect(answer.media.map(\.port) == [9, 9])
    }

    @Test func answerKeepsOfferersPayloadTypesAndDropsWhatWeCannotServe() throws {
        let offer = try SessionDescription(parsing: sdp(baseLines))
        let answer = try JSEP.createAnswer(to: offer, options())
        try #require(answer.media.count == 2)
        let a = answer.media[0], v = answer.media[1]
        #expect(a.formats == ["111"])  // PCMU dropped
        #expect(a.payloads.first?.fmtp == "minptime=10;useinbandfec=1")
        #expect(a.payloads.first?.rtcpFeedback == [])  // transport-cc not supported
        #expect(v.formats == ["96"])  // rtx dropped
        #expect(v.payloads.first?.rtcpFeedback == ["nack", "nack pli"])  // intersection
        #expect(answer.media.map(\.mid) == ["0", "1"])
        #expect(answer.media.map(\.setup) == [.active, .active])
        #expect(answer.bundleGroup?.mids == ["0", "1"])
        #expect(a.rtcpMux && v.rtcpMux && !a.rtcpRsize && v.rtcpRsize)
        #expect(a.extmaps == [Extmap(id: 1, uri: JSEP.midExtension)])
        #expect(answer.extmapAllowMixed)
        #expect(try SessionDescription(parsing: answer.serialized()) == answer)
    }

    @Test(arguments: [
        (Direction.sendrecv, Direction.sendrecv, Direction.sendrecv),
        (.sendonly, .sendrecv, .recvonly),
        (.recvonly, .sendrecv, .sendonly),
        (.inactive, .sendrecv, .inactive),
        (.sendrecv, .recvonly, .recvonly),
        (.sendrecv, .sendonly, .sendonly),
        (.sendonly, .sendonly, .inactive),
        (.recvonly, .recvonly, .inactive),
    ])
    func directionIsNegotiated(offered: Direction, local: Direction, expected: Direction) throws {
        let offer = try SessionDescription(parsing: sdp(replacing("a=sendrecv", with: "a=\(offered.rawValue)")))
        let answer = try JSEP.createAnswer(to: offer, options(audio: local))
        #expect(answer.media[0].direction == expected)
        #expect(answer.media[0].ssrcs.isEmpty == !expected.sends)
    }

    @Test func unservableSectionsAreRejectedWithTheirMidAndLeaveBundle() throws {
        var lines = baseLines
        lines[4] = "a=group:BUNDLE 0 1 2 3"
        lines += ["m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:2", "a=sctp-port:5000",
                  "m=audio 9 UDP/TLS/RTP/SAVPF 0", "a=mid:3", "a=rtpmap:0 PCMU/8000"]
        let offer = try SessionDescription(parsing: sdp(lines))
        let answer = try JSEP.createAnswer(to: offer, options())
        #expect(answer.media.map(\.mid) == ["0", "1", "2", "3"])
        #expect(answer.media.map(\.port) == [9, 9, 0, 0])
        #expect(answer.media[2].kind == .application && answer.media[2].formats == ["webrtc-datachannel"])
        #expect(answer.media[3].formats == ["0"] && answer.media[3].direction == .inactive)
        #expect(answer.bundleGroup?.mids == ["0", "1"])
        #expect(try SessionDescription(parsing: answer.serialized()) == answer)
    }

    /// RFC 8841 §5.2: an offered data section without `a=sctp-port` means port 5000; it is
    /// accepted like one with it, and our answer names our port.
    @Test func aDataSectionWithoutSctpPortIsAcceptedAsPort5000() throws {
        var lines = baseLines
        lines[4] = "a=group:BUNDLE 0 1 2"
        lines += ["m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:2", "a=max-message-size:65536"]
        let offer = try SessionDescription(parsing: sdp(lines))
        #expect(offer.media[2].sctpPort == nil && JSEP.isDataSection(offer.media[2]))
        var o = options()
        o.tracks.append(LocalTrack(kind: .application, direction: .sendrecv, ssrc: 0, cname: "cn", streamId: "", trackId: ""))
        let answer = try JSEP.createAnswer(to: offer, o)
        #expect(answer.media.map(\.port) == [9, 9, 9])
        #expect(answer.media[2].sctpPort == 5000 && answer.media[2].formats == ["webrtc-datachannel"])
        #expect(answer.bundleGroup?.mids == ["0", "1", "2"])
    }

    @Test func sectionsWithoutALocalTrackOrASecondOfAKindAreRejected() throws {
        var lines = baseLines
        lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=mid:2", "a=rtpmap:111 opus/48000/2"]
        let offer = try SessionDescription(parsing: sdp(lines))
        let answer = try JSEP.createAnswer(to: offer, options(video: nil))
        #expect(answer.media.map(\.port) == [9, 0, 0])
        #expect(answer.bundleGroup?.mids == ["0"])
    }

    @Test func setupRoleAnswersTheOfferedOne() throws {
        let passive = try SessionDescription(parsing: sdp(baseLines.map { $0 == "a=setup:actpass" ? "a=setup:passive" : $0 }))
        #expect(try JSEP.createAnswer(to: passive, options()).media.map(\.setup) == [.active, .active])
        let active = try SessionDescription(parsing: sdp(baseLines.map { $0 == "a=setup:actpass" ? "a=setup:active" : $0 }))
        #expect(try JSEP.createAnswer(to: active, options()).media.map(\.setup) == [.passive, .passive])
        let hold = try SessionDescription(parsing: sdp(replacing("a=setup", with: "a=setup:holdconn")))
        #expect(throws: JSEPError.unusableSetup(mid: "0", setup: "holdconn")) { try JSEP.createAnswer(to: hold, options()) }
    }

    @Test func anOfferWithoutMidCannotBeAnswered() throws {
        let offer = try SessionDescription(parsing: sdp(replacing("a=mid:1", with: nil)))
        #expect(throws: JSEPError.missingMid(index: 1)) { try JSEP.createAnswer(to: offer, options()) }
    }

    /// Codec names match case-insensitively (RFC 4855 §3); the answer writes our canonical
    /// spelling (`opus`, `VP8`) with the offerer's payload types, whatever the offer wrote.
    @Test func codecNamesMatchInAnyCaseAndTheAnswerWritesThemCanonically() throws {
        let offer = try SessionDescription(parsing: sdp(replacing("a=rtpmap:96", with: "a=rtpmap:96 vp8/90000")
            .map { $0.hasPrefix("a=rtpmap:111 ") ? "a=rtpmap:111 OPUS/48000/2" : $0 }))
        #expect(offer.media[0].payloads.first?.name == "OPUS" && offer.media[1].payloads.first?.name == "vp8")
        let answer = try JSEP.createAnswer(to: offer, options())
        #expect(answer.media[0].payloads.map(\.name) == ["opus"] && answer.media[0].formats == ["111"])
        #expect(answer.media[1].payloads.first?.name == "VP8")
        #expect(answer.media[1].formats == ["96"])
        let text = answer.serialized()
        #expect(text.contains("a=rtpmap:111 opus/48000/2\r\n") && text.contains("a=rtpmap:96 VP8/90000\r\n"))
        #expect(!text.contains("OPUS") && !text.contains("vp8/"))
    }
}
