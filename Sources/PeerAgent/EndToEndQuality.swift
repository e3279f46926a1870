// EndToEndQuality: what the test pattern's frame markers say of a received stream — capture → written latency, frames missing, out of order or repeated, freezes — the `peer-e2e` stats object (not a W3C name).
import Synchronization

/// End-to-end figures of a video stream that carries `peer`'s frame marker (its frame
/// number and capture time, `Media/FrameMarker`), from each frame written here:
///
/// - latency: when the frame was written (our wall clock, ms since the Unix epoch) minus
///   its capture time (the sender's wall clock), plus the clock offset when the sender's
///   clock is not ours (estimated from its RTCP sender reports, RFC 3550 §6.4.1);
///   p50, p95 (0.5 ms buckets up to 10 s), max, and the p50 of the last second;
/// - frame numbers: missing (below the highest seen, above the lowest, never seen), out of
///   order (lower than one seen before) and repeated — per sender: a new one (the peer's
///   restarted process numbers from 0 again, ``newSource()``) starts them afresh, the
///   counts so far kept;
/// - freezes by the markers' frames, with the W3C rule (``VideoFrameTiming``).
///
/// A value type; the receiver's sink thread keeps it.
struct EndToEndQuality: Sendable, Equatable {
    /// Histogram bucket width, ms, and how many buckets (10 s); longer latencies share the last.
    static let bucketMs = 0.5, buckets = 20_000
    /// Highest frame number tracked (larger ones are ignored: a foreign stream).
    static let maximumFrameNumber = 1 << 24

    private var histogram: [UInt32] = []
    private(set) var samples = 0
    private(set) var maximumMs = -Double.infinity
    private var sumMs = 0.0
    /// Latencies of the frames written in the last second: (written ms, latency ms).
    private var recent: [(Double, Double)] = []
    private var seen: [UInt64] = []
    private(set) var distinct = 0, repeated = 0, outOfOrder = 0
    private(set) var lowest: Int?, highest: Int?
    private(set) var timing = VideoFrameTiming()
    /// Distinct numbers of the current sender, and the missing ones of the senders before it.
    private var sourceDistinct = 0, missingBefore = 0

    static func == (a: EndToEndQuality, b: EndToEndQuality) -> Bool {
        a.samples == b.samples && a.distinct == b.distinct && a.histogram == b.histogram && a.repeated == b.repeated
    }

    /// Notes frame `number` captured at `captureMs` (sender's clock), written at `writtenMs`
    /// (our clock), `monotonic` seconds (for freezes), `offsetMs` the sender's clock minus
    /// ours (0 on one host; nil while it is not known: the frame counts for numbers and
    /// freezes, not for latency).
    mutating func frame(number: Int, captureMs: Int64, writtenMs: Double, monotonic: Double, offsetMs: Double?) {
        guard (0...Self.maximumFrameNumber).contains(number) else { return }
        let word = number / 64, bit = UInt64(1) << UInt64(number % 64)
        if word >= seen.count { seen += [UInt64](repeating: 0, count: word - seen.count + 1) }
        if seen[word] & bit != 0 {
            repeated += 1
            return
        }
        seen[word] |= bit
        distinct += 1
        sourceDistinct += 1
        if let h = highest, number < h { outOfOrder += 1 }
        highest = max(highest ?? number, number)
        lowest = min(lowest ?? number, number)
        timing.rendered(at: monotonic)
        guard let offsetMs else { return }  // clocks not related yet: no latency to count
        let latency = writtenMs - (Double(captureMs) - offsetMs)
        if histogram.isEmpty { histogram = [UInt32](repeating: 0, count: Self.buckets) }
        let index = min(Self.buckets - 1, max(0, Int(latency / Self.bucketMs)))
        histogram[index] &+= 1
        samples += 1
        sumMs += latency
        maximumMs = max(maximumMs, latency)
        recent.append((writtenMs, latency))
        while let first = recent.first, writtenMs - first.0 > 1_000 { recent.removeFirst() }
    }

    /// Frame numbers between the lowest and the highest seen that never came (of each sender).
    var missing: Int {
        guard let lowest, let highest else { return missingBefore }
        return missingBefore + highest - lowest + 1 - sourceDistinct
    }

    /// The stream's sender was replaced (a new DTLS association: the peer's new process,
    /// whose frame numbers start again): numbers are tracked afresh from the next frame;
    /// the counts (distinct, missing, out of order, repeated), latencies and freezes so far stay.
    mutating func newSource() {
        missingBefore = missing
        seen = []
        lowest = nil
        highest = nil
        sourceDistinct = 0
    }

    /// The latency at `fraction` (0…1) of the frames (bucket middle), ms; nil before any.
    func percentile(_ fraction: Double) -> Double? {
        guard samples > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(samples)).rounded(.up)))
        var count = 0
        for (i, n) in histogram.enumerated() where n > 0 {
            count += Int(n)
            if count >= rank { return (Double(i) + 0.5) * Self.bucketMs }
        }
        return nil
    }

    /// The mean latency, ms; nil before any.
    var meanMs: Double? { samples > 0 ? sumMs / Double(samples) : nil }

    /// The median latency of the frames written in the second before `nowMs`; nil if none.
    func recentMedian(nowMs: Double) -> Double? {
        let values = recent.filter { nowMs - $0.0 <= 1_000 }.map(\.1).sorted()
        return values.isEmpty ? nil : values[values.count / 2]
    }
}

/// How the latency's two clocks were related.
public enum EndToEndClock: String, Sendable, Encodable {
    /// Sender and receiver on one host: one clock, the latency is exact.
    case sameHost = "same-host"
    /// Different hosts: the sender's clock estimated from its last RTCP sender report
    /// (its NTP time against our arrival time, less half the round trip).
    case senderReportEstimate = "rtcp-sr-estimate"
    /// Different hosts and no sender report yet: uncorrected.
    case uncorrected
}

/// `peer-e2e`: end-to-end figures from the test pattern's frame markers of one received
/// video stream (``EndToEndQuality``); a stats object of `peer`'s own, not W3C.
public struct EndToEndStats: Sendable, Encodable, Equatable {
    /// Stats object id ("E2E-" and the `inbound-rtp` id).
    public var id: String
    /// Always "peer-e2e".
    public var type = "peer-e2e"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// Id of the `inbound-rtp` object.
    public var inboundRtpId: String
    /// How the clocks were related.
    public var clock: EndToEndClock
    /// The sender's clock minus ours, ms (0 on one host).
    public var clockOffsetMs: Double
    /// Frames whose marker was read.
    public var framesWithMarker: Int
    /// Capture → written latency, ms: median, 95th percentile, largest, mean (nil before
    /// the first marked frame).
    public var latencyP50Ms: Double?, latencyP95Ms: Double?, latencyMaxMs: Double?, latencyMeanMs: Double?
    /// Median capture → written latency of the frames written in the last second, ms
    /// (what the report plots over time); nil when none was.
    public var latencyRecentP50Ms: Double?
    /// Frame numbers never seen between the lowest and the highest seen.
    public var framesMissing: Int
    /// Frames that came after a higher number, and numbers seen twice.
    public var framesOutOfOrder: Int, framesRepeated: Int
    /// Freezes and their total seconds among the marked frames (W3C rule).
    public var freezeCount: Int, totalFreezesDuration: Double
}

/// How a receiver's sender's clock relates to ours, set by the network side (the selected
/// pair, sender reports) and read by the sink thread.
final class EndToEndClockState: Sendable {
    private let value = Mutex<(EndToEndClock, Double)>((.uncorrected, 0))
    /// The relation and the sender's clock minus ours, ms.
    var current: (EndToEndClock, Double) { value.withLock { $0 } }
    /// Sets both.
    func set(_ clock: EndToEndClock, offsetMs: Double) { value.withLock { $0 = (clock, offsetMs) } }
}
