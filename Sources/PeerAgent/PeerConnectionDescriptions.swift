// PeerConnection's session descriptions as W3C reads them: local and remote (pending or current, with the candidates gathered so far), current and pending (W3C webrtc-pc §4.4.1, RFC 8829 §4.1).
import SDP

extension PeerConnection {
    /// The local description with every candidate gathered so far (and
    /// `a=end-of-candidates` once gathering is complete): what a vanilla-ICE peer sends.
    public var localDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard var d = s.local, let type = s.localType else { return nil }
            for i in d.media.indices where !d.media[i].isRejected {
                d.media[i].candidates = s.localCandidates
                d.media[i].endOfCandidates = s.gathering == .complete
            }
            return SessionDescriptionInit(type: type, sdp: d.serialized())
        }
    }

    /// W3C `currentLocalDescription`: ours in the last completed offer/answer (nil before).
    public var currentLocalDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard let d = s.currentLocal, let type = s.currentLocalType else { return nil }
            return SessionDescriptionInit(type: type, sdp: d.serialized())
        }
    }
    /// W3C `currentRemoteDescription`: the peer's in the last completed offer/answer.
    public var currentRemoteDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard let d = s.currentRemote, let type = s.currentLocalType else { return nil }
            return SessionDescriptionInit(type: type == .offer ? .answer : .offer, sdp: d.serialized())
        }
    }
    /// W3C `pendingLocalDescription`: our offer waiting for its answer (`have-local-offer`).
    public var pendingLocalDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard s.signaling == .haveLocalOffer, let d = s.local else { return nil }
            return SessionDescriptionInit(type: .offer, sdp: d.serialized())
        }
    }
    /// W3C `pendingRemoteDescription`: the peer's offer not answered yet (`have-remote-offer`).
    public var pendingRemoteDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard s.signaling == .haveRemoteOffer, let d = s.remote else { return nil }
            return SessionDescriptionInit(type: .offer, sdp: d.serialized())
        }
    }

    /// The remote description as set (pending or current).
    public var remoteDescription: SessionDescriptionInit? {
        state.withLock { s in
            guard let remote = s.remote, let type = s.remoteType else { return nil }
            return SessionDescriptionInit(type: type, sdp: remote.serialized())
        }
    }
}
