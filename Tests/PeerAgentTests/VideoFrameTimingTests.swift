// VideoFrameTimingTests, EndToEndQualityTests and AudioLevelTests: the W3C frame-timing figures (framesPerSecond, inter-frame delays, freezes, pauses), the markers' end-to-end figures, and the W3C audio energy and level, from made-up frames.
import Testing
@testable import PeerAgent
import Media

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

    /// After a 6 s pause the frames are judged by the rate before it, not an average the
    /// pause inflated: a 300 ms gap 10 frames later is a freeze. And no freeze is judged
    /// before 5 delays: a slow start (400 ms between the first frames) is none.
    @Test func pausesStayOutOfTheAverageAndTheStartIsNotJudged() {
        var t = VideoFrameTiming()
        var now = 0.0
        for _ in 0..<4 { t.rendered(at: now); now += 0.4 }
        for _ in 0..<40 { t.rendered(at: now); now += 1.0 / 30 }
        #expect(t.freezeCount == 0, "the first delays are not judged")
        now += 6
        t.rendered(at: now)
        for _ in 0..<10 { now += 1.0 / 30; t.rendered(at: now) }
        now += 0.3
        #expect(t.rendered(at: now).freeze, "300 ms in 30 fps flow after a pause")
        #expect(t.pauseCount == 1 && t.freezeCount == 1)
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

    /// A new sender (the peer's restarted process numbers its frames from 0 again): its
    /// numbers are not repeats of the old one's; what was missing before stays counted.
    @Test func aNewSourceNumbersItsFramesAfresh() {
        var e = EndToEndQuality()
        for n in [0, 1, 2, 4] { e.frame(number: n, captureMs: 0, writtenMs: 10, monotonic: Double(n) / 30, offsetMs: 0) }
        #expect(e.missing == 1)
        e.newSource()
        for n in 0..<3 { e.frame(number: n, captureMs: 0, writtenMs: 10, monotonic: 1 + Double(n) / 30, offsetMs: 0) }
        #expect(e.repeated == 0 && e.outOfOrder == 0 && e.distinct == 7 && e.missing == 1)
        e.frame(number: 1, captureMs: 0, writtenMs: 10, monotonic: 2, offsetMs: 0)
        #expect(e.repeated == 1, "a repeat within the new sender still counts")
    }

    /// The sender's clock 2 s ahead of ours: an offset of 2,000 ms gives the true latency.
    @Test func aClockOffsetIsTakenOut() {
        var e = EndToEndQuality()
        e.frame(number: 0, captureMs: 12_000, writtenMs: 10_040, monotonic: 0, offsetMs: 2_000)
        #expect(e.maximumMs == 40 && abs((e.percentile(0.5) ?? 0) - 40.25) < 0.3)
        #expect(e.recentMedian(nowMs: 10_500) == 40 && e.recentMedian(nowMs: 12_000) == nil)
    }
}

@Suite struct AudioLevelTests {
    /// W3C totalAudioEnergy and audioLevel from decoded blocks: a stereo 20 ms block with
    /// one channel at half scale and the other silent counts the louder channel (energy
    /// 0.5² × 0.02 s = 0.005, level 0.5); after 100 ms of silence the level is 0 and the
    /// energy stays.
    @Test func energyTakesTheLoudestChannelAndTheLevelTheLast100ms() throws {
        var stats = SinkStats()
        let loud = try AudioFrame(channels: 2, samples: (0..<960).flatMap { _ in [Int16(16_384), 0] })
        ReceiveSinks.measure(loud, into: &stats)
        #expect(abs(stats.audioEnergy - 0.005) < 1e-12)
        #expect(abs(stats.audioLevel - 0.5) < 1e-12)
        #expect(abs(stats.samplesDuration - 0.02) < 1e-12)
        let silence = try AudioFrame(channels: 2, samples: [Int16](repeating: 0, count: 1_920))
        for _ in 0..<4 { ReceiveSinks.measure(silence, into: &stats) }
        #expect(abs(stats.audioLevel - 0.5 / 5.0.squareRoot()) < 1e-9, "100 ms: one loud block of five")
        ReceiveSinks.measure(silence, into: &stats)
        #expect(stats.audioLevel == 0)
        #expect(abs(stats.audioEnergy - 0.005) < 1e-12 && abs(stats.samplesDuration - 0.12) < 1e-9)
    }
}
