// LegacyProfile: the `legacy` signaling profile of shared/PROTOCOL.md — one call per topic prefix, its four topics, payload forms and the busy rule (RFC 3264 §6 decline).
import PeerAgent
import SDP
import WampClient

/// The `legacy` profile: one offerer and one answerer per topic prefix, on the topics
/// `<prefix>.offer`, `.answer`, `.candidate` and `.close`. The remote peer is named
/// `"answerer"` (for the offerer) or `"offerer"` (for the answerer).
///
/// Payloads: a description is the first argument, an object `{"type","sdp"}` or a JSON
/// string of it (``CallOptions/descriptionAsString`` says which we write); a candidate is
/// a JSON string; `close` has no arguments. Both sides take offers and answers from the
/// topics (during a call either may re-offer, `shared/PROTOCOL.md` "Renegotiation"); the
/// call recognises its own by its `o=` session id, and an offerer takes no offer before its
/// call exists.
///
/// Busy: an answerer in a call that gets a different offer keeps its call and declines
/// the new one with an answer rejecting every m-section (port 0, RFC 3264 §6) whose `o=`
/// line repeats the declined offer's session id and version, so only that offerer takes
/// it as "busy" (``declineAnswer(to:)``) — except while the call's connection is down, when
/// an offer that restarts ICE with a new certificate is the peer back
/// (``takesPeerBack(connectionDown:)``).
struct LegacyProfile: SignalingProfile {
    /// The topic prefix.
    let prefix: String
    /// True when we offer; false when we answer.
    let offers: Bool
    /// Whether descriptions are published as JSON strings rather than objects.
    let descriptionAsString: Bool

    /// The remote peer's name: `"answerer"` for the offerer, `"offerer"` for the answerer.
    var peer: String { offers ? "answerer" : "offerer" }
    var isMesh: Bool { false }
    var topics: [String] { ["offer", "answer", "candidate", "close"].map(topic) }
    var offerTopic: String { topic("offer") }
    var answerTopic: String { topic("answer") }
    var offersAtStart: String? { offers ? peer : nil }
    var greeting: Publication? { nil }

    private func topic(_ name: String) -> String { "\(prefix).\(name)" }

    func message(topic name: String, event: WampEvent) throws(Signaling.PayloadError) -> SignalingMessage {
        switch name {
        case topic("offer"):
            return .offer(try Self.description(event.args.first, of: .offer, missing: "offer without arguments",
                                               place: "on the offer topic"), from: peer)
        case topic("answer"):
            return .answer(try Self.description(event.args.first, of: .answer, missing: "answer without arguments",
                                                place: "on the answer topic"), from: peer)
        case topic("candidate"):
            guard let arg = event.args.first else { throw Signaling.PayloadError(reason: "candidate without arguments") }
            return .candidate(try Signaling.candidate(from: arg), from: peer)
        case topic("close"):
            // Our own close comes back too; the call publishes it only when ending.
            return .hangUp(from: peer)
        default:
            return .ignored
        }
    }

    func offer(_ description: SessionDescriptionInit, to peer: String) -> Publication {
        Publication(topic: topic("offer"), args: [Signaling.value(description, asString: descriptionAsString)])
    }

    func answer(_ description: SessionDescriptionInit, to peer: String) -> Publication {
        Publication(topic: topic("answer"), args: [Signaling.value(description, asString: descriptionAsString)])
    }

    func candidate(_ candidate: IceCandidateInit, to peer: String) -> Publication {
        Publication(topic: topic("candidate"), args: [Signaling.value(candidate)])
    }

    func close(inCall: Bool) -> Publication? { inCall ? Publication(topic: topic("close"), args: []) : nil }

    /// The same offer (by `o=` identity) is answered again; a different one while we have
    /// a call is declined (busy).
    func repeatedOffer(from peer: String, identity: String?, taken: String?, haveAnswer: Bool, weOffered: Bool,
                       answered: Bool) -> RepeatedOffer {
        guard identity != nil, identity == taken else { return .decline }
        return haveAnswer ? .answerAgain : .ignore
    }

    /// The side that answered the first offer is polite.
    func isPolite(toward peer: String, weOfferedFirst: Bool) -> Bool { !weOfferedFirst }

    /// Only while the call's connection is down: anyone may publish on the prefix, so a new
    /// certificate while the peer is still there is someone else (busy, as before); while
    /// no packet comes from the peer (disconnected, failed), an ICE restart with a new
    /// certificate on the call's prefix is the peer back (its process restarted) — the
    /// answerer takes the new offerer's offer, the offerer the new answerer's answer to
    /// its ICE restart — and the call goes on in its connection.
    func takesPeerBack(connectionDown: Bool) -> Bool { connectionDown }

    /// The busy answer to `offer`: every m-section rejected (port 0, `a=inactive`, its mid
    /// kept; RFC 3264 §6) under an `o=` line with the offer's session id and version.
    /// - Throws: the SDP parser's error when the offer does not parse (then it is no call
    ///   to decline).
    static func declineAnswer(to offer: SessionDescriptionInit) throws -> SessionDescriptionInit {
        let parsed = try SessionDescription(parsing: offer.sdp)
        var answer = SessionDescription(origin: Origin(sessionId: parsed.origin.sessionId, sessionVersion: parsed.origin.sessionVersion))
        answer.media = parsed.media.map { m in
            var r = MediaDescription(kind: m.kind, port: 0, proto: m.proto, formats: m.formats)
            r.mid = m.mid
            r.connection = Connection()
            r.direction = .inactive
            return r
        }
        return SessionDescriptionInit(type: .answer, sdp: answer.serialized())
    }
}
