// ThreadBound: a value that only one MediaThread may touch — thread confinement checked at run time on every access.
/// A value confined to one ``MediaThread``: reading or writing ``value`` anywhere but on
/// that thread (or in its place after it ended, see ``MediaThread/sync(_:)``) stops the
/// process with a message naming the thread, instead of racing. The box is `Sendable`
/// so the object that holds it can be; the value itself (an encoder, a writer, the
/// counters of a track) need not be, and the compiler keeps it from leaving the box in a
/// `@Sendable` closure.
///
/// The value is made on the caller's thread (`init`) and released wherever the box's
/// last reference goes: neither may touch the value concurrently with the thread, so a
/// type whose `deinit` needs the thread must be closed on it first.
// @unchecked: the confinement is the precondition in every accessor (the pattern of SwiftNIO's NIOLoopBound).
public final class ThreadBound<Value>: @unchecked Sendable {
    /// The thread the value belongs to.
    public let thread: MediaThread
    private var storage: Value

    /// Confines `value` to `thread`.
    public init(_ value: Value, thread: MediaThread) {
        self.thread = thread
        storage = value
    }

    /// The value. Precondition: called on ``thread``.
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

    /// Runs `body` with the value (mutable). Precondition: called on ``thread``. Rethrows
    /// what `body` throws.
    public func withValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        check()
        return try body(&storage)
    }

    private func check() {
        precondition(thread.isCurrent, "a value bound to media thread \(thread.name) was touched from another thread")
    }
}
