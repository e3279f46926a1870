// MediaPacer: items (video frames, audio blocks) delivered in real time by their media timestamps, on absolute deadlines.
import Dispatch
import Foundation

/// Delivers items (video frames, audio blocks) in real time by their media
/// timestamps, on one track's ``MediaThread``.
///
/// The pacer pulls the next item, waits until its timestamp is due, hands it to
/// `deliver`, and pulls again. Deadlines are absolute — `start + timestamp /
/// clockRate` on the monotonic clock — so timer jitter never accumulates into
/// drift. When the thread falls behind (a slow encoder) items are delivered at
/// once; when it falls behind by more than ``maximumLagMs`` the schedule is
/// re-based to now, so a stall does not end in a burst. A gap in timestamps
/// (an IVF file with a pause) is waited out like any other deadline, up to
/// ``maximumWaitMs``: a longer gap (or a hostile timestamp far in the future) is
/// re-based instead, so no timestamp can stall the source. A timestamp going
/// backwards (a looping source restarting its clock) is re-based too. Deadline
/// arithmetic is 128-bit and clamped: no timestamp overflows it.
///
/// ``stop()`` then ``start()`` starts a new run: work the old run had queued is
/// recognised by its generation number and dropped, so the two runs never overlap.
///
/// Threading: every callback (`pull`, `deliver`, `finished`) runs on `thread`; the
/// callbacks and the schedule are held in a ``ThreadBound`` confined to it, so they need
/// not be `@Sendable` (a source pulled from one thread only).
public final class MediaPacer<Item: Sendable>: Sendable {
    /// The thread every callback runs on.
    public let thread: MediaThread
    /// Ticks per second of the items' timestamps (90 000 for video, 48 000 for audio).
    public let clockRate: Int64
    /// How late (ms) delivery may fall before the schedule is re-based; default 500 ms, ≥ 0.
    public let maximumLagMs: Int64
    /// Longest single wait (ms) for an item's deadline; an item due later than this (a
    /// timestamp gap longer than 10 s by default) is delivered at once and the schedule is
    /// re-based to it. ≥ 1.
    public let maximumWaitMs: Int64
    /// The callbacks and the schedule (``thread``).
    private let state: ThreadBound<State>

    /// The callbacks and the schedule of a pacer, touched only on its thread. A class, not
    /// a struct: a callback may call back into the pacer (``counts`` from `deliver`) while
    /// the pacer is using it.
    private final class State {
        let pull: () throws -> Item?
        let timestamp: (Item) -> Int64
        let deliver: (consuming Item) -> Void
        let finished: (Error?) -> Void
        var baseNanos: UInt64 = 0
        var baseTimestamp: Int64 = 0
        var lastTimestamp: Int64?
        var running = false
        /// Incremented by every start and stop; queued work of an older run sees a different
        /// value and does nothing.
        var generation: UInt64 = 0
        var delivered = 0
        var rebased = 0

        init(pull: @escaping () throws -> Item?, timestamp: @escaping (Item) -> Int64,
             deliver: @escaping (consuming Item) -> Void, finished: @escaping (Error?) -> Void) {
            self.pull = pull
            self.timestamp = timestamp
            self.deliver = deliver
            self.finished = finished
        }

        /// Monotonic ns when `ts` is due: `baseNanos + (ts − baseTimestamp) × 10^9 / clockRate`,
        /// in 128 bits and clamped to `UInt64` (a timestamp before the base is due at the base).
        func dueNanos(_ ts: Int64, clockRate: Int64) -> UInt64 {
            let offset = max(0, Int128(ts) - Int128(baseTimestamp))
            let due = Int128(baseNanos) + offset * 1_000_000_000 / Int128(clockRate)
            return due > Int128(UInt64.max) ? .max : UInt64(due)
        }

        /// Continues the schedule from now, with `ts` due at once.
        func rebase(to ts: Int64) {
            rebased += 1
            baseNanos = DispatchTime.now().uptimeNanoseconds
            baseTimestamp = ts
        }
    }

    /// Creates a stopped pacer.
    ///
    /// - Parameters:
    ///   - thread: the thread every callback runs on.
    ///   - clockRate: ticks per second of `timestamp(item)`; must be ≥ 1.
    ///   - pull: returns the next item, nil at the end of the source, or throws
    ///     (the pacer stops and passes the error to `finished`).
    ///   - timestamp: the item's media timestamp in `clockRate` ticks; expected not to decrease.
    ///   - deliver: called with each item when it is due; it owns the item (the pacer keeps
    ///     no reference), so it may change a frame's buffer in place without a copy.
    ///   - finished: called once when the source ends (nil) or fails (the error);
    ///     not called after ``stop()``.
    ///   - maximumLagMs: see ``maximumLagMs``; negative values count as 0.
    ///   - maximumWaitMs: see ``maximumWaitMs``; values below 1 count as 1.
    public init(thread: MediaThread, clockRate: Int64, pull: @escaping () throws -> Item?,
                timestamp: @escaping (Item) -> Int64, deliver: @escaping (consuming Item) -> Void,
                finished: @escaping (Error?) -> Void, maximumLagMs: Int64 = 500, maximumWaitMs: Int64 = 10_000) {
        self.thread = thread
        self.clockRate = max(1, clockRate)
        self.maximumLagMs = max(0, maximumLagMs)
        self.maximumWaitMs = max(1, maximumWaitMs)
        state = ThreadBound(State(pull: pull, timestamp: timestamp, deliver: deliver, finished: finished), thread: thread)
    }

    /// Starts pacing: the first item is delivered at once, the rest on their deadlines.
    /// Calling it while running does nothing.
    public func start() {
        thread.async { [self] in
            let s = state.value
            guard !s.running else { return }
            s.running = true
            s.generation &+= 1
            s.baseNanos = DispatchTime.now().uptimeNanoseconds
            s.lastTimestamp = nil
            step(s)
        }
    }

    /// Stops pacing; no callback runs after the thread has run this call (work the
    /// stopped run had queued is dropped, even after a new ``start()``).
    public func stop() {
        thread.async { [self] in
            let s = state.value
            s.running = false
            s.generation &+= 1
        }
    }

    /// Items delivered so far and how many times the schedule was re-based.
    /// Waits for ``thread`` (from a callback it reads them at once).
    public var counts: (delivered: Int, rebased: Int) {
        thread.sync {
            let s = state.value
            return (s.delivered, s.rebased)
        }
    }

    /// Pulls one item and schedules it (runs on `thread`).
    private func step(_ s: State) {
        guard s.running else { return }
        let item: Item?
        do { item = try s.pull() } catch {
            end(s, error)
            return
        }
        guard let item else {
            end(s, nil)
            return
        }
        let ts = s.timestamp(item)
        if s.lastTimestamp == nil { s.baseTimestamp = ts }
        if let last = s.lastTimestamp, ts < last {
            // A source going backwards (a looping file that restarts its clock): continue from now.
            s.rebase(to: ts)
        }
        s.lastTimestamp = ts
        let now = DispatchTime.now().uptimeNanoseconds
        var due = s.dueNanos(ts, clockRate: clockRate)
        if now > due, (now - due) / 1_000_000 > UInt64(maximumLagMs) {
            s.rebase(to: ts)
            due = now
        } else if due > now, (due - now) / 1_000_000 > UInt64(maximumWaitMs) {
            // A gap too long to wait out (or a hostile timestamp): continue from now.
            s.rebase(to: ts)
            due = now
        }
        let run = s.generation
        // The item rides in a box the delivery empties: the queued closure then holds no
        // reference while the next item is pulled, so a source that reuses a delivered
        // frame's buffer (PatternSource.recycle) finds it unshared.
        let box = ItemBox(item)
        if due <= now {
            // Through the thread's queue, not a direct call: a run of late items must not recurse.
            thread.async { [self] in deliverAndContinue(box, run: run) }
        } else {
            // Strong on purpose: a running pacer keeps itself alive until its next item is
            // due (a stopped run's item then does nothing), or the thread stops.
            thread.async(atUptimeNanoseconds: due) { [self] in deliverAndContinue(box, run: run) }
        }
    }

    /// The source ended or failed: report.
    private func end(_ s: State, _ error: Error?) {
        s.running = false
        s.finished(error)
    }

    /// Delivers the boxed item and pulls the next, unless run `run` was stopped since (runs
    /// on `thread`). The item is held only inside the `if`: the next pull finds it released.
    private func deliverAndContinue(_ box: ItemBox<Item>, run: UInt64) {
        let s = state.value
        guard run == s.generation, s.running else { return }
        if let item = box.take() {
            s.delivered += 1
            s.deliver(consume item)
        }
        step(s)
    }
}

/// One item on its way from `step` to its delivery, taken out exactly once.
// @unchecked: created and emptied on the pacer's one thread (the closure carrying it runs there).
private final class ItemBox<Item>: @unchecked Sendable {
    private var item: Item?
    init(_ item: Item) { self.item = item }
    func take() -> Item? {
        defer { item = nil }
        return item
    }
}
