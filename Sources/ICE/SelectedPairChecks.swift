// Connectivity checks of the selected pair, sent until the peer's first datagram arrives,
// so a peer whose own check failed checks again (RFC 8445 §7.2.2, §7.3.1.4; RFC 7675 §5.1).
import CGLib
import CNice
import EventLoop

/// Sends STUN Binding requests (RFC 8445 §7.2.2: USERNAME, PRIORITY, ICE-CONTROLLING or
/// ICE-CONTROLLED, USE-CANDIDATE when controlling, MESSAGE-INTEGRITY, FINGERPRINT; built
/// by libnice's own STUN library) on the selected pair every ``intervalMs`` while the
/// agent is connected and nothing but STUN has come from the peer.
///
/// Why: ICE may connect on one side only. Under loss the controlling side's nominating
/// check succeeds while the response to the controlled side's check is lost three times;
/// libnice then fails that pair there, and a connected libnice agent sends no further
/// check (only a binding indication every 25 s), so the peer never connects. A request
/// arriving on a failed pair makes the peer check it again (§7.3.1.4), so these requests
/// rescue it; they stop at the peer's first DTLS or media datagram, which proves it has
/// a selected pair. Responses to them are unmatched and dropped by libnice. Browsers do
/// the same in effect: libwebrtc keeps pinging the selected connection throughout.
///
/// Confined to the loop thread of its agent (every method is called there): the mutable
/// state and the STUN library's buffers are in a ``LoopBound`` that checks it.
final class SelectedPairChecks: Sendable {
    /// What a request needs (RFC 8445 §7.2.2): our ufrag, the peer's ufrag and password
    /// (the MESSAGE-INTEGRITY key), our role and the PRIORITY of our candidate as a
    /// peer-reflexive one (§7.1.1).
    struct Credentials {
        var localUfrag: String
        var remoteUfrag: String
        var remotePwd: String
        var controlling: Bool
        var priority: UInt32
    }

    /// The requests sent, the timer, the current run and the STUN library's agent and
    /// message buffers (which it keeps pointers into): loop thread only.
    private final class State {
        var sent = 0
        var timer: UInt32 = 0
        var startedUs: gint64 = 0
        var credentials: Credentials?
        let stunAgent = UnsafeMutablePointer<StunAgent>.allocate(capacity: 1)
        let message = UnsafeMutablePointer<StunMessage>.allocate(capacity: 1)
        /// The attributes the STUN agent knows (it keeps the pointer), 0-terminated.
        let knownAttributes = UnsafeMutablePointer<UInt16>.allocate(capacity: 1)

        init() {
            knownAttributes.initialize(to: 0)
            message.initialize(to: StunMessage())
        }

        deinit {
            stunAgent.deallocate()
            message.deallocate()
            knownAttributes.deallocate()
        }
    }

    /// Time between requests, ms. The peer's own check takes up to 2 s to fail (three
    /// sends), so 250 ms puts several requests in front of each of its retries.
    let intervalMs: UInt32
    /// Requests stop this long after they started even if the peer stays silent, ms.
    let limitMs: UInt32
    private let loop: EventLoop
    private let send: @Sendable ([UInt8]) -> Bool
    private let confined: LoopBound<State>
    /// The ICE-CONTROLLING/ICE-CONTROLLED tie-breaker of every request (RFC 8445 §7.1.3:
    /// one per agent; libnice's own is not readable, and a role conflict is not expected
    /// once connected).
    private let tieBreaker = UInt64.random(in: .min ... .max)

    /// The mutable state. Precondition: called on the loop thread.
    private var state: State { confined.value }
    /// Requests sent so far (all runs). Precondition: called on the loop thread.
    var sent: Int { state.sent }

    /// - Parameters: `send` sends one datagram on the selected pair (false when it cannot).
    init(loop: EventLoop, intervalMs: UInt32 = 250, limitMs: UInt32, send: @escaping @Sendable ([UInt8]) -> Bool) {
        self.loop = loop
        self.intervalMs = intervalMs
        self.limitMs = limitMs
        self.send = send
        confined = LoopBound(State(), loop: loop)
    }

    /// Starts sending (the first request after ``intervalMs``), or updates the
    /// credentials if already sending.
    func start(_ credentials: Credentials) {
        let state = self.state
        state.credentials = credentials
        guard state.timer == 0 else { return }
        state.startedUs = g_get_monotonic_time()
        schedule()
    }

    /// Stops sending; ``start(_:)`` may start again (after an ICE restart).
    func stop() {
        let state = self.state
        loop.cancelTimer(state.timer)
        state.timer = 0
        state.credentials = nil
    }

    /// Sets the timer of the next request (loop thread).
    private func schedule() {
        state.timer = loop.after(milliseconds: intervalMs) { [weak self] in
            guard let self else { return }
            let state = self.state
            state.timer = 0
            guard let credentials = state.credentials,
                  (g_get_monotonic_time() - state.startedUs) / 1000 < gint64(self.limitMs) else { return }
            if let request = self.request(credentials), self.send(request) { state.sent += 1 }
            if state.timer == 0 { self.schedule() }
        }
    }

    /// One Binding request, or nil when libnice's STUN library cannot build it.
    private func request(_ c: Credentials) -> [UInt8]? {
        // A fresh STUN agent each time: it remembers at most 200 transaction IDs and
        // refuses to build more; the responses are never matched anyway.
        let state = self.state
        stun_agent_init(state.stunAgent, state.knownAttributes, STUN_COMPATIBILITY_RFC5389,
                        StunAgentUsageFlags(rawValue: STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS.rawValue
                                            | STUN_AGENT_USAGE_USE_FINGERPRINT.rawValue))
        let username = Array("\(c.remoteUfrag):\(c.localUfrag)".utf8)
        let password = Array(c.remotePwd.utf8)
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBufferPointer { out in
            username.withUnsafeBufferPointer { user in
                password.withUnsafeBufferPointer { key in
                    stun_usage_ice_conncheck_create(state.stunAgent, state.message, out.baseAddress, out.count,
                                                    user.baseAddress, user.count, key.baseAddress, key.count,
                                                    c.controlling, c.controlling, c.priority, tieBreaker, nil,
                                                    STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
                }
            }
        }
        guard length > 0, length <= buffer.count else { return nil }
        return Array(buffer.prefix(length))
    }

    /// The PRIORITY a request carries (RFC 8445 §7.1.1): our candidate's priority with
    /// the peer-reflexive type preference (110, §5.1.2.2), local preference and
    /// component kept.
    static func peerReflexivePriority(of candidatePriority: UInt32) -> UInt32 {
        (110 << 24) | (candidatePriority & 0x00FF_FFFF)
    }
}
