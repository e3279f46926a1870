// CallLink: one peer connection of a call and what the call knows about it — offer/answer exchanged, published candidates, established, failed.
import PeerAgent
import Foundation
import SDP

/// Our re-offer during a call, waiting for its answer.
struct PendingReoffer {
    /// Why (the action, or what was wanted).
    var reason: String
    /// The offer as published (republished while unanswered).
    var offer: SessionDescriptionInit
    /// When it was first and last published.
    var sentAt: Date
    var lastPublish: Date
    /// The negotiated directions before it (``CallRun/directions(of:)``).
    var before: [String: String]
    /// What a rollback restores (the re-offer unanswered): the wished directions and hold.
    var wishes: CallWishes
    /// It restarts ICE (new credentials): its answer may come from the peer back with a new
    /// certificate (``SignalingProfile/takesPeerBack(connectionDown:)``).
    var restartsIce = false
}

/// The call's wishes for a link's transceivers at one moment: each transceiver's wished
/// direction, whether we hold, and the directions an unhold restores.
typealias CallWishes = (directions: [Direction], localHold: Bool, directionsBeforeHold: [Direction]?)

/// One remote peer of a ``Call``: its ``PeerConnection`` and the call's record of it.
/// Used only by the call's task (no lock).
final class CallLink {
    /// The peer's name: `"offerer"`/`"answerer"` (legacy) or its user id (room).
    let peer: String
    /// The connection to it.
    let pc: PeerConnection
    /// True when we made the offer.
    let offerer: Bool
    /// The IVF and Ogg paths of what it sends us; empty when nothing is recorded
    /// (``CallOptions/recordsMedia``).
    let videoPath: String, audioPath: String
    /// Our offer as published (nil before it is published).
    var offer: SessionDescriptionInit?
    /// The `o=` session id and version of the offer this connection was made for.
    var offerIdentity: String?
    /// The answer: ours as published, or theirs as applied.
    var answer: SessionDescriptionInit?
    /// True once an answer was exchanged (or a decline taken).
    var answered = false
    /// When our offer was last published (republished while unanswered).
    var lastOfferPublish = Date.distantPast
    /// `--record`: the file this peer's audio and video go to together.
    var recorder: SyncedRecorder?
    /// Transport bytes in and out at the last progress report, and when (for kbit/s).
    var lastBytes: (received: Int, sent: Int, at: Date)?
    /// A description waiting for ICE gathering to complete before it is published
    /// (vanilla ICE), and when to publish it with the candidates found by then.
    var awaitingGathering: (description: SessionDescriptionInit, deadline: Date)?
    /// The connection reached `connected`.
    var established = false
    /// ICE reached `connected` at least once (it may be `disconnected` now).
    var iceConnected = false
    /// Our candidates as published (to recognise them when the router echoes them).
    var published: Set<String> = []
    /// The ICE ufrags of our own candidates (the same, by ufrag).
    var localUfrags: Set<String> = []
    /// The exit code and reason of the connection's failure.
    var failed: (code: Int32, reason: String)?
    /// The peer ended the call (close, DTLS close_notify).
    var closedByPeer = false
    /// The answer was a decline (busy): no call ever existed with this peer.
    var declined = false
    /// Its data channels and what arrived on them.
    let data = LinkData()
    /// The `o=` identities (id and version) of the offers and answers we published to this
    /// peer: the router brings our own back (legacy: both sides hear both topics).
    var publishedOffers: Set<String> = [], publishedAnswers: Set<String> = []
    /// The `o=` id and version of the peer's latest description taken.
    var remoteSession: (id: String, version: UInt64)?
    /// The DTLS fingerprints and ICE ufrag of the peer's latest description taken (a new
    /// ufrag in its re-offer is an ICE restart).
    var remoteFingerprints: [Fingerprint] = []
    var remoteUfrag: String?
    /// The peer's ufrags before its ICE restarts: a late candidate of an old generation is
    /// ignored (PROTOCOL.md "Renegotiation").
    var previousRemoteUfrags: Set<String> = []
    /// The `o=` identity of the peer's offer our latest answer answered.
    var answeredIdentity: String?
    /// Our re-offer waiting for its answer.
    var reoffer: PendingReoffer?
    /// Why a renegotiation was wanted while another was under way (taken once `stable`).
    var wanted: [String] = []
    /// The wishes before the actions the next re-offer carries: what its rollback restores.
    var rollbackWishes: CallWishes?
    /// The wishes now: each transceiver's wished direction, our hold and what it restores.
    var wishes: CallWishes {
        get { (pc.allTransceivers.map(\.direction), localHold, directionsBeforeHold) }
        set {
            for (t, d) in zip(pc.allTransceivers, newValue.directions) { t.direction = d }
            localHold = newValue.localHold
            directionsBeforeHold = newValue.directionsBeforeHold
        }
    }
    /// We hold the peer (RFC 3264 §8.4); the directions we wanted before, to unhold.
    var localHold = false
    var directionsBeforeHold: [Direction]?
    /// The peer holds us: its latest offer receives nothing, where its first description
    /// received something.
    var remoteHolds = false
    /// Whether the peer's first description received anything (nil before it came).
    var remoteReceivedAtStart: Bool?
    /// Since when ICE has been `disconnected` or `failed` on the established call (nil
    /// while connected), and when our automatic ICE restart began.
    var iceDisconnectedSince: Date?
    var iceRestartStartedAt: Date?
    /// When ICE went `failed` in this outage (the restart waits a moment after it).
    var iceFailedAt: Date?
    /// The call state last reported for this link's hold (`hold` or not).
    var holdReported = false
    /// True when a call was set up with this peer (answered for real, or connected).
    var inCall: Bool { established || (answered && !declined) }
    /// True while no packet comes from the peer: the connection is `disconnected` or
    /// `failed`, or its ICE was and has not connected again (the peer may be restarting).
    var isDown: Bool {
        iceDisconnectedSince != nil || pc.connectionState == .disconnected || pc.connectionState == .failed
    }

    /// A link to `peer` over `pc`; `offerer` when we offer; the paths of its recordings.
    init(peer: String, pc: PeerConnection, offerer: Bool, videoPath: String, audioPath: String) {
        self.peer = peer; self.pc = pc; self.offerer = offerer; self.videoPath = videoPath; self.audioPath = audioPath
    }
}
