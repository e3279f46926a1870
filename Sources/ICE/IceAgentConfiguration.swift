// The configuration of an ``IceAgent``: role, servers, policy and the timers of checks,
// consent and inactivity (RFC 8445 §6.1.1, §14; RFC 7675).

extension IceAgent {
    /// Configuration of an agent.
    public struct Configuration: Sendable {
        /// Controlling (the offerer, RFC 8445 §6.1.1) or controlled.
        public var controlling: Bool
        /// STUN and TURN servers. libnice uses the first STUN server.
        public var servers: [IceServer] = []
        /// `all` or `relay`.
        public var policy: IceTransportPolicy = .all
        /// Local addresses to gather on (IP literals). Empty: every interface but
        /// loopback, or loopback when nothing else exists.
        public var localAddresses: [String] = []
        /// Gather TCP candidates (RFC 6544) too.
        public var tcp = true
        /// The connection's name in log lines (`peer load`: `load.17`): libnice's lines
        /// about this agent carry it (``NiceLog/tag(ofLine:)``); nil: none.
        public var logTag: String?
        /// Ta (RFC 8445 §14.2): the pacing of connectivity checks, ms (libnice's
        /// `stun-pacing-timer`, its default 20). A pair's first check waits for the next
        /// tick, and regular nomination (libnice's mode once a TCP candidate is there) takes
        /// two ticks more: 66 ms from answer to connected on loopback at 20 ms. 5 ms is the
        /// RFC's floor for this (one data stream, a handful of pairs: at most 200 checks/s).
        public var checkPacingMs: UInt32 = 5
        /// Trickle ICE (RFC 8838): checks wait for end-of-candidates before failing.
        public var trickle = true
        /// If not connected this long after checks start, the state becomes `failed`, ms.
        public var checkingTimeoutMs: UInt32 = 30_000
        /// How long a side whose checks are all done waits before libnice fails it, ms
        /// (libnice's `idle-timeout`, default 5 s).
        public var idleTimeoutMs: UInt32 = 5_000
        /// Sends of one connectivity check, the first included (libnice's
        /// `stun-max-retransmissions`, default 3), set with the remote credentials. libnice
        /// waits 500 ms, doubling, the last wait halved: 3 sends at 0, 0.5, 1.5 s (fails at
        /// 2 s); 6 at 0, 0.5, 1.5, 3.5, 7.5, 15.5 s (fails at 19.5 s). Before
        /// ``selectedPairCheckIntervalMs``, more sends rescued set-ups under heavy loss
        /// (25 % random loss: 1 of 100 failed with 6, 5 of 130 with 3) but slowed NAT
        /// traversal: libnice does not restart a check in progress when the peer's check
        /// opens the path (RFC 8445 §7.3.1.4 says to) and waits for its next send, so agents
        /// behind NATs connected after 5.4 s with 3, 6.7 s with 4, 12 s with 5, not within
        /// 15 s with 6 (NATTests). libnice's 3 is kept.
        public var checkRetransmissions: UInt32 = 3
        /// While connected and before the peer's first datagram other than STUN, a Binding
        /// request on the selected pair every this many ms (``SelectedPairChecks``): a peer
        /// whose own check or its answer was lost checks again at once (a triggered check,
        /// RFC 8445 §7.3.1.4) instead of after libnice's 500 ms, and connects. 50 ms, as
        /// libwebrtc pings a connection not yet writable (48 ms); a normal set-up sends
        /// none or one, as the peer's first DTLS datagram follows within a round trip.
        /// 0: none.
        public var selectedPairCheckIntervalMs: UInt32 = 50
        /// While checking and before the first connection, Binding requests from our UDP
        /// sockets to the peer's UDP candidates every this many ms during the first second,
        /// the interval doubling each further second up to 1 s (``CheckTriggers``): a peer
        /// whose check or its answer was lost checks again at once (RFC 8445 §7.3.1.4), not
        /// after libnice's 500 ms. 0: none.
        public var checkTriggerIntervalMs: UInt32 = 50
        /// While the agent has never connected and ``checkingTimeoutMs`` has not passed, a
        /// libnice `failed` (every pair's checks unanswered, then ``idleTimeoutMs``) is not
        /// final: the checks start over with the same credentials and candidates, as often
        /// as it comes, and `failed` comes only with the time limit (libwebrtc too keeps
        /// checking until its timeout). Under loss libnice can stall otherwise: the
        /// controlled side's check succeeded and it waits for a nomination, the controlling
        /// side's three sends were lost and it sends nothing more. False: libnice's
        /// `failed` is reported at once.
        public var restartsFailedChecks = true
        /// First retransmission timeout of a gathering request to a STUN/TURN server, ms,
        /// doubling (RFC 5389 §7.2.1; libnice's default 200 ms). Not for checks: their
        /// first wait is max(500 ms, Ta × pairs in progress) (RFC 8445 §14.3).
        public var stunInitialTimeoutMs: UInt32 = 100
        /// libnice's consent freshness (RFC 7675). Off by default: libnice sends one
        /// consent check every ~5 s, never resent, and fails the pair 10 s after the last
        /// answer (RFC 7675: 30 s), so at 25 % loss two lost checks end a healthy call.
        /// Without it the inactivity watch below fails a dead pair (``inactivityFailureMs``).
        public var consentFreshness = false
        /// While traffic is expected (``IceAgent/setExpectsTraffic(_:)``), a connected
        /// agent that receives no datagram for this long reports `disconnected`, and
        /// `connected`/`completed` again when datagrams return, ms (2.5 s: the silence after
        /// which Chromium counts a connection as no longer receiving).
        public var inactivityTimeoutMs: UInt32 = 2_500
        /// While traffic is expected, no datagram for this long makes the agent `failed`,
        /// ms (30 s: RFC 7675's consent lifetime). Media toward us arrives every 20 ms,
        /// so loss alone never comes near it.
        public var inactivityFailureMs: UInt32 = 30_000
        /// A remote candidate whose name has not resolved this long after it was added
        /// is dropped (``IceEvent/remoteCandidateDropped(candidate:reason:)``), ms.
        public var nameResolutionTimeoutMs: UInt32 = 2_000

        /// A configuration with the defaults above for the given role.
        public init(controlling: Bool) { self.controlling = controlling }
    }
}
