// LoopBound: a value that only the event-loop thread may touch — loop confinement checked at run time on every access.
/// A value confined to an ``EventLoop``'s thread (the GLib context's owner): reading or
/// writing ``value`` anywhere else stops the process with a message instead of racing.
/// The box is `Sendable` so the object that holds it can be; the value itself (protocol
/// state that C callbacks on the loop update) need not be, and the compiler keeps it from
/// leaving the box in a `@Sendable` closure.
///
/// The value is made on the caller's thread (`init`) and released wherever the box's
/// last reference goes. After the loop stopped, ``EventLoop/sync(_:)`` runs its body as
/// the context's owner, so the value stays reachable there.
// @unchecked: the confinement is the precondition in every accessor (the pattern of SwiftNIO's NIOLoopBound).
public final class LoopBound<Value>: @unchecked Sendable {
    /// The loop the value belongs to.
    public let loop: EventLoop
    private var storage: Value

    /// Confines `value` to `loop`'s thread.
    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        storage = value
    }

    /// The value. Precondition: called on ``loop``'s thread.
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

    /// Runs `body` with the value (mutable). Precondition: called on ``loop``'s thread.
    /// Rethrows what `body` throws.
    public func withValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        check()
        return try body(&storage)
    }

    private func check() {
        precondition(loop.isCurrent, "a value bound to the event loop was touched from another thread")
    }
}
