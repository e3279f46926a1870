import Dispatch
import Foundation
import Testing
@testable import Media

/// A fixed list of (timestamp) items; optionally throws at one index.
private final class ListSource: @unchecked Sendable {
    var timestamps: [Int64]
    var index = 0
    let failAt: Int?
    init(_ timestamps: [Int64], failAt: Int? = nil) { self.timestamps = timestamps; self.failAt = failAt }
    func next() throws -> Int64? {
        if index == failAt { throw MediaFrameError.badChannelCount(index) }
        guard index < timestamps.count else { return nil }
        defer { index += 1 }
        return timestamps[index]
    }
}

/// Delivery times (monotonic ns) of each item, collected on the media thread, and when
/// `start()` was called (the pacer's clock starts no earlier than that).
private final class Deliveries: @unchecked Sendable {
    var items: [(ts: Int64, at: UInt64)] = []
    var startedAt: UInt64 = 0
}

/// Holds the continuation the pacer's `finished` callback resumes.
private final class Finish: @unchecked Sendable {
    var continuation: CheckedContinuation<Error?, Never>?
}

private func pace(_ source: ListSource, clockRate: Int64 = 90_000,
                  onDeliver: @escaping @Sendable (Int64) -> Void = { _ in }) async -> (Deliveries, Error?, MediaPacer<Int64>) {
    let got = Deliveries()
    let finish = Finish()
    let pacer = MediaPacer<Int64>(thread: MediaThread(name: "test.media"), clockRate: clockRate,
                                  pull: { try source.next() }, timestamp: { $0 },
                                  deliver: { ts in got.items.append((ts, DispatchTime.now().uptimeNanoseconds)); onDeliver(ts) },
                                  finished: { finish.continuation?.resume(returning: $0) })
    let error = await withCheckedContinuation { continuation in
        finish.continuation = continuation  // set before start(): finished runs only after start
        got.startedAt = DispatchTime.now().uptimeNanoseconds
        pacer.start()
    }
    return (got, error, pacer)
}

@Suite struct MediaPacerTests {
    @Test func thirtyFramesAtThirtyFpsTakeTwentyNineThirtiethsOfASecond() async throws {
        let ts = (0..<30).map { Int64($0) * 3_000 }  // 30 fps in 90 kHz ticks
        let (got, error, pacer) = await pace(ListSource(ts))
        #expect(error == nil)
        #expect(got.items.map(\.ts) == ts)
        let start = try #require(got.items.first?.at)
        let elapsedMs = Double((got.items.last?.at ?? 0) - start) / 1e6
        print("pacer: 30 frames in \(String(format: "%.1f", elapsedMs)) ms (ideal 966.7)")
        #expect(abs(elapsedMs - 966.7) < 60)
        // No item early: each is due at (pacer start + ts/90 ms), and the pacer starts no
        // earlier than the start() call (1 ms tolerance for timer leeway).
        for item in got.items {
            let dueMs = Double(item.ts) / 90
            #expect(Double(item.at - got.startedAt) / 1e6 >= dueMs - 1)
        }
        #expect(pacer.counts.delivered == 30)
        #expect(pacer.counts.rebased == 0)
    }

    @Test func aGapInTimestampsIsWaitedOut() async throws {
        // 48 kHz audio blocks of 20 ms with a 200 ms pause after the second.
        let ts: [Int64] = [0, 960, 960 + 9_600, 960 + 9_600 + 960]
        let (got, error, _) = await pace(ListSource(ts), clockRate: 48_000)
        #expect(error == nil)
        let start = try #require(got.items.first?.at)
        let gapMs = Double(got.items[2].at - start) / 1e6
        #expect(gapMs >= 219 && gapMs < 280)
    }

    @Test func aSourceErrorEndsPacingWithThatError() async throws {
        let (got, error, _) = await pace(ListSource([0, 3_000, 6_000, 9_000], failAt: 2))
        #expect(got.items.count == 2)
        #expect(error as? MediaFrameError == .badChannelCount(2))
    }

    @Test func aStallLongerThanTheMaximumLagRebasesInsteadOfBursting() async throws {
        let ts = (0..<12).map { Int64($0) * 3_000 }
        let (got, error, pacer) = await pace(ListSource(ts)) { t in
            if t == 3_000 { usleep(700_000) }  // on the media thread, not the test's thread
        }
        #expect(error == nil)
        #expect(pacer.counts.rebased == 1)
        // After the stall the last 8 frames keep their ~33 ms spacing (7 intervals ≈ 233 ms)
        // instead of arriving at once (a burst would take a few ms). The median spacing is
        // robust to one frame delayed by a busy machine.
        let after = got.items.suffix(8).map(\.at)
        let spacingMs = zip(after.dropFirst(), after).map { Double($0 - $1) / 1e6 }.sorted()
        #expect(spacingMs[spacingMs.count / 2] > 25, "spacing after the stall: \(spacingMs)")
        #expect(Double((after.last ?? 0) - (after.first ?? 0)) / 1e6 > 180)
    }
}

/// Counts `finished` calls and resumes a continuation on the first.
private final class FinishCounter: @unchecked Sendable {
    var calls = 0
    var continuation: CheckedContinuation<Void, Never>?
}

/// Issue 7 A2: backwards and hostile timestamps, long gaps, and stop()/start() races.
@Suite struct MediaPacerHostileTests {
    @Test func aSourceRestartingItsClockIsRebasedAndKeepsItsSpacing() async throws {
        let ts: [Int64] = [0, 3_000, 6_000, 9_000, 0, 3_000, 6_000, 9_000]
        let (got, error, pacer) = await pace(ListSource(ts))
        #expect(error == nil)
        #expect(got.items.map(\.ts) == ts)
        #expect(pacer.counts.rebased == 1)
        let start = try #require(got.items.first?.at)
        let elapsedMs = Double((got.items.last?.at ?? 0) - start) / 1e6
        // 3 intervals, the restart at once (it is re-based to now), 3 more intervals: 200 ms.
        #expect(elapsedMs > 180 && elapsedMs < 300, "elapsed \(elapsedMs) ms")
    }

    /// Before the fix `UInt64(offset) * 1_000_000_000` trapped for a pts of 2^50 (1/90000) and
    /// `ts - baseTimestamp` for Int64.max after a negative base; now each is delivered at once
    /// (a wait longer than maximumWaitMs is re-based) and the run ends normally.
    @Test func hugeTimestampsAndLongGapsDoNotCrashOrStall() async throws {
        let ts: [Int64] = [-5, 1 << 50, (1 << 50) + 3_000, .max, .min, 0, 90_000 * 20]
        let (got, error, pacer) = await pace(ListSource(ts))
        #expect(error == nil)
        #expect(got.items.map(\.ts) == ts)
        let start = try #require(got.items.first?.at)
        let elapsedMs = Double((got.items.last?.at ?? 0) - start) / 1e6
        #expect(elapsedMs < 500, "elapsed \(elapsedMs) ms")
        // 2^50 and Int64.max: too far ahead; Int64.min and 0: backwards; 20 s: beyond 10 s.
        #expect(pacer.counts.rebased == 5)
        #expect(pacer.maximumLagMs == 500 && pacer.maximumWaitMs == 10_000)
        let clamped = MediaPacer<Int64>(thread: MediaThread(name: "x"), clockRate: 1, pull: { nil }, timestamp: { $0 },
                                        deliver: { _ in }, finished: { _ in }, maximumLagMs: -3, maximumWaitMs: 0)
        #expect(clamped.maximumLagMs == 0 && clamped.maximumWaitMs == 1)
    }

    /// stop() inside a delivery: the item already queued for the next deadline does nothing and nothing
    /// else runs (no delivery, no `finished`).
    @Test func noCallbackAfterStop() async throws {
        let got = Deliveries()
        let finish = FinishCounter()
        let source = ListSource((0..<30).map { Int64($0) * 3_000 })
        let box = PacerBox()
        let pacer = MediaPacer<Int64>(thread: MediaThread(name: "test.stop"), clockRate: 90_000,
                                      pull: { try source.next() }, timestamp: { $0 },
                                      deliver: { ts in
                                          got.items.append((ts, DispatchTime.now().uptimeNanoseconds))
                                          if ts == 6_000 { box.pacer?.stop() }
                                      },
                                      finished: { _ in finish.calls += 1 })
        box.pacer = pacer
        pacer.start()
        try await Task.sleep(for: .milliseconds(400))
        #expect(got.items.map(\.ts) == [0, 3_000, 6_000])
        #expect(finish.calls == 0)
        #expect(pacer.counts.delivered == 3)
        box.pacer = nil
    }

    /// stop() and start() called while the old run is delivering: the old run queues its
    /// next item after the new run started; before the fix that stale block ran (delivering
    /// an item of the stopped run and keeping two runs alive); now it is dropped by its
    /// generation, so the item it had pulled (4) is never delivered.
    @Test func aStaleBlockOfAStoppedRunDoesNotRunAfterANewStart() async throws {
        let got = Deliveries()
        let finish = FinishCounter()
        let source = ListSource((0..<20).map { Int64($0) })
        let box = PacerBox()
        let pacer = MediaPacer<Int64>(thread: MediaThread(name: "test.restart"), clockRate: 90_000,
                                      pull: { try source.next() }, timestamp: { $0 },
                                      deliver: { ts in
                                          got.items.append((ts, DispatchTime.now().uptimeNanoseconds))
                                          if ts == 3 { box.pacer?.stop(); box.pacer?.start() }
                                      },
                                      finished: { _ in
                                          finish.calls += 1
                                          finish.continuation?.resume()
                                          finish.continuation = nil
                                      })
        box.pacer = pacer
        await withCheckedContinuation { c in
            finish.continuation = c
            pacer.start()
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(got.items.map(\.ts) == [0, 1, 2, 3] + Array(5..<20))
        #expect(finish.calls == 1)
        box.pacer = nil
    }
}

/// Lets a pacer's own callbacks reach it (set after creation).
private final class PacerBox: @unchecked Sendable {
    var pacer: MediaPacer<Int64>?
}

/// Issue 7 A7: the audio convenience init never pulls empty or negative blocks.
@Suite struct AudioPacerDurationTests {
    /// Before the fix 0 ms pulled 0-sample blocks (a ToneSource returns an empty block with the
    /// same timestamp: delivered at once, forever) and −20 ms trapped allocating a negative
    /// count. Now both are paced as 20 ms blocks; the checked init refuses them by value.
    @Test func invalidDurationsBecomeTwentyMsOrAreRefused() async throws {
        for ms in [0, -20, 15] {
            let source = try ToneSource()
            let sizes = SampleCounts()
            let finish = Finish()
            let pacer = MediaPacer(audio: source, frameDurationMs: ms, thread: MediaThread(name: "test.audio"),
                                   deliver: { f in
                                       sizes.counts.append(f.samplesPerChannel)
                                       if sizes.counts.count == 3 { finish.continuation?.resume(returning: nil) }
                                   },
                                   finished: { _ in })
            _ = await withCheckedContinuation { c in
                finish.continuation = c
                pacer.start()
            }
            pacer.stop()
            #expect(sizes.counts.prefix(3) == [960, 960, 960], "\(ms) ms")
        }
        for ms in [0, -20, 15, 120] {
            #expect(throws: OpusCodecError.badFrameDuration(ms: ms)) {
                try MediaPacer(audio: ToneSource(), checkedFrameDurationMs: ms, thread: MediaThread(name: "x"),
                               deliver: { _ in }, finished: { _ in })
            }
        }
        let ok = try MediaPacer(audio: ToneSource(), checkedFrameDurationMs: 40, thread: MediaThread(name: "x"),
                                deliver: { _ in }, finished: { _ in })
        #expect(ok.clockRate == 48_000)
    }
}

/// Block sizes seen by a deliver callback (on the media thread).
private final class SampleCounts: @unchecked Sendable {
    var counts: [Int] = []
}
