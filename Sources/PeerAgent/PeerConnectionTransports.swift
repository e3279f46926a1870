// PeerConnection's transports: the ICE agent and DTLS-SRTP transport it makes on first use (RFC 8445, RFC 5764), and their events on the loop thread.
import DTLS
import EventLoop
import ICE

extension PeerConnection {
    /// The ICE agent, made on first use with the given role. Never called with `state`
    /// held: making an agent waits for the event-loop thread, whose callbacks take it.
    func obtainAgent(controlling: Bool) throws -> IceAgent {
        if let existing = state.withLock({ s in s.agent }) { return existing }
        let box = WeakBox(self)
        let made: IceAgent
        do {
            made = try IceAgent(configuration.iceAgentConfiguration(controlling: controlling), loop: loop, onEvent: { event in box.value?.iceEvent(event) },
                                onReceive: { bytes in box.value?.transportReceive(bytes) })
        } catch {
            throw PeerConnectionError.setup("ICE agent: \(error)")
        }
        let madeTransport = DtlsSrtpTransport(
            send: { [made] datagram in made.send(datagram) }, certificate: certificate, loop: loop, dropInbound: configuration.inboundDropFilter,
            onState: { state, error in box.value?.dtlsChanged(state, error) },
            onRTP: { [weak plane] bytes in if box.value?.isOpen == true { plane?.receiveRTP(bytes) } },
            onRTCP: { [weak plane] bytes in plane?.receiveRTCP(bytes) })
        let creds = (made.localUfrag, made.localPwd)
        let winner: IceAgent? = state.withLock { s in
            if let agent = s.agent { return agent }
            s.agent = made
            s.transport = madeTransport
            s.credentials = creds
            return nil
        }
        if winner == nil { plane.attach(madeTransport) }
        if let winner {
            made.close()
            return winner
        }
        return made
    }

    // MARK: Callbacks (loop thread, `state` not held)

    /// An event of the ICE agent (loop thread): candidates, gathering, state, the selected pair.
    private func iceEvent(_ event: IceEvent) {
        var events: [PeerConnectionEvent] = []
        var startDTLS = false
        if case let .selectedPair(pair) = event {
            switch configuration.endToEndClock {
            // A relay candidate at one of our addresses is a TURN server here, not the peer.
            case .automatic: plane.setSameHost(pair.remote.type != .relay && HostAddresses.contains(pair.remote.address))
            case .shared: plane.setSameHost(true)
            case .senderReports: plane.setSameHost(false)
            }
        }
        state.withLock { s in
            guard !s.machine.isClosed else { return }
            switch event {
            case let .localCandidate(c):
                s.localCandidates.append(c)
                let mid = s.local?.media.first { !$0.isRejected }?.mid ?? "0"
                events.append(.localCandidate(IceCandidateInit(candidate: c.sdpValue, sdpMid: mid, sdpMLineIndex: 0,
                                                               usernameFragment: s.credentials.ufrag)))
            case .gatheringComplete:
                s.gathering = .complete
                let mid = s.local?.media.first { !$0.isRejected }?.mid ?? "0"
                events.append(.localCandidate(IceCandidateInit(candidate: "", sdpMid: mid, sdpMLineIndex: 0,
                                                               usernameFragment: s.credentials.ufrag)))
                events.append(.iceGatheringState(.complete))
            case let .state(newState):
                let (changed, first) = s.machine.iceChanged(newState, now: monotonicMs(), dtlsError: s.transport?.error.map { "\($0)" })
                events += changed
                startDTLS = first
            case let .selectedPair(pair):
                s.selectedPair = pair
            case let .remoteCandidateDropped(candidate, reason):
                events.append(.remoteCandidateDropped(candidate: candidate, reason: reason))
            case .gatheringFailed:
                events += s.machine.fail("ICE gathering found no usable candidate (policy \(configuration.iceTransportPolicy.rawValue): check the TURN server and its credentials)")
            }
        }
        emit(events)
        if startDTLS { maybeStartDTLS() }
    }

    /// Starts the DTLS handshake once ICE is connected and the answer is applied (either
    /// may come last; at most once), with the ``PeerConnectionConfiguration/dtlsTimeoutMs`` timer.
    func maybeStartDTLS() {
        // Claimed under the lock: setRemoteDescription (caller's thread) and the ICE event
        // (loop thread) may both get here; only one starts DTLS.
        let ready: (DtlsSrtpTransport, DTLSRole, [(algorithm: String, hex: String)], IceAgent?)? = state.withLock { s in
            guard !s.dtlsStarted, !s.machine.isClosed, s.machine.state != .failed, s.negotiated, let role = s.dtlsRole, let transport = s.transport,
                  s.machine.iceIsConnected else { return nil }
            s.dtlsStarted = true
            return (transport, role, s.remoteFingerprints, s.agent)
        }
        guard let (transport, role, prints, agent) = ready else { return }
        // A lost handshake flight is sent again after twice the ICE checks' round trip.
        let roundTripMs = agent?.roundTripMs
        do { try transport.start(role: role, remoteFingerprints: prints, roundTripMs: roundTripMs) } catch {
            fail("DTLS could not start: \(error)")
            return
        }
        let box = WeakBox(self)
        let timeout = configuration.dtlsTimeoutMs
        let id = loop.after(milliseconds: timeout) {
            guard let pc = box.value, pc.dtlsTransportState != .connected else { return }
            pc.fail("DTLS failed: the handshake did not complete within \(timeout) ms")
        }
        state.withLock { s in s.dtlsTimer = id }
    }

    /// A DTLS state change (loop thread); media starts on the first `connected`.
    private func dtlsChanged(_ newState: DTLSTransportState, _ error: DTLSError?) {
        var events: [PeerConnectionEvent] = []
        var startMedia = false
        state.withLock { s in
            guard !s.machine.isClosed else { return }
            let (changed, first) = s.machine.dtlsChanged(newState, error: error, now: monotonicMs())
            events += changed
            startMedia = first
        }
        emit(events)
        if startMedia { startMediaFlow() }
    }

    /// DTLS connected: the handshake timer is cancelled and the media plane starts (senders, RTCP timers).
    private func startMediaFlow() {
        let timer = state.withLock { s -> UInt32 in
            defer { s.dtlsTimer = 0 }
            return s.dtlsTimer
        }
        if timer != 0 { loop.cancelTimer(timer) }
        if let transport = state.withLock({ $0.transport }) { sctp.start(over: transport) }
        let box = WeakBox(self)
        plane.start(on: loop, minimumIntervalMs: configuration.rtcpMinimumIntervalMs,
                    isOpen: { box.value.map { $0.connectionState != .closed } ?? false },
                    senderFailed: { kind, error in box.value?.fail("\(kind) sender could not start: \(error)") })
    }

    /// A datagram from the selected pair (loop thread), for the DTLS-SRTP transport.
    private func transportReceive(_ bytes: [UInt8]) {
        state.withLock { s in s.transport }?.receive(bytes)
    }
}
