// CheckTriggers: while ICE checks and has not connected, Binding requests from our UDP sockets to the peer's UDP candidates, so that a peer whose check or its answer was lost checks again at once (RFC 8445 §7.3.1.4) instead of after libnice's 500 ms.
import CGLib
import CNice
import EventLoop

/// Sends STUN Binding requests (``BindingRequestWriter``, never USE-CANDIDATE) from each
/// of libnice's local UDP sockets to each of the peer's UDP candidates of the same address
/// family, while the agent checks and before its first connection.
///
/// Why: libnice sends a connectivity check again only after 500 ms, then 1 s (its fixed
/// first RTO; RFC 8445 §14.3's floor), and a check is a round trip of two datagrams, so
/// under 15 % random loss about one set-up in twenty waited 500 ms or 1.5 s for ICE. A
/// request that reaches the peer makes its agent check that pair at once, a triggered
/// check (§7.3.1.4; libnice does it for a pair waiting, in progress or failed), whose own
/// arrival here makes our libnice answer it and send its triggered check in turn: a
/// lost check costs about one request interval instead. Our requests only prompt: they
/// carry no nomination, and their answers match none of libnice's transactions and are
/// dropped, so every pair state and the selection stay libnice's. libwebrtc pings a
/// connection that is not yet writable every 48 ms to the same effect.
///
/// Bounded: at most ``requestsPerTick`` requests a tick (the pairs taken in turn, the
/// peer's highest-priority candidates first), a tick every ``intervalMs`` during the
/// first second of checking, the interval doubling each further second up to
/// ``maximumIntervalMs``, and none after ``limitMs``: about 60 ticks if checks run for
/// 30 s without connecting.
///
/// Confined to the loop thread of its agent (every method is called there): the mutable
/// state and the STUN library's buffers are in a ``LoopBound`` that checks it.
// @unchecked: `agent` is libnice's agent, used only on the loop thread (the LoopBound state is checked there on every tick).
final class CheckTriggers: @unchecked Sendable {
    /// What the requests need besides each socket's PRIORITY: our ufrag, the peer's ufrag
    /// and password (RFC 8445 §7.2.2).
    struct Credentials {
        var localUfrag: String
        var remoteUfrag: String
        var remotePwd: String
    }

    /// Requests sent, the timer, the run's start, the next pair in turn and the writer:
    /// loop thread only.
    private final class State {
        var sent = 0
        var sentThisRun = 0
        var timer: UInt32 = 0
        var startedUs: gint64 = 0
        var next = 0
        var credentials: Credentials?
        let writer = BindingRequestWriter()
    }

    /// The first interval between ticks, ms (``IceAgent/Configuration/checkTriggerIntervalMs``).
    let intervalMs: UInt32
    /// The longest interval between ticks, ms.
    let maximumIntervalMs: UInt32 = 1_000
    /// Most requests a tick.
    let requestsPerTick = 8
    /// No tick this long after the start, ms (the checking limit).
    let limitMs: UInt32
    private let loop: EventLoop
    private let agent: OpaquePointer
    private let streamId: UInt32
    private let confined: LoopBound<State>

    /// The mutable state. Precondition: called on the loop thread.
    private var state: State { confined.value }
    /// Requests sent so far (all runs). Precondition: called on the loop thread.
    var sent: Int { state.sent }
    /// Requests sent since the last ``start(_:)`` that started the ticks. Precondition:
    /// called on the loop thread.
    var sentThisRun: Int { state.sentThisRun }

    /// - Parameters: `agent` and `streamId`: the libnice agent and stream (component 1)
    ///   whose sockets and candidates are used.
    init(loop: EventLoop, agent: OpaquePointer, streamId: UInt32, intervalMs: UInt32, limitMs: UInt32) {
        self.loop = loop
        self.agent = agent
        self.streamId = streamId
        self.intervalMs = max(1, intervalMs)
        self.limitMs = limitMs
        confined = LoopBound(State(), loop: loop)
    }

    /// Starts the ticks (the first after ``intervalMs``: libnice sends its own first
    /// checks meanwhile), or updates the credentials if already running.
    func start(_ credentials: Credentials) {
        let state = self.state
        state.credentials = credentials
        guard state.timer == 0 else { return }
        state.startedUs = g_get_monotonic_time()
        state.sentThisRun = 0
        schedule()
    }

    /// Stops the ticks; ``start(_:)`` may start again (after an ICE restart).
    func stop() {
        let state = self.state
        loop.cancelTimer(state.timer)
        state.timer = 0
        state.credentials = nil
    }

    /// Sets the timer of the next tick (loop thread).
    private func schedule() {
        let elapsedMs = (g_get_monotonic_time() - state.startedUs) / 1000
        let doublings = UInt32(clamping: max(0, min(10, elapsedMs / 1000)))
        let wait = min(maximumIntervalMs, intervalMs << doublings)
        state.timer = loop.after(milliseconds: wait) { [weak self] in
            guard let self else { return }
            let state = self.state
            state.timer = 0
            guard let credentials = state.credentials,
                  (g_get_monotonic_time() - state.startedUs) / 1000 < gint64(self.limitMs) else { return }
            self.tick(credentials)
            if state.timer == 0, state.credentials != nil { self.schedule() }
        }
    }

    /// One local socket and one remote candidate of the same family.
    private struct Pair {
        let socket: UnsafeMutablePointer<GSocket>
        let priority: UInt32
        let remote: NiceAddress
        let remotePriority: UInt32
    }

    /// Sends the next ``requestsPerTick`` requests (loop thread).
    private func tick(_ credentials: Credentials) {
        guard let sockets = nice_agent_get_sockets(agent, streamId, 1) else { return }
        defer { g_ptr_array_unref(sockets) }
        let locals = candidates(nice_agent_get_local_candidates(agent, streamId, 1))
        let remotes = candidates(nice_agent_get_remote_candidates(agent, streamId, 1))
            .filter { $0.transport == NICE_CANDIDATE_TRANSPORT_UDP }
            .sorted { $0.priority > $1.priority }
        var pairs: [Pair] = []
        for i in 0..<Int(sockets.pointee.len) {
            guard let socket = sockets.pointee.pdata[i]?.assumingMemoryBound(to: GSocket.self),
                  g_socket_get_socket_type(socket) == G_SOCKET_TYPE_DATAGRAM, let address = localAddress(socket) else { continue }
            var local = address
            // Our host candidate on this socket gives the PRIORITY (as a peer-reflexive one).
            guard let host = locals.first(where: { c in
                var a = c.addr
                return c.type == NICE_CANDIDATE_TYPE_HOST && c.transport == NICE_CANDIDATE_TRANSPORT_UDP && nice_address_equal(&a, &local) != 0
            }) else { continue }
            for remote in remotes {
                var r = remote.addr
                guard nice_address_ip_version(&r) == nice_address_ip_version(&local) else { continue }
                pairs.append(Pair(socket: socket, priority: BindingRequestWriter.peerReflexivePriority(of: host.priority),
                                  remote: remote.addr, remotePriority: remote.priority))
            }
        }
        guard !pairs.isEmpty else { return }
        let controlling = GObjectProperty.bool(UnsafeMutableRawPointer(agent), "controlling-mode")
        let state = self.state
        for k in 0..<min(requestsPerTick, pairs.count) {
            let pair = pairs[(state.next + k) % pairs.count]
            let c = BindingRequestWriter.Credentials(localUfrag: credentials.localUfrag, remoteUfrag: credentials.remoteUfrag,
                                                     remotePwd: credentials.remotePwd, controlling: controlling, priority: pair.priority)
            if let request = state.writer.request(c, nominate: false), send(request, from: pair.socket, to: pair.remote) {
                state.sent += 1
                state.sentThisRun += 1
            }
        }
        state.next = (state.next + requestsPerTick) % pairs.count
    }

    /// Copies of the candidates in libnice's list, which is freed.
    private func candidates(_ list: UnsafeMutablePointer<GSList>?) -> [NiceCandidate] {
        var out: [NiceCandidate] = []
        var item = list
        while let node = item {
            if let data = node.pointee.data { out.append(data.assumingMemoryBound(to: NiceCandidate.self).pointee) }
            item = node.pointee.next
        }
        g_slist_free_full(list) { nice_candidate_free($0?.assumingMemoryBound(to: NiceCandidate.self)) }
        return out
    }

    /// The socket's local address, or nil when GIO cannot tell it.
    private func localAddress(_ socket: UnsafeMutablePointer<GSocket>) -> NiceAddress? {
        var error: UnsafeMutablePointer<GError>?
        guard let address = g_socket_get_local_address(socket, &error) else {
            g_error_free(error)
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(address)) }
        var storage = sockaddr_storage()
        let ok = withUnsafeMutableBytes(of: &storage) { buffer in
            g_socket_address_to_native(address, buffer.baseAddress, gsize(buffer.count), &error) != 0
        }
        guard ok else {
            g_error_free(error)
            return nil
        }
        var nice = NiceAddress()
        withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { nice_address_set_from_sockaddr(&nice, $0) } }
        return nice
    }

    /// Sends one datagram from `socket` to `address` without waiting; false when the
    /// kernel refused it (a full buffer, an unreachable family: the next tick tries again).
    private func send(_ datagram: [UInt8], from socket: UnsafeMutablePointer<GSocket>, to address: NiceAddress) -> Bool {
        var storage = sockaddr_storage()
        var a = address
        withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { nice_address_copy_to_sockaddr(&a, $0) } }
        let length = storage.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        guard let destination = withUnsafeMutablePointer(to: &storage, { g_socket_address_new_from_native($0, gsize(length)) }) else {
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(destination)) }
        var error: UnsafeMutablePointer<GError>?
        let sent = datagram.withUnsafeBytes { g_socket_send_to(socket, destination, $0.baseAddress, gsize($0.count), nil, &error) }
        if let error { g_error_free(error) }
        return sent == datagram.count
    }
}
