// peer-bench loop: how late the event-loop thread (ICE, DTLS, WebSocket) runs a 1 ms timer, idle and during a 720p call.
import Dispatch
import EventLoop
import Foundation
import PeerAgent
import PeerCall

/// `peer-bench loop [SECONDS]`: the responsiveness of ``EventLoop/shared``, the GLib
/// loop thread that serves ICE, DTLS and the WebSocket of every connection. A 1 ms
/// GLib timeout is set again from each firing for SECONDS; each firing's delay is the
/// time past its due moment (set time + 1 ms, monotonic clock). Measured twice: with
/// media off (no call, the loop idle) and during a `peer loopback` call in this process
/// at 1280x720@30, 2 Mbit/s VP8 + Opus both ways, decoding on. Prints the longest
/// delay, the 99th percentile and how many firings were more than 5 ms late (ms).
enum LoopBench {
    /// Delays (ns) of a chain of 1 ms timers on `loop`, confined to the loop thread
    /// (its timers run there; a ``LoopBound`` checks it).
    final class Probe: Sendable {
        /// The delays so far and who waits for them: loop thread only.
        private struct State {
            var delays: [UInt64] = []
            var done: CheckedContinuation<[UInt64], Never>?
        }

        private let loop: EventLoop
        private let until: UInt64
        private let state: LoopBound<State>

        /// A probe of `loop` that runs for `seconds` from now.
        init(loop: EventLoop, seconds: Double) {
            self.loop = loop
            until = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
            state = LoopBound(State(), loop: loop)
        }

        /// Runs the chain until the deadline; returns each firing's delay in ns.
        func run() async -> [UInt64] {
            await withCheckedContinuation { continuation in
                loop.async { [self] in
                    state.value.done = continuation
                    arm()
                }
            }
        }

        /// Sets the next 1 ms timer (on the loop thread); its due moment is taken just
        /// before the source is attached (a few µs early, so delays read that much high).
        private func arm() {
            let due = DispatchTime.now().uptimeNanoseconds + 1_000_000
            loop.after(milliseconds: 1) { [self] in
                let now = DispatchTime.now().uptimeNanoseconds
                state.withValue { state in
                    state.delays.append(now > due ? now - due : 0)
                    guard now >= until else { return }
                    state.done?.resume(returning: state.delays)
                    state.done = nil
                }
                if now < until { arm() }
            }
        }
    }

    /// The floor under the loop's figure: a bare thread with the loop thread's scheduling
    /// (``LoopScheduling``) sleeping to absolute 1 ms deadlines (`clock_nanosleep`,
    /// monotonic) — no GLib, no work. Its delays are the kernel's wake-up latency on this
    /// machine under the same load; what the loop adds is the difference.
    static func floorDelays(seconds: Double) async -> [UInt64] {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                nameCurrentThread("peer-bench-floor")
                LoopScheduling.applyToCurrentThread()
                let until = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
                var delays: [UInt64] = []
                var now = DispatchTime.now().uptimeNanoseconds
                while now < until {
                    let due = now + 1_000_000
                    var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
                    now = DispatchTime.now().uptimeNanoseconds
                    delays.append(now > due ? now - due : 0)
                }
                continuation.resume(returning: delays)
            }
            thread.start()
        }
    }

    /// The figures of one run, in ms.
    struct Figures {
        let firings: Int, longestMs: Double, p99Ms: Double, over5ms: Int

        /// The figures of `delays` (ns); the 99th percentile by nearest rank.
        init(_ delays: [UInt64]) {
            let sorted = delays.sorted()
            firings = sorted.count
            longestMs = Double(sorted.last ?? 0) / 1e6
            let rank = Int((Double(sorted.count) * 0.99).rounded(.up)) - 1
            p99Ms = sorted.isEmpty ? 0 : Double(sorted[max(0, rank)]) / 1e6
            over5ms = sorted.filter { $0 > 5_000_000 }.count
        }

        /// One line for the report.
        var line: String {
            String(format: "longest delay %.2f ms, p99 %.2f ms, %d of %d firings more than 5 ms late", longestMs, p99Ms, over5ms, firings)
        }
    }

    /// Measures idle, then during the call, and prints both.
    /// - Throws: what ``PeerAgent/Loopback/run(_:progress:)`` throws (the call could not be made).
    static func run(seconds: Double) async throws {
        let idle = Figures(await Probe(loop: .shared, seconds: seconds).run())
        let scheduling = EventLoop.shared.threadScheduling
        print("loop: 1 ms timer on the event-loop thread for \(seconds) s (the loop thread's EEVDF slice "
              + String(format: "%.2f ms, nice %d; media threads at the default)", scheduling.sliceMs, scheduling.nice))
        print("  media off (no call):          \(idle.line)")

        let options = LoopbackBench.options(seconds: seconds + 4, width: 1280, height: 720, kbps: 2_000, label: "loop")
        defer { try? FileManager.default.removeItem(atPath: options.outputDirectory) }
        let call = Task { try await Loopback.run(options) }
        // Media flows ~0.2 s after the start; measure from 2 s in, for `seconds`.
        try await Task.sleep(nanoseconds: 2_000_000_000)
        async let floorDuringCall = floorDelays(seconds: seconds)
        let busy = Figures(await Probe(loop: .shared, seconds: seconds).run())
        let floor = Figures(await floorDuringCall)
        let (a, b) = try await call.value
        let decoded = [a, b].map { $0.stats.inbound("video")?.framesDecoded ?? 0 }
        print("  1280x720@30 2 Mbit/s loopback: \(busy.line) (framesDecoded \(decoded[0]), \(decoded[1]))")
        print("  floor, same call (a bare thread, the loop's scheduling, clock_nanosleep): \(floor.line)")
        print(String(format: "loop: longest delay during the call %.2f ms, the floor's %.2f ms (ratio %.2f)",
                     busy.longestMs, floor.longestMs, floor.longestMs > 0 ? busy.longestMs / floor.longestMs : 0))
        print(String(format: "loop: longest delay %.2f ms during the call, %.2f ms idle (target: under 5 ms)", busy.longestMs, idle.longestMs))
    }
}
