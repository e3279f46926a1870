// Once: a continuation resumed at most once, by whichever of several racers comes first (an answer against a timeout, a join against a hang-up).
import Synchronization

/// Resumes a continuation once; later calls are ignored, their values dropped. Any thread.
public final class Once<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    /// Holds `c` until the first ``resume(_:)``.
    public init(_ c: CheckedContinuation<Value, Never>) { continuation = Mutex(c) }
    /// Resumes the continuation with `value` if nothing resumed it yet.
    public func resume(_ value: Value) {
        let c = continuation.withLock { c in
            defer { c = nil }
            return c
        }
        c?.resume(returning: value)
    }
}
