// LoopFanout: a shared source's subscribers that live on one event loop — one hop onto the loop per frame, handing it to each of them there; a subscriber starts at a key frame.
import EventLoop
import RTP
import Synchronization

/// The counters of one subscription, written on its loop and read from anywhere without
/// waiting (atomics).
final class SubscriberCounters: Sendable {
    /// Frames handed to the subscriber.
    let framesDelivered = Atomic<Int>(0)
    /// Frames passed over while it waited for a key frame (joining, after a gap).
    let framesSkipped = Atomic<Int>(0)
    /// Key-frame requests it made (PLI, FIR, its join, a resume).
    let keyframeRequests = Atomic<Int>(0)
}

/// The subscribers of one shared source that live on one ``EventLoop``: the source's
/// thread hands each frame over once (``hand(_:)``: one `EventLoop.async`), and on the loop
/// every subscriber gets it in turn. A subscriber waits for a key frame before its first
/// frame (and again after ``markAllWaiting()``): a video decoder cannot start elsewhere.
///
/// A slow loop does not make the source wait or its queue grow without bound: at most
/// ``maximumInFlight`` frames are on their way to one loop; beyond that frames for that
/// loop are dropped (``dropped``) and a key frame is requested at once (through
/// `requestKeyframe`); the frames before the gap still reach the subscribers, and from the
/// first frame after it they wait for a key frame.
final class LoopFanout: Sendable {
    /// The loop the subscribers live on.
    let loop: EventLoop
    /// Frames at most on their way to the loop at once.
    let maximumInFlight: Int
    /// One subscriber, on the loop.
    private struct Entry {
        let id: UInt64
        let deliver: @Sendable (PacketizedFrame) -> Void
        let counters: SubscriberCounters
        var waitingForKeyframe = true
    }
    /// The subscribers, touched only on ``loop``.
    private let entries: LoopBound<[Entry]>
    private let inFlight = Atomic<Int>(0)
    private let overflowed = Atomic<Bool>(false)
    /// Frames dropped because the loop was ``maximumInFlight`` frames behind.
    let dropped = Atomic<Int>(0)
    /// Hops onto the loop made (one per frame handed over).
    let hops = Atomic<Int>(0)
    private let requestKeyframe: @Sendable () -> Void

    /// A fanout onto `loop`; `requestKeyframe` asks the source for a key frame (after an overflow).
    init(loop: EventLoop, maximumInFlight: Int = 32, requestKeyframe: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.maximumInFlight = max(1, maximumInFlight)
        self.requestKeyframe = requestKeyframe
        entries = LoopBound([], loop: loop)
    }

    /// Hands `frame` to every subscriber on the loop (from the source's thread): one hop.
    func hand(_ frame: PacketizedFrame) {
        guard inFlight.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue <= maximumInFlight else {
            inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            dropped.wrappingAdd(1, ordering: .relaxed)
            if !overflowed.exchange(true, ordering: .acquiringAndReleasing) { requestKeyframe() }
            return
        }
        hops.wrappingAdd(1, ordering: .relaxed)
        let afterGap = overflowed.exchange(false, ordering: .acquiringAndReleasing)
        let queued = loop.async { [self] in
            deliver(frame, afterGap: afterGap)
            inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        }
        if !queued { inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
    }

    /// On the loop: `frame` to each subscriber that is not waiting for a key frame (a key
    /// frame ends the wait); after frames were dropped (`afterGap`) every one waits.
    private func deliver(_ frame: PacketizedFrame, afterGap: Bool) {
        if afterGap { markAllWaiting() }
        // Indices, not a copy of the array: a subscriber may add or remove subscribers of
        // this loop from its delivery (the list is read again each turn).
        var i = 0
        while i < entries.value.count {
            let entry = entries.value[i]
            i += 1
            if entry.waitingForKeyframe {
                guard frame.isKeyframe else {
                    entry.counters.framesSkipped.wrappingAdd(1, ordering: .relaxed)
                    continue
                }
                entries.value[i - 1].waitingForKeyframe = false
            }
            entry.counters.framesDelivered.wrappingAdd(1, ordering: .relaxed)
            entry.deliver(frame)
        }
    }

    /// Adds a subscriber (waiting for a key frame): at once on the loop, else queued onto it.
    func add(id: UInt64, counters: SubscriberCounters, deliver: @escaping @Sendable (PacketizedFrame) -> Void) {
        onLoop { [self] in entries.value.append(Entry(id: id, deliver: deliver, counters: counters)) }
    }

    /// Removes a subscriber: on the loop at once (no frame reaches it after this returns),
    /// else queued onto it (frames already on their way may still reach it before).
    func remove(id: UInt64) {
        onLoop { [self] in entries.value.removeAll { $0.id == id } }
    }

    /// Makes subscriber `id` wait for the next key frame (a resumed sender).
    func waitForKeyframe(id: UInt64) {
        onLoop { [self] in
            if let i = entries.value.firstIndex(where: { $0.id == id }) { entries.value[i].waitingForKeyframe = true }
        }
    }

    /// On the loop: every subscriber waits for the next key frame.
    private func markAllWaiting() {
        for i in entries.value.indices { entries.value[i].waitingForKeyframe = true }
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.isCurrent { body() } else { loop.async(body) }
    }
}
