// EventLoop: the one GLib main loop thread that libnice, libsoup and the connections' timers share — async, sync, timers.
import CGLib
import Foundation
import Synchronization

/// The one GLib main loop thread that libnice agents and the libsoup WebSocket share.
///
/// Threading rules:
/// - The loop thread is started on first use of ``shared`` (or by ``init(name:)``)
///   and owns one `GMainContext`, pushed as that thread's thread-default context,
///   so libsoup sessions and libnice agents created on it attach their sources there.
/// - Every call into libnice or libsoup is made on the loop thread: use ``async(_:)``
///   (fire and forget, in submission order), ``sync(_:)`` (blocks the caller; runs
///   inline when already on the loop thread) or ``perform(_:)`` (async/await).
/// - C callbacks (GLib signals, sources) fire on the loop thread; keep them short.
/// - ``stop()`` quits the loop and joins the thread; closures submitted after that
///   are dropped.
// @unchecked: holds the public `GMainContext*` and the `GMainLoop*` (OpaquePointer), thread-safe GLib objects for the calls used here; the rest is in a Mutex.
public final class EventLoop: @unchecked Sendable {
    /// The process-wide loop, started on first use and never stopped.
    public static let shared = EventLoop(name: "peer-glib-loop")

    /// The `GMainContext*` this loop runs; thread-default on the loop thread.
    public let context: OpaquePointer
    private let loop: OpaquePointer
    /// The closures of ``async(_:)``, ``sync(_:)`` and ``perform(_:)``, in order.
    private let queue: LoopQueue
    /// Left by the loop thread when it has ended (after its final drain); waited on by
    /// ``stop()`` and by ``sync(_:)`` callers that run in its place.
    private let threadEnded = DispatchGroup()
    /// The loop thread's pthread id while it runs (0 before and after), and that of a
    /// ``sync(_:)`` caller running in its place after it ended: ``isCurrent`` reads them
    /// without a lock (it is checked on every ``LoopBound`` access).
    private let threads = ThreadIDs()
    /// Serialises ``sync(_:)`` callers running in the stopped loop's place.
    private let afterStop = NSLock()
    /// Whether ``stop()`` was called; held while a closure is queued (see `enqueue`).
    private let stopped = Mutex(false)

    /// The loop thread's name as given.
    public let name: String

    /// Starts a new loop thread named `name` and returns once the loop is running.
    public init(name: String) {
        self.name = name
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        queue = LoopQueue(context: context)
        let started = DispatchSemaphore(value: 0)
        let pointers = LoopPointers(context: context, loop: loop), ended = threadEnded
        ended.enter()
        let thread = Thread { [threads] in
            threads.loop.store(UInt(pthread_self()), ordering: .releasing)
            // Named from inside: the kernel names only the calling thread (ThreadNaming).
            nameCurrentThread(name)
            LoopScheduling.applyToCurrentThread()
            let ctx = pointers.context, lp = pointers.loop
            g_main_context_push_thread_default(ctx)
            // An idle source on this context signals the caller from inside the running loop.
            let box = Unmanaged.passRetained(SignalBox(started))
            let source = g_idle_source_new()
            g_source_set_callback(source, { data in
                guard let data else { return 0 }
                Unmanaged<SignalBox>.fromOpaque(data).takeRetainedValue().semaphore.signal()
                return 0  // G_SOURCE_REMOVE
            }, box.toOpaque(), nil)
            g_source_attach(source, ctx)
            g_source_unref(source)
            g_main_loop_run(lp)
            // Run what was queued before stop() so no sync caller waits forever.
            while g_main_context_iteration(ctx, 0) != 0 {}
            g_main_context_pop_thread_default(ctx)
            threads.loop.store(0, ordering: .releasing)  // a later thread may get the same pthread id
            ended.leave()
        }
        thread.start()
        started.wait()
    }

    /// Stops the loop. The last reference must not be dropped on the loop's own
    /// thread (``shared`` never is).
    deinit {
        stop()
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// True when called on this loop's thread (the thread that owns ``context``).
    /// Also true for a ``sync(_:)`` caller running its body in the stopped loop's place.
    public var isCurrent: Bool {
        let me = UInt(pthread_self())
        return threads.loop.load(ordering: .acquiring) == me || threads.standIn.load(ordering: .acquiring) == me
    }

    /// Runs `body` on the loop thread, after closures submitted before it.
    /// - Returns: false, and `body` is dropped, when the loop was stopped; callers
    ///   waiting on `body` (a continuation) must resume themselves then.
    @discardableResult
    public func async(_ body: @escaping @Sendable () -> Void) -> Bool {
        enqueue(body)
    }

    /// Queues `body` (``LoopQueue``); false when the loop is stopped. Holding the
    /// lock while attaching guarantees every accepted closure runs: stop() sets the
    /// flag under the same lock before quitting, and the thread drains after quitting.
    private func enqueue(_ body: @escaping @Sendable () -> Void) -> Bool {
        stopped.withLock { stopped in
            if stopped { return false }
            attachIdle(body)
            return true
        }
    }

    /// Appends `body` to the loop's queue (``LoopQueue``: one GSource runs the queued
    /// closures in order), waking the loop when called from another thread.
    private func attachIdle(_ body: @escaping @Sendable () -> Void) {
        queue.append(body, wake: !isCurrent)
    }

    /// Runs `body` on the loop thread and waits for its result. Runs inline when the
    /// caller is already on the loop thread, and on the caller's thread once the loop
    /// is stopped (no other thread touches the loop's objects then). Rethrows what
    /// `body` throws.
    public func sync<T>(_ body: () throws -> T) rethrows -> T {
        if isCurrent { return try body() }
        return try withoutActuallyEscaping(body) { escapable in
            let transfer = SyncTransfer(escapable)
            let done = DispatchSemaphore(value: 0)
            let queued = enqueue {
                transfer.run()
                done.signal()
            }
            guard queued else { return try runInPlace(escapable) }  // loop stopped: run here
            done.wait()
            // Every accepted closure runs (stop() drains), so the value is there.
            return try (transfer.value ?? Result { try escapable() }).get()
        }
    }

    /// Runs `body` on the caller's thread in the stopped loop's place, once the loop thread
    /// has ended (its final drain runs every closure accepted before ``stop()``), one such
    /// caller at a time: the caller counts as the loop thread (``isCurrent``, what
    /// ``LoopBound`` checks) and owns the GLib context while `body` runs.
    private func runInPlace<T>(_ body: () throws -> T) rethrows -> T {
        threadEnded.wait()
        afterStop.lock()
        threads.standIn.store(UInt(pthread_self()), ordering: .releasing)
        let acquired = g_main_context_acquire(context) != 0  // nobody else owns it once the thread ended
        defer {
            if acquired { g_main_context_release(context) }
            threads.standIn.store(0, ordering: .releasing)
            afterStop.unlock()
        }
        return try body()
    }

    /// Runs `body` on the loop thread and resumes with its result.
    /// - Throws: what `body` throws; ``EventLoopError/stopped`` if the loop was stopped.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let queued = enqueue { continuation.resume(with: Result { try body() }) }
            if !queued { continuation.resume(throwing: EventLoopError.stopped) }
        }
    }

    /// Runs `body` on the loop thread after `milliseconds` ms (a GLib timeout source).
    /// Returns the source id, usable with ``cancelTimer(_:)``.
    @discardableResult
    public func after(milliseconds: UInt32, _ body: @escaping @Sendable () -> Void) -> UInt32 {
        let box = Unmanaged.passRetained(ClosureBox(body))
        let source = g_timeout_source_new(milliseconds)
        g_source_set_callback(source, { data in
            guard let data else { return 0 }
            Unmanaged<ClosureBox>.fromOpaque(data).takeUnretainedValue().body()
            return 0
        }, box.toOpaque(), { data in
            guard let data else { return }
            Unmanaged<ClosureBox>.fromOpaque(data).release()
        })
        let id = g_source_attach(source, context)
        g_source_unref(source)
        return id
    }

    /// Cancels a timer made by ``after(milliseconds:_:)`` if it has not fired.
    public func cancelTimer(_ id: UInt32) {
        guard id != 0 else { return }  // 0 is never a source id (a timer that was not set)
        if isCurrent {  // on the loop thread: gone before this returns, so it cannot fire after
            if let source = g_main_context_find_source_by_id(context, id) { g_source_destroy(source) }
            return
        }
        let pointers = LoopPointers(context: context, loop: loop)
        async {
            if let source = g_main_context_find_source_by_id(pointers.context, id) { g_source_destroy(source) }
        }
    }

    /// Quits the loop and waits for its thread to end. Idempotent; must not be called
    /// from the loop thread itself (it would wait for itself), where it only quits.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        g_main_loop_quit(loop)
        if !isCurrent { threadEnded.wait() }
    }

    /// GLib's version as linked at run time (`glib_major_version` …), e.g. "2.74.6".
    public static var glibVersion: String { "\(glib_major_version).\(glib_minor_version).\(glib_micro_version)" }
}

/// Errors of ``EventLoop``.
public enum EventLoopError: Error, Equatable {
    /// The loop was stopped before the closure could run.
    case stopped
}

/// The loop's GLib pointers, handed to closures that run on the loop thread
/// (GMainContext and GMainLoop are thread-safe objects).
// @unchecked: GLib pointers (OpaquePointer) carried to the loop thread; GMainContext and GMainLoop are thread-safe.
private struct LoopPointers: @unchecked Sendable {
    let context: OpaquePointer
    let loop: OpaquePointer
}

/// The pthread ids ``EventLoop/isCurrent`` compares with: the loop thread's and a stand-in's.
private final class ThreadIDs: Sendable {
    let loop = Atomic<UInt>(0)
    let standIn = Atomic<UInt>(0)
}

private final class ClosureBox {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private final class SignalBox {
    let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
}

/// Carries a non-Sendable closure to the loop thread for ``EventLoop/sync(_:)``,
/// which blocks the caller until it has run, so no concurrent access happens.
/// ``run()`` drops the closure before the caller is woken, as
/// `withoutActuallyEscaping` requires.
// @unchecked: carries the caller's non-Sendable closure and result to the loop thread and back, ordered by the caller's semaphore wait.
private final class SyncTransfer<T>: @unchecked Sendable {
    private var body: (() throws -> T)?
    private(set) var value: Result<T, any Error>?
    init(_ body: @escaping () throws -> T) { self.body = body }

    func run() {
        if let body { value = Result { try body() } }
        body = nil
    }
}
