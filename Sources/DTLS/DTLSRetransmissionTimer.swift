// DTLSRetransmissionTimer: the handshake's retransmission timeouts, started from a round trip the connection has seen and doubled per RFC 6347 §4.2.4.1.

/// The timeouts after which a DTLS handshake flight that got no answer is sent again
/// (RFC 6347 §4.2.4.1), as OpenSSL asks for them through `DTLS_set_timer_cb`: the first
/// wait of each flight is ``initialMs``, each further wait of the same flight doubles the
/// last, up to ``maximumMs``.
///
/// RFC 6347 §4.2.4.1 suggests 1 s for the first wait (a SHOULD for a path whose round
/// trip nobody knows) and backing off to no less than 60 s. A WebRTC connection knows its
/// round trip: its ICE connectivity checks have just crossed the same path. So the first
/// wait is twice that round trip (a flight's answer comes one round trip later, plus the
/// peer's work on it), never under ``minimumInitialMs``, and ``defaultInitialMs`` when
/// no round trip is known; libwebrtc sets its DTLS timer from its ICE round trip the same
/// way. A lost flight then costs about a round trip, not a second. A deliberate deviation
/// from the SHOULD, as browsers make it.
public struct DTLSRetransmissionTimer: Sendable, Equatable, CustomStringConvertible {
    /// The shortest first wait, ms (50): below it a loaded machine's scheduling delay and
    /// the peer's handshake work (a signature, ECDHE) alone would cause needless resends.
    public static let minimumInitialMs: UInt32 = 50
    /// The first wait when no round trip is known, ms (100).
    public static let defaultInitialMs: UInt32 = 100
    /// The longest wait, ms (3 s; RFC 6347 suggests 60 s, longer than the 10 s a
    /// connection gives its handshake: the cap keeps about seven resends inside that).
    public static let maximumMs: UInt32 = 3_000

    /// The first wait of each flight, ms, within ``minimumInitialMs``…``maximumMs``.
    public let initialMs: UInt32

    /// The timer of a connection whose path's round trip is `roundTripMs` (ms; the ICE
    /// connectivity checks', `IceAgent.roundTripMs`): twice it, within
    /// ``minimumInitialMs``…``maximumMs``; nil, negative or not a number: ``defaultInitialMs``.
    public init(roundTripMs: Double?) {
        guard let rtt = roundTripMs, rtt.isFinite, rtt >= 0 else {
            initialMs = Self.defaultInitialMs
            return
        }
        let doubled = (2 * rtt).rounded(.up)
        initialMs = doubled >= Double(Self.maximumMs) ? Self.maximumMs : max(Self.minimumInitialMs, UInt32(doubled))
    }

    /// The timer whose first wait is `initialMs`, clamped to ``minimumInitialMs``…``maximumMs``.
    public init(initialMs: UInt32) {
        self.initialMs = min(max(initialMs, Self.minimumInitialMs), Self.maximumMs)
    }

    /// This timer, or the one a round trip of `roundTripMs` gives (``init(roundTripMs:)``)
    /// when its first wait is shorter: a later, better measure only lowers the first wait.
    public func lowered(byRoundTripMs roundTripMs: Double) -> DTLSRetransmissionTimer {
        let other = DTLSRetransmissionTimer(roundTripMs: roundTripMs)
        return other.initialMs < initialMs ? other : self
    }

    /// The wait OpenSSL should arm next, µs, given the one that just ran out
    /// (`previousUs`; 0 when a flight is sent for the first time): ``initialMs`` for a
    /// new flight, else double the last, at most ``maximumMs`` (RFC 6347 §4.2.4.1).
    public func nextTimeoutUs(afterUs previousUs: UInt32) -> UInt32 {
        let maximumUs = Self.maximumMs * 1000
        if previousUs == 0 { return initialMs * 1000 }
        return previousUs >= maximumUs / 2 ? maximumUs : previousUs * 2
    }

    /// "first 50 ms, doubling to 3000 ms".
    public var description: String { "first \(initialMs) ms, doubling to \(Self.maximumMs) ms" }
}
