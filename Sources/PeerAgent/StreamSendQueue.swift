// StreamSendQueue: what the data channels wait to send, one FIFO per SCTP stream, taken round-robin between streams (so one channel's bulk does not hold another's messages back).

/// Messages waiting for room in the SCTP association, one first-in-first-out queue per
/// stream, the streams taking turns one message at a time (round-robin, as browsers
/// schedule their data channels: a channel with megabytes queued does not hold back
/// another channel's control message behind them).
///
/// A message the association took only in part (its send buffer filled) keeps the turn
/// until the rest is taken: with explicit end of record, libusrsctp sends nothing of
/// another message before it is complete (RFC 9260 §6.9: a message's fragments take
/// consecutive TSNs).
///
/// A value type confined to one thread (SctpTransport keeps it on the event loop).
struct StreamSendQueue<Item> {
    private struct Stream {
        var items: [Item] = []
        var head = 0
        var isEmpty: Bool { head == items.count }
    }

    private var streams: [UInt16: Stream] = [:]
    /// Streams with something queued, in turn order.
    private var order: [UInt16] = []
    /// The index in `order` of the stream whose turn it is.
    private var turn = 0

    /// Messages queued over all streams.
    private(set) var count = 0

    /// True when nothing waits.
    var isEmpty: Bool { count == 0 }

    /// Queues `item` last on `stream`.
    mutating func append(_ item: Item, stream: UInt16) {
        var s = streams[stream] ?? Stream()
        if s.isEmpty, !order.contains(stream) { order.append(stream) }
        s.items.append(item)
        streams[stream] = s
        count += 1
    }

    /// The stream whose turn it is and its first message; nil when nothing waits.
    var current: (stream: UInt16, item: Item)? {
        guard !order.isEmpty, let s = streams[order[turn]], !s.isEmpty else { return nil }
        return (order[turn], s.items[s.head])
    }

    /// Changes the current message in place (how much of it the association took).
    mutating func updateCurrent(_ change: (inout Item) -> Void) {
        guard !order.isEmpty, var s = streams[order[turn]], !s.isEmpty else { return }
        change(&s.items[s.head])
        streams[order[turn]] = s
    }

    /// Takes the current message off its queue (sent, or dropped) and passes the turn to
    /// the next stream; nil when nothing waits.
    @discardableResult
    mutating func removeCurrent() -> Item? {
        guard !order.isEmpty, var s = streams[order[turn]], !s.isEmpty else { return nil }
        let sid = order[turn]
        let item = s.items[s.head]
        s.head += 1
        count -= 1
        if s.isEmpty {
            streams[sid] = nil
            order.remove(at: turn)
            if turn >= order.count { turn = 0 }
        } else {
            if s.head >= 64, s.head * 2 >= s.items.count {  // keep the storage from growing
                s.items.removeFirst(s.head)
                s.head = 0
            }
            streams[sid] = s
            turn = (turn + 1) % order.count
        }
        return item
    }

    /// True when a message queued on `stream` satisfies `predicate`.
    func contains(stream: UInt16, where predicate: (Item) -> Bool) -> Bool {
        guard let s = streams[stream] else { return false }
        return s.items[s.head...].contains(where: predicate)
    }

    /// Drops everything.
    mutating func removeAll() {
        streams = [:]
        order = []
        turn = 0
        count = 0
    }
}
