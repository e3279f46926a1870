// ThreadConfined: a value only its owning thread may touch (the loop thread, a media thread) — confinement checked at run time on every access.

/// A thread that owns state: the event loop's (``EventLoop``), a media track's
/// (`MediaThread`). What ``ThreadConfined`` checks.
public protocol ConfiningThread: AnyObject, Sendable {
    /// Whether the caller runs on this thread, or in its place once it ended (its `sync`
    /// runs the work on the caller then).
    var isCurrent: Bool { get }
    /// The thread's name, for the message when the confinement is broken.
    var name: String { get }
}

/// A value confined to one thread (``ConfiningThread``): reading or writing ``value``
/// anywhere else stops the process with a message naming the thread, instead of racing.
/// The box is `Sendable` so the object that holds it can be; the value itself (protocol
/// state that C callbacks on the loop update, an encoder, a writer, a track's counters)
/// need not be: the compiler keeps it out of `@Sendable` closures, though not out of a
/// `sync` that returns it (return Sendable values from those).
///
/// The value is made on the caller's thread (`init`) and released wherever the box's
/// last reference goes: neither may touch the value concurrently with the owner, so a
/// type whose `deinit` needs the owner's thread must be closed on it first.
// @unchecked: the confinement is the precondition in every accessor (the pattern of SwiftNIO's NIOLoopBound).
public final class ThreadConfined<Value>: @unchecked Sendable {
    /// The thread the value belongs to.
    public let owner: any ConfiningThread
    private var storage: Value

    /// Confines `value` to `owner`.
    public init(_ value: Value, owner: any ConfiningThread) {
        self.owner = owner
        storage = value
    }

    /// The value. Precondition: called on ``owner``.
    public var value: Value {
        get {
            check()
            return storage
        }
        _modify {
            check()
            yield &storage
        }
    }

    /// Runs `body` with the value (mutable). Precondition: called on ``owner``. Rethrows
    /// what `body` throws.
    public func withValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        check()
        return try body(&storage)
    }

    private func check() {
        precondition(owner.isCurrent, "a value confined to thread \(owner.name) was touched from another thread")
    }
}

/// A value confined to an ``EventLoop``'s thread (the GLib context's owner). After the
/// loop stopped, ``EventLoop/sync(_:)`` runs its body as the context's owner, so the
/// value stays reachable there.
public typealias LoopBound<Value> = ThreadConfined<Value>

extension ThreadConfined {
    /// Confines `value` to `loop`'s thread.
    public convenience init(_ value: Value, loop: EventLoop) {
        self.init(value, owner: loop)
    }
}

extension EventLoop: ConfiningThread {}
