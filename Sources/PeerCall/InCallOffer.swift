// InCallOffer: what an offer from a peer we are in a call with is — a renegotiation, a repeat, stale, the peer back with a new certificate, or another caller (shared/PROTOCOL.md "Renegotiation", RFC 8829 §5.11).
import SDP

/// The kind of an offer arriving from a peer with whom a call exists.
enum InCallOffer: Equatable {
    /// A new offer of this call (same `o=` id and a higher version, or — stacks that make
    /// a new id for every description, aiortc for one — the same DTLS fingerprint): apply
    /// and answer it.
    case renegotiation
    /// The offer we answered last, again (our answer may have been lost): answer again.
    case repeated
    /// Same `o=` id with a lower version than the peer's latest description: ignored.
    case stale(latest: UInt64, offered: UInt64)
    /// Another session with another fingerprint, that restarts ICE (another `a=ice-ufrag`
    /// than the peer's latest): the peer back with a new certificate (its process restarted,
    /// its page reloaded) — or someone else calling. The profile decides
    /// (``SignalingProfile/takesPeerBack(connectionDown:)``): applied to the call's
    /// connection as an ICE restart with a new DTLS association when it fits, otherwise as
    /// ``otherCaller``.
    case newCertificate
    /// Another session with another fingerprint: someone else calling (busy in `legacy`,
    /// a new connection in `room`).
    case otherCaller

    /// Classifies `sdp`, an offer from the peer whose latest description had `remote` as
    /// its `o=` id and version, `fingerprints` as DTLS fingerprints and `ufrag` as ICE ufrag;
    /// `answered` is the `o=` identity (id and version) of the offer we answered last, if
    /// any. `parsed` is `sdp` parsed, when the caller has it (else it is parsed here if needed).
    static func classify(_ sdp: String, parsed: SessionDescription? = nil, remote: (id: String, version: UInt64)?,
                         fingerprints: [Fingerprint], ufrag: String? = nil, answered: String?) -> InCallOffer {
        let identity = Call.identity(sdp)
        if let identity, identity == answered { return .repeated }
        guard let session = Call.session(sdp) else { return .otherCaller }
        if let remote, session.id == remote.id {
            if session.version > remote.version { return .renegotiation }
            if session.version == remote.version { return .repeated }
            return .stale(latest: remote.version, offered: session.version)
        }
        if carries(fingerprints, sdp, parsed: parsed) { return .renegotiation }
        guard let description = parsed ?? (try? SessionDescription(parsing: sdp)),
              isNewCertificate(description, fingerprints: fingerprints, ufrag: ufrag) else { return .otherCaller }
        return .newCertificate
    }

    /// True when `description` (an offer or answer) carries a fingerprint of another
    /// certificate than `fingerprints` (the peer's latest) and restarts ICE (an
    /// `a=ice-ufrag` other than `ufrag`): RFC 8829 §5.11's new DTLS association.
    static func isNewCertificate(_ description: SessionDescription, fingerprints: [Fingerprint], ufrag: String?) -> Bool {
        guard let old = fingerprints.first, let ufrag, case let prints = Reoffer.fingerprints(of: description), !prints.isEmpty,
              !prints.contains(where: { $0.matches(old) }), let now = Reoffer.iceUfrag(of: description) else { return false }
        return now != ufrag && description.media.contains { !$0.isRejected }
    }

    /// True when `sdp` (an answer, say) is the peer's: its `o=` id is `remoteId`, or it
    /// carries the peer's fingerprint.
    static func isFromPeer(_ sdp: String, parsed: SessionDescription? = nil, remoteId: String?, fingerprints: [Fingerprint]) -> Bool {
        if let remoteId, Call.session(sdp)?.id == remoteId { return true }
        return carries(fingerprints, sdp, parsed: parsed)
    }

    /// True when `sdp` carries the first of `fingerprints` (RFC 8122 §5).
    private static func carries(_ fingerprints: [Fingerprint], _ sdp: String, parsed: SessionDescription?) -> Bool {
        guard let old = fingerprints.first, let description = parsed ?? (try? SessionDescription(parsing: sdp)) else { return false }
        return Reoffer.fingerprints(of: description).contains { $0.matches(old) }
    }
}
