// SignalingProfile: what a signaling profile of shared/PROTOCOL.md decides for a call — its topics, payload forms, and its busy and glare rules.
import PeerAgent
import WampClient

/// A signaling message for the call, whichever profile carried it.
enum SignalingMessage: Sendable, Equatable {
    /// A session description of type offer from `from`.
    case offer(SessionDescriptionInit, from: String)
    /// A session description of type answer from `from`.
    case answer(SessionDescriptionInit, from: String)
    /// A trickled candidate from `from` (an empty one is end-of-candidates).
    case candidate(IceCandidateInit, from: String)
    /// `from` ended its call with us (legacy `close`; room `close` of that user).
    case hangUp(from: String)
    /// A room member announced itself (`callme`): we call it.
    case joined(String)
    /// Nothing for us: our own publication echoed, or a message for the other role.
    case ignored
}

/// One WAMP publication: a topic and its positional arguments.
struct Publication: Sendable, Equatable {
    /// The topic URI.
    var topic: String
    /// The positional arguments (`args`).
    var args: [JSONValue]
}

/// What a call does with an offer from a peer it already has a connection with.
enum RepeatedOffer: Sendable, Equatable {
    /// The same offer again (our answer may have been missed): publish our answer again.
    case answerAgain
    /// Nothing: the same offer before our answer exists, or glare that we win.
    case ignore
    /// Busy: decline it with an answer rejecting every m-section (RFC 3264 §6).
    case decline
    /// Close the connection with that peer and answer the new offer.
    case replace
}

/// A signaling profile of `shared/PROTOCOL.md`: which topics a call subscribes to, how
/// its messages look on them, what it publishes, and its rules for an offer from a peer
/// it already has a connection with (busy, glare). The call core (``Call``) owns the
/// connections and their state; a profile owns only the wire. Implementations:
/// ``LegacyProfile`` (one call per prefix) and ``RoomProfile`` (a mesh of users).
protocol SignalingProfile: Sendable {
    /// The topics the call subscribes to.
    var topics: [String] { get }
    /// True for a mesh (one connection per remote user, each ending on its own: files,
    /// states and failures are per peer); false for one call with one peer, whose end
    /// (hang-up, failure, busy) ends the call.
    var isMesh: Bool { get }
    /// The topic offers to us arrive on, for error reports.
    var offerTopic: String { get }
    /// The topic answers to us arrive on, for error reports.
    var answerTopic: String { get }
    /// The peer to offer to as soon as the call has joined, if any (the legacy offerer).
    var offersAtStart: String? { get }
    /// What to publish once the call has joined, if anything (room: `callme`).
    var greeting: Publication? { get }
    /// Reads one router event on `topic`.
    /// - Throws: ``Signaling/PayloadError`` naming what was wrong with it (missing
    ///   arguments, not a description, a description of the wrong type).
    func message(topic: String, event: WampEvent) throws(Signaling.PayloadError) -> SignalingMessage
    /// Our offer to `peer`, as published.
    func offer(_ description: SessionDescriptionInit, to peer: String) -> Publication
    /// Our answer to `peer`, as published.
    func answer(_ description: SessionDescriptionInit, to peer: String) -> Publication
    /// One of our trickled candidates for `peer`, as published.
    func candidate(_ candidate: IceCandidateInit, to peer: String) -> Publication
    /// What ends our side of the call, when `inCall` (a call was set up with someone);
    /// nil when nothing is to be published.
    func close(inCall: Bool) -> Publication?
    /// The rule for an offer from `peer`, with whom we have a connection: `identity` is the
    /// new offer's `o=` session id and version (``Call/identity(_:)``), `taken` that of the
    /// offer the connection was made for (ours or theirs); `haveAnswer` when our answer to
    /// it exists; `weOffered`/`answered` describe the connection (we offered; an answer
    /// was exchanged).
    func repeatedOffer(from peer: String, identity: String?, taken: String?, haveAnswer: Bool, weOffered: Bool,
                       answered: Bool) -> RepeatedOffer
    /// Glare during a call (W3C perfect negotiation, `shared/PROTOCOL.md`): true when we
    /// are the polite side toward `peer` (we roll our re-offer back and answer theirs);
    /// `weOfferedFirst` when our offer set the call up.
    func isPolite(toward peer: String, weOfferedFirst: Bool) -> Bool
    /// Whether a description from the call's peer that restarts ICE with a new certificate
    /// (``InCallOffer/newCertificate``: its offer, or its answer to our ICE restart) is the
    /// peer back — its process restarted, its page reloaded — to be taken into the call's
    /// connection as a new DTLS association (RFC 8829 §5.11), rather than another caller;
    /// `connectionDown` when the call's connection is `disconnected` or `failed` (or its ICE
    /// was, and has not connected again).
    func takesPeerBack(connectionDown: Bool) -> Bool
}

extension SignalingProfile {
    /// The session description of `type` in the argument `value`.
    /// - Throws: ``Signaling/PayloadError``: `missing` when there is no such argument, the
    ///   payload's own error when it is no description, and "description of type … `place`"
    ///   when it is of the other type.
    static func description(_ value: JSONValue?, of type: SdpType, missing: String,
                            place: String) throws(Signaling.PayloadError) -> SessionDescriptionInit {
        guard let value else { throw Signaling.PayloadError(reason: missing) }
        let description = try Signaling.description(from: value)
        guard description.type == type else {
            throw Signaling.PayloadError(reason: "description of type \(description.type.rawValue) \(place)")
        }
        return description
    }
}
