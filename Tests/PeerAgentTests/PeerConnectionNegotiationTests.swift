// Negotiation by the letter of W3C webrtc-pc and RFC 8829 between two connections in this process: negotiationneeded when a transceiver or data channel is added (before the first offer too) with W3C's flag, the implicit rollback of setRemoteDescription(offer) in have-local-offer, and the o= version of what is set (RFC 3264 §8).
import Foundation
import Media
import SDP
import Testing
import TestSupport
@testable import PeerAgent

@Suite struct PeerConnectionNegotiationTests {
    /// How many `negotiationneeded` events `side` reported.
    static func needed(_ pair: ConnectedPair, _ side: String) -> Int {
        pair.events(side).filter { $0.0 == .negotiationNeeded }.count
    }

    /// The signaling states `side` reported, in order.
    static func signaling(_ pair: ConnectedPair, _ side: String) -> [SignalingState] {
        pair.events(side).compactMap { if case let .signalingState(s) = $0.0 { s } else { nil } }
    }

    /// The `o=` version of `d`.
    static func version(_ d: SessionDescriptionInit?) throws -> UInt64 {
        let sdp = try #require(d).sdp
        return try #require(UInt64(SessionDescription(parsing: sdp).origin.sessionVersion))
    }

    /// Events are handed over on the loop thread, in order: what either connection emitted
    /// by now has arrived once a probe queued on each one's loop after it has run (an
    /// async hop there and back). Twice: what ran in the first hop (a channel's opening,
    /// an event handler) may queue more.
    static func settle(_ pair: ConnectedPair) async {
        for _ in 0..<2 {
            for loop in [pair.a.loop, pair.b.loop] {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    if !loop.async({ done.resume() }) { done.resume() }
                }
            }
        }
    }

    /// W3C "update the negotiation-needed flag": the first transceiver of a new connection
    /// raises `negotiationneeded` (stable, no current description: the track has no
    /// m-section yet), the next ones while the flag is set do not; a data channel neither.
    /// The offer and its answer clear it. After that, a transceiver added in `stable`
    /// raises it again, and one added while an offer is pending raises it when the answer
    /// brings the connection back to `stable`; its m-section is appended by the next offer.
    @Test func addingATransceiverRaisesNegotiationNeededOnceWhileTheFlagIsSet() async throws {
        let pair = try ConnectedPair(tracksA: { _ in }, tracksB: { _ in })
        defer { pair.close() }
        #expect(!pair.a.isNegotiationNeeded)
        pair.a.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
        #expect(pair.a.isNegotiationNeeded, "before the first offer too")
        pair.a.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 15), receive: ReceiveOptions(decode: false))
        try pair.a.createDataChannel("chat")
        #expect(await eventually(within: 2) { Self.needed(pair, "a") == 1 })
        await Self.settle(pair)
        #expect(Self.needed(pair, "a") == 1, "one event while the flag is set")
        // The answerer's own tracks raise it on its side too (W3C), cleared by its answer.
        pair.b.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
        pair.b.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 15), receive: ReceiveOptions(decode: false))
        #expect(await eventually(within: 2) { Self.needed(pair, "b") == 1 })
        try pair.negotiate()
        #expect(!pair.a.isNegotiationNeeded && !pair.b.isNegotiationNeeded)
        await Self.settle(pair)
        #expect(Self.needed(pair, "a") == 1 && Self.needed(pair, "b") == 1, "the answer left nothing to negotiate")
        #expect(pair.b.allTransceivers.map(\.mid) == ["0", "1"])

        // In stable: raised again.
        let second = pair.a.addTransceiver(.video, direction: .sendonly,
                                           video: try PatternSource(width: 160, height: 120, frameRate: 15), receive: ReceiveOptions(decode: false))
        #expect(await eventually(within: 2) { Self.needed(pair, "a") == 2 })
        #expect(pair.a.isNegotiationNeeded && second.mid == nil)
        // While an offer is pending: not now; when its answer is applied (W3C fires again).
        let offer = try pair.a.createOffer()
        try pair.a.setLocalDescription(offer)
        let third = pair.a.addTransceiver(.audio, direction: .sendonly, audio: try ToneSource(frequency: 550), receive: ReceiveOptions(decode: false))
        await Self.settle(pair)
        #expect(Self.needed(pair, "a") == 2 && !pair.a.isNegotiationNeeded, "have-local-offer: nothing fired")
        try pair.b.setRemoteDescription(offer)
        let answer = try pair.b.createAnswer()
        try pair.b.setLocalDescription(answer)
        try pair.a.setRemoteDescription(answer)
        #expect(second.mid != nil && third.mid == nil)
        #expect(await eventually(within: 2) { Self.needed(pair, "a") == 3 }, "back in stable with the third track unnegotiated")
        let next = try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(next.offer.media.map(\.kind) == [.audio, .video, .application, .video, .audio])
        #expect(third.mid == next.offer.media.last?.mid && !pair.a.isNegotiationNeeded)
        await Self.settle(pair)
        #expect(Self.needed(pair, "a") == 3)
    }

    /// W3C setRemoteDescription (perfect negotiation): an offer that arrives in
    /// have-local-offer rolls our offer back first — `stable`, then `have-remote-offer` —
    /// instead of throwing; the answer goes out, the rolled-back change (a new track, which
    /// lost its mid) is still wanted (negotiationneeded again once `stable`) and the next
    /// offer carries it. An offer refused there (a section removed) leaves the connection
    /// rolled back, in `stable`.
    @Test func anOfferInHaveLocalOfferRollsOursBackImplicitly() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        try pair.negotiate()
        let vb = try #require(pair.video?.b)
        let baseline = Self.needed(pair, "a")
        // Glare: both re-offer (A a new track, B a direction); A takes B's.
        let added = pair.a.addTransceiver(.audio, direction: .sendonly, audio: try ToneSource(frequency: 550), receive: ReceiveOptions(decode: false))
        #expect(await eventually(within: 2) { Self.needed(pair, "a") == baseline + 1 })
        let ours = try pair.a.createOffer()
        try pair.a.setLocalDescription(ours)
        #expect(added.mid == "2")
        vb.direction = .recvonly
        let theirs = try pair.b.createOffer()
        try pair.b.setLocalDescription(theirs)
        try pair.a.setRemoteDescription(theirs)
        #expect(pair.a.signalingState == .haveRemoteOffer)
        #expect(await eventually(within: 2) { Self.signaling(pair, "a").suffix(3) == [.haveLocalOffer, .stable, .haveRemoteOffer] })
        #expect(pair.a.pendingLocalDescription == nil && added.mid == nil, "our offer is gone, its section's mid taken back")
        let answer = try pair.a.createAnswer()
        #expect(try SessionDescription(parsing: answer.sdp).media.count == 2)
        try pair.a.setLocalDescription(answer)
        try pair.b.setRemoteDescription(answer)
        #expect(pair.a.signalingState == .stable && pair.b.signalingState == .stable)
        #expect(vb.currentDirection == .recvonly && pair.video?.a.currentDirection == .sendonly)
        #expect(await eventually(within: 2) { Self.needed(pair, "a") == baseline + 2 }, "A's new track is still to negotiate")
        let next = try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(next.offer.media.count == 3 && added.mid == next.offer.media.last?.mid)

        // A refused offer in have-local-offer: the rollback stands (W3C chains it first).
        for t in pair.a.allTransceivers where t.kind == .video { t.direction = .inactive }
        let pending = try pair.a.createOffer()
        try pair.a.setLocalDescription(pending)
        let bad = try pair.b.createOffer().sdp
        let video = try #require(bad.range(of: "m=video"))
        let cut = String(bad[..<video.lowerBound])
        #expect(throws: PeerConnectionError.self) { try pair.a.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: cut)) }
        #expect(pair.a.signalingState == .stable && pair.a.pendingLocalDescription == nil)
        let local = try SessionDescription(parsing: #require(pair.a.localDescription).sdp)
        #expect(local.media.first { $0.kind == .video }?.direction == .sendrecv, "the local description is the current one again, not the inactive offer")
    }

    /// RFC 3264 §8, RFC 8829 §5.2.2: the `o=` session id stays; the version goes up by one
    /// for each description set that differs from the last set, not for each created and
    /// discarded: two createOffer calls give the same version, as do two createAnswer
    /// calls; a rolled-back offer keeps its number used (the next different one is one
    /// more), an offer saying exactly what the last set one said keeps its version.
    @Test func theOriginVersionFollowsWhatIsSetNotWhatIsCreated() async throws {
        let pair = try ConnectedPair(width: 160, height: 120)
        defer { pair.close() }
        let first = try pair.a.createOffer()
        #expect(try Self.version(first) == 2)
        #expect(try Self.version(pair.a.createOffer()) == 2, "created again, not set: same version")
        try pair.a.setLocalDescription(first)
        try pair.b.setRemoteDescription(first)
        #expect(try Self.version(pair.b.createAnswer()) == 2)
        let answer = try pair.b.createAnswer()
        #expect(try Self.version(answer) == 2)
        try pair.b.setLocalDescription(answer)
        try pair.a.setRemoteDescription(answer)
        let id = try SessionDescription(parsing: first.sdp).origin.sessionId

        // A change: one more, however often it is created.
        for t in pair.a.allTransceivers { t.direction = .sendonly }
        let hold = try pair.a.createOffer()
        #expect(try Self.version(hold) == 3 && Self.version(pair.a.createOffer()) == 3)
        try pair.a.setLocalDescription(hold)
        try pair.a.rollback()
        // The same offer again after the rollback: what was set said this, same version.
        let again = try pair.a.createOffer()
        #expect(try Self.version(again) == 3)
        // Another change: one more than the rolled-back one (it was set, and may have been sent).
        for t in pair.a.allTransceivers where t.kind == .audio { t.direction = .inactive }
        let other = try pair.a.createOffer()
        #expect(try Self.version(other) == 4)
        try pair.a.setLocalDescription(other)
        try pair.b.setRemoteDescription(other)
        let reanswer = try pair.b.createAnswer()
        #expect(try Self.version(reanswer) == 3, "B's second description")
        try pair.b.setLocalDescription(reanswer)
        try pair.a.setRemoteDescription(reanswer)
        // An ICE restart changes the description: one more.
        pair.a.restartIce()
        let restart = try pair.a.createOffer()
        #expect(try Self.version(restart) == 5)
        #expect(try SessionDescription(parsing: restart.sdp).origin.sessionId == id)
        try pair.a.setLocalDescription(restart)
        #expect(try Self.version(pair.a.localDescription) == 5)
    }
}
