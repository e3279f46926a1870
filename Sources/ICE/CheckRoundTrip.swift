// CheckRoundTrip: the round trip an agent's connectivity checks took to connect, measured by the agent (RFC 8445 §7.2; libnice reports none).
import CGLib

/// How long this agent's connectivity checks took from their start to `connected`: an
/// upper bound on the path's round trip, measured on GLib's monotonic clock.
///
/// libnice exposes no round trip, and the responses to its checks never reach us, so the
/// agent times its checks as a whole: from when libnice can first send one (it is
/// `checking`, with the remote credentials set, whichever comes later) to `connected`.
/// No check was sent before that start and one round trip completed before the end, so
/// the time is at least a round trip; on top it holds libnice's pacing (Ta per pair
/// waiting ahead) and, on the controlled side, the wait for the controlling side's
/// nomination. Only a set-up that lost nothing gives a sample: under loss the time holds
/// the recovery too (at 15 % loss it was 50–210 ms in a quarter of the set-ups on a
/// loopback path whose round trip is under 1 ms, and a DTLS timer started from it waited
/// up to 420 ms for a lost flight). So a time of ``retransmissionMs`` or more is no
/// sample (libnice sends a check again only then: a check or its answer was lost), nor
/// one in which the agent's ``CheckTriggers`` had to send a request (the checks had not
/// connected within its first interval: one may have been lost).
///
/// Confined to the agent's loop thread (a value in the agent's loop state).
struct CheckRoundTrip {
    /// libnice's first retransmission of a connectivity check, ms (its
    /// `STUN_TIMER_DEFAULT_TIMEOUT`, RFC 8445 §14.3's 500 ms floor of the RTO).
    static let retransmissionMs = 500.0

    /// When the remote credentials were set and when the agent became `checking`, µs
    /// (0: not yet since the last ``reset()``).
    private var credentialsUs: gint64 = 0
    private var checkingUs: gint64 = 0
    /// The measured time, ms; nil before `connected` or when it was no sample.
    private(set) var milliseconds: Double?

    /// The remote credentials were set at `nowUs`.
    mutating func credentialsSet(nowUs: gint64) { if credentialsUs == 0 { credentialsUs = nowUs } }

    /// The agent became `checking` at `nowUs`.
    mutating func checkingStarted(nowUs: gint64) { if checkingUs == 0 { checkingUs = nowUs } }

    /// The agent connected (for the first time since the last reset) at `nowUs`;
    /// `triggered`: ``CheckTriggers`` sent requests before.
    mutating func connected(nowUs: gint64, triggered: Bool) {
        guard milliseconds == nil, credentialsUs > 0, checkingUs > 0, !triggered else { return }
        let ms = Double(nowUs - max(credentialsUs, checkingUs)) / 1000
        milliseconds = ms >= 0 && ms < Self.retransmissionMs ? ms : nil
    }

    /// Forgets everything (an ICE restart: new checks on new credentials).
    mutating func reset() { self = CheckRoundTrip() }
}
