/// Waits, without blocking a thread, until `condition` holds: it is checked at once and then
/// every `interval` (10 ms unless told) for at most `seconds`. True as soon as it holds, else
/// its value at the deadline (or when the task is cancelled).
///
/// The one polling wait of the test targets: for state that changes without an event to
/// await (counters, statistics, a child's output). Where a callback announces the change, the
/// test awaits it instead (EventLoop's `ChangeSignal`, a stream or a continuation).
public func eventually(within seconds: Double, every interval: Duration = .milliseconds(10),
                       _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int((seconds * 1000).rounded()))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        do { try await Task.sleep(for: interval) } catch { break }
    }
    return condition()
}

/// Waits as ``eventually(within:every:_:)`` does until `value` gives something; that value,
/// or nil at the deadline.
public func eventuallyValue<T>(within seconds: Double, every interval: Duration = .milliseconds(10),
                               _ value: () -> T?) async -> T? {
    var found: T?
    _ = await eventually(within: seconds, every: interval) {
        found = value()
        return found != nil
    }
    return found
}
