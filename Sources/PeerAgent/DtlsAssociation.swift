// DtlsAssociation: one DTLS association of a connection's transport — its number, the roles the answer that began it gave, the fingerprints its handshake checks, its start and deadline (RFC 8842 §5, RFC 8829 §5.11); and DtlsRestart, what a new one reports.
import DTLS
import SDP

/// One DTLS association of a ``PeerConnection``'s DTLS-SRTP transport (RFC 8842 §5).
///
/// A connection's first association begins with its first answer. Another begins when a
/// remote description that restarts ICE carries a new fingerprint (RFC 8829 §5.11, RFC
/// 8842 §5.2–5.4: the peer process restarted, or the page reloaded and kept its
/// signaling): a new handshake in the roles that negotiation gives, the peer's certificate
/// checked against the new fingerprint, new SRTP keys, a new SCTP association. Its
/// handshake starts once the restarted ICE has a selected pair (the old pair led to the
/// old peer). A new fingerprint without an ICE restart is refused (``Reoffer``).
///
/// A value type with no lock: its owner (``PeerConnection``) keeps it under its lock.
struct DtlsAssociation: Sendable {
    /// 0 for the connection's first association, one more for each new one.
    var generation = 0
    /// Our role (`client` sends the ClientHello), fixed by the answer that began it (RFC
    /// 8842 §5.5: later answers keep it); nil before the first answer.
    var role: DTLSRole?
    /// The peer's fingerprints from that negotiation: its certificate must match one.
    var remoteFingerprints: [Fingerprint] = []
    /// The handshake was started (at most once per association).
    var started = false
    /// The handshake's deadline timer on the loop (0: none).
    var timer: UInt32 = 0
    /// How many ICE restarts the connection had applied when this association began: a
    /// new association's handshake waits for a pair selected after the last of them.
    var iceRestarts = 0
    /// The DTLS-SRTP transport's number for this association (its state changes carry it,
    /// ``DtlsSrtpTransport/beginNewAssociation()``): 0 for the first; nil for a new one until
    /// the transport is renewed for it — every state change before that is the old one's.
    var transportGeneration: Int? = 0

    /// Our `a=setup` in this association (`active` for its client), once the roles are fixed.
    var setup: Setup? { role.map { $0 == .client ? .active : .passive } }

    /// True when `prints` (a remote description's) name another certificate than this
    /// association's: none of them matches its first fingerprint (RFC 8122 §5). False
    /// before the first association's roles are fixed, or when `prints` is empty.
    func isOtherCertificate(_ prints: [Fingerprint]) -> Bool {
        guard role != nil, let old = remoteFingerprints.first, !prints.isEmpty else { return false }
        return !prints.contains { $0.matches(old) }
    }
}

/// A new ``DtlsAssociation`` began and the transports still hold the old one: what
/// ``PeerConnection/renewTransportsIfNeeded()`` does once the connection's lock is released.
/// While one is pending, no handshake starts (the transports would start the old one).
struct TransportRenewal: Sendable {
    /// The generation of the association it renews the transports for.
    var generation: Int
    /// The handshake deadline timers of the associations it replaces, to cancel.
    var timers: [UInt32]
    /// What to report once the transports are renewed (one per association begun, in order).
    var restarts: [DtlsRestart]
    /// A thread is renewing the transports for it now.
    var underway = false
}

/// What ``PeerConnectionEvent/dtlsRestarted(_:)`` reports: the peer came back with a new
/// certificate through an ICE restart, and a new DTLS association begins (RFC 8829 §5.11,
/// RFC 8842 §5).
public struct DtlsRestart: Sendable, Equatable {
    /// The new fingerprint the peer's certificate is checked against, as in SDP
    /// (`sha-256 AB:CD:…`).
    public var fingerprint: String
    /// The fingerprint of the association it replaces.
    public var previousFingerprint: String
    /// Our role in the new association: `client` (we send the ClientHello) or `server`.
    public var role: String
    /// The association's number: 1 for the first new one, then 2, …
    public var generation: Int
    /// True when our offer began it (the peer's new certificate came in the answer to our
    /// ICE restart); false when the peer's offer did.
    public var offeredByUs: Bool
}
