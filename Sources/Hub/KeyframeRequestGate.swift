// KeyframeRequestGate: PLI/FIR from every subscriber of a shared encoder merged into one and rate-limited — at most one forced key frame per 500 ms (RFC 4585 §6.3.1, RFC 5104 §4.3.1; the rule of issue 35).

/// Decides when a shared encoder forces a key frame, given the key-frame requests (PLI,
/// RFC 4585 §6.3.1; FIR, RFC 5104 §4.3.1; a subscriber that joins) of all its subscribers.
///
/// - Requests are merged: while one waits for a forced key frame, more requests join it
///   (``Counts/merged``) and the one key frame serves them all.
/// - At most one key frame is forced per ``minimumIntervalMs`` (500 ms): a request within
///   that time of the last forced key frame waits, and the first frame encoded once the
///   interval has passed is forced (``Outcome/deferred(untilMs:)``); so every request is
///   served within ``minimumIntervalMs`` plus one frame interval.
/// - A key frame the encoder makes by itself (its `kf_max_dist`, a scene cut) satisfies the
///   waiting requests (``Counts/satisfiedByNatural``) and does not count against the limit.
///
/// A value with no clock of its own: every call takes `nowMs` (any monotonic millisecond
/// clock), so tests drive it. The shared source holds it under a lock: requests come
/// from the subscribers' loops, frames from the source's thread.
public struct KeyframeRequestGate: Sendable, Equatable {
    /// The default interval: 500 ms.
    public static let defaultMinimumIntervalMs: Int64 = 500

    /// What became of one request.
    public enum Outcome: Sendable, Equatable {
        /// The next frame encoded is forced to a key frame.
        case nextFrame
        /// The last forced key frame is younger than the interval: the first frame encoded
        /// at or after `untilMs` is forced.
        case deferred(untilMs: Int64)
        /// A request already waits: this one is served by the same key frame.
        case merged
    }

    /// What the gate did (counters since it was made).
    public struct Counts: Sendable, Equatable {
        /// Requests received.
        public var requests = 0
        /// Requests that joined one already waiting.
        public var merged = 0
        /// Requests that had to wait for the interval to pass.
        public var deferred = 0
        /// Key frames forced.
        public var forced = 0
        /// Waiting requests a key frame the encoder made by itself satisfied.
        public var satisfiedByNatural = 0

        /// All zero.
        public init() {}
    }

    /// Least time between two forced key frames, ms.
    public let minimumIntervalMs: Int64
    /// When the last key frame was forced (ms), nil before the first.
    public private(set) var lastForcedAtMs: Int64?
    /// True while a request waits for a key frame.
    public private(set) var pending = false
    /// The counters.
    public private(set) var counts = Counts()

    /// A gate forcing at most one key frame per `minimumIntervalMs` (≥ 0).
    public init(minimumIntervalMs: Int64 = KeyframeRequestGate.defaultMinimumIntervalMs) {
        self.minimumIntervalMs = max(0, minimumIntervalMs)
    }

    /// A key frame is asked for at `nowMs`; returns when it will come.
    @discardableResult
    public mutating func request(nowMs: Int64) -> Outcome {
        counts.requests += 1
        if pending {
            counts.merged += 1
            return .merged
        }
        pending = true
        if let last = lastForcedAtMs, nowMs - last < minimumIntervalMs {
            counts.deferred += 1
            return .deferred(untilMs: last + minimumIntervalMs)
        }
        return .nextFrame
    }

    /// Asked before each frame is encoded at `nowMs`: true when this frame is to be forced
    /// to a key frame (a request waits and the interval has passed), which is then counted
    /// as forced at `nowMs`.
    public mutating func takeForce(nowMs: Int64) -> Bool {
        guard pending else { return false }
        if let last = lastForcedAtMs, nowMs - last < minimumIntervalMs { return false }
        pending = false
        lastForcedAtMs = nowMs
        counts.forced += 1
        return true
    }

    /// Told after each frame: a key frame the encoder made without being forced (`forced`
    /// false) satisfies the waiting requests.
    public mutating func produced(isKeyframe: Bool, forced: Bool) {
        guard isKeyframe, !forced, pending else { return }
        pending = false
        counts.satisfiedByNatural += 1
    }
}
