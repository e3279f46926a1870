// W3C RTCConfiguration for a PeerConnection, and the errors its methods throw.
import DTLS
import Hub
import ICE

/// W3C `RTCBundlePolicy`; `peer` always bundles everything on one transport.
public enum BundlePolicy: String, Sendable { case maxBundle = "max-bundle" }

/// How the frame markers' capture times (the sender's wall clock) are related to ours for
/// the `peer-e2e` latency.
public enum EndToEndClockChoice: String, Sendable, CaseIterable {
    /// One clock when the selected pair's remote address is one of this host's, else the
    /// RTCP sender-report estimate.
    case automatic = "auto"
    /// One clock, whatever the addresses say (hosts synchronised by PTP or NTP to well
    /// under a millisecond).
    case shared
    /// Always the estimate from the sender's RTCP sender reports (RFC 3550 §6.4.1).
    case senderReports = "rtcp-sr"
}

/// W3C `RTCConfiguration` for ``PeerConnection``.
public struct PeerConnectionConfiguration: Sendable {
    /// STUN and TURN servers (RFC 7064/7065 URLs parsed into ``IceServer``).
    public var iceServers: [IceServer] = []
    /// `all` or `relay`.
    public var iceTransportPolicy: IceTransportPolicy = .all
    /// Always max-bundle: one ICE and one DTLS transport for every m-section.
    public var bundlePolicy: BundlePolicy = .maxBundle
    /// Our DTLS certificate; nil uses the process's shared one (ECDSA P-256, 30 days).
    public var certificate: Certificate?
    /// Interfaces to gather on (IP literals); empty: all but loopback (loopback when
    /// nothing else exists). `["127.0.0.1"]` for a loopback call.
    public var localAddresses: [String] = []
    /// Gather TCP candidates too (RFC 6544).
    public var tcpCandidates = true
    /// ICE gives up when no pair answers within this time after checks start, ms
    /// (state `failed`, reason says so). Default 30 000 ms; a call sets it to `--timeout`.
    /// libnice fails earlier when every pair has failed (``IceAgent/Configuration/idleTimeoutMs``).
    public var iceCheckingTimeoutMs: UInt32 = 30_000
    /// After an ICE restart (``PeerConnection/restartIce()``, or the peer's), ICE is
    /// `failed` when the restarted checks find no working pair within this time, ms
    /// (default 15 000: a call's restart has 15 s).
    public var iceRestartTimeoutMs: UInt32 = 15_000
    /// DTLS gives up when the handshake is not done this long after it started (when
    /// this side's ICE connected), ms (state `failed`). Default 30 000 ms; a call sets it
    /// to `--timeout`. It must cover the other side's ICE connecting later than ours.
    public var dtlsTimeoutMs: UInt32 = 30_000
    /// Minimum RTCP report interval, ms (RFC 3550 §6.2 reduced minimum; ~1 s).
    public var rtcpMinimumIntervalMs: Double = 1_000
    /// How end-to-end latency (`peer-e2e`) relates the sender's clock to ours.
    public var endToEndClock: EndToEndClockChoice = .automatic
    /// The process's media hub, for senders that send a shared source
    /// (``PeerConnection/addTransceiver(_:direction:shared:encoding:receive:)``): one source,
    /// encoder and packetization for every connection that sends it. Nil (the default):
    /// every sender pulls and encodes its own source on its own thread.
    public var mediaHub: MediaHub?
    /// The connection's name in the log's lines (`peer load`: `load.17`), written before
    /// their component (`12.345 load.17 dtls: …`); nil: none.
    public var logTag: String?
    /// Test hook: drop an incoming datagram when this returns true (loss injection).
    public var inboundDropFilter: (@Sendable ([UInt8]) -> Bool)?
    /// Test hook: runs on the thread renewing the transports for a new DTLS association,
    /// before they are renewed (``PeerConnection/renewTransportsIfNeeded()``), to widen
    /// that window for the tests of what the loop thread does meanwhile.
    var beforeTransportRenewal: (@Sendable () -> Void)?

    /// The defaults above.
    public init() {}

    /// The ICE agent's configuration for this connection, `controlling` or not (RFC 8445 §6.1.1).
    func iceAgentConfiguration(controlling: Bool) -> IceAgent.Configuration {
        var c = IceAgent.Configuration(controlling: controlling)
        c.servers = iceServers
        c.policy = iceTransportPolicy
        c.localAddresses = localAddresses
        c.tcp = tcpCandidates
        c.checkingTimeoutMs = iceCheckingTimeoutMs
        c.logTag = logTag
        return c
    }
}

/// Why a ``PeerConnection`` call failed. Each case names the value at fault.
public enum PeerConnectionError: Error, Equatable, CustomStringConvertible {
    /// The call is not allowed in this signaling state (W3C InvalidStateError).
    case invalidState(operation: String, state: String)
    /// The SDP did not parse (line number and expectation inside) or is unusable.
    case invalidDescription(String)
    /// A candidate line did not parse or could not be used.
    case invalidCandidate(candidate: String, reason: String)
    /// The connection is closed.
    case closed
    /// ICE, DTLS or a codec could not be set up; the reason names the part.
    case setup(String)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case let .invalidState(op, state): return "\(op) is not allowed in signaling state \(state)"
        case let .invalidDescription(reason): return "unusable session description: \(reason)"
        case let .invalidCandidate(c, reason): return "candidate \"\(c)\": \(reason)"
        case .closed: return "the peer connection is closed"
        case let .setup(reason): return reason
        }
    }
}
