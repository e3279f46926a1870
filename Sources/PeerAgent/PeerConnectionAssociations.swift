// PeerConnection's negotiation outcome and DTLS associations: an answer applied, the first association's roles, a new association when the peer comes back with a new certificate through an ICE restart, and each handshake's start and deadline (RFC 8829 §5.10–5.11, RFC 8842 §5).
import DTLS
import EventLoop
import ICE
import SDP

extension PeerConnection {
    /// Applies the answer (ours or theirs) to the transceivers, the data section and the
    /// DTLS association; returns the events to emit. The first answer fixes the DTLS roles
    /// and the peer's fingerprint; later ones keep them (RFC 8842 §5.5) — unless the peer's
    /// description carries another certificate's fingerprint (the checks let that through
    /// only with an ICE restart): then a new association begins (``beginAssociationLocked``),
    /// the receivers expect new remote sources, and the transports are renewed once the
    /// lock is released (``renewTransportsIfNeeded()``).
    func negotiate(_ s: inout State, answer: SessionDescription, weAreOfferer: Bool) -> [PeerConnectionEvent] {
        let (offer, remoteSDP) = (weAreOfferer ? s.local : s.remote, weAreOfferer ? answer : s.remote)
        let prints = remoteSDP.map(Reoffer.fingerprints(of:)) ?? []
        var events: [PeerConnectionEvent] = []
        let renewing = s.association.isOtherCertificate(prints)
        let role = AnswerNegotiation.dtlsRole(answer: answer, weAreOfferer: weAreOfferer)
        if renewing {
            events += beginAssociationLocked(&s, role: role, remoteFingerprints: prints, offeredByUs: weAreOfferer)
        } else if s.association.role == nil {
            s.association.role = role
            s.association.remoteFingerprints = prints
        }
        let (media, receives) = plane.negotiate { transceivers, router in
            if renewing {
                // The peer's new process sends with new SSRCs, sequence numbers, timestamps.
                router.forgetLearnedRoutes()
                for t in transceivers { t.receiver.remoteSourceRestarted() }
            }
            return (AnswerNegotiation.apply(answer, offer: offer, remote: remoteSDP, to: transceivers,
                                            weAreOfferer: weAreOfferer, router: &router),
                    transceivers.contains { $0.currentDirection?.receives == true })
        }
        let data = sctp.negotiated(answer: answer, remote: remoteSDP, role: s.association.role)
        s.negotiated = true
        s.negotiations += 1
        s.currentLocal = weAreOfferer ? s.local : answer
        s.currentLocalType = weAreOfferer ? .offer : .answer
        s.currentRemote = weAreOfferer ? answer : s.remote
        // Media negotiated toward us arrives all the time (audio every 20 ms, RTCP every
        // second): then a silent path is reported `disconnected` within seconds.
        s.agent?.setExpectsTraffic(receives)
        if !media.remaps.isEmpty { events.append(.remapped(media.remaps.joined(separator: "; "))) }
        if data, !renewing, let transport = s.transport { sctp.start(over: transport) }
        guard media.accepted == 0, !data else { return events + media.tracks }
        return events + media.tracks + s.machine.fail(media.rejections.isEmpty ? "no m-section was accepted" : media.rejections.joined(separator: "; "))
    }

    /// Begins a new DTLS association (RFC 8829 §5.11, RFC 8842 §5): our `role` in it, the
    /// peer's new `remoteFingerprints`; the transports are renewed for it, the old deadline
    /// cancelled and the new association reported once the lock is released
    /// (``renewTransportsIfNeeded()``, with what a renewal still pending had to do). Returns
    /// the events: the DTLS transport is `new` again (the connection `connecting`).
    private func beginAssociationLocked(_ s: inout State, role: DTLSRole, remoteFingerprints: [Fingerprint],
                                        offeredByUs: Bool) -> [PeerConnectionEvent] {
        let old = s.association
        s.association = DtlsAssociation(generation: old.generation + 1, role: role, remoteFingerprints: remoteFingerprints,
                                        iceRestarts: s.iceRestarts, transportGeneration: nil)
        func text(_ f: Fingerprint?) -> String { f.map { "\($0.algorithm) \($0.value)" } ?? "" }
        let restart = DtlsRestart(fingerprint: text(remoteFingerprints.first), previousFingerprint: text(old.remoteFingerprints.first),
                                  role: role == .client ? "client" : "server", generation: s.association.generation,
                                  offeredByUs: offeredByUs)
        // A renewal not begun yet is taken over (its timers cancelled, its report made); one
        // under way has taken its own, and renews again for this one when it is done.
        let earlier = s.pendingRenewal.flatMap { $0.underway ? nil : $0 }
        s.pendingRenewal = TransportRenewal(generation: s.association.generation,
                                            timers: (earlier?.timers ?? []) + (old.timer != 0 ? [old.timer] : []),
                                            restarts: (earlier?.restarts ?? []) + [restart])
        return s.machine.dtlsRenewed(now: monotonicMs())
    }

    /// After a new association began (lock released, caller's thread): the old handshake's
    /// deadline is cancelled, the DTLS-SRTP transport drops the old association and its
    /// SRTP sessions (``DtlsSrtpTransport/beginNewAssociation()``), and the SCTP association
    /// ends with it, its channels closed (``SctpTransport/restart()``). Only then is the
    /// renewal done — until then no handshake starts, which would start the old association
    /// — and reported: ``PeerConnectionEvent/dtlsRestarted(_:)``, then each channel
    /// `closed`; so a handler of that event makes its channels on the new association. The
    /// new handshake starts when the restarted ICE has a pair (``maybeStartDTLS()``, called
    /// here: the pair may have come during the renewal). Nothing once the connection closed.
    func renewTransportsIfNeeded() {
        while let (renewal, transport) = state.withLock({ s -> (TransportRenewal, DtlsSrtpTransport?)? in
            guard var r = s.pendingRenewal, !r.underway, !s.machine.isClosed else { return nil }
            r.underway = true
            s.pendingRenewal = r
            return (r, s.transport)
        }) {
            for timer in renewal.timers { loop.cancelTimer(timer) }
            configuration.beforeTransportRenewal?()
            let generation = transport?.beginNewAssociation()
            let closed = sctp.restart()
            let open = state.withLock { s -> Bool in
                // Done, unless another association began meanwhile: the loop renews for it.
                if s.pendingRenewal?.generation == renewal.generation {
                    s.pendingRenewal = nil
                    s.association.transportGeneration = generation
                }
                return !s.machine.isClosed
            }
            if open { emit(renewal.restarts.map { .dtlsRestarted($0) } + closed.map { .dataChannel(.state($0, .closed)) }) }
        }
        maybeStartDTLS()
    }

    /// Starts the DTLS handshake of the association in use once ICE is connected and the
    /// answer is applied (either may come last; at most once per association), with the
    /// ``PeerConnectionConfiguration/dtlsTimeoutMs`` deadline. A new association's
    /// handshake waits for a pair selected after the ICE restart that came with it (the
    /// old pair led to the old peer) and for the transports' renewal.
    func maybeStartDTLS() {
        // Claimed under the lock: setRemoteDescription (caller's thread) and the ICE event
        // (loop thread) may both get here; only one starts DTLS.
        let ready: (DtlsSrtpTransport, DTLSRole, [(algorithm: String, hex: String)], Int, IceAgent?)? = state.withLock { s in
            let a = s.association
            guard !a.started, !s.machine.isClosed, s.machine.state != .failed, s.negotiated, s.pendingRenewal == nil,
                  let role = a.role, let transport = s.transport, s.machine.iceIsConnected,
                  a.generation == 0 || s.pairSelectedAfterRestarts >= a.iceRestarts else { return nil }
            s.association.started = true
            return (transport, role, a.remoteFingerprints.map { ($0.algorithm, $0.value) }, a.generation, s.agent)
        }
        guard let (transport, role, prints, generation, agent) = ready else { return }
        // A lost handshake flight is sent again after twice the ICE checks' round trip
        // (IceAgent.roundTripMs; 100 ms when unknown, never under 50 ms).
        let roundTripMs = agent?.roundTripMs
        let started: Bool
        do { started = try transport.start(role: role, remoteFingerprints: prints, roundTripMs: roundTripMs) } catch {
            fail("DTLS could not start: \(error)")
            return
        }
        guard started else {
            // The transport dropped this start (its association was replaced meanwhile):
            // the claim is undone, for the start that comes with the renewal.
            state.withLock { s in if s.association.generation == generation { s.association.started = false } }
            return
        }
        let box = WeakBox(self)
        let timeout = configuration.dtlsTimeoutMs
        let id = loop.after(milliseconds: timeout) {
            guard let pc = box.value, pc.state.withLock({ $0.association.generation }) == generation,
                  pc.dtlsTransportState != .connected else { return }
            pc.fail("DTLS failed: the handshake did not complete within \(timeout) ms")
        }
        let stale = state.withLock { s -> Bool in
            guard s.association.generation == generation else { return true }
            s.association.timer = id
            return false
        }
        if stale { loop.cancelTimer(id) }
    }

    /// A new association's handshake completed (loop thread): its deadline is cancelled, a
    /// new SCTP association starts over it (the data section was negotiated), and every
    /// video sender sends a key frame, so the peer's new decoder starts at once.
    func associationConnected(timer: UInt32, transport: DtlsSrtpTransport) {
        if timer != 0 { loop.cancelTimer(timer) }
        sctp.start(over: transport)
        plane.requestKeyFrames()
    }
}
