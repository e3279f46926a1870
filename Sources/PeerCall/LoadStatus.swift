// LoadStatus: `peer load`'s aggregates at one moment — how many calls are where, p50/p95/p99 of set-up times over the calls that got there, and of loss, jitter, RTT and frame rate over the connections in progress (or, at the end, over every call's final figures).
import Foundation
import PeerAgent

/// p50, p95, p99 and the largest of a set of figures, by the nearest-rank method (the
/// smallest value with at least p % of the values at or below it).
public struct Percentiles: Sendable, Equatable {
    /// How many values.
    public var count: Int
    /// The percentiles and the largest value, in the values' unit.
    public var p50: Double, p95: Double, p99: Double, max: Double

    /// Of `values` (NaN and infinities left out); nil when none is left.
    public init?(_ values: [Double]) {
        let sorted = values.filter(\.isFinite).sorted()
        guard let last = sorted.last else { return nil }
        func rank(_ p: Double) -> Double { sorted[Swift.max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)] }
        count = sorted.count
        p50 = rank(50)
        p95 = rank(95)
        p99 = rank(99)
        max = last
    }
}

/// The aggregates of a load run at one moment (``LoadRun``'s status each second, and at
/// its end): counts of calls by where they are, the set-up times of every call that got
/// there so far, and the quality figures of the connections in progress.
public struct LoadStatus: Sendable {
    /// Seconds since the first call started.
    public var elapsed: Double
    /// Calls planned, started, in the call now (`established`, not ended), ended, and of
    /// those passed (exit code 0) and failed.
    public var calls = 0, started = 0, inCall = 0, ended = 0, passed = 0, failed = 0
    /// Set-up: offer published (received, by the answerer) → connected, → first frame, ms.
    public var connectMs: Percentiles?, firstFrameMs: Percentiles?
    /// Per connection in progress: inbound loss %, jitter ms, RTT ms, video frames per
    /// second received.
    public var lossPercent: Percentiles?, jitterMs: Percentiles?, rttMs: Percentiles?, fps: Percentiles?
    /// Video freezes so far, every connection in progress.
    public var freezes = 0
    /// Transport kbit/s received and sent, every connection in progress.
    public var kbpsIn = 0.0, kbpsOut = 0.0
    /// Whether the shared router session is joined now.
    public var routerConnected = true

    /// The aggregates of `records` (every call of the plan) `elapsed` seconds in.
    public init(records: [LoadCallRecord], elapsed: Double, routerConnected: Bool) {
        self.elapsed = elapsed
        self.routerConnected = routerConnected
        calls = records.count
        var loss: [Double] = [], jitter: [Double] = [], rtt: [Double] = [], fps: [Double] = []
        for r in records {
            if r.startedAt != nil { started += 1 }
            if r.endedAt != nil {
                ended += 1
                if r.passed { passed += 1 } else { failed += 1 }
            } else if r.established {
                inCall += 1
            }
            for p in r.links.values {
                loss.append(p.lossPercent)
                if let j = p.jitterMs { jitter.append(j) }
                if let t = p.rttMs { rtt.append(t) }
                if let f = p.fpsIn { fps.append(f) }
                freezes += p.freezeCount
                kbpsIn += p.kbpsIn
                kbpsOut += p.kbpsOut
            }
        }
        connectMs = Percentiles(records.compactMap(\.connectMs))
        firstFrameMs = Percentiles(records.compactMap(\.firstFrameMs))
        lossPercent = Percentiles(loss)
        jitterMs = Percentiles(jitter)
        rttMs = Percentiles(rtt)
        self.fps = Percentiles(fps)
    }

    /// The final aggregates: set-up as above, the quality figures over every ended
    /// call's connections (their final `getStats`), freezes added up.
    public static func final(records: [LoadCallRecord], elapsed: Double, routerConnected: Bool) -> LoadStatus {
        var s = LoadStatus(records: records, elapsed: elapsed, routerConnected: routerConnected)
        let links = records.flatMap { $0.final.values }
        s.lossPercent = Percentiles(links.map(\.lossPercent))
        s.jitterMs = Percentiles(links.compactMap(\.jitterMs))
        s.rttMs = Percentiles(links.compactMap(\.rttMs))
        s.fps = Percentiles(links.compactMap(\.framesPerSecond))
        s.freezes = links.reduce(0) { $0 + $1.freezeCount }
        s.kbpsIn = 0
        s.kbpsOut = 0
        return s
    }
}
