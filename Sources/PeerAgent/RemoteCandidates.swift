// RemoteCandidates: the remote ICE candidates a connection has taken, those waiting for the remote description, and the checks a trickled one must pass (RFC 8838, W3C addIceCandidate).
import SDP

/// The bookkeeping of a connection's remote candidates: each candidate (by transport,
/// address, port and type) is given to ICE once, however often it arrives (trickled and
/// again inside a repeated description); at most ``maximum`` are taken; trickled
/// candidates that arrive before the remote description wait here (within the same
/// limit); a trickled candidate must name an m-section of the remote description and
/// carry its ufrag (W3C `addIceCandidate`: another ICE generation is refused).
///
/// A value type with no lock: its owner (``PeerConnection``) keeps it under its lock.
/// Every refusal is ``PeerConnectionError/invalidCandidate(candidate:reason:)`` naming
/// the candidate and why.
struct RemoteCandidates {
    /// The most remote candidates one connection takes (from descriptions and trickle
    /// together; a browser sends a handful). Each becomes a candidate pair that libnice
    /// checks every 20 ms in turn, so thousands would keep the agent busy for minutes.
    static let maximum = 100

    /// The remote ufrag of the current remote description (nil before one, or when it
    /// carried none).
    var ufrag: String?
    private var keys: Set<String> = []
    private var pending: [IceCandidateInit] = []

    /// The candidates `description` carries for ICE (component 1 of the accepted
    /// m-sections, each once, in order) and whether it ends them: `a=end-of-candidates`,
    /// or candidates without `a=ice-options:trickle` (a vanilla peer sends them all at once).
    static func carried(by description: SessionDescription) -> (candidates: [Candidate], endOfCandidates: Bool) {
        var seen: Set<String> = []
        var candidates: [Candidate] = []
        for m in description.media where !m.isRejected {
            for c in m.candidates where c.component == 1 && seen.insert(c.sdpValue).inserted { candidates.append(c) }
        }
        let trickle = (description.iceOptions + description.media.flatMap(\.iceOptions)).contains("trickle")
        return (candidates, description.media.contains { $0.endOfCandidates } || (!candidates.isEmpty && !trickle))
    }

    /// Keeps `candidate`, trickled before the remote description, until it is set.
    mutating func hold(_ candidate: IceCandidateInit) throws(PeerConnectionError) {
        guard pending.count < Self.maximum else {
            throw .invalidCandidate(candidate: candidate.candidate,
                                    reason: "more than \(Self.maximum) candidates before the remote description: dropped")
        }
        pending.append(candidate)
    }

    /// The candidates held so far, in arrival order; none are held afterwards.
    mutating func takeHeld() -> [IceCandidateInit] {
        defer { pending = [] }
        return pending
    }

    /// Checks a trickled `candidate` against the remote description `remote`: its mid (or
    /// m-line index) must be one of the description's, its ufrag (when given) the current one.
    func check(_ candidate: IceCandidateInit, against remote: SessionDescription) throws(PeerConnectionError) {
        if let mid = candidate.sdpMid, !mid.isEmpty, !remote.media.contains(where: { $0.mid == mid }) {
            throw .invalidCandidate(candidate: candidate.candidate, reason: "unknown mid \"\(mid)\"")
        }
        if candidate.sdpMid == nil, let index = candidate.sdpMLineIndex, !(0..<remote.media.count).contains(index) {
            throw .invalidCandidate(candidate: candidate.candidate, reason: "no m-line \(index)")
        }
        if let given = candidate.usernameFragment, !given.isEmpty, let ufrag, given != ufrag {
            throw .invalidCandidate(candidate: candidate.candidate,
                                    reason: "usernameFragment \"\(given)\" is not the remote ufrag \"\(ufrag)\"")
        }
    }

    /// Whether `candidate` is new (true: it is recorded) or was taken before (false);
    /// throws when it would be one more than ``maximum``.
    mutating func firstSighting(_ candidate: Candidate) throws(PeerConnectionError) -> Bool {
        let key = "\(candidate.transport.lowercased()) \(candidate.address) \(candidate.port) \(candidate.type.rawValue)"
        guard !keys.contains(key) else { return false }
        guard keys.count < Self.maximum else {
            throw .invalidCandidate(candidate: candidate.sdpValue, reason: "more than \(Self.maximum) remote candidates: dropped")
        }
        keys.insert(key)
        return true
    }
}
