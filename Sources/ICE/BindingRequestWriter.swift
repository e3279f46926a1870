// BindingRequestWriter: the STUN Binding requests of connectivity checks that the agent sends besides libnice's own (RFC 8445 §7.2.2, RFC 5389), built with libnice's STUN library.
import CNice

/// Writes ICE connectivity-check requests (RFC 8445 §7.2.2: USERNAME, PRIORITY,
/// ICE-CONTROLLING or ICE-CONTROLLED, USE-CANDIDATE when asked, MESSAGE-INTEGRITY,
/// FINGERPRINT) with libnice's STUN library, for ``SelectedPairChecks`` and
/// ``CheckTriggers``. libnice answers the peer's responses to them with nothing: they
/// match none of its transactions and are dropped; what counts is what the requests make
/// the peer do (a triggered check, RFC 8445 §7.3.1.4).
///
/// Not thread-safe: each owner keeps its writer in its loop-confined state (the STUN
/// library keeps pointers into the buffers allocated here).
final class BindingRequestWriter {
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

    private let stunAgent = UnsafeMutablePointer<StunAgent>.allocate(capacity: 1)
    private let message = UnsafeMutablePointer<StunMessage>.allocate(capacity: 1)
    /// The attributes the STUN agent knows (it keeps the pointer), 0-terminated.
    private let knownAttributes = UnsafeMutablePointer<UInt16>.allocate(capacity: 1)
    /// The ICE-CONTROLLING/ICE-CONTROLLED tie-breaker of every request (RFC 8445 §7.1.3:
    /// one per agent; libnice's own is not readable, and our requests never decide a role
    /// conflict: the peer's answer to one goes unread).
    private let tieBreaker = UInt64.random(in: .min ... .max)

    init() {
        knownAttributes.initialize(to: 0)
        message.initialize(to: StunMessage())
    }

    deinit {
        stunAgent.deallocate()
        message.deallocate()
        knownAttributes.deallocate()
    }

    /// One Binding request with `c`, USE-CANDIDATE when `nominate` (only the controlling
    /// side nominates, §8.1.1); nil when libnice's STUN library cannot build it.
    func request(_ c: Credentials, nominate: Bool) -> [UInt8]? {
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
                                                    nominate && c.controlling, c.controlling, c.priority, tieBreaker, nil,
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
