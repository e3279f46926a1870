// Doorbell: wakes the event-loop thread from any thread without GLib's context lock — an eventfd(2) watched by one GSource on the loop.
import CGLib
import CLinux
import Glibc

/// Why a ``Doorbell`` could not be made.
public struct DoorbellError: Error, Equatable, CustomStringConvertible {
    /// The `errno` of the failed `eventfd(2)`.
    public var errno: Int32
    /// One line naming the call and the error.
    public var description: String { "eventfd: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// A wake-up for an ``EventLoop`` that other threads ring many times a second (a sender
/// thread with packets for the loop to send). ``EventLoop/async(_:)`` attaches a new
/// GSource per call, taking the GMainContext lock the loop thread also takes on every
/// iteration; a thread put aside by the scheduler while holding it stalls the loop. A
/// doorbell is one eventfd watched by one GSource attached once: ``ring()`` is a single
/// `write(2)` (no lock), and the loop runs `body` once for one or more rings.
///
/// Threading: ``ring()`` from any thread; `body` runs on the loop thread. Ended by
/// ``close()`` or deinit (after which `body` never runs again).
public final class Doorbell: Sendable {
    /// The eventfd, closed when both this doorbell and its GSource have let go of it, so a
    /// ring after ``close()`` writes to the still-open eventfd, never to a reused number.
    private let eventfd: EventFD
    private let source: SourcePointer

    /// A doorbell on `loop` that runs `body` on the loop thread after rings, at GLib
    /// `priority` (lower numbers first; 0 is `G_PRIORITY_DEFAULT`, that of timers and sockets).
    /// - Throws: ``DoorbellError`` when no eventfd can be made (file descriptors exhausted).
    public init(loop: EventLoop, priority: Int32 = 0, _ body: @escaping @Sendable () -> Void) throws(DoorbellError) {
        let fd = peer_eventfd()
        guard fd >= 0 else { throw DoorbellError(errno: Glibc.errno) }
        let eventfd = EventFD(fd)
        self.eventfd = eventfd
        let box = Unmanaged.passRetained(Ring(eventfd: eventfd, body: body))
        let raw = g_unix_fd_source_new(fd, G_IO_IN)
        // GLib calls a unix fd source's callback as GUnixFDSourceFunc (fd, condition, data).
        let callback: @convention(c) (Int32, GIOCondition, gpointer?) -> gboolean = { _, _, data in
            guard let data else { return 0 }
            Unmanaged<Ring>.fromOpaque(data).takeUnretainedValue().fire()
            return 1  // G_SOURCE_CONTINUE
        }
        g_source_set_callback(raw, unsafeBitCast(callback, to: GSourceFunc.self), box.toOpaque(), { data in
            guard let data else { return }
            Unmanaged<Ring>.fromOpaque(data).release()
        })
        g_source_set_priority(raw, priority)
        g_source_attach(raw, loop.context)
        source = SourcePointer(raw: raw)
    }

    deinit {
        close()
        if let raw = source.raw { g_source_unref(raw) }  // the reference from g_unix_fd_source_new
    }

    /// Wakes the loop (any thread); rings before the loop runs `body` are merged.
    public func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(eventfd.fd, $0.baseAddress, 8) }
    }

    /// Detaches the doorbell: `body` is not run again (a later ``ring()`` does nothing
    /// visible). Idempotent; any thread.
    public func close() {
        guard let raw = source.raw else { return }
        if g_source_is_destroyed(raw) == 0 { g_source_destroy(raw) }
    }
}

/// An eventfd, closed when the last reference goes.
private final class EventFD: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { Glibc.close(fd) }
}

/// The eventfd and the closure a doorbell's GSource holds (released with the source).
private final class Ring: Sendable {
    let eventfd: EventFD
    let body: @Sendable () -> Void
    init(eventfd: EventFD, body: @escaping @Sendable () -> Void) { self.eventfd = eventfd; self.body = body }
    /// On the loop thread: empties the eventfd's count and runs `body`.
    func fire() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(eventfd.fd, $0.baseAddress, 8) }
        body()
    }
}

// @unchecked: a GSource pointer (not Sendable) kept to destroy it; GSource destroy and
// is-destroyed are thread-safe in GLib.
private struct SourcePointer: @unchecked Sendable {
    let raw: UnsafeMutablePointer<GSource>?
}
