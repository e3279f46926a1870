// ChangeSignal: wakes the tasks waiting on some state when another thread changes it, so they await a change instead of polling.
import Synchronization

/// Wakes the tasks waiting on some state when that state changes, so that a task awaits the
/// event that changes it (a callback on another thread, e.g. a connection's events) instead
/// of polling: the callback calls ``signal()`` after each change, the waiter
/// ``wait(within:until:)`` with a condition on that state. (Tests poll state no callback
/// announces with TestSupport's `eventually`.)
public final class ChangeSignal: Sendable {
    private struct State {
        /// Changes signalled so far.
        var generation = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// A signal with no change yet.
    public init() {}

    /// Records a change and wakes every waiter to check its condition again. Any thread.
    public func signal() {
        let woken = state.withLock { s in
            s.generation += 1
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits, without blocking a thread, until `condition` holds, at most `seconds`: checked
    /// at once and after each ``signal()``. True as soon as it holds, else its value at the
    /// deadline (or when the task is cancelled).
    public func wait(within seconds: Double, until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int((seconds * 1000).rounded()))
        while true {
            let seen = state.withLock { $0.generation }
            if condition() { return true }
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.change(after: seen) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Returns once a change after generation `seen` is signalled (at once if one was), or
    /// when the task is cancelled.
    private func change(after seen: Int) async {
        let id = state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s in
                    if s.generation != seen || Task.isCancelled { return true }
                    s.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
