// IceAgent: a full ICE agent over libnice (RFC 8445), one stream with one component.
import CGLib
import CNice
import EventLoop
@_exported import SDP

/// A full ICE agent (RFC 8445) over libnice with one stream and one component
/// (BUNDLE with rtcp-mux: everything on component 1).
///
/// Thread rules: the agent lives on the ``EventLoop`` thread. Every method and
/// property may be used from any thread (it hops there); events and received
/// datagrams are delivered on the loop thread. ``send(_:)`` is thread-safe (libnice's
/// own lock). ``addRemoteCandidate(_:)`` resolves `.local`/host names on threads of its
/// own (``CandidateNameResolver``) and never blocks its caller on a lookup.
///
/// Lifetime: libnice's callbacks keep the agent alive until ``close()``, which every
/// owner must call (it also releases TURN allocations); the agent is freed after that
/// once the last reference goes.
// @unchecked: mutable state is confined to the loop thread, where libnice's C callbacks reach it; `agent`/`streamId` are set once in init and read by send() (libnice locks).
public final class IceAgent: @unchecked Sendable {

    let loop: EventLoop
    /// The configuration the agent was made with.
    public let configuration: Configuration
    private let agent: OpaquePointer
    private let streamId: UInt32
    private let onEvent: @Sendable (IceEvent) -> Void
    private let onReceive: @Sendable ([UInt8]) -> Void
    private var signalIds: [UInt] = []
    private var retained: Unmanaged<IceAgent>?
    private var checkingTimer: UInt32 = 0
    /// Inactivity watch (loop thread, IceAgentInactivity.swift): when the last datagram
    /// arrived (µs, GLib's monotonic clock), whether traffic is expected, the watch timer,
    /// and the state to go back to when a `disconnected` it reported ends.
    var lastReceiveUs: gint64 = 0
    var expectsTraffic = false
    var inactivityTimer: UInt32 = 0
    /// The checking limit of the checks an ICE restart started (``restart(credentials:checkingTimeoutMs:)``);
    /// nil: ``Configuration/checkingTimeoutMs``.
    private var restartCheckingTimeoutMs: UInt32?
    var stateBeforeInactivity: IceConnectionState?
    private let resolver = CandidateNameResolver()
    /// Remote candidates whose names are still resolving (loop thread).
    private var unresolvedNames = 0
    /// The remote end-of-candidates, held back until those names have resolved (loop thread).
    private var endOfCandidatesHeld = false
    private(set) var wasConnected = false
    /// How long the checks took to connect (loop thread).
    private var checkRoundTrip = CheckRoundTrip()
    private(set) var isClosed = false
    /// The peer's ufrag and pwd (loop thread), for ``SelectedPairChecks``.
    private var remoteCredentials: (ufrag: String, pwd: String)?
    /// Whether a datagram other than STUN has come from the peer since the last
    /// (re)start: it has a selected pair, so ``pairChecks`` stop (loop thread).
    private var peerSends = false
    private lazy var pairChecks = SelectedPairChecks(loop: loop, intervalMs: configuration.selectedPairCheckIntervalMs,
                                                     limitMs: configuration.checkingTimeoutMs) { [weak self] bytes in
        self?.send(bytes) ?? false
    }
    /// Binding requests ``SelectedPairChecks`` sent so far.
    var selectedPairChecksSent: Int { loop.sync { pairChecks.sent } }
    private lazy var checkTriggers = CheckTriggers(loop: loop, agent: agent, streamId: streamId,
                                                   intervalMs: configuration.checkTriggerIntervalMs, limitMs: configuration.checkingTimeoutMs)
    /// Binding requests ``CheckTriggers`` sent so far.
    var checkTriggersSent: Int { loop.sync { checkTriggers.sent } }
    /// The remote candidates handed to libnice (numeric addresses) and whether the remote
    /// end-of-candidates was, kept to check again after libnice fails (loop thread).
    private var remoteCandidatesAdded: [Candidate] = []
    private var remoteGatheringDone = false
    /// Times the checks started over after libnice failed them (loop thread).
    private var _checkRestarts = 0
    private var lastCheckRestartUs: gint64 = 0
    /// How many times the checks started over (``Configuration/restartsFailedChecks``).
    public var checkRestarts: Int { loop.sync { _checkRestarts } }

    // Loop-thread state behind the public getters below.
    private(set) var _state: IceConnectionState = .new
    private var _localUfrag = ""
    private var _localPwd = ""
    private var _localCandidates: [Candidate] = []
    private var _gatheringComplete = false
    private var _selectedPair: IceCandidatePair?

    /// The current state.
    public var state: IceConnectionState { loop.sync { _state } }
    /// Local ICE username fragment (RFC 8445 §5.3), 4+ ice-chars.
    public var localUfrag: String { loop.sync { _localUfrag } }
    /// Local ICE password (RFC 8445 §5.3), 22+ ice-chars.
    public var localPwd: String { loop.sync { _localPwd } }
    /// Local candidates found so far.
    public var localCandidates: [Candidate] { loop.sync { _localCandidates } }
    /// True once gathering is complete.
    public var gatheringComplete: Bool { loop.sync { _gatheringComplete } }
    /// The selected pair, once connected.
    public var selectedPair: IceCandidatePair? { loop.sync { _selectedPair } }
    /// The round trip the connectivity checks saw, ms, once connected: the time from their
    /// start to `connected`, an upper bound on the path's (``CheckRoundTrip``); nil before,
    /// or when a check may have been lost (it took 500 ms or more, or ``CheckTriggers``
    /// had to send a request).
    public var roundTripMs: Double? { loop.sync { checkRoundTrip.milliseconds } }

    /// Creates the agent and its stream on `loop` (not yet gathering).
    /// - Throws: ``IceError`` for an unusable server URL, a bad local address, or libnice failures.
    public init(_ configuration: Configuration, loop: EventLoop = .shared,
                onEvent: @escaping @Sendable (IceEvent) -> Void,
                onReceive: @escaping @Sendable ([UInt8]) -> Void) throws(IceError) {
        self.configuration = configuration
        self.loop = loop
        self.onEvent = onEvent
        self.onReceive = onReceive
        if let stuns = configuration.servers.first(where: { $0.scheme == .stuns }) {
            throw .server(IceServerError(url: stuns.description, expected: "stun: (libnice has no STUN over TLS)"))
        }
        let stun = configuration.servers.first { !$0.isTURN }
        let stunAddress: String?
        do { stunAddress = try stun?.resolvedAddress() } catch { throw .server(error) }
        var turnAddresses: [(IceServer, String)] = []
        for server in configuration.servers where server.isTURN {
            do { turnAddresses.append((server, try server.resolvedAddress())) } catch { throw .server(error) }
        }
        let created: Result<(OpaquePointer, UInt32), IceError> = loop.sync {
            var options = NICE_AGENT_OPTION_NONE.rawValue
            if configuration.trickle { options |= NICE_AGENT_OPTION_ICE_TRICKLE.rawValue }
            if configuration.consentFreshness { options |= NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue }
            guard let agent = nice_agent_new_full(loop.context, NICE_COMPATIBILITY_RFC5245, NiceAgentOption(rawValue: options)) else {
                return .failure(.agentCreation("nice_agent_new_full returned NULL"))
            }
            // Its name in libnice's lines about it from the first (NiceLog.tag(ofLine:)).
            if let tag = configuration.logTag { NiceLog.remember(agent: agent, tag: tag) }
            let object = UnsafeMutableRawPointer(agent)
            GObjectProperty.set(object, "controlling-mode", bool: configuration.controlling)
            GObjectProperty.set(object, "upnp", bool: false)
            GObjectProperty.set(object, "stun-initial-timeout", uint: configuration.stunInitialTimeoutMs)
            GObjectProperty.set(object, "idle-timeout", uint: configuration.idleTimeoutMs)
            GObjectProperty.set(object, "ice-tcp", bool: configuration.tcp)
            GObjectProperty.set(object, "stun-pacing-timer", uint: configuration.checkPacingMs)
            GObjectProperty.set(object, "force-relay", bool: configuration.policy == .relay)
            if let stun, let stunAddress {
                GObjectProperty.set(object, "stun-server", string: stunAddress)
                GObjectProperty.set(object, "stun-server-port", uint: UInt32(stun.port))
            }
            for text in configuration.localAddresses {
                guard let address = nice_address_new() else { continue }
                defer { nice_address_free(address) }
                guard nice_address_set_from_string(address, text) != 0, nice_agent_add_local_address(agent, address) != 0 else {
                    g_object_unref(object)
                    NiceLog.forget(key: NiceLog.key(agent))
                    return .failure(.badLocalAddress(text))
                }
            }
            let stream = nice_agent_add_stream(agent, 1)
            guard stream != 0 else { g_object_unref(object); NiceLog.forget(key: NiceLog.key(agent)); return .failure(.agentCreation("nice_agent_add_stream failed")) }
            nice_agent_set_stream_name(agent, stream, "application")
            for (server, address) in turnAddresses {
                let type: NiceRelayType
                switch (server.scheme, server.transport) {
                case (.turns, _): type = NICE_RELAY_TYPE_TURN_TLS
                case (_, .tcp): type = NICE_RELAY_TYPE_TURN_TCP
                default: type = NICE_RELAY_TYPE_TURN_UDP
                }
                guard nice_agent_set_relay_info(agent, stream, 1, address, UInt32(server.port), server.username ?? "",
                                                server.password ?? "", type) != 0 else {
                    g_object_unref(object)
                    NiceLog.forget(key: NiceLog.key(agent))
                    return .failure(.relayRejected(server.description))
                }
            }
            return .success((agent, stream))
        }
        let (agent, stream) = try created.get()
        self.agent = agent
        self.streamId = stream
        loop.sync { setUp() }
    }

    deinit {
        // libnice objects belong to the loop thread; its last lines about the agent come
        // while it is freed, so its name goes after that.
        let object = AgentObject(pointer: UnsafeMutableRawPointer(agent))
        let key = NiceLog.key(agent)
        if !loop.async({ g_object_unref(object.pointer); NiceLog.forget(key: key) }) {
            g_object_unref(object.pointer)
            NiceLog.forget(key: key)
        }
    }

    /// Copies libnice's local ufrag and pwd of the stream (loop thread).
    private func readLocalCredentials() {
        var ufrag: UnsafeMutablePointer<gchar>?, pwd: UnsafeMutablePointer<gchar>?
        if nice_agent_get_local_credentials(agent, streamId, &ufrag, &pwd) != 0 {
            _localUfrag = ufrag.map { String(cString: $0) } ?? ""
            _localPwd = pwd.map { String(cString: $0) } ?? ""
        }
        g_free(ufrag)
        g_free(pwd)
    }

    private func setUp() {
        readLocalCredentials()
        // The signal handlers and the receive callback hold one reference to us,
        // dropped in close().
        let me = Unmanaged.passRetained(self)
        retained = me
        let data = me.toOpaque()
        let object = UnsafeMutableRawPointer(agent)
        let onCandidate: @convention(c) (OpaquePointer?, UnsafeMutablePointer<NiceCandidate>?, gpointer?) -> Void = { _, candidate, data in
            guard let data, let candidate else { return }
            Unmanaged<IceAgent>.fromOpaque(data).takeUnretainedValue().newLocalCandidate(candidate)
        }
        let onGathered: @convention(c) (OpaquePointer?, UInt32, gpointer?) -> Void = { _, _, data in
            guard let data else { return }
            Unmanaged<IceAgent>.fromOpaque(data).takeUnretainedValue().gatheringDone()
        }
        let onState: @convention(c) (OpaquePointer?, UInt32, UInt32, UInt32, gpointer?) -> Void = { _, _, _, state, data in
            guard let data else { return }
            Unmanaged<IceAgent>.fromOpaque(data).takeUnretainedValue().componentState(state)
        }
        let onPair: @convention(c) (OpaquePointer?, UInt32, UInt32, UnsafeMutablePointer<NiceCandidate>?,
                                    UnsafeMutablePointer<NiceCandidate>?, gpointer?) -> Void = { _, _, _, local, remote, data in
            guard let data, let local, let remote else { return }
            Unmanaged<IceAgent>.fromOpaque(data).takeUnretainedValue().pairSelected(local, remote)
        }
        signalIds = [
            g_signal_connect_data(object, "new-candidate-full", unsafeBitCast(onCandidate, to: GCallback.self), data, nil, GConnectFlags(rawValue: 0)),
            g_signal_connect_data(object, "candidate-gathering-done", unsafeBitCast(onGathered, to: GCallback.self), data, nil, GConnectFlags(rawValue: 0)),
            g_signal_connect_data(object, "component-state-changed", unsafeBitCast(onState, to: GCallback.self), data, nil, GConnectFlags(rawValue: 0)),
            g_signal_connect_data(object, "new-selected-pair-full", unsafeBitCast(onPair, to: GCallback.self), data, nil, GConnectFlags(rawValue: 0)),
        ]
        nice_agent_attach_recv(agent, streamId, 1, loop.context, { _, _, _, length, buffer, data in
            guard let data, let buffer, length > 0 else { return }
            let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            let me = Unmanaged<IceAgent>.fromOpaque(data).takeUnretainedValue()
            me.received()
            me.onReceive(bytes)
        }, data)
    }

    // MARK: libnice callbacks (loop thread)

    private func sdpCandidate(_ candidate: UnsafeMutablePointer<NiceCandidate>) -> Candidate? {
        guard let line = nice_agent_generate_local_candidate_sdp(agent, candidate) else { return nil }
        defer { g_free(line) }
        return try? Candidate(parsing: String(cString: line))
    }

    private func newLocalCandidate(_ candidate: UnsafeMutablePointer<NiceCandidate>) {
        guard !isClosed, let c = sdpCandidate(candidate) else { return }
        _localCandidates.append(c)
        onEvent(.localCandidate(c))
    }

    private func gatheringDone() {
        guard !isClosed, !_gatheringComplete else { return }
        _gatheringComplete = true
        onEvent(.gatheringComplete)
        if configuration.policy == .relay, !_localCandidates.contains(where: { $0.type == .relay }) {
            let servers = configuration.servers.filter(\.isTURN).map(\.description).joined(separator: ", ")
            onEvent(.gatheringFailed("no relay candidate from \(servers.isEmpty ? "any TURN server (none configured)" : servers): "
                                     + "check the TURN credentials and that the server is reachable"))
        }
    }

    private func componentState(_ raw: UInt32) {
        guard !isClosed else { return }
        let next: IceConnectionState
        switch NiceComponentState(rawValue: raw) {
        case NICE_COMPONENT_STATE_CONNECTING: next = .checking
        case NICE_COMPONENT_STATE_CONNECTED: next = .connected
        case NICE_COMPONENT_STATE_READY: next = .completed  // checks concluded, selection final
        case NICE_COMPONENT_STATE_FAILED:
            if restartFailedChecks() { return }
            next = .failed
        case NICE_COMPONENT_STATE_DISCONNECTED: next = wasConnected ? .disconnected : .new
        default: return  // GATHERING: still `new`
        }
        transition(to: next)
    }

    /// libnice failed the checks before the agent ever connected and before
    /// ``Configuration/checkingTimeoutMs``: starts them over with the same credentials and
    /// candidates (``Configuration/restartsFailedChecks``) and returns true (loop thread).
    private func restartFailedChecks() -> Bool {
        guard configuration.restartsFailedChecks, !wasConnected, !isClosed, checkingTimer != 0,
              remoteCredentials != nil, !remoteCandidatesAdded.isEmpty else { return false }
        // Not from inside libnice's signal, and at least 1 s after the last restart: libnice
        // fails at once, not after its idle limit, when the last pair's socket closes
        // (a refused TCP candidate), which must not become a loop of restarts.
        let sinceLastMs = (g_get_monotonic_time() - lastCheckRestartUs) / 1000
        let delayMs = UInt32(clamping: max(0, 1_000 - sinceLastMs))
        let restart: @Sendable () -> Void = { [weak self] in
            guard let self, !self.isClosed, !self.wasConnected, self.checkingTimer != 0,
                  let remote = self.remoteCredentials else { return }
            let (ufrag, pwd) = (self._localUfrag, self._localPwd)
            guard nice_agent_restart_stream(self.agent, self.streamId) != 0,
                  nice_agent_set_local_credentials(self.agent, self.streamId, ufrag, pwd) != 0 else {
                self.transition(to: .failed)
                return
            }
            _ = nice_agent_set_remote_credentials(self.agent, self.streamId, remote.ufrag, remote.pwd)
            self._checkRestarts += 1
            self.lastCheckRestartUs = g_get_monotonic_time()
            for c in self.remoteCandidatesAdded { _ = self.handToLibnice(c) }
            if self.remoteGatheringDone { _ = nice_agent_peer_candidate_gathering_done(self.agent, self.streamId) }
        }
        if delayMs == 0 { return loop.async(restart) }
        _ = loop.after(milliseconds: delayMs, restart)
        return true
    }

    /// Notes a received datagram; ends a `disconnected` that inactivity caused (loop thread).
    private func received() {
        lastReceiveUs = g_get_monotonic_time()
        if !peerSends {
            peerSends = true
            pairChecks.stop()
        }
        if let before = stateBeforeInactivity, _state == .disconnected {
            stateBeforeInactivity = nil
            transition(to: before)
        }
    }

    /// Moves to `next` and reports it, with what each state starts or stops (loop thread).
    func transition(to next: IceConnectionState) {
        guard next != _state else { return }
        if next == .connected || next == .completed {
            if !wasConnected {
                lastReceiveUs = g_get_monotonic_time()
                checkRoundTrip.connected(nowUs: lastReceiveUs, triggered: checkTriggers.sentThisRun > 0)
            }
            wasConnected = true
            loop.cancelTimer(checkingTimer)
            checkingTimer = 0
        }
        if next != .disconnected { stateBeforeInactivity = nil }
        if next == .checking {
            checkRoundTrip.checkingStarted(nowUs: g_get_monotonic_time())
            startCheckingTimer()
        }
        _state = next
        triggerChecksUntilConnected()
        onEvent(.state(next))
        if next == .connected || next == .completed {
            watchInactivity()
            checkSelectedPairUntilPeerSends()
        }
    }

    /// Runs ``CheckTriggers`` while checking with the remote credentials before the first
    /// connection, and stops them otherwise (loop thread).
    private func triggerChecksUntilConnected() {
        guard _state == .checking, !wasConnected, !isClosed, configuration.checkTriggerIntervalMs > 0,
              let remote = remoteCredentials else { return checkTriggers.stop() }
        checkTriggers.start(.init(localUfrag: _localUfrag, remoteUfrag: remote.ufrag, remotePwd: remote.pwd))
    }

    /// Starts ``SelectedPairChecks`` while the peer has sent nothing but STUN (loop thread).
    private func checkSelectedPairUntilPeerSends() {
        guard !peerSends, !isClosed, configuration.selectedPairCheckIntervalMs > 0, let remote = remoteCredentials, let pair = _selectedPair else { return }
        let controlling = GObjectProperty.bool(UnsafeMutableRawPointer(agent), "controlling-mode")
        pairChecks.start(.init(localUfrag: _localUfrag, remoteUfrag: remote.ufrag, remotePwd: remote.pwd, controlling: controlling,
                               priority: BindingRequestWriter.peerReflexivePriority(of: pair.local.priority)))
    }

    /// Starts the ``Configuration/checkingTimeoutMs`` limit unless it runs (loop thread):
    /// when checks start, or when the remote credentials come, whichever is first, so a
    /// peer that sends no usable candidate at all still ends in `failed`.
    private func startCheckingTimer() {
        guard checkingTimer == 0, !wasConnected, !isClosed else { return }
        checkingTimer = loop.after(milliseconds: restartCheckingTimeoutMs ?? configuration.checkingTimeoutMs) { [weak self] in
            guard let self else { return }
            self.checkingTimer = 0
            guard !self.isClosed, !self.wasConnected else { return }
            self.transition(to: .failed)
        }
    }

    private func pairSelected(_ local: UnsafeMutablePointer<NiceCandidate>, _ remote: UnsafeMutablePointer<NiceCandidate>) {
        guard !isClosed, let l = sdpCandidate(local), let r = sdpCandidate(remote) else { return }
        let pair = IceCandidatePair(local: l, remote: r)
        _selectedPair = pair
        enlargeSocketBuffers()
        onEvent(.selectedPair(pair))
        if _state == .connected || _state == .completed { checkSelectedPairUntilPeerSends() }
    }

    /// The receive and send buffer asked for on the selected pair's socket, bytes (the
    /// kernel doubles it, up to `net.core.rmem_max`/`wmem_max`).
    public static let socketBufferBytes: Int32 = 1 << 20

    /// Gives the selected pair's UDP socket ``socketBufferBytes`` each way. The kernel's
    /// default (`net.core.rmem_default`, 208 KB here) holds about 90 full datagrams: a
    /// 10 ms pause of a loaded loop thread during a data channel's bulk transfer or a key
    /// frame's burst overflowed it (`RcvbufErrors` in /proc/net/snmp), and SCTP took the
    /// loss as congestion. Nothing for a relayed pair (libnice keeps that socket).
    private func enlargeSocketBuffers() {
        guard let socket = nice_agent_get_selected_socket(agent, streamId, 1) else { return }
        defer { g_object_unref(socket) }
        let fd = g_socket_get_fd(socket)
        var size = Self.socketBufferBytes
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    // MARK: public API

    /// Starts gathering local candidates; they arrive as ``IceEvent/localCandidate(_:)``,
    /// then ``IceEvent/gatheringComplete``.
    /// - Throws: ``IceError/gatheringFailed(_:)`` when libnice cannot gather (no interface).
    public func gather() throws(IceError) {
        let result: (closed: Bool, ok: Bool) = loop.sync { (isClosed, !isClosed && nice_agent_gather_candidates(agent, streamId) != 0) }
        guard result.ok else { throw .gatheringFailed(result.closed ? "agent closed" : "nice_agent_gather_candidates failed") }
    }

    /// Sets the remote ufrag and pwd (from the remote description, RFC 8839 §5.4).
    public func setRemoteCredentials(ufrag: String, pwd: String) {
        let retransmissions = configuration.checkRetransmissions
        loop.sync {
            GObjectProperty.set(UnsafeMutableRawPointer(agent), "stun-max-retransmissions", uint: retransmissions)
            _ = nice_agent_set_remote_credentials(agent, streamId, ufrag, pwd)
            remoteCredentials = (ufrag, pwd)
            checkRoundTrip.credentialsSet(nowUs: g_get_monotonic_time())
            startCheckingTimer()
            triggerChecksUntilConnected()
        }
    }

    /// Whether the agent is now controlling (RFC 8445 §6.1.1), as libnice holds it: it
    /// starts as ``Configuration/controlling`` and may switch on a role conflict (§7.3.1.1).
    public var controlling: Bool {
        loop.sync { GObjectProperty.bool(UnsafeMutableRawPointer(agent), "controlling-mode") }
    }

    /// Makes the agent controlling or controlled. A full agent facing an ICE-lite peer
    /// (`a=ice-lite`) must be controlling whichever side offered (RFC 8445 §6.1.1).
    public func setControlling(_ value: Bool) {
        loop.sync { GObjectProperty.set(UnsafeMutableRawPointer(agent), "controlling-mode", bool: value) }
    }

    /// Adds one remote candidate (trickled or from the description). A candidate whose
    /// address is a name (mDNS `.local`, or a host name) is resolved on a thread of its
    /// own and added when it resolves; this call returns at once, and a name that does
    /// not resolve within ``Configuration/nameResolutionTimeoutMs`` is reported as
    /// ``IceEvent/remoteCandidateDropped(candidate:reason:)``. End-of-candidates waits
    /// for the names still resolving.
    /// - Throws: ``IceError/remoteCandidate(candidate:reason:)`` when it cannot be used
    ///   (a component other than 1, a candidate libnice rejects, a closed agent); the
    ///   agent goes on.
    public func addRemoteCandidate(_ candidate: Candidate) throws(IceError) {
        guard candidate.component == 1 else {
            throw .remoteCandidate(candidate: candidate.sdpValue, reason: "component \(candidate.component) is not used (rtcp-mux: everything on component 1)")
        }
        guard candidate.addressKind == .mdns || candidate.addressKind == .fqdn else {
            guard loop.sync({ addOnLoop(candidate) }) else {
                throw .remoteCandidate(candidate: candidate.sdpValue, reason: "libnice did not accept it")
            }
            return
        }
        guard loop.sync({ () -> Bool in
            guard !isClosed else { return false }
            unresolvedNames += 1
            return true
        }) else { throw .remoteCandidate(candidate: candidate.sdpValue, reason: "the ICE agent is closed") }
        resolver.resolve(candidate.address, timeoutMs: configuration.nameResolutionTimeoutMs, loop: loop) { [weak self] result in
            self?.nameResolved(candidate, result)
        }
    }

    /// Hands one remote candidate with a numeric address to libnice and records it (loop thread).
    private func addOnLoop(_ c: Candidate) -> Bool {
        guard handToLibnice(c) else { return false }
        remoteCandidatesAdded.append(c)
        return true
    }

    /// Hands one remote candidate with a numeric address to libnice (loop thread).
    private func handToLibnice(_ c: Candidate) -> Bool {
        let line = "a=" + c.sdpValue
        guard !isClosed, let parsed = nice_agent_parse_remote_candidate_sdp(agent, streamId, line) else { return false }
        defer { nice_candidate_free(parsed) }
        let list = g_slist_append(nil, parsed)
        defer { g_slist_free(list) }
        return nice_agent_set_remote_candidates(agent, streamId, 1, list) >= 1
    }

    /// The outcome of a name lookup for `candidate` (loop thread).
    private func nameResolved(_ candidate: Candidate, _ result: Result<String, CandidateNameResolver.NameError>) {
        guard !isClosed else { return }
        unresolvedNames -= 1
        switch result {
        case let .success(address):
            var c = candidate
            c.address = address
            if !addOnLoop(c) {
                onEvent(.remoteCandidateDropped(candidate: candidate.sdpValue,
                                                reason: "\(candidate.address) resolved to \(address), which libnice did not accept"))
            }
        case let .failure(error):
            onEvent(.remoteCandidateDropped(candidate: candidate.sdpValue, reason: "\(candidate.address) \(error.reason)"))
        }
        if unresolvedNames == 0, endOfCandidatesHeld {
            endOfCandidatesHeld = false
            remoteGatheringDone = true
            _ = nice_agent_peer_candidate_gathering_done(agent, streamId)
        }
    }

    /// Signals that the remote side has no more candidates (RFC 8838 end-of-candidates);
    /// held back while names of remote candidates are still resolving.
    public func endOfRemoteCandidates() {
        loop.sync {
            guard !isClosed else { return }
            if unresolvedNames > 0 {
                endOfCandidatesHeld = true
            } else {
                remoteGatheringDone = true
                _ = nice_agent_peer_candidate_gathering_done(agent, streamId)
            }
        }
    }

    /// Sends one datagram on the selected pair; false when not connected or closed.
    /// Thread-safe.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: gchar.self, capacity: buffer.count) {
                    nice_agent_send(agent, streamId, 1, UInt32(buffer.count), $0) == Int32(buffer.count)
                }
            } ?? false
        }
    }

    /// ICE restart (RFC 8445 §9): new local ufrag/pwd and remote candidates forgotten;
    /// the local candidates are kept (libnice does not gather again), so the caller
    /// signals the new credentials with the same candidates, sets the remote side's new
    /// credentials and candidates, and checks start again.
    /// - Parameters:
    ///   - credentials: the new local ufrag (4–256 ICE characters) and pwd (22–256), when
    ///     they were already signalled (our offer carried them); nil: libnice makes them.
    ///   - checkingTimeoutMs: how long the restarted checks may go without a working pair
    ///     before ICE is `failed` (nil: ``Configuration/checkingTimeoutMs``).
    /// - Returns: the new local credentials (the old ones when the agent is closed).
    @discardableResult
    public func restart(credentials: (ufrag: String, pwd: String)? = nil, checkingTimeoutMs: UInt32? = nil) -> (ufrag: String, pwd: String) {
        loop.sync {
            guard !isClosed, nice_agent_restart_stream(agent, streamId) != 0 else { return (_localUfrag, _localPwd) }
            restartCheckingTimeoutMs = checkingTimeoutMs
            if let credentials { _ = nice_agent_set_local_credentials(agent, streamId, credentials.ufrag, credentials.pwd) }
            readLocalCredentials()
            wasConnected = false
            checkRoundTrip.reset()
            peerSends = false
            remoteCandidatesAdded = []
            remoteGatheringDone = false
            pairChecks.stop()
            checkTriggers.stop()
            loop.cancelTimer(checkingTimer)
            checkingTimer = 0
            _selectedPair = nil
            return (_localUfrag, _localPwd)
        }
    }

    /// Closes the agent: removes the stream (its sockets), disconnects every callback
    /// and reports `closed`. Idempotent.
    public func close() {
        loop.sync {
            guard !isClosed else { return }
            isClosed = true
            loop.cancelTimer(checkingTimer)
            loop.cancelTimer(inactivityTimer)
            inactivityTimer = 0
            pairChecks.stop()
            checkTriggers.stop()
            nice_agent_attach_recv(agent, streamId, 1, loop.context, nil, nil)
            for id in signalIds { g_signal_handler_disconnect(UnsafeMutableRawPointer(agent), id) }
            signalIds = []
            nice_agent_remove_stream(agent, streamId)
            // Releases TURN allocations (refresh with lifetime 0) before the agent goes.
            nice_agent_close_async(agent, nil, nil)
            _state = .closed
            onEvent(.state(.closed))
            retained?.release()
            retained = nil
        }
    }
}

/// The agent's GObject, handed to the loop thread for its last unref.
// @unchecked: a raw GObject pointer crossing to the loop thread; GObject reference counting is thread-safe.
private struct AgentObject: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}
