// MemoryWire: two in-process endpoints' packets carried to each other in memory on the event loop, in order, for the floor benchmarks (no sockets).
import EventLoop
import Synchronization

/// A wire between side 0 and side 1: ``carry(_:to:)`` queues a packet for a side, and the
/// queue is drained on a later turn of the loop (or at once by ``drain()``), each packet
/// handed to that side's receiver in the order it was queued.
final class MemoryWire: Sendable {
    private let loop: EventLoop
    private let receivers = Mutex<[@Sendable ([UInt8]) -> Void]>([])
    private let queue = Mutex<(packets: [(side: Int, bytes: [UInt8])], scheduled: Bool)>(([], false))

    /// A wire on `loop`; nothing is delivered before ``connect(_:_:)``.
    init(loop: EventLoop) { self.loop = loop }

    /// The receivers of side 0 and side 1 (each called on the loop thread).
    func connect(_ side0: @escaping @Sendable ([UInt8]) -> Void, _ side1: @escaping @Sendable ([UInt8]) -> Void) {
        receivers.withLock { $0 = [side0, side1] }
    }

    /// Queues `packet` (bytes) for `side` (0 or 1); from any thread.
    func carry(_ packet: [UInt8], to side: Int) {
        let schedule = queue.withLock { q -> Bool in
            q.packets.append((side, packet))
            defer { q.scheduled = true }
            return !q.scheduled
        }
        if schedule { _ = loop.async { self.drain() } }
    }

    /// Hands every queued packet over, those queued meanwhile too, until none is left
    /// (loop thread).
    func drain() {
        let to = receivers.withLock { $0 }
        while true {
            let next = queue.withLock { q -> [(side: Int, bytes: [UInt8])] in
                let taken = q.packets
                q.packets = []
                if taken.isEmpty { q.scheduled = false }
                return taken
            }
            if next.isEmpty || to.count < 2 { return }
            for p in next { to[p.side](p.bytes) }
        }
    }
}
