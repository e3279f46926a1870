import CGLib
import Dispatch
import Foundation
import Testing
@testable import EventLoop

/// Collects values appended from the loop thread; read after a `sync` barrier.
final class Collector: @unchecked Sendable {
    var values: [Int] = []
    var threads: Set<Bool> = []
}

@Suite struct EventLoopTests {
    @Test func closuresRunOnTheLoopThreadInSubmissionOrder() {
        let loop = EventLoop(name: "test-order")
        defer { loop.stop() }
        let c = Collector()
        for i in 1...200 { loop.async { c.values.append(i); c.threads.insert(loop.isCurrent) } }
        let count = loop.sync { c.values.count }
        #expect(count == 200)
        #expect(c.values == Array(1...200))
        #expect(c.threads == [true])
        #expect(!loop.isCurrent)
    }

    /// The loop thread carries its name in the kernel (/proc, ps, perf, the soak's thread
    /// names), not only in Foundation.
    @Test func theLoopThreadIsNamedInTheKernel() throws {
        let loop = EventLoop(name: "test-named-lp")
        defer { loop.stop() }
        let comm = loop.sync { try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }
        #expect(comm?.trimmingCharacters(in: .whitespacesAndNewlines) == "test-named-lp")
    }

    @Test func syncRunsInlineOnTheLoopThreadAndRethrows() throws {
        let loop = EventLoop(name: "test-sync")
        defer { loop.stop() }
        struct Boom: Error, Equatable { let code: Int }
        let nested = loop.sync { loop.sync { loop.isCurrent ? 7 : -1 } }
        #expect(nested == 7)
        #expect(throws: Boom(code: 3)) { try loop.sync { throw Boom(code: 3) } }
    }

    @Test func performReturnsTheValueComputedOnTheLoop() async throws {
        let loop = EventLoop(name: "test-perform")
        defer { loop.stop() }
        let (onLoop, value) = try await loop.perform { (loop.isCurrent, 6 * 7) }
        #expect(onLoop)
        #expect(value == 42)
    }

    @Test func timerFiresAfterItsDelayAndCanBeCancelled() async throws {
        let loop = EventLoop(name: "test-timer")
        defer { loop.stop() }
        let start = DispatchTime.now()
        let fired = DispatchSemaphore(value: 0)
        let cancelled = Collector()
        loop.after(milliseconds: 60) { fired.signal() }
        let id = loop.after(milliseconds: 30) { cancelled.values.append(1) }
        loop.cancelTimer(id)
        #expect(fired.wait(timeout: .now() + 5) == .success)
        let elapsedMs = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
        #expect(elapsedMs >= 55)
        #expect(loop.sync { cancelled.values } == [])
    }

    @Test func stopJoinsAndLaterWorkIsRefused() async throws {
        let loop = EventLoop(name: "test-stop")
        let c = Collector()
        for i in 1...50 { loop.async { c.values.append(i) } }
        loop.stop()
        // Everything accepted before stop ran (drained), nothing after.
        #expect(c.values == Array(1...50))
        loop.async { c.values.append(99) }
        #expect(c.values.count == 50)
        await #expect(throws: EventLoopError.stopped) { try await loop.perform { 1 } }
        #expect(loop.sync { 5 } == 5)  // runs inline once stopped
        loop.stop()  // idempotent
    }

    @Test func glibVersionIsTheLinkedOne() {
        let parts = EventLoop.glibVersion.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect(parts[0] == 2)
        #expect(parts[1] >= 74)
        #expect(UInt32(parts[1]) == glib_minor_version)
    }
}

/// LoopBound: the value is reachable on the loop thread and in `sync` after the loop
/// stopped; anywhere else the process stops.
@Suite struct LoopBoundTests {
    @Test func theValueIsReadAndWrittenOnTheLoopThread() {
        let loop = EventLoop(name: "test-bound")
        defer { loop.stop() }
        let bound = LoopBound([Int](), loop: loop)
        for i in 1...100 { loop.async { bound.value.append(i) } }
        #expect(loop.sync { bound.value } == Array(1...100))
    }

    @Test func syncAfterStopRunsAsTheContextsOwner() {
        let loop = EventLoop(name: "test-bound-end")
        let bound = LoopBound(7, loop: loop)
        loop.stop()
        let seen = loop.sync { () -> (Bool, Int) in
            bound.value += 1
            return (loop.isCurrent, bound.value)
        }
        #expect(seen == (true, 8))
        #expect(!loop.isCurrent)
    }

    /// A `sync` refused by a stopping loop runs only after the loop thread's final drain:
    /// every closure accepted before `stop()` has run by then (the in-place caller must not
    /// take the context between two drain iterations and cut the drain short).
    @Test func syncAfterStopWaitsForTheFinalDrain() {
        let loop = EventLoop(name: "test-bound-drain")
        let c = Collector()
        loop.async { usleep(50_000); c.values.append(1) }  // keeps the loop busy while stop() comes
        for i in 2...100 { loop.async { c.values.append(i) } }
        Thread { loop.stop() }.start()
        while loop.async({}) { usleep(100) }  // until the loop refuses work: stop() has begun
        let seen = loop.sync { c.values }
        #expect(seen == Array(1...100))
    }

    @Test func touchingTheValueFromAnotherThreadStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let loop = EventLoop(name: "test-bound-bad")
            let bound = LoopBound(0, loop: loop)
            bound.value = 1
        }
    }
}
