// ConnectionStateMachine: a PeerConnection's W3C connection state derived from its ICE and DTLS states, the failure reason, and the set-up times.
import DTLS
import ICE

/// The W3C `RTCPeerConnectionState` of one connection (webrtc-pc §4.3.3, "update the
/// connection state"), derived from the ICE connection state and the DTLS transport
/// state, plus why it failed and when the set-up steps were reached.
///
/// `failed` and `closed` are final: later ICE or DTLS changes are recorded but no longer
/// move the state — except that an ICE restart (``iceRestarted(limitMs:)``) takes a
/// connection whose path failed, its DTLS association intact, back to `connecting`. The
/// one way to `closed` other than ``close()`` is the peer's DTLS `close_notify` on a
/// connected call (the call is over, not failed).
///
/// A value type with no lock: its owner (``PeerConnection``) keeps it under its lock.
/// Times are monotonic milliseconds (`monotonicMs()`).
struct ConnectionStateMachine {
    /// The W3C connection state.
    private(set) var state: PeerConnectionState = .new
    /// Why the state is `failed` (nil otherwise).
    private(set) var failure: String?
    /// The last ICE connection state reported.
    private(set) var ice: IceConnectionState = .new
    /// The last DTLS transport state reported.
    private(set) var dtls: DTLSTransportState = .new
    /// When the first description was set (offer or answer, ours or theirs).
    private(set) var startMs: Int64?
    /// When ICE first reached `connected` or `completed`.
    private(set) var iceConnectedMs: Int64?
    /// When DTLS first reached `connected`.
    private(set) var dtlsConnectedMs: Int64?
    /// ICE's checking limit, for the failure reason (ms).
    let iceCheckingTimeoutMs: UInt32
    /// The checking limit of the last ICE restart (nil before one), for the failure reason (ms).
    private var restartLimitMs: UInt32?

    /// A machine in `new`.
    init(iceCheckingTimeoutMs: UInt32) { self.iceCheckingTimeoutMs = iceCheckingTimeoutMs }

    /// True once closed (locally or by the peer).
    var isClosed: Bool { state == .closed }
    /// True when ICE is `connected` or `completed`.
    var iceIsConnected: Bool { ice == .connected || ice == .completed }

    /// A description was set at `now`: the set-up clock starts (the first time).
    mutating func descriptionSet(now: Int64) {
        if startMs == nil { startMs = now }
    }

    /// ICE reported `newState` at `now`. Returns the events and whether ICE connected for
    /// the first time (DTLS may start). `dtlsError` is the DTLS transport's error, for the
    /// reason should DTLS be the cause of a failure.
    mutating func iceChanged(_ newState: IceConnectionState, now: Int64, dtlsError: String?) -> (events: [PeerConnectionEvent], firstConnected: Bool) {
        ice = newState
        var first = false
        // A restart that connected is over: a later failure is not its.
        if iceIsConnected { restartLimitMs = nil }
        if iceIsConnected && iceConnectedMs == nil {
            iceConnectedMs = now
            first = true
        }
        return ([.iceConnectionState(newState)] + update(now: now, dtlsError: dtlsError), first)
    }

    /// DTLS reported `newState` (with its error, for `failed`) at `now`. Returns the events
    /// and whether DTLS connected for the first time (media may start).
    mutating func dtlsChanged(_ newState: DTLSTransportState, error: DTLSError?, now: Int64) -> (events: [PeerConnectionEvent], firstConnected: Bool) {
        dtls = newState
        var events: [PeerConnectionEvent] = [.dtlsState(newState)]
        var first = false
        if newState == .connected && dtlsConnectedMs == nil {
            dtlsConnectedMs = now
            first = true
        }
        if newState == .failed {
            events += fail("DTLS failed: \(error.map { "\($0)" } ?? "handshake failed")")
        } else if newState == .closed && state == .connected {
            // The peer hung up (close_notify): the call is over, not failed.
            state = .closed
            failure = nil
            events.append(.connectionState(.closed, reason: "closed by the peer (DTLS close_notify)"))
        } else {
            events += update(now: now, dtlsError: error.map { "\($0)" })
        }
        return (events, first)
    }

    /// Fails the connection with `reason` unless it is already failed or closed; returns the events.
    mutating func fail(_ reason: String) -> [PeerConnectionEvent] {
        guard state != .failed, state != .closed else { return [] }
        state = .failed
        failure = reason
        return [.connectionState(.failed, reason: reason)]
    }

    /// An ICE restart was applied (RFC 8445 §9; W3C `restartIce()` may recover `failed`):
    /// a connection that failed for its ICE path while DTLS stayed connected is
    /// `connecting` again; `limitMs` is the restarted checks' limit, for the reason should
    /// they fail too. Returns the events.
    mutating func iceRestarted(limitMs: UInt32) -> [PeerConnectionEvent] {
        restartLimitMs = limitMs
        guard state == .failed, dtls == .connected, failure?.hasPrefix("ICE") == true else { return [] }
        state = .connecting
        failure = nil
        return [.connectionState(.connecting, reason: nil)]
    }

    /// A new DTLS association began (the peer came back with a new certificate, RFC 8842
    /// §5): the DTLS transport is `new` until its handshake runs, so the connection is
    /// `connecting` again (a failed or closed one stays so). Returns the events.
    mutating func dtlsRenewed(now: Int64) -> [PeerConnectionEvent] {
        dtls = .new
        return [.dtlsState(.new)] + update(now: now, dtlsError: nil)
    }

    /// Closed locally (``PeerConnection/close()``); the caller reports the event.
    mutating func close() { state = .closed }

    /// The set-up times in ms since the first description; `firstFrameMs` is when the
    /// first remote frame arrived (monotonic ms), if it has.
    func timings(firstFrameMs: Int64?) -> ConnectionTimings {
        var t = ConnectionTimings()
        guard let start = startMs else { return t }
        t.iceConnectedMs = iceConnectedMs.map { Double($0 - start) }
        t.dtlsConnectedMs = dtlsConnectedMs.map { Double($0 - start) }
        t.firstRemoteFrameMs = firstFrameMs.map { Double($0 - start) }
        return t
    }

    /// The state ICE and DTLS together give (webrtc-pc §4.3.3), reported when it changed.
    private mutating func update(now: Int64, dtlsError: String?) -> [PeerConnectionEvent] {
        guard state != .closed, state != .failed else { return [] }
        let next: PeerConnectionState
        switch (ice, dtls) {
        case (.failed, _): next = .failed
        case (_, .failed): next = .failed
        case (.disconnected, _): next = .disconnected
        case (.connected, .connected), (.completed, .connected): next = .connected
        case (.checking, _), (.connected, _), (.completed, _): next = .connecting
        default: next = dtls == .connecting ? .connecting : .new
        }
        guard next != state else { return [] }
        if next == .failed {
            let reason = ice == .failed
                ? restartLimitMs.map { "ICE failed: the ICE restart found no working pair within \($0) ms (the peer is gone or unreachable)" } ?? (iceConnectedMs == nil ? "ICE failed: no candidate pair worked, \(startMs.map { "\(now - $0) ms after the offer/answer, " } ?? "")"
                    + "limit \(iceCheckingTimeoutMs) ms (every pair's checks went unanswered, or the limit passed)"
                    : "ICE failed: the path to the peer stopped working (nothing received for 30 s, or keepalive checks unanswered: the peer is gone or unreachable)")
                : "DTLS failed: \(dtlsError ?? "handshake failed")"
            return fail(reason)
        }
        state = next
        return [.connectionState(next, reason: nil)]
    }
}
