// LoopQueue: the closures queued for an event loop's thread (EventLoop.async, sync, perform), run in order by one GSource attached once.
import CGLib
import Synchronization

/// The closures waiting for an ``EventLoop``'s thread, first in first out, run by one
/// custom GSource attached to the loop's context once (at `G_PRIORITY_DEFAULT`).
///
/// An earlier design attached a new idle GSource per closure: an allocation, the
/// context's lock and a place in its source list for every call, and GLib's `prepare`
/// and `check` walk that list on every iteration — with a closure queued per data
/// channel message that was 7.6 % of the loop thread in `peer-bench data`. Here a
/// closure is an append under a lock; the source is ready while the queue is not empty
/// (its `prepare` reads an atomic count, no lock), and a closure queued from another
/// thread onto an empty queue wakes the loop (`g_main_context_wakeup`, one eventfd
/// write, no context lock).
///
/// Threading: ``append(_:)`` from any thread; the closures run on the loop thread, each
/// batch being what was queued when the source was dispatched (closures queued while a
/// batch runs run in the next iteration, so sockets and timers are served between).
final class LoopQueue: Sendable {
    typealias Closure = @Sendable () -> Void

    private let closures = Mutex<[Closure]>([])
    /// How many closures wait (read by the source's `prepare` and `check` without the lock).
    private let count = Atomic<Int>(0)
    private let context: SourceContext

    /// Attaches the queue's source to `context` (a `GMainContext*`).
    init(context: OpaquePointer) {
        self.context = SourceContext(raw: context)
        guard let raw = g_source_new(LoopQueue.functions, UInt32(LoopQueue.sourceSize)) else {
            preconditionFailure("g_source_new returned NULL")  // GLib aborts on allocation failure instead
        }
        // The queue right after the GSource, retained by it (released in `finalize`, when the
        // context lets the source go).
        UnsafeMutableRawPointer(raw).advanced(by: MemoryLayout<GSource>.size)
            .storeBytes(of: Unmanaged.passRetained(self).toOpaque(), as: UnsafeMutableRawPointer.self)
        g_source_set_priority(raw, Int32(G_PRIORITY_DEFAULT))
        g_source_set_can_recurse(raw, 0)
        g_source_attach(raw, context)
        g_source_unref(raw)  // the context holds it until it is destroyed with the context
    }

    /// Queues `body`; wakes the loop when `wake` and the queue was empty.
    /// - Parameter wake: false on the loop thread itself (its next `prepare` sees the count).
    func append(_ body: @escaping Closure, wake: Bool) {
        let wasEmpty = closures.withLock { queue in
            queue.append(body)
            return count.add(1, ordering: .releasing).oldValue == 0
        }
        if wake, wasEmpty { g_main_context_wakeup(context.raw) }
    }

    /// Runs what is queued now, in order (loop thread).
    fileprivate func runBatch() {
        let batch = closures.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true); count.store(0, ordering: .releasing) }
            return queue
        }
        for body in batch { body() }
    }

    fileprivate var isReady: Bool { count.load(ordering: .acquiring) > 0 }

    // MARK: The GSource

    /// A GSource and the queue's pointer after it.
    private static let sourceSize = MemoryLayout<GSource>.size + MemoryLayout<UnsafeMutableRawPointer>.size

    private static func pointer(of source: UnsafeMutablePointer<GSource>) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(source).advanced(by: MemoryLayout<GSource>.size).load(as: UnsafeMutableRawPointer.self)
    }

    private static func queue(of source: UnsafeMutablePointer<GSource>?) -> LoopQueue? {
        guard let source else { return nil }
        return Unmanaged<LoopQueue>.fromOpaque(pointer(of: source)).takeUnretainedValue()
    }

    /// The source's functions (GLib keeps the pointer for the source's life: allocated once).
    nonisolated(unsafe) private static let functions: UnsafeMutablePointer<GSourceFuncs> = {
        let f = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
        f.initialize(to: GSourceFuncs(
            prepare: { source, timeout in
                timeout?.pointee = -1  // no deadline of its own: wait for the fds (or a wakeup)
                return LoopQueue.queue(of: source)?.isReady == true ? 1 : 0
            },
            check: { source in LoopQueue.queue(of: source)?.isReady == true ? 1 : 0 },
            dispatch: { source, _, _ in
                LoopQueue.queue(of: source)?.runBatch()
                return 1  // G_SOURCE_CONTINUE
            },
            finalize: { source in
                guard let source else { return }
                Unmanaged<LoopQueue>.fromOpaque(LoopQueue.pointer(of: source)).release()
            },
            closure_callback: nil, closure_marshal: nil))
        return f
    }()
}

// @unchecked: a GMainContext pointer; g_main_context_wakeup is thread-safe.
private struct SourceContext: @unchecked Sendable {
    let raw: OpaquePointer
}
