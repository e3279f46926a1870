// VideoFrameTiming: the W3C inbound-rtp figures from when frames were rendered — framesPerSecond, inter-frame delays, freezes and pauses (webrtc-stats §7.4 RTCInboundRtpStreamStats).

/// What the times of a receiver's rendered frames say, as W3C webrtc-stats defines it for
/// `inbound-rtp` (`peer` renders nothing: a frame counts when it is decoded, or when it
/// is written with decoding off):
///
/// - `framesPerSecond`: frames rendered in the last second.
/// - `totalInterFrameDelay`, `totalSquaredInterFrameDelay`: the sum (and sum of squares)
///   of the times between consecutive frames, seconds.
/// - A freeze: a frame whose delay from the one before is at least
///   max(3 × the average delay, the average + 150 ms), the average being that of the last
///   30 delays before it, once there are 5 (`freezeCount`, `totalFreezesDuration`: the sum
///   of those delays).
/// - A pause: more than 5 s without a frame (`pauseCount`, counted when the next frame
///   comes; `totalPausesDuration`). A pause is not also a freeze, nor part of the average.
///
/// A value type; its owner keeps it on one thread (the receiver's sink thread).
struct VideoFrameTiming: Sendable, Equatable {
    /// Freeze threshold terms (W3C): factor of the average and minimum increase, seconds.
    static let freezeFactor = 3.0, freezeMinimumIncrease = 0.150
    /// Longest gap that is not a pause, seconds.
    static let pauseThreshold = 5.0
    /// How many recent delays the average takes.
    static let averageWindow = 30
    /// Delays needed before a freeze can be judged (libwebrtc's figure: a start-up burst
    /// of frames is no freeze).
    static let minimumSamples = 5

    private(set) var totalInterFrameDelay = 0.0
    private(set) var totalSquaredInterFrameDelay = 0.0
    private(set) var freezeCount = 0
    private(set) var totalFreezesDuration = 0.0
    private(set) var pauseCount = 0
    private(set) var totalPausesDuration = 0.0
    private(set) var framesRendered = 0

    private var last: Double?
    /// The last ``averageWindow`` delays, oldest first, and their sum.
    private var recent: [Double] = []
    private var recentSum = 0.0
    /// Render times within the last second (for `framesPerSecond`).
    private var lastSecond: [Double] = []

    /// Notes a frame rendered at `now` (seconds on a monotonic clock). Returns the delay
    /// from the previous frame and whether it was a freeze (nil delay for the first).
    @discardableResult
    mutating func rendered(at now: Double) -> (delay: Double?, freeze: Bool) {
        framesRendered += 1
        lastSecond.append(now)
        trim(now)
        guard let previous = last else {
            last = now
            return (nil, false)
        }
        last = now
        let delay = max(0, now - previous)
        totalInterFrameDelay += delay
        totalSquaredInterFrameDelay += delay * delay
        var freeze = false
        if delay > Self.pauseThreshold {
            // A pause stays out of the average: the frames after it are judged by the rate before.
            pauseCount += 1
            totalPausesDuration += delay
            return (delay, false)
        }
        if recent.count >= Self.minimumSamples {
            let average = recentSum / Double(recent.count)
            if delay >= max(Self.freezeFactor * average, average + Self.freezeMinimumIncrease) {
                freezeCount += 1
                totalFreezesDuration += delay
                freeze = true
            }
        }
        recent.append(delay)
        recentSum += delay
        if recent.count > Self.averageWindow { recentSum -= recent.removeFirst() }
        return (delay, freeze)
    }

    /// Frames rendered in the second before `now` (W3C `framesPerSecond`).
    mutating func framesPerSecond(at now: Double) -> Double {
        trim(now)
        return Double(lastSecond.count)
    }

    private mutating func trim(_ now: Double) {
        var drop = 0
        while drop < lastSecond.count, now - lastSecond[drop] >= 1.0 { drop += 1 }
        if drop > 0 { lastSecond.removeFirst(drop) }
    }
}
