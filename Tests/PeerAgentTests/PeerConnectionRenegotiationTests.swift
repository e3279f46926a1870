import Foundation
import Media
import SDP
import Testing
import TestSupport
@testable import PeerAgent

/// Subsequent offers and answers between two connections in this process (RFC 8829
/// §5.2.2, §5.3.2): hold and unhold from either side, negotiation needed, rollback, a
/// re-offer refused for breaking the rules, ICE restart with the DTLS association kept.
@Suite struct PeerConnectionRenegotiationTests {
    /// One offer/answer from `offerer` to `answerer`, the offer edited in transit.
    @discardableResult
    static func renegotiate(_ offerer: PeerConnection, _ answerer: PeerConnection,
                            editOffer: (String) -> String = { $0 }) throws -> (offer: SessionDescription, answer: SessionDescription) {
        let offer = try offerer.createOffer()
        try offerer.setLocalDescription(offer)
        try answerer.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: editOffer(offer.sdp)))
        let answer = try answerer.createAnswer()
        try answerer.setLocalDescription(answer)
        try offerer.setRemoteDescription(answer)
        return (try SessionDescription(parsing: offer.sdp), try SessionDescription(parsing: answer.sdp))
    }

    static func framesSent(_ t: RtpTransceiver) -> Int { t.sender.snapshot().framesSent ?? 0 }
    static func framesReceived(_ t: RtpTransceiver) -> Int { t.receiver.snapshot().framesReceived ?? 0 }
    static func audioPackets(_ t: RtpTransceiver) -> Int { t.receiver.snapshot().packetsReceived }

    /// Counts that grow by more than `least` within `seconds` after now.
    static func grows(_ count: @escaping @Sendable () -> Int, by least: Int = 5, within seconds: Double = 3) async -> Bool {
        let start = count()
        return await eventually(within: seconds) { count() > start + least }
    }

    /// Stays within `slack` of its value over `seconds`.
    static func stays(_ count: @escaping @Sendable () -> Int, for seconds: Double = 1, slack: Int = 1) async -> Bool {
        try? await Task.sleep(nanoseconds: 300_000_000)  // what was on its way when the change applied
        let start = count()
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        return count() <= start + slack
    }

    /// A holds B (A re-offers sendonly), then B holds A as well and both unhold, B
    /// re-offering: each held sender stops, the other direction flows on, each unhold
    /// brings frames back (a key frame, decoded); the session id stays and the version
    /// rises with every description; the DTLS roles stay on re-offers from either side.
    @Test func holdAndUnholdFromEitherSide() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        let aa = try #require(pair.a.allTransceivers.first { $0.kind == .audio })
        let ab = try #require(pair.b.allTransceivers.first { $0.kind == .audio })
        let firstOffer = try SessionDescription(parsing: #require(pair.a.localDescription).sdp)

        // A holds: sendrecv → sendonly.
        for t in pair.a.allTransceivers { t.direction = .sendonly }
        #expect(pair.a.isNegotiationNeeded)
        let hold = try Self.renegotiate(pair.a, pair.b)
        #expect(hold.offer.origin.sessionId == firstOffer.origin.sessionId)
        #expect(UInt64(hold.offer.origin.sessionVersion) ?? 0 > UInt64(firstOffer.origin.sessionVersion) ?? 0)
        #expect(hold.offer.media.map(\.mid) == ["0", "1"] && hold.offer.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(hold.answer.media.map(\.direction) == [.recvonly, .recvonly])
        #expect(va.currentDirection == .sendonly && vb.currentDirection == .recvonly)
        #expect(!pair.a.isNegotiationNeeded && pair.a.signalingState == .stable && pair.b.signalingState == .stable)
        #expect(pair.a.negotiationCount == 2 && pair.b.negotiationCount == 2)
        #expect(await Self.stays({ Self.framesSent(vb) }), "B's video stops while held")
        #expect(await Self.stays({ Self.framesReceived(va) }))
        #expect(await Self.stays({ Self.audioPackets(aa) }, slack: 3), "B's audio stops too")
        #expect(await Self.grows({ Self.framesReceived(vb) }), "A's video still reaches B")
        #expect(await Self.grows({ Self.audioPackets(ab) }))

        // B holds too (B re-offers: recvonly → inactive); the DTLS roles stay.
        let roleA = pair.a.getStats().transports.first?.dtlsRole
        for t in pair.b.allTransceivers { t.direction = .inactive }
        let both = try Self.renegotiate(pair.b, pair.a)
        #expect(both.offer.media.map(\.direction) == [.inactive, .inactive])
        #expect(both.offer.media.map(\.setup) == [.actpass, .actpass])
        #expect(both.answer.media.map(\.setup) == [roleA == "server" ? .passive : .active, roleA == "server" ? .passive : .active])
        #expect(await Self.stays({ Self.framesReceived(vb) }), "nothing flows while both hold")

        // Both unhold, B offering first: B sendrecv against A's sendonly gives B recvonly.
        for t in pair.b.allTransceivers { t.direction = .sendrecv }
        _ = try Self.renegotiate(pair.b, pair.a)
        #expect(vb.currentDirection == .recvonly && va.currentDirection == .sendonly)
        #expect(await Self.grows({ Self.framesReceived(vb) }), "A's video again")
        for t in pair.a.allTransceivers { t.direction = .sendrecv }
        _ = try Self.renegotiate(pair.a, pair.b)
        #expect(va.currentDirection == .sendrecv && vb.currentDirection == .sendrecv)
        let decodedBefore = va.receiver.snapshot().framesDecoded ?? 0
        #expect(await Self.grows({ Self.framesReceived(va) }), "B's video is back after the unhold")
        #expect(await eventually(within: 3) { (va.receiver.snapshot().framesDecoded ?? 0) > decodedBefore + 5 }, "and decodes (a key frame came first)")
        #expect(pair.a.connectionState == .connected && pair.b.connectionState == .connected)
        #expect(pair.a.negotiationCount == 5)
    }

    /// negotiationneeded: raised when a direction changes in `stable`, cleared by the
    /// renegotiation, not raised for a wish that the current answer already satisfies.
    @Test func negotiationNeededFollowsTheDirections() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        #expect(!pair.a.isNegotiationNeeded && !pair.b.isNegotiationNeeded)
        let va = try #require(pair.video?.a)
        va.direction = .recvonly
        #expect(await eventually(within: 2) { pair.events("a").contains { $0.0 == .negotiationNeeded } })
        #expect(pair.a.isNegotiationNeeded)
        _ = try Self.renegotiate(pair.a, pair.b)
        #expect(!pair.a.isNegotiationNeeded && va.currentDirection == .recvonly)
        // B wants sendonly on its video: against A's recvonly it already is; nothing to do.
        let vb = try #require(pair.video?.b)
        vb.direction = .sendonly
        #expect(!pair.b.isNegotiationNeeded)
        pair.a.restartIce()
        #expect(pair.a.isNegotiationNeeded)
    }

    /// A re-offer rolled back leaves everything as it was: `stable`, the current local
    /// description, media both ways; the next offer works.
    @Test func rollbackOfAReofferLeavesTheCallAsItWas() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        let current = try #require(pair.a.localDescription)
        for t in pair.a.allTransceivers { t.direction = .sendonly }
        let offer = try pair.a.createOffer()
        try pair.a.setLocalDescription(offer)
        #expect(pair.a.signalingState == .haveLocalOffer)
        #expect(throws: PeerConnectionError.self) { try pair.b.rollback() }
        try pair.a.rollback()
        #expect(pair.a.signalingState == .stable)
        #expect(try SessionDescription(parsing: #require(pair.a.localDescription).sdp).media.map(\.direction)
                == SessionDescription(parsing: current.sdp).media.map(\.direction))
        #expect(va.currentDirection == .sendrecv)
        #expect(await Self.grows({ Self.framesReceived(va) }), "B's video still reaches A")
        #expect(await Self.grows({ Self.framesReceived(vb) }))
        #expect(pair.a.isNegotiationNeeded, "the wish is still there")
        _ = try Self.renegotiate(pair.a, pair.b)
        #expect(va.currentDirection == .sendonly)
    }

    /// A re-offer that removes an m-section, reorders them, drops BUNDLE, changes or drops
    /// the fingerprint (with new ICE credentials, which must not restart ICE then) or swaps
    /// the DTLS roles is refused naming the line, and the answerer keeps its state — its
    /// descriptions, transceivers and ICE credentials; the offerer rolls back and a good
    /// re-offer goes through.
    @Test func aReofferThatBreaksTheRulesIsRefusedAndTheStateKept() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let (va, _) = try await pair.negotiateUntilVideoArrives()
        let edits: [(String, (String) -> String)] = [
            ("removes m-section 1", { sdp in String(sdp[..<sdp.range(of: "m=video")!.lowerBound]) }),
            ("a=group:BUNDLE", { $0.replacingOccurrences(of: "a=group:BUNDLE 0 1\r\n", with: "") }),
            ("changes the DTLS fingerprint", { sdp in
                sdp.split(separator: "\r\n", omittingEmptySubsequences: false).map { line in
                    line.hasPrefix("a=fingerprint:sha-256 ") ? "a=fingerprint:sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":") : String(line)
                }.joined(separator: "\r\n")
            }),
            ("has a=mid:1; the current description has mid 0", { sdp in
                sdp.replacingOccurrences(of: "a=mid:0\r\n", with: "a=mid:X\r\n").replacingOccurrences(of: "a=mid:1\r\n", with: "a=mid:0\r\n")
                    .replacingOccurrences(of: "a=mid:X\r\n", with: "a=mid:1\r\n")
            }),
            ("no a=fingerprint", { sdp in
                sdp.split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("a=fingerprint:") }.map { line in
                    line.hasPrefix("a=ice-ufrag:") ? "a=ice-ufrag:newufrag" : line.hasPrefix("a=ice-pwd:") ? "a=ice-pwd:anewpasswordof22charsxx" : String(line)
                }.joined(separator: "\r\n")
            }),
            ("swaps the DTLS roles", { sdp in
                sdp.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:active").replacingOccurrences(of: "a=setup:passive", with: "a=setup:active")
            }),
        ]
        let remoteBefore = pair.b.remoteDescription?.sdp, localBefore = pair.b.localDescription?.sdp
        let transceiversBefore = pair.b.allTransceivers.count
        for (expected, edit) in edits {
            let offer = try pair.a.createOffer()
            try pair.a.setLocalDescription(offer)
            do {
                try pair.b.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: edit(offer.sdp)))
                Issue.record("accepted a re-offer that \(expected)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
            #expect(pair.b.signalingState == .stable && pair.b.negotiationCount == 1)
            #expect(pair.b.remoteDescription?.sdp == remoteBefore && pair.b.localDescription?.sdp == localBefore, "\(expected)")
            #expect(pair.b.allTransceivers.count == transceiversBefore)
            try pair.a.rollback()
        }
        #expect(await Self.grows({ Self.framesReceived(va) }), "media goes on")
        for t in pair.a.allTransceivers { t.direction = .sendonly }
        _ = try Self.renegotiate(pair.a, pair.b)
        #expect(va.currentDirection == .sendonly)
    }

    /// A re-offer that renumbers VP8's payload type (as aiortc's may, PROTOCOL.md
    /// "Renegotiation") is followed on the wire both ways, with a `remapped` event: B's video
    /// (sent with the new number) keeps reaching A, whose receiver takes only the new one.
    @Test func aRenumberedPayloadTypeIsFollowedOnTheWire() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let (va, _) = try await pair.negotiateUntilVideoArrives()
        let offer = try pair.a.createOffer().sdp
        let pt = try #require(offer.split(separator: "\r\n").first { $0.hasPrefix("a=rtpmap:") && $0.hasSuffix(" VP8/90000") }
            .map { String($0.dropFirst("a=rtpmap:".count).prefix { $0.isNumber }) })
        let renumbered = pt == "100" ? "101" : "100"
        let (_, answer) = try Self.renegotiate(pair.a, pair.b) { sdp in
            sdp.split(separator: "\r\n", omittingEmptySubsequences: false).map { line -> String in
                if line.hasPrefix("m=video ") {
                    return line.split(separator: " ").map { $0 == pt ? renumbered : String($0) }.joined(separator: " ")
                }
                for prefix in ["a=rtpmap:", "a=fmtp:", "a=rtcp-fb:"] where line.hasPrefix(prefix + pt + " ") {
                    return prefix + renumbered + line.dropFirst(prefix.count + pt.count)
                }
                return String(line)
            }.joined(separator: "\r\n")
        }
        #expect(answer.media.first { $0.kind == .video }?.payloads.first?.payloadType == Int(renumbered))
        #expect(va.payloadType == Int(renumbered))
        #expect(await Self.grows({ Self.framesReceived(va) }, by: 10), "B's video, sent as \(renumbered), still reaches A")
        let remapped = pair.events("b").compactMap { if case let .remapped(d) = $0.0 { d } else { nil } }
        #expect(remapped.contains { $0.contains("payload type \(pt) is now \(renumbered)") }, "\(remapped)")
    }

    /// ICE restart from either side: new ufrag and pwd on both, libnice checks again with
    /// the same candidates, the DTLS association (and SRTP keys) stays — no second
    /// handshake — and video keeps arriving with no gap over 500 ms.
    @Test func iceRestartKeepsTheDTLSAssociationAndMedia() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        let sampler = FrameGapSampler { Self.framesReceived(va) }
        func ufrag(_ d: SessionDescriptionInit?) throws -> String? {
            try SessionDescription(parsing: #require(d).sdp).media.first?.iceUfrag
        }
        for (offerer, answerer) in [(pair.a, pair.b), (pair.b, pair.a)] {
            let (oldLocal, oldRemote) = (try ufrag(offerer.localDescription), try ufrag(answerer.localDescription))
            offerer.restartIce()
            let restart = try Self.renegotiate(offerer, answerer)
            #expect(restart.offer.media.first?.iceUfrag != oldLocal)
            #expect(restart.answer.media.first?.iceUfrag != oldRemote)
            #expect(restart.offer.media.allSatisfy { $0.iceUfrag == restart.offer.media.first?.iceUfrag })
            #expect(!offerer.isNegotiationNeeded)
            let before = (Self.framesReceived(va), Self.framesReceived(vb))
            #expect(await eventually(within: 5) {
                offerer.iceConnectionState == .connected || offerer.iceConnectionState == .completed
            })
            #expect(await eventually(within: 3) { Self.framesReceived(va) > before.0 + 15 && Self.framesReceived(vb) > before.1 + 15 })
            #expect(pair.a.dtlsTransportState == .connected && pair.b.dtlsTransportState == .connected)
        }
        let dtlsConnected = pair.events("a").filter { $0.0 == .dtlsState(.connected) }.count
        #expect(dtlsConnected == 1, "one DTLS handshake for the whole call")
        let longest = await sampler.stop()
        print("ICE restart both ways: longest time without a new video frame at A \(Int(longest)) ms")
        #expect(longest <= 500, "longest gap \(Int(longest)) ms")
    }

    /// A track stopped mid-call (W3C `transceiver.stop()`): negotiation is needed, the
    /// re-offer stops its m-section (port 0, mid kept, out of BUNDLE), the answer too; the
    /// receiver's IVF is closed at once — complete, it decodes to the frames the stats
    /// counted, and it no longer grows — while audio goes on; a later offer keeps the
    /// stopped section at port 0.
    @Test func aStoppedTrackEndsItsSectionAndClosesItsFile() async throws {
        let dir = TestServices.temporaryDirectory("stopped-track")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ivf = dir + "/b.ivf"
        let pair = try ConnectedPair(tracksA: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 30), receive: ReceiveOptions(decode: false))
        }, tracksB: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 30), receive: ReceiveOptions(ivfPath: ivf, decode: true))
        })
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        let audioB = try #require(pair.b.allTransceivers.first { $0.kind == .audio })
        va.stop()
        #expect(va.isStopping && pair.a.isNegotiationNeeded)
        let stop = try Self.renegotiate(pair.a, pair.b)
        #expect(stop.offer.media.map(\.port) == [9, 0] && stop.offer.media[1].mid == "1")
        #expect(stop.offer.bundleGroup?.mids == ["0"])
        #expect(stop.answer.media.map(\.port) == [9, 0])
        #expect(vb.currentDirection == .inactive && va.currentDirection == .inactive)
        #expect(!pair.a.isNegotiationNeeded)
        let written = vb.receiver.snapshot().framesWritten ?? 0
        let size = (try FileManager.default.attributesOfItem(atPath: ivf)[.size] as? Int) ?? -1
        #expect(try await CallChecks.decodedFrames(ivf) == written, "the file is complete at once")
        #expect(await Self.grows({ Self.audioPackets(audioB) }), "audio goes on")
        #expect((try FileManager.default.attributesOfItem(atPath: ivf)[.size] as? Int) == size, "and the IVF no longer grows")
        // The next offer, from B: the stopped section stays stopped.
        for t in pair.b.allTransceivers where t.kind == .audio { t.direction = .sendonly }
        let next = try Self.renegotiate(pair.b, pair.a)
        #expect(next.offer.media.map(\.port) == [9, 0] && next.answer.media.map(\.port) == [9, 0])
        #expect(written > 10)
    }
}

/// Samples a growing count every 10 ms on a task of its own and keeps the longest time
/// it stood still (ms).
final class FrameGapSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var longest = 0.0
    private var task: Task<Void, Never>?

    init(_ count: @escaping @Sendable () -> Int) {
        task = Task { [self] in
            var last = count(), since = Date()
            while lock.withLock({ running }) {
                try? await Task.sleep(nanoseconds: 10_000_000)
                let now = count()
                if now != last {
                    lock.withLock { longest = max(longest, Date().timeIntervalSince(since) * 1000) }
                    last = now
                    since = Date()
                }
            }
        }
    }

    /// Stops sampling; the longest stand-still, ms.
    func stop() async -> Double {
        lock.withLock { running = false }
        await task?.value
        return lock.withLock { longest }
    }
}
