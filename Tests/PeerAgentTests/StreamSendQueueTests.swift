// StreamSendQueueTests: the data channels' send queue — first in first out per stream, streams in turn, a message taken in part keeps the turn.
import Testing
@testable import PeerAgent

@Suite struct StreamSendQueueTests {
    /// Streams take turns one message at a time; each stream keeps its own order.
    @Test func streamsTakeTurnsAndEachKeepsItsOrder() {
        var q = StreamSendQueue<String>()
        for i in 0..<4 { q.append("bulk\(i)", stream: 0) }
        q.append("ctl0", stream: 2)
        q.append("ctl1", stream: 2)
        q.append("chat0", stream: 4)
        #expect(q.count == 7)
        var taken: [String] = []
        while let item = q.removeCurrent() { taken.append(item) }
        #expect(taken == ["bulk0", "ctl0", "chat0", "bulk1", "ctl1", "bulk2", "bulk3"])
        #expect(q.isEmpty && q.current == nil)
    }

    /// A control message queued behind a megabyte of bulk goes out after one bulk message,
    /// not after all of them.
    @Test func aLateMessageOnAnotherStreamDoesNotWaitForTheBacklog() {
        var q = StreamSendQueue<Int>()
        for i in 0..<1_000 { q.append(i, stream: 0) }
        #expect(q.removeCurrent() == 0)
        q.append(-1, stream: 3)
        #expect(q.removeCurrent() == 1)
        #expect(q.current?.stream == 3 && q.removeCurrent() == -1)
        #expect(q.removeCurrent() == 2 && q.count == 997)
    }

    /// A message the association took only in part keeps the turn (its rest goes next),
    /// and the change made to it stays.
    @Test func aMessageTakenInPartKeepsTheTurn() {
        var q = StreamSendQueue<(name: String, offset: Int)>()
        q.append(("big", 0), stream: 1)
        q.append(("small", 0), stream: 5)
        q.updateCurrent { $0.offset += 100 }
        #expect(q.current?.stream == 1 && q.current?.item.offset == 100)
        q.updateCurrent { $0.offset += 50 }
        #expect(q.current?.item.offset == 150)
        #expect(q.removeCurrent()?.name == "big")
        #expect(q.removeCurrent()?.name == "small")
        #expect(q.removeCurrent() == nil)
    }

    /// `contains(stream:where:)` sees only what is still queued on that stream; a stream
    /// emptied and used again rejoins the turns at the end.
    @Test func containsAndReuse() {
        var q = StreamSendQueue<String>()
        q.append("a", stream: 7)
        q.append("b", stream: 9)
        #expect(q.contains(stream: 7) { $0 == "a" } && !q.contains(stream: 7) { $0 == "b" } && !q.contains(stream: 8) { _ in true })
        #expect(q.removeCurrent() == "a")
        #expect(!q.contains(stream: 7) { _ in true })
        q.append("c", stream: 7)
        #expect(q.removeCurrent() == "b")
        #expect(q.removeCurrent() == "c")
        q.append("d", stream: 9)
        q.removeAll()
        #expect(q.isEmpty && q.current == nil && q.removeCurrent() == nil)
    }

    /// Long runs on one stream stay in order while its storage is trimmed.
    @Test func aLongQueueStaysInOrderWhileTrimmed() {
        var q = StreamSendQueue<Int>()
        var out: [Int] = []
        for round in 0..<10 {
            for i in 0..<300 { q.append(round * 300 + i, stream: 0) }
            for _ in 0..<200 { if let v = q.removeCurrent() { out.append(v) } }
        }
        while let v = q.removeCurrent() { out.append(v) }
        #expect(out == Array(0..<3_000))
    }
}
