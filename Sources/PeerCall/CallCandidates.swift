// CallCandidates: the remote ICE candidates of a call's signaling — held before their peer's offer, our own echoed ones and those of an old ICE generation left out, the rest handed to the connection (RFC 8838 trickle, PROTOCOL.md).
import PeerAgent

extension CallRun {
    /// A trickled candidate from `peer`: held for the connection its offer makes when there
    /// is none yet; ignored when it is our own (the router echoes publications) or of the
    /// peer's ICE generation before its restart; otherwise reported and given to the
    /// connection (a refusal is a `signalingError`, the call goes on).
    func remoteCandidate(_ candidate: IceCandidateInit, peer: String, topic: String) {
        guard let link = links[peer] else { return earlyCandidates.hold(candidate, topic: topic, from: peer) }
        // Our own, echoed by the router: by our ufrag when the candidate names one, else by
        // its text (never for end-of-candidates, whose text is the same from both sides).
        if let ufrag = candidate.usernameFragment, !ufrag.isEmpty {
            if link.localUfrags.contains(ufrag) { return }
        } else if !candidate.isEndOfCandidates, link.published.contains(candidate.candidate) {
            return
        }
        // A candidate of the peer's previous ICE generation, arriving after its restart.
        if let ufrag = candidate.usernameFragment, link.previousRemoteUfrags.contains(ufrag) { return }
        if !candidate.isEndOfCandidates { onEvent(.candidate(peer: peer, local: false, candidate: candidate.candidate)) }
        do { try link.pc.addIceCandidate(candidate) } catch {
            onEvent(.signalingError(topic: topic, reason: "\(error)"))
        }
    }
}
