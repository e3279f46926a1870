// HangUpRequest: a hang-up asked for from outside a call's task (a signal handler, a test), awaited while the call joins its router.
import PeerAgent
import Synchronization

/// How a call was asked to end from outside.
public enum HangUpKind: Sendable, Equatable {
    /// Ended on purpose (exit code 0, or 7 below --min-frames).
    case hungUp
    /// Interrupted (SIGINT/SIGTERM: exit code 130).
    case interrupted
}

/// A hang-up request, set from any thread and awaited by the call's task. `interrupted`
/// wins over `hungUp`. State behind one `Mutex`; waiters are resumed outside it.
final class HangUpRequest: Sendable {
    private let state = Mutex<(kind: HangUpKind?, waiters: [UInt64: CheckedContinuation<HangUpKind?, Never>], next: UInt64)>((nil, [:], 0))

    /// The request so far, if any.
    var kind: HangUpKind? { state.withLock { $0.kind } }

    /// Records `kind` (interrupted wins) and wakes every waiter.
    func set(_ kind: HangUpKind) {
        let (value, waiters) = state.withLock { s -> (HangUpKind, [CheckedContinuation<HangUpKind?, Never>]) in
            if s.kind != .interrupted { s.kind = kind }
            defer { s.waiters = [:] }
            return (s.kind ?? kind, Array(s.waiters.values))
        }
        for w in waiters { w.resume(returning: value) }
    }

    /// Waits until a hang-up is requested and returns its kind; nil when the waiting task
    /// is cancelled first.
    func wait() async -> HangUpKind? {
        let id = state.withLock { s in defer { s.next += 1 }; return s.next }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<HangUpKind?, Never>) in
                let now: HangUpKind?? = state.withLock { s in
                    if let kind = s.kind { return .some(kind) }
                    if Task.isCancelled { return .some(nil) }
                    s.waiters[id] = c
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }
}
