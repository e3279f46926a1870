// One owned thread that runs a media track's work in order, at once or at a deadline.
import Dispatch
import EventLoop
import Foundation
import Synchronization

/// The serial executor of one media track (its encoder and pacer, or its sinks): a thread
/// of its own, started by `init` and ended by ``stop()`` (or when the last reference goes),
/// that runs work items one at a time, in the order they were queued, or at a deadline on
/// the monotonic clock.
///
/// Why not a serial `DispatchQueue`: on Linux those draw on libdispatch's overcommit pool,
/// which starts a worker whenever work is queued and none is idle and retires one only
/// after 5 s without work, so over a long call its thread count creeps up (docs/SOAK.md);
/// capping it with a global queue made light work wait behind heavy work on a loaded
/// machine. An owned thread is one thread per track for the track's lifetime, and the
/// kernel time-slices it against the others as it did the pool's.
///
/// Threading: every method may be called from any thread. ``sync(_:)`` from the thread
/// itself runs the work at once (no deadlock); after ``stop()`` it waits for the thread to
/// end and then runs the work on the caller's thread, one such caller at a time.
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
    /// (or throws its error), waiting for it. From the thread itself `work` runs at once;
    /// after ``stop()``, on the caller's thread once the thread has ended.
    public func sync<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        if state.isCurrent { return try work() }
        let result: Result<T, E>? = withoutActuallyEscaping(work) { escaping in
            let call = SyncCall(escaping)
            guard state.enqueue({ call.run() }, at: nil) else { return nil }
            call.wait()
            return call.result
        }
        if let result { return try result.get() }
        // Stopped: the thread may still be running what was queued before; wait for it.
        state.waitUntilEnded()
        return try state.runInPlace(work)
    }

    /// Whether the caller is running on this thread (or is the ``sync(_:)`` caller running
    /// work in its place after it ended): what ``ThreadBound`` checks.
    public var isCurrent: Bool { state.isCurrent }

    /// Ends the thread once the items already due have run; items not yet due are dropped
    /// (releasing what they hold), later ``async(_:)`` calls do nothing. Idempotent.
    /// Returns without waiting for the thread (``sync(_:)`` after it does wait).
    public func stop() { state.stop() }

    /// Whether the thread has ended (after ``stop()`` and the items it ran then).
    public var hasEnded: Bool { state.hasEnded }
}

/// The queues and the thread's loop, shared by the thread and its ``MediaThread``.
// @unchecked: every stored var is guarded by `condition`'s pthread mutex, not a `Mutex` (which has no monotonic timed wait).
private final class State: @unchecked Sendable {
    private let condition = MonotonicCondition()
    private var ready: [@Sendable () -> Void] = []
    /// Items with a deadline, in order of (deadline, sequence).
    private var timed: [(deadline: UInt64, sequence: UInt64, work: @Sendable () -> Void)] = []
    private var sequence: UInt64 = 0
    private var stopping = false
    private var ended = false
    /// The thread's pthread id once it runs (0 before): set once, read without the lock, so
    /// ``isCurrent`` (checked on every ``ThreadBound`` access) never contends with `enqueue`.
    private let threadID = Atomic<UInt>(0)
    /// The caller of ``MediaThread/sync(_:)`` running work in the thread's place after it
    /// ended (under `afterStop`): it counts as the thread for ``isCurrent``.
    private let standIn = Atomic<UInt>(0)
    /// Serialises ``MediaThread/sync(_:)`` callers once the thread has ended (an NSLock, not a
    /// `Mutex`: it guards no state, and `Mutex.withLock` would need the caller's result `sending`).
    let afterStop = NSLock()

    var isCurrent: Bool {
        let me = UInt(pthread_self())
        return threadID.load(ordering: .acquiring) == me || standIn.load(ordering: .acquiring) == me
    }

    /// Runs `work` on the caller's thread in the ended thread's place: one caller at a
    /// time, counted as the thread by ``isCurrent`` while it runs.
    func runInPlace<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        afterStop.lock()
        standIn.store(UInt(pthread_self()), ordering: .releasing)
        defer {
            standIn.store(0, ordering: .releasing)
            afterStop.unlock()
        }
        return try work()
    }

    var hasEnded: Bool { condition.locked { ended } }

    /// Queues `work` (at `deadline`, or now); false (nothing queued) after stop.
    @discardableResult
    func enqueue(_ work: @escaping @Sendable () -> Void, at deadline: UInt64?) -> Bool {
        condition.locked {
            guard !stopping else { return false }
            if let deadline {
                sequence &+= 1
                // Binary search for the first later item: the list stays in (deadline, sequence) order.
                var low = 0, high = timed.count
                while low < high {
                    let mid = (low + high) / 2
                    if timed[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
                }
                timed.insert((deadline: deadline, sequence: sequence, work: work), at: low)
            } else {
                ready.append(work)
            }
            condition.broadcast()
            return true
        }
    }

    /// Stops taking work: items due by now still run, later ones are dropped (and
    /// released here, outside the lock: one may hold the last reference to the thread).
    func stop() {
        let dropped = condition.locked { () -> [(deadline: UInt64, sequence: UInt64, work: @Sendable () -> Void)] in
            guard !stopping else { return [] }
            stopping = true
            let now = DispatchTime.now().uptimeNanoseconds
            let due = timed.prefix { $0.deadline <= now }.count
            ready.append(contentsOf: timed[..<due].map(\.work))
            let later = Array(timed[due...])
            timed.removeAll()
            condition.broadcast()
            return later
        }
        _ = dropped
    }

    /// Waits until the thread has ended (after ``stop()``).
    func waitUntilEnded() {
        condition.locked { while !ended { condition.wait() } }
    }

    /// The thread's body: takes what is due, runs it and releases it outside the lock,
    /// sleeps until the next deadline or the next item.
    func run(name: String) {
        // Named from inside: the kernel names only the calling thread (ThreadNaming).
        nameCurrentThread(name)
        // Process-directed signals (SIGCHLD, SIGINT, SIGPIPE…) go to other threads, as they
        // do with libdispatch's workers: their EINTR would otherwise land in a blocking call
        // here. Left open: the faults a thread causes itself, and the signals Swift's crash
        // backtracer uses to stop and inspect every thread (SIGUSR1, SIGUSR2, SIGPROF, SIGQUIT).
        var signals = sigset_t()
        sigfillset(&signals)
        for kept in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGUSR1, SIGUSR2, SIGPROF, SIGQUIT] {
            sigdelset(&signals, kept)
        }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var batch: [@Sendable () -> Void] = []
        while true {
            let goOn = condition.locked { () -> Bool in
                while true {
                    let now = DispatchTime.now().uptimeNanoseconds
                    let due = timed.prefix { $0.deadline <= now }.count
                    if due > 0 {
                        ready.append(contentsOf: timed[..<due].map(\.work))
                        timed.removeFirst(due)
                    }
                    if !ready.isEmpty {
                        swap(&batch, &ready)
                        return true
                    }
                    if stopping {
                        threadID.store(0, ordering: .releasing)  // a later thread may get the same pthread id
                        ended = true
                        condition.broadcast()
                        return false
                    }
                    if let next = timed.first?.deadline {
                        condition.wait(nanoseconds: next - now)
                    } else {
                        condition.wait()
                    }
                }
            }
            guard goOn else { return }
            for work in batch { work() }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

/// A mutex and a condition variable whose timed wait runs on the monotonic clock
/// (`pthread_condattr_setclock(CLOCK_MONOTONIC)`): a wall-clock step (NTP, a resumed VM)
/// neither lengthens nor shortens a wait. NSCondition's timed wait is on the wall clock.
// @unchecked: holds pthread mutex/condition pointers (thread-safe C objects whose storage never moves), for the monotonic timed wait.
private final class MonotonicCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every waiter (call with the mutex held).
    func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits for a broadcast (call with the mutex held; may wake spuriously).
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a broadcast or until `nanoseconds` have passed on the monotonic clock
    /// (call with the mutex held; may wake spuriously).
    func wait(nanoseconds: UInt64) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = UInt64(now.tv_nsec) + min(nanoseconds, 3_600_000_000_000)
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + Int(total / 1_000_000_000)
        deadline.tv_nsec = Int(total % 1_000_000_000)
        pthread_cond_timedwait(cond, mutex, &deadline)
    }
}

/// One ``MediaThread/sync(_:)`` call: the work, its result and the wait for it.
/// `work` and `result` are touched by the waiting caller and the media thread only on either
/// side of the semaphore, which orders them. The work is dropped before the caller is woken:
/// it is the caller's non-escaping closure (`withoutActuallyEscaping`), which must not outlive the call.
// @unchecked: carries the caller's non-Sendable closure and result to the media thread and back, ordered by the semaphore.
private final class SyncCall<T, E: Error>: @unchecked Sendable {
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
