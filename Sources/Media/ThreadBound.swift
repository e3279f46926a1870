// ThreadBound: a value only one MediaThread may touch (EventLoop's ThreadConfined, owned by a media thread).
import EventLoop

/// A value confined to one ``MediaThread``: its encoder, packetizer and counters, or its
/// sinks. Touching it anywhere but on that thread (or in its place after it ended, see
/// ``MediaThread/sync(_:)``) stops the process (``ThreadConfined``).
public typealias ThreadBound<Value> = ThreadConfined<Value>

extension ThreadConfined {
    /// Confines `value` to `thread`.
    public convenience init(_ value: Value, thread: MediaThread) {
        self.init(value, owner: thread)
    }
}

extension MediaThread: ConfiningThread {}
