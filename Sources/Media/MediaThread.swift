// One owned thread that runs a media track's work in order, at once or at a deadline.
import Dispatch
import Foundation

/// The serial executor of one media track (its encoder and pacer, or its sinks): a thread
/// of its own, started by `init` and ended by ``stop()`` (or when the last reference goes),
/// that runs work items one at a time, in the order they were queued, or at a deadline on
/// the monotonic clock.
///
/// Why not a serial `DispatchQueue`: on Linux those draw on libdispatch's overcommit pool,
/// which starts a worker whenever work is queued and none is idle and retires one only
/// after 5 s without work, so over a long call its thread count creeps up (README "Soak");
/// capping it with a global queue made light work wait behind heavy work on a loaded
/// machine. An owned thread is one thread per track for the track's lifetime, and the
/// kernel time-slices it against the others as it did the pool's.
///
/// Threading: every method may be called from any thread. ``sync(_:)`` from the thread
/// itself runs the work at once (no deadlock); after ``stop()`` it runs the work on the
/// caller's thread, one caller at a time.
public final class MediaThread: Sendable {
    /// The thread's name as given (Linux shows its first 15 bytes in `/proc/PID/task/*/comm`).
    public let name: String
    private let state: State

    /// Starts a thread named `name`.
    public init(name: String) {
        self.name = name
        let state = State()
        self.state = state
        let thread = Thread { state.run(name: name) }
        thread.start()
    }

    deinit { state.stop() }

    /// Queues `work` to run after every item queued before it.
    /// Does nothing after ``stop()``.
    public func async(_ work: @escaping @Sendable () -> Void) {
        state.enqueue(work, at: nil)
    }

    /// Queues `work` to run once the monotonic clock (`DispatchTime.now().uptimeNanoseconds`)
    /// reaches `uptimeNanoseconds`; items due at the same time run in the order queued, and
    /// a deadline in the past runs it as soon as the items before it are done. Does nothing
    /// after ``stop()``; an item not yet due when ``stop()`` is called never runs.
    public func async(atUptimeNanoseconds deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        state.enqueue(work, at: deadline)
    }

    /// Runs `work` on the thread after the items queued before it and returns its result
    /// (or throws its error), waiting for it. From the thread itself, or after ``stop()``,
    /// `work` runs at once on the caller's thread.
    public func sync<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        if state.isCurrent { return try work() }
        let result: Result<T, E>? = withoutActuallyEscaping(work) { escaping in
            let call = SyncCall(escaping)
            guard state.enqueue({ call.run() }, at: nil) else { return nil }
            call.wait()
            return call.result
        }
        if let result { return try result.get() }
        state.afterStop.lock()
        defer { state.afterStop.unlock() }
        return try work()
    }

    /// Whether the caller is running on this thread.
    public var isCurrent: Bool { state.isCurrent }

    /// Ends the thread once the items already due have run; items not yet due are dropped
    /// (releasing what they hold), later ``async(_:)`` calls do nothing. Idempotent.
    /// Returns without waiting for the thread.
    public func stop() { state.stop() }

    /// Whether the thread has ended (after ``stop()`` and the items it ran then).
    public var hasEnded: Bool { state.hasEnded }
}

/// The queues and the thread's loop, shared by the thread and its ``MediaThread``.
private final class State: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `condition`.
    private let condition = NSCondition()
    private var ready: [@Sendable () -> Void] = []
    private var readyHead = 0
    /// Items with a deadline, in order of (deadline, sequence).
    private var timed: [(deadline: UInt64, sequence: UInt64, work: @Sendable () -> Void)] = []
    private var sequence: UInt64 = 0
    private var stopping = false
    private var threadID: pthread_t?
    private var ended = false
    /// Serialises ``MediaThread/sync(_:)`` callers once the thread is gone.
    let afterStop = NSLock()

    var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let threadID else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
    }

    /// Queues `work` (at `deadline`, or now); false (nothing queued) after stop.
    @discardableResult
    func enqueue(_ work: @escaping @Sendable () -> Void, at deadline: UInt64?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        if let deadline {
            sequence &+= 1
            let item = (deadline: deadline, sequence: sequence, work: work)
            // Binary search for the first later item: the list stays in (deadline, sequence) order.
            var low = 0, high = timed.count
            while low < high {
                let mid = (low + high) / 2
                if timed[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
            }
            timed.insert(item, at: low)
        } else {
            ready.append(work)
        }
        condition.signal()
        return true
    }

    func stop() {
        condition.lock()
        stopping = true
        timed.removeAll()
        condition.signal()
        condition.unlock()
    }

    /// The thread's body: takes what is due, runs it outside the lock, sleeps until the
    /// next deadline or the next item.
    func run(name: String) {
        // Set from the thread itself: Foundation passes it to pthread_setname_np then.
        Thread.current.name = name
        // Process-directed signals (SIGCHLD, SIGINT, SIGPIPE…) go to other threads, as they
        // do with libdispatch's workers: a handler run here would interrupt media work, and
        // a signal's EINTR would land in a blocking call of ours (the faults a thread itself
        // causes, SIGSEGV and the like, are not blockable in effect and still arrive).
        var signals = sigset_t()
        sigfillset(&signals)
        for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT] { sigdelset(&signals, fault) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        condition.lock()
        threadID = pthread_self()
        condition.unlock()
        var batch: [@Sendable () -> Void] = []
        while true {
            condition.lock()
            while true {
                let now = DispatchTime.now().uptimeNanoseconds
                var due = 0
                while due < timed.count, timed[due].deadline <= now { due += 1 }
                if due > 0 {
                    ready.append(contentsOf: timed[..<due].map(\.work))
                    timed.removeFirst(due)
                }
                if readyHead < ready.count { break }
                ready.removeAll(keepingCapacity: true)
                readyHead = 0
                if stopping {
                    ended = true
                    condition.unlock()
                    return
                }
                if let next = timed.first?.deadline {
                    let seconds = Double(next - now) / 1e9
                    _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
                } else {
                    condition.wait()
                }
            }
            batch.append(contentsOf: ready[readyHead...])
            readyHead = ready.count
            condition.unlock()
            for work in batch { work() }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

/// One ``MediaThread/sync(_:)`` call: the work, its result and the wait for it.
private final class SyncCall<T, E: Error>: @unchecked Sendable {
    // @unchecked: `work` and `result` are touched by the waiting caller and the media thread
    // only on either side of the semaphore, which orders them.
    // The work is dropped before the caller is woken: it is the caller's non-escaping
    // closure (`withoutActuallyEscaping`), which must not outlive the call.
    private var work: (() throws(E) -> T)?
    private let done = DispatchSemaphore(value: 0)
    private(set) var result: Result<T, E>?

    init(_ work: @escaping () throws(E) -> T) { self.work = work }

    func run() {
        if let work {
            do throws(E) { result = .success(try work()) } catch { result = .failure(error) }
        }
        work = nil
        done.signal()
    }

    func wait() { done.wait() }
}
