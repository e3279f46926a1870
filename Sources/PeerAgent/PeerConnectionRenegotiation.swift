// PeerConnection's renegotiation: negotiation needed, ICE restart, rollback, tracks the peer adds or stops, the candidates re-trickled after a restart (RFC 8829 §5.2.2, §5.3.2, §5.7; W3C webrtc-pc §4.4.1.6).
import SDP

extension PeerConnection {
    /// The number of completed offer/answer exchanges: 0 before the first answer is
    /// applied, then one more for each renegotiation.
    public var negotiationCount: Int { state.withLock { $0.negotiations } }

    /// W3C "check if negotiation is needed" (webrtc-pc §4.7.3), in `stable`: true when an
    /// ICE restart is wanted, when there are data channels and no data section yet, when a
    /// transceiver has no m-section yet (before the first offer too: a new connection's
    /// tracks need one), is stopping, or its ``RtpTransceiver/direction`` differs from
    /// what the current descriptions say — after our offer, from the direction we offered
    /// (or the answer's, reversed); after our answer, from our wish intersected with the
    /// offered direction (RFC 8829 §5.3.1). False in any other signaling state.
    public var isNegotiationNeeded: Bool {
        state.withLock { s in s.signaling == .stable && negotiationNeededLocked(s) }
    }

    /// The W3C check itself (the signaling state aside).
    private func negotiationNeededLocked(_ s: State) -> Bool {
        guard !s.machine.isClosed else { return false }
        if s.iceRestartWanted { return true }
        let local = s.currentLocal
        // A first data channel needs a data section (W3C createDataChannel, step 19).
        if sctp.wantsSection, local?.media.contains(where: { $0.kind == .application && !$0.isRejected }) != true { return true }
        for t in plane.transceivers {
            guard let mid = t.mid, let ours = local?.media.first(where: { $0.mid == mid }), !ours.isRejected else {
                if t.mid == nil, !t.isStopping { return true }
                continue
            }
            if t.isStopping { return true }  // stopped, its section not yet port 0
            let wish = t.direction
            if s.currentLocalType == .offer {
                let theirs = s.currentRemote?.media.first { $0.mid == mid }?.effectiveDirection.reversed
                if ours.effectiveDirection != wish && theirs != wish { return true }
            } else if let offered = s.currentRemote?.media.first(where: { $0.mid == mid })?.effectiveDirection {
                let wanted = Direction(sends: wish.sends && offered.receives, receives: wish.receives && offered.sends)
                if ours.effectiveDirection != wanted { return true }
            }
        }
        return false
    }

    /// W3C `restartIce()` (RFC 8445 §9, RFC 8829 §5.2.2): the next offer carries a new ICE
    /// ufrag and pwd; when its answer (with the peer's new ones) is applied, libnice
    /// restarts the checks with the same local candidates, which go out again with the new
    /// ufrag. The DTLS association and SRTP keys stay — unless the answer comes with a new
    /// certificate (``PeerConnectionEvent/dtlsRestarted(_:)``). Emits
    /// ``PeerConnectionEvent/negotiationNeeded``.
    public func restartIce() {
        state.withLock { $0.iceRestartWanted = true }
        updateNegotiationNeeded()
    }

    /// W3C "update the negotiation-needed flag" (webrtc-pc §4.7.3): nothing outside
    /// `stable` (the check runs again when the connection is back there); the flag is
    /// cleared when nothing is needed; otherwise ``PeerConnectionEvent/negotiationNeeded``
    /// is emitted when the flag was clear — or, `afterNegotiation` (a description set or
    /// rolled back, the connection now `stable`), when it is still needed, as W3C fires it
    /// again then.
    func updateNegotiationNeeded(afterNegotiation: Bool = false) {
        let fire = state.withLock { s -> Bool in
            guard s.signaling == .stable, !s.machine.isClosed else { return false }
            guard negotiationNeededLocked(s) else {
                s.negotiationNeededFlag = false
                return false
            }
            defer { s.negotiationNeededFlag = true }
            return afterNegotiation || !s.negotiationNeededFlag
        }
        if fire { emit([.negotiationNeeded]) }
    }

    /// Makes a `recvonly` transceiver for each audio or video m-section of `offer` (in use,
    /// with our codec) that no transceiver takes — none has its mid, none of its kind is
    /// free — when ``receiveOptionsForAddedTracks`` gives it receive options; its mid is
    /// set at once, so the answer pairs them (W3C `setRemoteDescription`, JSEP §5.10).
    func addTransceivers(forTracksIn offer: SessionDescription) {
        guard let options = receiveOptionsForAddedTracks else { return }
        var free = plane.transceivers.filter { $0.mid == nil }
        for m in offer.media where !m.isRejected && m.isRTP && (m.kind == .audio || m.kind == .video) {
            guard let mid = m.mid, !plane.transceivers.contains(where: { $0.mid == mid }) else { continue }
            if let i = free.firstIndex(where: { $0.kind == m.kind }) {
                free.remove(at: i)
                continue
            }
            let codec = m.kind == .video ? "vp8" : "opus"
            guard m.payloads.contains(where: { $0.name?.lowercased() == codec }), let receive = options(m.kind, mid) else { continue }
            let t = makeTransceiver(m.kind, direction: .recvonly, receive: receive)
            t.mid = mid
        }
    }

    /// Closes the receiver and sender of each transceiver whose m-section the last answer
    /// stopped (port 0) after it was in use, so its recording is complete now (RFC 8829
    /// §5.2.2: a stopped section is never used again). Not with the state lock held: the
    /// receiver waits for its sink thread.
    func closeStoppedTransceivers() {
        let stopped = state.withLock { s -> [RtpTransceiver] in
            guard s.negotiations > 1, let local = s.currentLocal else { return [] }
            return plane.transceivers.filter { t in
                guard let mid = t.mid, t.currentDirection == .inactive else { return false }
                return local.media.first { $0.mid == mid }?.port == 0
            }
        }
        for t in stopped where !t.isStopped {
            t.isStopped = true
            t.sender.stop()
            t.receiver.close()
        }
    }

    /// Rolls back our pending offer (W3C `setLocalDescription({type: "rollback"})`, RFC 8829
    /// §5.7): the local description returns to the current one and the state to `stable`;
    /// nothing the offer said took effect (directions change only with an answer). Sections
    /// the offer added lose their mid. A pending remote offer is rolled back the same way.
    /// - Throws: ``PeerConnectionError/invalidState(operation:state:)`` in `stable`.
    public func rollback() throws {
        let events = try state.withLock { s -> [PeerConnectionEvent] in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            return try rollbackLocked(&s)
        }
        emit(events)
        updateNegotiationNeeded(afterNegotiation: true)  // the rolled-back change is still wanted (W3C §4.7.3)
    }

    /// The rollback itself, under the lock; returns its events.
    /// - Throws: ``PeerConnectionError/invalidState(operation:state:)`` unless have-local-offer or have-remote-offer.
    func rollbackLocked(_ s: inout State) throws(PeerConnectionError) -> [PeerConnectionEvent] {
        switch s.signaling {
        case .haveLocalOffer:
            s.offeredCredentials = nil
            s.local = s.currentLocal
            s.localType = s.currentLocalType
            let kept = Set(s.currentLocal?.media.compactMap(\.mid) ?? [])
            for t in plane.transceivers where t.mid.map({ !kept.contains($0) }) == true { t.mid = nil }
            sctp.rolledBack(keeping: kept)
        case .haveRemoteOffer:
            s.remote = s.currentRemote
            s.remoteType = s.currentLocalType == .offer ? .answer : .offer
            sctp.rolledBack(keeping: Set(s.currentLocal?.media.compactMap(\.mid) ?? []))
        default:
            throw PeerConnectionError.invalidState(operation: "rollback", state: s.signaling.rawValue)
        }
        s.signaling = .stable
        return [.signalingState(.stable)]
    }

    /// Our candidates again, with the current (restarted) ufrag, and end-of-candidates
    /// when gathering is complete: what the peer's restarted agent checks against.
    func retrickledLocked(_ s: State) -> [PeerConnectionEvent] {
        let mid = s.local?.media.first { !$0.isRejected }?.mid ?? "0"
        var events = s.localCandidates.map { c in
            PeerConnectionEvent.localCandidate(IceCandidateInit(candidate: c.sdpValue, sdpMid: mid, sdpMLineIndex: 0,
                                                                usernameFragment: s.credentials.ufrag))
        }
        if s.gathering == .complete {
            events.append(.localCandidate(IceCandidateInit(candidate: "", sdpMid: mid, sdpMLineIndex: 0, usernameFragment: s.credentials.ufrag)))
        }
        return events
    }
}
