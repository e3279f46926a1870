// PeerConnection's remote candidates: W3C addIceCandidate (RFC 8838 trickle), held before the remote description, each taken once and at most 100.
import ICE
import SDP

extension PeerConnection {
    /// Adds a trickled remote candidate (W3C `addIceCandidate`); an empty candidate is
    /// end-of-candidates (RFC 8838 §4.1). Candidates arriving before the remote
    /// description are kept until it is set.
    /// - Throws: ``PeerConnectionError/invalidCandidate(candidate:reason:)`` for a line that does
    ///   not parse, an unknown mid, or one libnice refuses; the connection goes on.
    public func addIceCandidate(_ candidate: IceCandidateInit) throws {
        let usable: IceAgent? = try state.withLock { s in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            guard let remote = s.remote, let agent = s.agent else {
                try s.remoteCandidates.hold(candidate)
                return nil
            }
            try s.remoteCandidates.check(candidate, against: remote)
            return agent
        }
        guard let agent = usable else { return }
        if candidate.isEndOfCandidates {
            agent.endOfRemoteCandidates()
            return
        }
        let parsed: Candidate
        do { parsed = try Candidate(parsing: candidate.candidate) } catch {
            throw PeerConnectionError.invalidCandidate(candidate: candidate.candidate, reason: "\(error)")
        }
        guard parsed.component == 1 else { return }  // rtcp-mux: component 2 is never used
        guard try firstSighting(parsed) else { return }
        do { try agent.addRemoteCandidate(parsed) } catch {
            throw PeerConnectionError.invalidCandidate(candidate: candidate.candidate, reason: "\(error)")
        }
    }

    /// The most remote candidates one connection takes (``RemoteCandidates/maximum``: 100).
    public static let maximumRemoteCandidates = RemoteCandidates.maximum

    /// ``RemoteCandidates/firstSighting(_:)`` under the lock.
    func firstSighting(_ c: Candidate) throws -> Bool {
        try state.withLock { s in try s.remoteCandidates.firstSighting(c) }
    }
}
