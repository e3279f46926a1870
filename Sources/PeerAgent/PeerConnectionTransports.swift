// PeerConnection's transports: the ICE agent and DTLS-SRTP transport it makes on first use (RFC 8445, RFC 5764), and their events on the loop thread (the DTLS associations in PeerConnectionAssociations.swift).
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
            onState: { state, error, generation in box.value?.dtlsChanged(state, error, generation: generation) },
            onRTP: { [weak plane] bytes in if box.value?.isOpen == true { plane?.receiveRTP(bytes) } },
            onRTCP: { [weak plane] bytes in plane?.receiveRTCP(bytes) }, logTag: configuration.logTag)
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
                let (changed, _) = s.machine.iceChanged(newState, now: monotonicMs(), dtlsError: s.transport?.error.map { "\($0)" })
                events += changed
                startDTLS = s.machine.iceIsConnected  // (maybeStartDTLS starts each association once)
            case let .selectedPair(pair):
                s.selectedPair = pair
                s.pairSelectedAfterRestarts = s.iceRestarts
                startDTLS = s.machine.iceIsConnected
            case let .remoteCandidateDropped(candidate, reason):
                events.append(.remoteCandidateDropped(candidate: candidate, reason: reason))
            case .gatheringFailed:
                events += s.machine.fail("ICE gathering found no usable candidate (policy \(configuration.iceTransportPolicy.rawValue): check the TURN server and its credentials)")
            }
        }
        emit(events)
        if startDTLS { maybeStartDTLS() }
    }

    /// A DTLS state change (loop thread) of the transport's association `generation`; media
    /// starts on the first `connected`, and a new association's `connected` brings the data
    /// channels and key frames back (``associationConnected(timer:transport:)``). A change
    /// of an association replaced meanwhile (its late `connected`, or anything before the
    /// transport was renewed for the new one) is ignored.
    private func dtlsChanged(_ newState: DTLSTransportState, _ error: DTLSError?, generation: Int) {
        var events: [PeerConnectionEvent] = []
        var startMedia = false
        var renewed: (UInt32, DtlsSrtpTransport)?
        state.withLock { s in
            guard !s.machine.isClosed, s.association.transportGeneration == generation else { return }
            let (changed, first) = s.machine.dtlsChanged(newState, error: error, now: monotonicMs())
            events += changed
            startMedia = first
            if newState == .connected, !first, s.association.generation > 0, let transport = s.transport {
                renewed = (s.association.timer, transport)
                s.association.timer = 0
            }
        }
        emit(events)
        if startMedia { startMediaFlow() }
        if let (timer, transport) = renewed { associationConnected(timer: timer, transport: transport) }
    }

    /// DTLS connected: the handshake timer is cancelled and the media plane starts (senders, RTCP timers).
    private func startMediaFlow() {
        let timer = state.withLock { s -> UInt32 in
            defer { s.association.timer = 0 }
            return s.association.timer
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
