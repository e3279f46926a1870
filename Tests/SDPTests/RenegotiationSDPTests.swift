import Testing
@testable import SDP

/// Subsequent offers and answers (RFC 8829 §5.2.2, §5.3.2) and the checks of a re-offer
/// (``Reoffer``), on Chromium's real offer and on our own descriptions.
@Suite struct RenegotiationSDPTests {
    /// Our tracks as a connection has them after answering `offer`: mids and payload types.
    static func negotiated(_ base: LocalDescriptionOptions, answer: SessionDescription) -> LocalDescriptionOptions {
        var o = base
        for i in o.tracks.indices {
            let m = answer.media.first { $0.kind == o.tracks[i].kind && !$0.isRejected }
            o.tracks[i].mid = m?.mid
            o.tracks[i].payloadType = m?.payloads.first?.payloadType
        }
        o.midExtensionID = answer.media.first { !$0.isRejected }?.extmaps.first { $0.uri == JSEP.midExtension }?.id ?? 1
        o.sessionVersion += 1
        return o
    }

    /// Answering Chromium's audio + video + data-channel offer and then re-offering (hold):
    /// the three sections stay in order with their mids, the rejected data channel again
    /// with port 0, Chromium's mid-extension id (4) and payload types kept, BUNDLE without
    /// the rejected mid, `a=setup:actpass`, and the hold directions.
    @Test func ourReofferAfterAnsweringChromiumKeepsItsSectionsIdsAndPayloadTypes() throws {
        let offer = try SessionDescription(parsing: Fixtures.text("chromium-offer-av-datachannel.sdp"))
        let answer = try JSEP.createAnswer(to: offer, options())
        #expect(answer.media.map(\.port) == [9, 9, 0])
        var next = Self.negotiated(options(audio: .sendonly, video: .sendonly), answer: answer)
        next.establishedSetup = .active
        let reoffer = JSEP.createOffer(next, previous: answer)
        #expect(reoffer.media.map(\.mid) == ["0", "1", "2"])
        #expect(reoffer.media.map(\.kind) == [.audio, .video, .application])
        #expect(reoffer.media.map(\.port) == [9, 9, 0])
        #expect(reoffer.media[0].formats == ["111"] && reoffer.media[1].formats == ["96"])
        #expect(reoffer.media[0].extmaps == [Extmap(id: 4, uri: JSEP.midExtension)])
        #expect(reoffer.media[1].extmaps == [Extmap(id: 4, uri: JSEP.midExtension)])
        #expect(reoffer.media[0].direction == .sendonly && reoffer.media[1].direction == .sendonly)
        #expect(reoffer.media[0].setup == .actpass)
        #expect(reoffer.bundleGroup?.mids == ["0", "1"])
        #expect(reoffer.origin.sessionVersion == String(next.sessionVersion))
        #expect(try SessionDescription(parsing: reoffer.serialized()) == reoffer)
        // Checked as the peer checks it against our answer: it keeps everything.
        try Reoffer.check(reoffer, against: answer)
    }

    /// Answering a re-offer once the association exists keeps our DTLS role (RFC 8842
    /// §5.5) against actpass, and refuses a setup that would swap it.
    @Test func subsequentAnswerKeepsTheDTLSRole() throws {
        let first = JSEP.createOffer(options())
        var ours = Self.negotiated(options(), answer: first)
        ours.establishedSetup = .passive  // we are the DTLS server
        let answer = try JSEP.createAnswer(to: first, ours)
        #expect(answer.media.map(\.setup) == [.passive, .passive])
        var active = first
        for i in active.media.indices { active.media[i].setup = .active }
        ours.establishedSetup = .active
        #expect(throws: JSEPError.roleSwap(mid: "0", setup: "active", kept: "active")) { try JSEP.createAnswer(to: active, ours) }
    }

    /// An answer to a re-offer takes each section with the track negotiated for its mid,
    /// even when the offerer's payload type changed (aiortc renumbers): the new one is used.
    @Test func subsequentAnswerMatchesTracksByMidAndFollowsRenumberedPayloadTypes() throws {
        var offer = JSEP.createOffer(options())
        offer.media[1].payloads[0].payloadType = 97
        offer.media[1].formats = ["97"]
        var ours = options()
        ours.tracks[0].mid = "0"
        ours.tracks[1].mid = "1"
        ours.tracks[1].payloadType = 96
        let answer = try JSEP.createAnswer(to: offer, ours)
        #expect(answer.media.map(\.mid) == ["0", "1"])
        #expect(answer.media[1].formats == ["97"])
        #expect(answer.media[1].ssrcs.first?.ssrc == 2222)
    }

    /// A track without a mid is appended to a subsequent offer with the lowest free mid.
    @Test func aTrackAddedLaterIsAppendedWithANewMid() throws {
        let first = JSEP.createOffer(options())
        var next = Self.negotiated(options(), answer: first)
        next.tracks.append(LocalTrack(kind: .video, direction: .sendrecv, ssrc: 3333, cname: "cn", streamId: "s", trackId: "tv2"))
        let reoffer = JSEP.createOffer(next, previous: first)
        #expect(reoffer.media.map(\.mid) == ["0", "1", "2"])
        #expect(reoffer.media[2].ssrcs.first?.ssrc == 3333)
        #expect(reoffer.bundleGroup?.mids == ["0", "1", "2"])
        try Reoffer.check(reoffer, against: first)
    }

    // MARK: Reoffer.check

    static func current() throws -> SessionDescription {
        try SessionDescription(parsing: Fixtures.text("chromium-offer-av-datachannel.sdp"))
    }

    @Test func aReofferThatRemovesASectionIsRefusedNamingIt() throws {
        var reoffer = try Self.current()
        reoffer.media.removeLast()
        #expect(throws: ReofferError.sectionRemoved(index: 2, mid: "2", line: "m=application 39377 UDP/DTLS/SCTP webrtc-datachannel")) {
            try Reoffer.check(reoffer, against: Self.current())
        }
    }

    @Test func aReofferThatReordersSectionsIsRefusedNamingTheLine() throws {
        var reoffer = try Self.current()
        reoffer.media.swapAt(0, 1)
        let current = try Self.current()
        do throws(ReofferError) {
            try Reoffer.check(reoffer, against: current)
            Issue.record("accepted")
        } catch {
            guard case let .sectionReordered(index, mid, expected, line) = error else { Issue.record("\(error)"); return }
            #expect(index == 0 && mid == "1" && expected == "0" && line.hasPrefix("m=video 41612 UDP/TLS/RTP/SAVPF 96 97"))
            #expect(error.description.contains("m-section 0 (m=video 41612"))
        }
    }

    @Test func aReofferThatChangesAKindIsRefused() throws {
        var reoffer = try Self.current()
        reoffer.media[0].kind = .video
        #expect(throws: ReofferError.self) { try Reoffer.check(reoffer, against: Self.current()) }
        let current = try Self.current()
        do throws(ReofferError) { try Reoffer.check(reoffer, against: current) } catch {
            guard case let .kindChanged(mid, _, was) = error else { Issue.record("\(error)"); return }
            #expect(mid == "0" && was == "audio")
        }
    }

    @Test func aReofferThatChangesTheFingerprintIsRefusedNamingBoth() throws {
        var reoffer = try Self.current()
        let new = Fingerprint(algorithm: "sha-256", value: (0..<32).map { _ in "AB" }.joined(separator: ":"))
        for i in reoffer.media.indices { reoffer.media[i].fingerprints = [new] }
        let current = try Self.current()
        do throws(ReofferError) {
            try Reoffer.check(reoffer, against: current)
            Issue.record("accepted")
        } catch {
            guard case let .fingerprintChanged(line, was) = error else { Issue.record("\(error)"); return }
            #expect(line == "a=fingerprint:sha-256 \(new.value)")
            #expect(was.hasPrefix("sha-256 "))
        }
    }

    @Test func aReofferThatDropsBundleIsRefused() throws {
        var reoffer = try Self.current()
        reoffer.groups = []
        #expect(throws: ReofferError.bundleDropped(line: "a=group:BUNDLE 0 1 2", now: nil)) {
            try Reoffer.check(reoffer, against: Self.current())
        }
        reoffer.groups = [Group(semantics: "BUNDLE", mids: ["0", "2"])]
        #expect(throws: ReofferError.bundleDropped(line: "a=group:BUNDLE 0 1 2", now: "a=group:BUNDLE 0 2 (mid 1 left out)")) {
            try Reoffer.check(reoffer, against: Self.current())
        }
    }

    /// Allowed: the same description with a higher version, a section stopped with port 0
    /// and taken out of BUNDLE, a stopped section recycled with a new mid, sections
    /// appended, and the fingerprint's hex in other case.
    @Test func whatARenegotiationMayChangeIsAccepted() throws {
        let current = try Self.current()
        var same = current
        same.origin.sessionVersion = "3"
        for i in same.media.indices {
            same.media[i].fingerprints = same.media[i].fingerprints.map { Fingerprint(algorithm: $0.algorithm.uppercased(), value: $0.value.lowercased()) }
        }
        try Reoffer.check(same, against: current)
        var stopped = current
        stopped.media[1].port = 0
        stopped.groups = [Group(semantics: "BUNDLE", mids: ["0", "2"])]
        try Reoffer.check(stopped, against: current)
        var recycled = stopped
        recycled.media[1].port = 9
        recycled.media[1].mid = "3"
        recycled.media[1].kind = .audio
        try Reoffer.check(recycled, against: stopped)
        var appended = current
        appended.media.append(current.media[1])
        appended.media[3].mid = "3"
        try Reoffer.check(appended, against: current)
    }

    /// A mid is a token (RFC 5888 §4): one with a space (which separates the mids of
    /// a=group, so it could never be written back) or a quote is refused naming the line.
    @Test func aMidThatIsNotATokenIsRefused() throws {
        let offer = JSEP.createOffer(options()).serialized()
        for bad in ["a=mid:video 1", "a=mid:\"1\"", "a=mid:1,2"] {
            let text = offer.replacingOccurrences(of: "a=mid:1\r\n", with: bad + "\r\n")
            do {
                _ = try SessionDescription(parsing: text)
                Issue.record("\(bad) accepted")
            } catch {
                #expect("\(error)".contains(bad) && "\(error)".contains("token characters"), "\(error)")
            }
        }
        #expect(throws: Never.self) { try SessionDescription(parsing: offer.replacingOccurrences(of: "a=mid:1\r\n", with: "a=mid:{v}-1_x.y\r\n")) }
    }
}
