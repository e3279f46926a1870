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
/// Confined to the loop thread of its agent (every method is called there).
// @unchecked: confined to the agent's loop thread; its timer's @Sendable closure (run there) captures it.
final class SelectedPairChecks: @unchecked Sendable {
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

    /// Time between requests, ms. The peer's own check takes up to 2 s to fail (three
    /// sends), so 250 ms puts several requests in front of each of its retries.
    let intervalMs: UInt32
    /// Requests stop this long after they started even if the peer stays silent, ms.
    let limitMs: UInt32
    /// Requests sent so far (all runs).
    private(set) var sent = 0
    private let loop: EventLoop
    private let send: @Sendable ([UInt8]) -> Bool
    private var timer: UInt32 = 0
    private var startedUs: gint64 = 0
    private var credentials: Credentials?
    private let stunAgent = UnsafeMutablePointer<StunAgent>.allocate(capacity: 1)
    private let message = UnsafeMutablePointer<StunMessage>.allocate(capacity: 1)
    /// The attributes the STUN agent knows (it keeps the pointer), 0-terminated.
    private let knownAttributes = UnsafeMutablePointer<UInt16>.allocate(capacity: 1)
    /// The ICE-CONTROLLING/ICE-CONTROLLED tie-breaker of every request (RFC 8445 §7.1.3:
    /// one per agent; libnice's own is not readable, and a role conflict is not expected
    /// once connected).
    private let tieBreaker = UInt64.random(in: .min ... .max)

    /// - Parameters: `send` sends one datagram on the selected pair (false when it cannot).
    init(loop: EventLoop, intervalMs: UInt32 = 250, limitMs: UInt32, send: @escaping @Sendable ([UInt8]) -> Bool) {
        self.loop = loop
        self.intervalMs = intervalMs
        self.limitMs = limitMs
        self.send = send
        knownAttributes.initialize(to: 0)
        message.initialize(to: StunMessage())
    }

    deinit {
        stunAgent.deallocate()
        message.deallocate()
        knownAttributes.deallocate()
    }

    /// Starts sending (the first request after ``intervalMs``), or updates the
    /// credentials if already sending.
    func start(_ credentials: Credentials) {
        self.credentials = credentials
        guard timer == 0 else { return }
        startedUs = g_get_monotonic_time()
        schedule()
    }

    /// Stops sending; ``start(_:)`` may start again (after an ICE restart).
    func stop() {
        loop.cancelTimer(timer)
        timer = 0
        credentials = nil
    }

    private func schedule() {
        timer = loop.after(milliseconds: intervalMs) { [weak self] in
            guard let self else { return }
            self.timer = 0
            guard let credentials = self.credentials,
                  (g_get_monotonic_time() - self.startedUs) / 1000 < gint64(self.limitMs) else { return }
            if let request = self.request(credentials), self.send(request) { self.sent += 1 }
            if self.timer == 0 { self.schedule() }
        }
    }

    /// One Binding request, or nil when libnice's STUN library cannot build it.
    private func request(_ c: Credentials) -> [UInt8]? {
        // A fresh STUN agent each time: it remembers at most 200 transaction IDs and
        // refuses to build more; the responses are never matched anyway.
        stun_agent_init(stunAgent, knownAttributes, STUN_COMPATIBILITY_RFC5389,
                        StunAgentUsageFlags(rawValue: STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS.rawValue
                                            | STUN_AGENT_USAGE_USE_FINGERPRINT.rawValue))
        let username = Array("\(c.remoteUfrag):\(c.localUfrag)".utf8)
        let password = Array(c.remotePwd.utf8)
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBufferPointer { out in
            username.withUnsafeBufferPointer { user in
                password.withUnsafeBufferPointer { key in
                    stun_usage_ice_conncheck_create(stunAgent, message, out.baseAddress, out.count,
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
