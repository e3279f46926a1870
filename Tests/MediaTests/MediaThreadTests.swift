// MediaThread: order, deadlines, sync, stop, and one owned thread per instance.
import Dispatch
import Foundation
import Media
import Testing

@Suite struct MediaThreadTests {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var items: [Int] = []
        var at: [Int: UInt64] = [:]
        func add(_ i: Int) { lock.withLock { items.append(i); at[i] = DispatchTime.now().uptimeNanoseconds } }
        var snapshot: [Int] { lock.withLock { items } }
    }

    /// The kernel's id of the calling thread (`/proc/thread-self` → `<pid>/task/<tid>`).
    static func taskID() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?
            .split(separator: "/").last.map(String.init)
    }

    /// The calling thread's name as the kernel keeps it (/proc/thread-self/comm).
    static func kernelThreadName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines)
    }

    /// Whether thread `id` of this process still exists.
    static func taskExists(_ id: String?) -> Bool {
        guard let id else { return false }
        return FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
    }

    /// Waits up to 2 s for thread `id` to be gone; whether it went.
    static func taskEnds(_ id: String?) -> Bool {
        for _ in 0..<1000 {
            if !taskExists(id) { return true }
            usleep(2_000)
        }
        return false
    }

    @Test func itemsRunInOrderAndDeadlinesInDeadlineOrder() {
        let thread = MediaThread(name: "mt.order")
        defer { thread.stop() }
        let log = Log()
        let now = DispatchTime.now().uptimeNanoseconds
        thread.async(atUptimeNanoseconds: now + 60_000_000) { log.add(103) }
        thread.async(atUptimeNanoseconds: now + 30_000_000) { log.add(101) }
        thread.async(atUptimeNanoseconds: now + 30_000_000) { log.add(102) }  // same deadline: in order queued
        thread.async(atUptimeNanoseconds: now - 1) { log.add(100) }  // already due
        for i in 0..<50 { thread.async { log.add(i) } }
        // Wait for the last deadline (the parallel test phase can delay a wake-up by tens of ms).
        for _ in 0..<200 where !log.snapshot.contains(103) { usleep(10_000) }
        let items = log.snapshot
        #expect(Array(items.prefix(50)) == Array(0..<50) || items.firstIndex(of: 100).map { $0 <= 50 } == true)
        #expect(items.filter { $0 < 100 } == Array(0..<50))
        #expect(items.filter { $0 >= 101 } == [101, 102, 103])
        let (t101, t103) = log.lock.withLock { (log.at[101] ?? 0, log.at[103] ?? 0) }
        // Never early; late only by scheduling (bounded loosely: the other 50+ tests of the
        // parallel phase share the 2 cores; the timer's precision is MediaPacerTests' job).
        #expect(t101 >= now + 30_000_000 && t101 < now + 250_000_000, "30 ms item ran \(Double(Int64(t101) - Int64(now)) / 1e6) ms in")
        #expect(t103 >= now + 60_000_000 && t103 < now + 280_000_000)
    }

    @Test func syncReturnsThrowsAndRunsInlineOnItsOwnThread() throws {
        struct Oops: Error, Equatable {}
        let thread = MediaThread(name: "mt.sync")
        defer { thread.stop() }
        #expect(!thread.isCurrent)
        #expect(thread.sync { 6 * 7 } == 42)
        #expect(throws: Oops.self) { try thread.sync { () throws(Oops) -> Int in throw Oops() } }
        // From the thread itself: at once, not a deadlock.
        let nested = thread.sync { thread.isCurrent ? thread.sync { 1 } + 1 : 0 }
        #expect(nested == 2)
        // sync waits for what was queued before it.
        let log = Log()
        thread.async { usleep(20_000); log.add(1) }
        #expect(thread.sync { log.snapshot } == [1])
    }

    @Test func stopDropsPendingDeadlinesEndsTheThreadAndLaterWorkIsRefused() throws {
        let thread = MediaThread(name: "mt.stop")
        let log = Log()
        let id = thread.sync { Self.taskID() }
        #expect(Self.taskExists(id))
        #expect(thread.sync { Self.kernelThreadName() } == "mt.stop")
        thread.async(atUptimeNanoseconds: DispatchTime.now().uptimeNanoseconds + 50_000_000) { log.add(1) }
        thread.async { log.add(0) }
        _ = thread.sync { 0 }
        thread.stop()
        thread.async { log.add(2) }
        for _ in 0..<100 where !thread.hasEnded { usleep(2_000) }
        #expect(thread.hasEnded)
        usleep(80_000)
        #expect(log.snapshot == [0])
        #expect(Self.taskEnds(id))
        // After stop, sync runs on the caller (in the thread's place: isCurrent while it runs).
        #expect(thread.sync { Self.taskID() } == Self.taskID())
        #expect(thread.sync { thread.isCurrent } == true)
        #expect(!thread.isCurrent)
    }

    @Test func releasingTheLastReferenceEndsTheThread() {
        var id: String?
        do {
            let thread = MediaThread(name: "mt.release")
            id = thread.sync { Self.taskID() }
            #expect(Self.taskExists(id))
        }
        #expect(Self.taskEnds(id))
    }

    /// sync after stop() waits for what the thread is still running: never alongside it.
    @Test func syncAfterStopWaitsForTheItemsStillRunning() {
        let thread = MediaThread(name: "mt.after")
        let log = Log()
        thread.async { usleep(50_000); log.add(1) }
        thread.async(atUptimeNanoseconds: DispatchTime.now().uptimeNanoseconds) { log.add(2) }  // due: still runs
        thread.stop()
        #expect(thread.sync { log.snapshot } == [1, 2])
        #expect(thread.hasEnded)
    }

    /// An item that holds the last reference to its own thread releases it when it is
    /// done (outside the thread's lock): the thread ends instead of hanging.
    @Test func anItemHoldingTheLastReferenceEndsTheThread() {
        final class Holder: @unchecked Sendable { var thread: MediaThread? }
        let holder = Holder()
        holder.thread = MediaThread(name: "mt.last")
        let thread = holder.thread
        let id = thread?.sync { Self.taskID() }
        #expect(Self.taskExists(id))
        let deadline = DispatchTime.now().uptimeNanoseconds + 20_000_000
        thread?.async(atUptimeNanoseconds: deadline) { [thread] in _ = thread?.name }
        holder.thread = nil
        _ = consume thread
        #expect(Self.taskEnds(id))
    }
}
