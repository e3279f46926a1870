// What an ICE agent reports and throws: connection states (W3C RTCIceConnectionState),
// transport policy, the selected pair (RFC 8445 §8.1.1), events and errors.
import SDP

/// ICE connection state, with the values of the W3C `RTCIceConnectionState`. From
/// libnice's component state: GATHERING → `new`, CONNECTING → `checking`, CONNECTED →
/// `connected`, READY (checks concluded) → `completed`, FAILED → `failed` (before a first
/// connection the checks start over instead, until ``IceAgent/Configuration/checkingTimeoutMs``:
/// ``IceAgent/Configuration/restartsFailedChecks``), DISCONNECTED after a connection →
/// `disconnected`; ``IceAgent/close()`` → `closed`; no connection within
/// ``IceAgent/Configuration/checkingTimeoutMs`` → `failed`.
public enum IceConnectionState: String, Sendable, Equatable {
    case new, checking, connected, completed, failed, disconnected, closed
}

/// Which candidates may be used (W3C `RTCIceTransportPolicy`).
public enum IceTransportPolicy: String, Sendable, Equatable {
    /// Host, server-reflexive and relay candidates.
    case all
    /// Relay (TURN) candidates only.
    case relay
}

/// The pair of candidates ICE selected for sending (RFC 8445 §8.1.1).
public struct IceCandidatePair: Sendable, Equatable {
    /// Our candidate of the pair.
    public var local: Candidate
    /// The peer's candidate of the pair.
    public var remote: Candidate
}

/// What an ``IceAgent`` reports, on the loop thread, in order.
public enum IceEvent: Sendable, Equatable {
    /// A local candidate was found (trickle it to the peer, RFC 8838).
    case localCandidate(Candidate)
    /// Gathering finished: no more local candidates (send end-of-candidates).
    case gatheringComplete
    /// The connection state changed.
    case state(IceConnectionState)
    /// A new candidate pair was selected.
    case selectedPair(IceCandidatePair)
    /// Gathering ended without the candidates the policy needs (with policy `relay`:
    /// no relay candidate, e.g. wrong TURN credentials or an unreachable server).
    case gatheringFailed(String)
    /// A remote candidate given by name (mDNS `.local` or a host name) was dropped: the
    /// name did not resolve in time or at all, or libnice refused the result. `reason`
    /// names the name and why; the agent goes on with the other candidates.
    case remoteCandidateDropped(candidate: String, reason: String)
}

/// Errors of the ICE agent; each names the value at fault.
public enum IceError: Error, Equatable, CustomStringConvertible {
    /// libnice refused to create the agent or its stream.
    case agentCreation(String)
    /// A STUN/TURN server URL or address could not be used.
    case server(IceServerError)
    /// libnice refused the TURN server settings.
    case relayRejected(String)
    /// An interface address that is not an IP literal.
    case badLocalAddress(String)
    /// Gathering could not start (e.g. no usable interface).
    case gatheringFailed(String)
    /// A remote candidate libnice could not take; `reason` says why (a component other
    /// than 1, a line libnice rejects, a closed agent). Names that do not resolve are
    /// reported later as ``IceEvent/remoteCandidateDropped(candidate:reason:)``.
    case remoteCandidate(candidate: String, reason: String)
    /// The agent was closed.
    case closed

    public var description: String {
        switch self {
        case .agentCreation(let s): return "cannot create ICE agent: \(s)"
        case .server(let e): return e.description
        case .relayRejected(let s): return "libnice rejected TURN server \(s)"
        case .badLocalAddress(let s): return "local address \"\(s)\" is not an IP address"
        case .gatheringFailed(let s): return "ICE gathering failed: \(s)"
        case let .remoteCandidate(c, reason): return "remote candidate \"\(c)\" not used: \(reason)"
        case .closed: return "ICE agent closed"
        }
    }
}
