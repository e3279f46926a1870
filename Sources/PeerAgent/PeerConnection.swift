// RTCPeerConnection: the JSEP state machine (RFC 8829) and lifecycle over one ICE agent and one DTLS-SRTP transport (RFC 8843 BUNDLE).
import DTLS
import Dispatch
import EventLoop
import Hub
import Foundation
import Synchronization
import ICE
import Media
import RTP
import SDP

/// A WebRTC peer connection modelled on W3C `RTCPeerConnection`: JSEP offer/answer
/// (RFC 8829) over the SDP module, one ICE agent (libnice) and one DTLS-SRTP
/// transport for the BUNDLE group (RFC 8843, rtcp-mux), VP8 and Opus senders and
/// receivers, RTCP (SR/RR about once a second, PLI/FIR, NACK, BYE), and W3C stats.
///
/// Threading: methods may be called from any thread except the event-loop thread's
/// own callbacks for ``close()`` (it waits for that thread). Events arrive on the
/// event-loop thread, in order. State is behind one `Mutex` (`state`), held for its own
/// fields and, while an answer is applied, the media plane's (lock order: this, then the
/// plane's, then a transceiver's or receiver's).
///
/// Failure times: ICE `failed` after ``PeerConnectionConfiguration/iceCheckingTimeoutMs``
/// (30 s) without a working pair; DTLS `failed` at once on a fingerprint mismatch
/// (bad_certificate alert) or after ``PeerConnectionConfiguration/dtlsTimeoutMs`` (30 s);
/// no common codec fails when the answer is applied.
public final class PeerConnection: Sendable {
    /// The configuration given at init.
    public let configuration: PeerConnectionConfiguration
    /// The loop whose thread runs the ICE agent, the DTLS transport and the events.
    let loop: EventLoop
    private let onEvent: @Sendable (PeerConnectionEvent) -> Void
    /// Our DTLS certificate (its fingerprint goes in every description).
    let certificate: Certificate
    private let fingerprint: Fingerprint
    private let cname = randomIceChars(16)
    /// The transceivers, BUNDLE routing and RTCP of the connection.
    let plane: MediaPlane
    /// The data channels and their SCTP association (W3C `sctp`).
    public let sctp: SctpTransport
    private let streamId = UUID().uuidString.lowercased()
    private let sessionId = UInt64.random(in: 1..<(1 << 62))
    /// The connection's state (JSEP, ICE/DTLS progress, the agent and transport), behind
    /// one `Mutex` held only for its own fields.
    let state: Mutex<State>
    /// Where the receiver of a track the peer adds goes (``receiveOptionsForAddedTracks``).
    private let addedTracks = Mutex<(@Sendable (MediaKind, String) -> ReceiveOptions?)?>(nil)

    /// What ``state`` holds.
    struct State {
        var agent: IceAgent?
        var transport: DtlsSrtpTransport?
        var isOfferer: Bool?
        var signaling: SignalingState = .stable
        /// The latest local and remote descriptions (pending or current) and their types.
        var local: SessionDescription?
        var localType: SdpType?
        var remote: SessionDescription?
        var remoteType: SdpType?
        /// The descriptions of the last completed offer/answer (W3C
        /// `currentLocalDescription`, `currentRemoteDescription`): what a subsequent offer
        /// keeps, a re-offer is checked against and a rollback returns to.
        var currentLocal: SessionDescription?
        var currentLocalType: SdpType?
        var currentRemote: SessionDescription?
        /// How many offer/answer exchanges completed (1 after the first).
        var negotiations = 0
        /// ``PeerConnection/restartIce()`` was called: the next offer carries new credentials.
        var iceRestartWanted = false
        /// The new ufrag/pwd our pending offer carries (taken by libnice when its answer comes).
        var offeredCredentials: (ufrag: String, pwd: String)?
        /// After an ICE restart, our candidates go out again with the new ufrag once our
        /// description carrying it is set (answerer) or answered (offerer).
        var retrickle = false
        var localCandidates: [Candidate] = []
        var gathering: IceGatheringState = .new
        var machine: ConnectionStateMachine
        var negotiated = false
        /// The DTLS association in use (or beginning): roles, fingerprints, handshake start.
        var association = DtlsAssociation()
        /// Our `a=setup` in the DTLS association in use (`active` for its client), once
        /// the first answer fixed the roles (RFC 8842 §5.5).
        var establishedSetup: Setup? { association.setup }
        /// A new association began (``DtlsAssociation``) and the transports still hold the
        /// old one: what to do once the lock is released.
        var pendingRenewal: TransportRenewal?
        /// ICE restarts applied, and their count when the last pair was selected: a new
        /// association's handshake waits for a pair selected after its restart.
        var iceRestarts = 0, pairSelectedAfterRestarts = -1
        var selectedPair: IceCandidatePair?
        /// The `o=` version of our descriptions (RFC 3264 §8: raised by each one set).
        var version = SessionVersion()
        /// W3C `[[NegotiationNeeded]]`: `negotiationneeded` was fired and not yet cleared.
        var negotiationNeededFlag = false
        var credentials: (ufrag: String, pwd: String) = ("", "")
        /// True once ``close()`` ran (the state may also be `closed` because the peer closed).
        var closedLocally = false
        /// Remote candidates taken, held and checked (with the remote ufrag).
        var remoteCandidates = RemoteCandidates()
    }

    /// Creates a connection (no network activity until a description is set).
    /// - Throws: ``PeerConnectionError/setup(_:)`` when the certificate cannot be made.
    public init(configuration: PeerConnectionConfiguration = PeerConnectionConfiguration(), loop: EventLoop = .shared,
                onEvent: @escaping @Sendable (PeerConnectionEvent) -> Void) throws {
        self.configuration = configuration
        plane = MediaPlane(cname: cname)
        state = Mutex(State(machine: ConnectionStateMachine(iceCheckingTimeoutMs: configuration.iceCheckingTimeoutMs)))
        self.loop = loop
        self.onEvent = onEvent
        let box = Mutex<WeakBox<PeerConnection>?>(nil)
        sctp = SctpTransport(loop: loop) { event in box.withLock { $0 }?.value?.emit([.dataChannel(event)]) }
        do {
            certificate = try configuration.certificate ?? Certificate.shared()
            fingerprint = Fingerprint(algorithm: "sha-256", value: try certificate.fingerprint())
        } catch {
            throw PeerConnectionError.setup("DTLS certificate: \(error)")
        }
        box.withLock { $0 = WeakBox(self) }
    }

    deinit {
        // Owners should call close(); make sure libnice lets go in any case.
        state.withLock { $0.agent }?.close()
    }

    // MARK: Transceivers

    /// Adds a transceiver (W3C `addTransceiver`): its m-section comes with the next offer
    /// (or, before the first offer, the answer to the peer's offer takes it). It raises
    /// ``PeerConnectionEvent/negotiationNeeded`` when the connection is `stable` and the
    /// flag was clear (W3C "update the negotiation-needed flag"; also before the first
    /// offer, where a new connection's first transceiver raises it).
    /// - Parameters:
    ///   - kind: `.audio` or `.video`.
    ///   - direction: what we want: sendrecv, sendonly, recvonly or inactive.
    ///   - video: the video source when sending video (nil sends nothing).
    ///   - audio: the audio source when sending audio.
    ///   - encoding: bitrates and codec settings for what we send.
    ///   - receive: files and decoding for what we receive.
    @discardableResult
    public func addTransceiver(_ kind: MediaKind, direction: Direction = .sendrecv, video: VideoSource? = nil,
                               audio: AudioSource? = nil, encoding: SendEncoding = SendEncoding(),
                               receive: ReceiveOptions = ReceiveOptions()) -> RtpTransceiver {
        let t = makeTransceiver(kind, direction: direction, video: video, audio: audio, encoding: encoding, receive: receive)
        updateNegotiationNeeded()
        return t
    }

    /// Adds a transceiver (as ``addTransceiver(_:direction:video:audio:encoding:receive:)``)
    /// whose sender sends `spec` from the configuration's ``PeerConnectionConfiguration/mediaHub``:
    /// the hub's one source and encoder for every connection sending `spec`; this sender
    /// adds its RTP header and SRTP on the connection's loop, with no thread or encoder of
    /// its own (see ``HubSenderFeed``). `encoding` gives the stats' target bitrate; the
    /// hub's encoding is the spec's.
    /// - Throws: ``PeerConnectionError/setup(_:)`` when no hub is configured, or `spec`'s
    ///   kind is not `kind`.
    @discardableResult
    public func addTransceiver(_ kind: MediaKind, direction: Direction = .sendrecv, shared spec: HubSourceSpec,
                               encoding: SendEncoding = SendEncoding(), receive: ReceiveOptions = ReceiveOptions()) throws -> RtpTransceiver {
        guard let hub = configuration.mediaHub else {
            throw PeerConnectionError.setup("a shared source (\(spec)) needs PeerConnectionConfiguration.mediaHub")
        }
        guard (kind == .video) == spec.isVideo, kind == .video || kind == .audio else {
            throw PeerConnectionError.setup("shared source \(spec) cannot be sent on a \(kind) transceiver")
        }
        let t = makeTransceiver(kind, direction: direction, encoding: encoding, receive: receive, shared: (hub, spec))
        updateNegotiationNeeded()
        return t
    }

    /// ``addTransceiver(_:direction:video:audio:encoding:receive:)`` without the
    /// negotiation-needed update: for a track the peer's offer adds, which that offer's
    /// answer negotiates. `shared` makes the sender take its frames from the hub.
    func makeTransceiver(_ kind: MediaKind, direction: Direction, video: VideoSource? = nil, audio: AudioSource? = nil,
                         encoding: SendEncoding = SendEncoding(), receive: ReceiveOptions,
                         shared: (hub: MediaHub, spec: HubSourceSpec)? = nil) -> RtpTransceiver {
        let ssrc = UInt32.random(in: 1...UInt32.max)
        let sender = RtpSender(kind: kind, ssrc: ssrc, cname: cname, encoding: encoding,
                               video: kind == .video ? video : nil, audio: kind == .audio ? audio : nil,
                               shared: shared.map { ($0.hub, $0.spec, loop) }, logTag: configuration.logTag)
        let box = WeakBox(self)
        let receiver = RtpReceiver(kind: kind, options: receive, localSSRC: ssrc, onEvent: { box.value?.emit([$0]) },
                                   onFirstWritten: { at in box.value?.emit([.firstRemoteFrameWritten(at: at)]) })
        let t = RtpTransceiver(kind: kind, direction: direction, sender: sender, receiver: receiver,
                               directionChanged: { box.value?.updateNegotiationNeeded() })
        plane.add(t)
        return t
    }

    /// The transceivers, in the order added.
    public var allTransceivers: [RtpTransceiver] { plane.transceivers }

    /// What to do with a track the peer adds (W3C: `setRemoteDescription` makes a
    /// `recvonly` transceiver for an offered m-section no transceiver takes): called with
    /// the kind and mid of each such audio or video section; the receive options it
    /// returns (files, decoding) go to the new transceiver's receiver, nil rejects the
    /// section (port 0). Unset: every such section is rejected.
    public var receiveOptionsForAddedTracks: (@Sendable (MediaKind, String) -> ReceiveOptions?)? {
        get { addedTracks.withLock { $0 } }
        set { addedTracks.withLock { $0 = newValue } }
    }

    // MARK: State

    /// False once closed, by us or by the peer (DTLS close_notify): RTP is not taken then.
    var isOpen: Bool { state.withLock { s in !s.machine.isClosed } }
    /// The W3C connection state.
    public var connectionState: PeerConnectionState { state.withLock { s in s.machine.state } }
    /// Why the connection failed, when it did.
    public var failureReason: String? { state.withLock { s in s.machine.failure } }
    /// True when the peer ended the connection (DTLS close_notify) before ``close()``.
    public var closedByPeer: Bool { state.withLock { s in s.machine.isClosed && !s.closedLocally } }
    /// The ICE connection state.
    public var iceConnectionState: IceConnectionState { state.withLock { s in s.machine.ice } }
    /// The ICE gathering state.
    public var iceGatheringState: IceGatheringState { state.withLock { s in s.gathering } }
    /// The signaling state.
    public var signalingState: SignalingState { state.withLock { s in s.signaling } }
    /// The DTLS transport state.
    public var dtlsTransportState: DTLSTransportState { state.withLock { s in s.machine.dtls } }
    /// The ICE role of our agent, as W3C `RTCIceTransport.role`: `unknown` before the
    /// agent exists, then `controlling` (the offerer, or either side facing an ICE-lite
    /// peer, RFC 8445 §6.1.1) or `controlled`.
    public var iceRole: String {
        guard let agent = state.withLock({ s in s.agent }) else { return "unknown" }
        return agent.controlling ? "controlling" : "controlled"
    }

    // MARK: Offer / answer

    /// Creates an offer with one m-section per transceiver, BUNDLE, rtcp-mux,
    /// `a=setup:actpass`, our SSRCs, CNAME and msid: a first one (JSEP §5.2.1, audio first),
    /// or a subsequent one (§5.2.2) keeping the sections, mids, payload types and
    /// header-extension ids of the current negotiation, each with its transceiver's
    /// ``RtpTransceiver/direction``.
    /// - Throws: ``PeerConnectionError/invalidState(operation:state:)`` unless stable or
    ///   have-local-offer; ``PeerConnectionError/setup(_:)`` when the ICE agent cannot be made.
    public func createOffer() throws -> SessionDescriptionInit {
        try state.withLock { s in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            guard s.signaling == .stable || s.signaling == .haveLocalOffer else {
                throw PeerConnectionError.invalidState(operation: "createOffer", state: s.signaling.rawValue)
            }
            if s.isOfferer == nil { s.isOfferer = true }
        }
        _ = try obtainAgent(controlling: true)
        return state.withLock { s in
            var options = optionsLocked(s)
            if s.iceRestartWanted, s.negotiations > 0 {
                if s.offeredCredentials == nil { s.offeredCredentials = (randomIceChars(8), randomIceChars(24)) }
            }
            if let fresh = s.offeredCredentials { (options.iceUfrag, options.icePwd) = fresh }
            var offer = JSEP.createOffer(options, previous: s.currentLocal)
            offer.origin.sessionVersion = String(s.version.version(for: offer))
            // Sections new in this offer go to the transceivers without a mid, by kind.
            let transceivers = plane.transceivers
            for m in offer.media where !m.isRejected {
                guard let mid = m.mid, !transceivers.contains(where: { $0.mid == mid }) else { continue }
                transceivers.first { $0.kind == m.kind && $0.mid == nil }?.mid = mid
            }
            sctp.offered(offer)
            return SessionDescriptionInit(type: .offer, sdp: offer.serialized())
        }
    }

    /// Creates the answer (JSEP §5.3.1) to the remote offer: codecs intersected (Opus,
    /// VP8), directions, rejected sections with port 0, BUNDLE, `a=setup:active`.
    /// - Throws: ``PeerConnectionError/invalidState(operation:state:)`` unless have-remote-offer;
    ///   ``PeerConnectionError/invalidDescription(_:)`` when the offer cannot be answered.
    public func createAnswer() throws -> SessionDescriptionInit {
        try state.withLock { s in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            guard s.signaling == .haveRemoteOffer, let remote = s.remote, s.agent != nil else {
                throw PeerConnectionError.invalidState(operation: "createAnswer", state: s.signaling.rawValue)
            }
            do {
                var options = optionsLocked(s)
                // An offer with the peer's new certificate begins a new DTLS association:
                // its roles are chosen anew (RFC 8842 §5.3), not kept.
                if s.association.isOtherCertificate(Reoffer.fingerprints(of: remote)) { options.establishedSetup = nil }
                var answer = try JSEP.createAnswer(to: remote, options)
                answer.origin.sessionVersion = String(s.version.version(for: answer))
                return SessionDescriptionInit(type: .answer, sdp: answer.serialized())
            } catch {
                throw PeerConnectionError.invalidDescription("\(error)")
            }
        }
    }

    /// Sets our description (JSEP §5.5): starts gathering; an answer completes the
    /// negotiation (DTLS role from our `a=setup`, payload types, mids, SSRCs) — a
    /// subsequent one also starts, pauses or resumes each sender for its new direction.
    /// - Throws: ``PeerConnectionError/invalidDescription(_:)`` for SDP that does not parse,
    ///   ``PeerConnectionError/invalidState(operation:state:)`` for the wrong type now,
    ///   ``PeerConnectionError/setup(_:)`` when gathering cannot start.
    public func setLocalDescription(_ description: SessionDescriptionInit) throws {
        var events: [PeerConnectionEvent] = []
        let controlling = state.withLock { s -> Bool in
            if s.isOfferer == nil { s.isOfferer = description.type == .offer }
            return s.isOfferer ?? true
        }
        _ = try obtainAgent(controlling: controlling)
        let agentToGather: IceAgent? = try state.withLock { s in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            let parsed: SessionDescription
            do { parsed = try SessionDescription(parsing: description.sdp) } catch {
                throw PeerConnectionError.invalidDescription("local \(description.type.rawValue): \(error)")
            }
            switch (description.type, s.signaling) {
            case (.offer, .stable), (.offer, .haveLocalOffer):
                s.signaling = .haveLocalOffer
            case (.answer, .haveRemoteOffer):
                s.signaling = .stable
            default:
                throw PeerConnectionError.invalidState(operation: "setLocalDescription(\(description.type.rawValue))",
                                                       state: s.signaling.rawValue)
            }
            events.append(.signalingState(s.signaling))
            s.local = parsed
            s.localType = description.type
            s.version.set(parsed)
            s.machine.descriptionSet(now: monotonicMs())
            if description.type == .answer {
                events += negotiate(&s, answer: parsed, weAreOfferer: false)
            }
            if s.negotiations > 1, description.type == .answer { plane.applyDirections() }
            if description.type == .answer, s.retrickle {
                s.retrickle = false
                events += retrickledLocked(s)
            }
            guard s.gathering == .new, let agent = s.agent else { return nil }
            s.gathering = .gathering
            events.append(.iceGatheringState(.gathering))
            return agent
        }
        emit(events)
        if description.type == .answer {
            renewTransportsIfNeeded()
            closeStoppedTransceivers()
            updateNegotiationNeeded(afterNegotiation: true)  // back in stable: a change made meanwhile (W3C §4.7.3)
        }
        if let agentToGather {
            do { try agentToGather.gather() } catch {
                fail("ICE gathering could not start: \(error)")
                throw PeerConnectionError.setup("ICE gathering: \(error)")
            }
        }
        if description.type == .answer { maybeStartDTLS() }  // a new association's path may be up already
    }

    /// Sets the peer's description (JSEP §5.6): ICE credentials, candidates in it,
    /// fingerprints; an answer completes the negotiation (a subsequent one also starts,
    /// pauses or resumes each sender for its new direction). An offer that arrives in
    /// `have-local-offer` first rolls our offer back (W3C perfect negotiation: implicit
    /// rollback, `stable`), then is set or refused there. A subsequent offer must keep the
    /// current negotiation (``Reoffer/check(_:against:)``); one that restarts ICE (new
    /// ufrag/pwd) may bring a new DTLS fingerprint — the peer back with a new certificate —
    /// and then its negotiation begins a new DTLS association (RFC 8829 §5.11, as does such
    /// an answer to our ICE restart).
    /// - Throws: ``PeerConnectionError/invalidDescription(_:)`` when the SDP does not parse
    ///   (the SDP line number and what was expected), lacks ICE credentials or a
    ///   fingerprint, or is a re-offer that removes, reorders or changes the kind of an
    ///   m-section, drops BUNDLE or changes the DTLS fingerprint without an ICE restart
    ///   (naming the line; the connection keeps its state — after the implicit rollback
    ///   of our offer, when there was one); ``PeerConnectionError/invalidState(operation:state:)``
    ///   for the wrong type now.
    public func setRemoteDescription(_ description: SessionDescriptionInit) throws {
        var events: [PeerConnectionEvent] = []
        let parsed: SessionDescription
        do { parsed = try SessionDescription(parsing: description.sdp) } catch {
            throw PeerConnectionError.invalidDescription("remote \(description.type.rawValue): \(error)")
        }
        let usable = parsed.media.filter { !$0.isRejected }
        let first = usable.first ?? parsed.media.first
        // An answer rejecting every section carries no ICE credentials: accepted, and
        // negotiation below fails the connection naming the codecs.
        let ufrag = first?.iceUfrag ?? parsed.iceUfrag ?? "", pwd = first?.icePwd ?? parsed.icePwd ?? ""
        let prints = (first?.fingerprints.isEmpty == false ? first?.fingerprints : nil) ?? parsed.fingerprints
        // W3C setRemoteDescription (perfect negotiation): an offer in have-local-offer rolls
        // our offer back first, as `setLocalDescription({type: "rollback"})` would; the
        // offer is then set (or refused) in `stable`.
        if description.type == .offer {
            emit(try state.withLock { s -> [PeerConnectionEvent] in
                guard !s.machine.isClosed, s.signaling == .haveLocalOffer else { return [] }
                return try rollbackLocked(&s)
            })
        }
        // Every check before anything else changes: a refused description leaves the
        // connection as it was after that rollback (W3C setRemoteDescription; PROTOCOL.md
        // "Renegotiation").
        let controlling = try state.withLock { s -> Bool in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            switch (description.type, s.signaling) {
            case (.offer, .stable), (.offer, .haveRemoteOffer), (.answer, .haveLocalOffer): break
            default:
                throw PeerConnectionError.invalidState(operation: "setRemoteDescription(\(description.type.rawValue))",
                                                       state: s.signaling.rawValue)
            }
            guard (!ufrag.isEmpty && !pwd.isEmpty) || usable.isEmpty else {
                throw PeerConnectionError.invalidDescription("remote \(description.type.rawValue): no a=ice-ufrag/a=ice-pwd")
            }
            guard !prints.isEmpty || usable.isEmpty else {
                throw PeerConnectionError.invalidDescription("remote \(description.type.rawValue): no a=fingerprint")
            }
            if let current = s.currentRemote {
                do throws(ReofferError) {
                    if description.type == .offer {
                        try Reoffer.check(parsed, against: current, establishedSetup: s.establishedSetup)
                    } else {
                        try Reoffer.checkAnswer(parsed, against: current, establishedSetup: s.establishedSetup,
                                                iceRestartOffered: s.offeredCredentials != nil)
                    }
                } catch {
                    throw PeerConnectionError.invalidDescription("remote \(description.type.rawValue): \(error)")
                }
            }
            if s.isOfferer == nil { s.isOfferer = description.type == .answer }
            // A full agent facing an ICE-lite peer is controlling in both roles (RFC 8445 §6.1.1).
            return s.isOfferer == true || parsed.iceLite
        }
        let agent = try obtainAgent(controlling: controlling)
        if parsed.iceLite, !agent.controlling { agent.setControlling(true) }
        if description.type == .offer {
            addTransceivers(forTracksIn: parsed)
            sctp.remoteOffered(parsed)
        }
        // Credentials first: once `remote` is set below, addIceCandidate (any thread) hands
        // candidates straight to libnice, which refuses them before it has credentials.
        let (knownUfrag, negotiated, offered) = state.withLock { s in (s.remoteCandidates.ufrag, s.negotiations > 0, s.offeredCredentials) }
        if !ufrag.isEmpty, ufrag != knownUfrag {
            if negotiated, let known = knownUfrag, !known.isEmpty {
                // ICE restart (RFC 8445 §9.1): the peer's new credentials. Answering, we take
                // new ones from libnice for our answer; offering, ours went in the offer.
                state.withLock { $0.iceRestarts += 1 }  // before: a pair selected from now on is the restart's
                let fresh = agent.restart(credentials: description.type == .answer ? offered : nil,
                                          checkingTimeoutMs: configuration.iceRestartTimeoutMs)
                emit(state.withLock { s in
                    s.credentials = fresh
                    s.remoteCandidates = RemoteCandidates()
                    s.retrickle = true
                    // Our restart request is met either way: the next local description
                    // (our answer, or the offer that was answered) has new credentials.
                    s.iceRestartWanted = false
                    if description.type == .answer { s.offeredCredentials = nil }
                    return s.machine.iceRestarted(limitMs: configuration.iceRestartTimeoutMs)
                })
            }
            agent.setRemoteCredentials(ufrag: ufrag, pwd: pwd)
        }
        let (candidates, endOfCandidates) = try state.withLock { s -> ([Candidate], Bool) in
            guard !s.machine.isClosed else { throw PeerConnectionError.closed }
            s.remoteCandidates.ufrag = ufrag.isEmpty ? nil : ufrag
            s.signaling = description.type == .offer ? .haveRemoteOffer : .stable
            events.append(.signalingState(s.signaling))
            s.remote = parsed
            s.remoteType = description.type
            s.machine.descriptionSet(now: monotonicMs())
            if description.type == .answer {
                events += negotiate(&s, answer: parsed, weAreOfferer: true)
                if s.negotiations > 1 { plane.applyDirections() }
                if s.retrickle {
                    s.retrickle = false
                    events += retrickledLocked(s)
                }
            }
            return RemoteCandidates.carried(by: parsed)
        }
        emit(events)
        if description.type == .answer {
            renewTransportsIfNeeded()
            closeStoppedTransceivers()
            updateNegotiationNeeded(afterNegotiation: true)  // back in stable: a change made meanwhile (W3C §4.7.3)
        }
        guard !ufrag.isEmpty else { return }
        var dropped: [Candidate] = []
        for c in candidates {
            do {
                if try firstSighting(c) { try? agent.addRemoteCandidate(c) }
            } catch {
                dropped.append(c)
            }
        }
        if let first = dropped.first {
            emit([.remoteCandidateDropped(candidate: first.sdpValue, reason: "the description has \(dropped.count) candidates "
                + "beyond the \(Self.maximumRemoteCandidates) a connection takes: they are dropped")])
        }
        let pending = state.withLock { s in s.remoteCandidates.takeHeld() }
        for c in pending { try? addIceCandidate(c) }
        if endOfCandidates { agent.endOfRemoteCandidates() }
        maybeStartDTLS()
    }

    /// Asks the remote sender of `transceiver`'s video for a key frame now: sends a PLI
    /// (RFC 4585 §6.3.1), at most one per 100 ms. Does nothing before media flows.
    /// - Returns: whether a PLI went out (false: before media, or within 100 ms of the
    ///   last one, whose key frame is on its way).
    @discardableResult
    public func requestKeyframe(_ transceiver: RtpTransceiver) -> Bool {
        let pli = transceiver.receiver.requestKeyframe()
        plane.sendFeedback(pli)
        return !pli.isEmpty
    }

    // MARK: Stats

    /// W3C webrtc-stats for this connection: outbound-rtp, inbound-rtp,
    /// remote-inbound-rtp, candidate-pair, local/remote-candidate, transport, codec, plus
    /// timings. Units as in webrtc-stats: `timestamp` ms since the Unix epoch, jitter and
    /// round-trip times in seconds, byte and packet counts; timings in ms.
    public func getStats() -> StatsReport {
        let (pair, transport, ice, timings, role) = state.withLock { s in
            (s.selectedPair, s.transport, s.machine.ice, timingsLocked(s), s.association.role)
        }
        var report = StatsReport(plane: plane, selectedPair: pair, transport: transport, iceState: ice,
                                 dtlsRole: role, timings: timings)
        report.addDataChannels(sctp)
        return report
    }

    // MARK: Close

    /// Closes the connection: stops the senders, sends RTCP BYE, closes the files
    /// (so they are complete), sends DTLS close_notify, closes ICE (releasing TURN
    /// allocations). Idempotent. It waits for the sink threads to finish writing, so from an
    /// event callback (the event-loop thread) it holds that thread up for as long.
    public func close() {
        let (transport, agent, timers, wasOpen, closedAlready) = state.withLock { s in
            let wasOpen = !s.closedLocally
            let closedAlready = s.machine.state == .closed  // the peer's close_notify reported it
            s.closedLocally = true
            s.machine.close()
            s.signaling = .closed
            // The deadlines: the association's, and those a renewal not done yet was to cancel.
            defer { s.association.timer = 0; s.pendingRenewal = nil }
            return (s.transport, s.agent, [s.association.timer] + (s.pendingRenewal?.timers ?? []), wasOpen, closedAlready)
        }
        guard wasOpen else { return }
        for timer in timers { loop.cancelTimer(timer) }
        plane.close(on: loop)
        sctp.close()
        transport?.close()
        agent?.close()
        if !closedAlready { emit([.connectionState(.closed, reason: nil)]) }
    }

    // MARK: Private (with the state held where they take `inout State`)

    /// The local side for the next description: what the current negotiation fixed (mids,
    /// payload types, the mid-extension id, our DTLS role). Its `o=` version is set on the
    /// description made (``SessionVersion``).
    private func optionsLocked(_ s: State) -> LocalDescriptionOptions {
        var tracks = plane.transceivers.map { t in
            LocalTrack(kind: t.kind, direction: t.direction, ssrc: t.sender.ssrc, cname: cname,
                       streamId: streamId, trackId: "\(t.kind)-\(t.sender.ssrc)", mid: t.mid, payloadType: t.payloadType)
        }
        for (i, t) in plane.transceivers.enumerated() where t.isStopping || t.isStopped { tracks[i].stopped = true }
        if let data = sctp.localTrack(cname: cname) { tracks.append(data) }
        var options = LocalDescriptionOptions(sessionId: sessionId, sessionVersion: s.version.current ?? SessionVersion.initial, iceUfrag: s.credentials.ufrag,
                                              icePwd: s.credentials.pwd, fingerprints: [fingerprint], tracks: tracks)
        if let id = plane.negotiate({ _, router in router.midExtensionID }) { options.midExtensionID = Int(id) }
        options.establishedSetup = s.establishedSetup
        return options
    }

    private func timingsLocked(_ s: State) -> ConnectionTimings {
        let transceivers = plane.transceivers
        let firsts = transceivers.filter { $0.kind == .video }.compactMap(\.receiver.firstFrameMs)
        let any = firsts.isEmpty ? transceivers.compactMap(\.receiver.firstFrameMs) : firsts
        return s.machine.timings(firstFrameMs: any.min())
    }

    /// Marks the connection failed with `reason`; emits the events.
    func fail(_ reason: String) {
        emit(state.withLock { $0.machine.fail(reason) })
    }

    /// Hands `events` to the event handler on the loop thread, in order (never inline).
    func emit(_ events: [PeerConnectionEvent]) {
        guard !events.isEmpty else { return }
        let handler = onEvent
        loop.async { for e in events { handler(e) } }
    }

    /// Test hook: the RTCP received so far, by packet type, SSRC and compound
    /// (``RTCPReceivedCounts``), for the tests of report timing, CNAME and BYE.
    func receivedRTCPCounts() -> RTCPReceivedCounts { plane.rtcp.receivedCounts }
}

/// A weak reference for callbacks that must not keep their owner alive.
final class WeakBox<T: AnyObject & Sendable>: Sendable {
    /// The object, while it lives.
    weak let value: T?
    /// A box holding `value` weakly.
    init(_ value: T) { self.value = value }
}
