// VideoFrameTimingTests and EndToEndQualityTests: the W3C frame-timing figures (framesPerSecond, inter-frame delays, freezes, pauses) and the markers' end-to-end figures, from made-up frame times.
import Testing
@testable import PeerAgent

@Suite struct VideoFrameTimingTests {
    /// 30 fps with a 600 ms stall twice: two freezes of 0.633 s each (≥ max(3 × 33 ms,
    /// 33 + 150 ms)), no pause; the delays sum to the span; fps is 30 in steady flow.
    @Test func twoStallsOf600msAreTwoFreezes() {
        var t = VideoFrameTiming()
        var now = 10.0
        let interval = 1.0 / 30
        var freezes: [Double] = []
        for i in 0..<300 {
            if i == 100 || i == 200 { now += 0.6 }
            let r = t.rendered(at: now)
            if r.freeze, let d = r.delay { freezes.append(d) }
            now += interval
        }
        #expect(t.freezeCount == 2 && t.pauseCount == 0)
        #expect(freezes.count == 2 && freezes.allSatisfy { abs($0 - (0.6 + interval)) < 1e-9 })
        #expect(abs(t.totalFreezesDuration - 2 * (0.6 + interval)) < 1e-9)
        #expect(abs(t.totalInterFrameDelay - (299 * interval + 1.2)) < 1e-6)
        #expect(t.framesPerSecond(at: now - interval) == 30)
        #expect(t.framesPerSecond(at: now + 5) == 0)
    }

    /// A delay of 120 ms in 30 fps flow is below max(100, 183) ms: no freeze; 200 ms is one.
    /// A 6 s gap is a pause, not a freeze; the average that follows keeps its window of 30.
    @Test func thresholdsAndPauses() {
        var t = VideoFrameTiming()
        var now = 0.0
        for _ in 0..<40 { t.rendered(at: now); now += 1.0 / 30 }
        #expect(t.rendered(at: now + 0.120 - 1.0 / 30).freeze == false)
        now += 0.120 - 1.0 / 30
        for _ in 0..<40 { now += 1.0 / 30; t.rendered(at: now) }
        now += 0.200
        #expect(t.rendered(at: now).freeze == true)
        now += 6
        let paused = t.rendered(at: now)
        #expect(!paused.freeze && t.pauseCount == 1 && abs(t.totalPausesDuration - 6) < 1e-9 && t.freezeCount == 1)
        #expect(t.framesRendered == 83)
    }

    /// The first frame has no delay; one frame alone is no freeze.
    @Test func theFirstFrameHasNoDelay() {
        var t = VideoFrameTiming()
        #expect(t.rendered(at: 5).delay == nil)
        #expect(t.rendered(at: 9).freeze == false && t.totalInterFrameDelay == 4)
    }
}

@Suite struct EndToEndQualityTests {
    /// Latencies 10…109 ms: p50 and p95 within a bucket, max and mean exact; frames missing,
    /// repeated and out of order counted from the numbers.
    @Test func latencyPercentilesAndFrameNumbers() {
        var e = EndToEndQuality()
        for n in 0..<100 {
            e.frame(number: n, captureMs: 1_000_000 + Int64(n) * 33, writtenMs: Double(1_000_000 + n * 33 + 10 + n),
                    monotonic: Double(n) / 30, offsetMs: 0)
        }
        #expect(e.samples == 100 && e.maximumMs == 109 && e.meanMs == 59.5)
        #expect(abs((e.percentile(0.5) ?? 0) - 59.5) <= 0.5 && abs((e.percentile(0.95) ?? 0) - 104.5) <= 0.5)
        #expect(e.missing == 0 && e.repeated == 0 && e.outOfOrder == 0)
        for n in [105, 103, 103, 110] {
            e.frame(number: n, captureMs: 0, writtenMs: 50, monotonic: 4 + Double(n) / 30, offsetMs: 0)
        }
        #expect(e.missing == 111 - 103 && e.repeated == 1 && e.outOfOrder == 1 && e.distinct == 103)
    }

    /// The sender's clock 2 s ahead of ours: an offset of 2,000 ms gives the true latency.
    @Test func aClockOffsetIsTakenOut() {
        var e = EndToEndQuality()
        e.frame(number: 0, captureMs: 12_000, writtenMs: 10_040, monotonic: 0, offsetMs: 2_000)
        #expect(e.maximumMs == 40 && abs((e.percentile(0.5) ?? 0) - 40.25) < 0.3)
        #expect(e.recentMedian(nowMs: 10_500) == 40 && e.recentMedian(nowMs: 12_000) == nil)
    }
}
