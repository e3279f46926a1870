// HubSubscription: one sender's hold on a shared source of the media hub — its frames on its loop, its key-frame requests (PLI/FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1), its counters, its end.
import EventLoop
import Synchronization

/// One subscriber of a shared source (``MediaHub/subscribe(_:loop:deliver:)``): frames
/// arrive on ``loop`` until ``cancel()`` or the last reference goes.
///
/// Any method may be called from any thread; the counters are published atomics (no wait).
public final class HubSubscription: Sendable {
    /// The source subscribed to.
    public let spec: HubSourceSpec
    /// The loop frames are delivered on.
    public let loop: EventLoop
    let id: UInt64
    let counters = SubscriberCounters()
    private let source: SharedSource
    private let hub: MediaHub
    private let cancelled = Atomic<Bool>(false)

    init(id: UInt64, spec: HubSourceSpec, loop: EventLoop, source: SharedSource, hub: MediaHub) {
        self.id = id
        self.spec = spec
        self.loop = loop
        self.source = source
        self.hub = hub
    }

    deinit { cancel() }

    /// A PLI (RFC 4585 §6.3.1) or FIR (RFC 5104 §4.3.1) from this subscriber's receiver:
    /// merged with every other subscriber's into the source's next forced key frame (at
    /// most one per 500 ms). For a file passed through, counted as unserviceable.
    public func requestKeyframe() {
        guard !cancelled.load(ordering: .acquiring) else { return }
        counters.keyframeRequests.wrappingAdd(1, ordering: .relaxed)
        source.requestKeyframe(join: false)
    }

    /// Holds this subscriber's frames back until the next key frame, and asks for one (as a
    /// join does): for a sender that resumes after a pause, or whose receiver must start over.
    public func waitForKeyframe() {
        guard !cancelled.load(ordering: .acquiring) else { return }
        counters.keyframeRequests.wrappingAdd(1, ordering: .relaxed)
        source.waitForKeyframe(id: id, loop: loop)
    }

    /// Ends the subscription: from ``loop`` itself no frame is delivered after this returns;
    /// from another thread, frames already on their way may still arrive. The source stops
    /// when this was its last subscriber. Idempotent.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        source.remove(id: id, loop: loop)
        hub.release(spec, source)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    /// Frames delivered to this subscriber.
    public var framesDelivered: Int { counters.framesDelivered.load(ordering: .relaxed) }
    /// Frames passed over while it waited for a key frame.
    public var framesSkipped: Int { counters.framesSkipped.load(ordering: .relaxed) }
    /// Key-frame requests it made (its join, PLI/FIR, resumes).
    public var keyframeRequests: Int { counters.keyframeRequests.load(ordering: .relaxed) }
}
