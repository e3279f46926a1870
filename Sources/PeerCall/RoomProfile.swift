// RoomProfile: the `room` signaling profile of shared/PROTOCOL.md — a mesh of users in a room, its topics, payload forms and the glare rule.
import PeerAgent
import WampClient

/// The `room` profile: every user of `<prefix>.<room>` calls every other one. A user
/// announces itself on `<prefix>.<room>.callme` (whoever hears it offers) and leaves on
/// `<prefix>.<room>.close`; offers, answers and candidates for user `u` go to
/// `<prefix>.<room>.<u>.offer|answer|candidate`. Every message's first argument is the
/// sender's user id; descriptions are JSON strings, candidates JSON strings.
///
/// Glare (two users offered to each other) and a new session from a known user: the
/// lower user id keeps its own unanswered offer; a known user back with a new certificate
/// (`callme` again, or an offer that restarts ICE with another fingerprint) is taken into
/// its connection (ICE restart, new DTLS association); otherwise the old connection is
/// closed and the new offer answered.
struct RoomProfile: SignalingProfile {
    /// The topic prefix.
    let prefix: String
    /// The room name.
    let room: String
    /// Our user id.
    let user: String

    var isMesh: Bool { true }
    var topics: [String] { [userTopic(user, "offer"), userTopic(user, "answer"), userTopic(user, "candidate"), roomTopic("callme"), roomTopic("close")] }
    var offerTopic: String { userTopic(user, "offer") }
    var answerTopic: String { userTopic(user, "answer") }
    var offersAtStart: String? { nil }
    var greeting: Publication? { Publication(topic: roomTopic("callme"), args: [.string(user)]) }

    private func roomTopic(_ name: String) -> String { "\(prefix).\(room).\(name)" }
    private func userTopic(_ user: String, _ name: String) -> String { "\(prefix).\(room).\(user).\(name)" }

    func message(topic: String, event: WampEvent) throws(Signaling.PayloadError) -> SignalingMessage {
        guard case let .string(from)? = event.args.first else {
            throw Signaling.PayloadError(reason: "message without a fromUser string as first argument")
        }
        guard from != user else { return .ignored }  // our own publication
        switch topic {
        case roomTopic("callme"):
            return .joined(from)
        case roomTopic("close"):
            return .hangUp(from: from)
        case userTopic(user, "offer"):
            return .offer(try Self.description(event.args.dropFirst().first, of: .offer, missing: "offer without a description argument",
                                               place: "from \(from)"), from: from)
        case userTopic(user, "answer"):
            return .answer(try Self.description(event.args.dropFirst().first, of: .answer, missing: "answer without a description argument",
                                                place: "on the answer topic"), from: from)
        case userTopic(user, "candidate"):
            guard event.args.count >= 2 else { throw Signaling.PayloadError(reason: "candidate without a candidate argument") }
            return .candidate(try Signaling.candidate(from: event.args[1]), from: from)
        default:
            return .ignored
        }
    }

    func offer(_ description: SessionDescriptionInit, to peer: String) -> Publication {
        Publication(topic: userTopic(peer, "offer"), args: [.string(user), Signaling.value(description, asString: true)])
    }

    func answer(_ description: SessionDescriptionInit, to peer: String) -> Publication {
        Publication(topic: userTopic(peer, "answer"), args: [.string(user), Signaling.value(description, asString: true)])
    }

    func candidate(_ candidate: IceCandidateInit, to peer: String) -> Publication {
        Publication(topic: userTopic(peer, "candidate"), args: [.string(user), Signaling.value(candidate)])
    }

    /// Leaving the room is always announced.
    func close(inCall: Bool) -> Publication? { Publication(topic: roomTopic("close"), args: [.string(user)]) }

    /// The lower user id is polite.
    func isPolite(toward peer: String, weOfferedFirst: Bool) -> Bool { user < peer }

    /// Always: the sender's user id names the peer (descriptions come on our own topics
    /// with it), so a known user's new certificate is that user back (`callme` again, or its
    /// offer): its connection is restarted rather than replaced, so recordings and stats
    /// go on; a new offer that does not fit the connection (other mids or kinds) still
    /// replaces it.
    func takesPeerBack(connectionDown: Bool) -> Bool { true }

    /// The same offer with our answer made is answered again; in glare the lower user id
    /// keeps its own unanswered offer; anything else replaces the connection.
    func repeatedOffer(from peer: String, identity: String?, taken: String?, haveAnswer: Bool, weOffered: Bool,
                       answered: Bool) -> RepeatedOffer {
        if identity == taken, haveAnswer { return .answerAgain }
        if weOffered, !answered, user < peer { return .ignore }
        return .replace
    }
}
