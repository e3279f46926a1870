// MediaHub: the process's shared media sources — one source, one encoder and one packetization per distinct source spec, handed to every subscribing connection on its own event loop.
import Dispatch
import EventLoop
import RTP
import Synchronization

/// The process's shared media: one source, one encoder and one packetization per
/// distinct ``HubSourceSpec`` (source, size, frame rate, bitrate), shared by every
/// connection that sends it — e.g. `pattern:640x480@30` at 1,000 kbit/s is encoded once
/// for 50 connections; an `ivf:` or `ogg:` file is read once and its frames shared. Made
/// once and passed to whoever sends from it (no hidden global).
///
/// - Frames: each one a ``PacketizedFrame`` (the RTP payloads, made once, shared by
///   reference); a connection adds its own RTP header and SRTP (``SharedFrameStream``).
/// - Threads: one ``MediaThread`` per distinct source while it has subscribers (so two for
///   a process sending one video and one audio source, whatever its connection count),
///   pacing it in real time, encoding and packetizing. Delivery is per loop, not per
///   packet or subscriber: one `EventLoop.async` per (frame, loop) hands the frame to every
///   subscriber on that loop, which runs there (``subscribe(_:loop:deliver:)``).
/// - Key frames: PLI/FIR from any subscriber (``HubSubscription/requestKeyframe()``) and
///   joins are merged and rate-limited by the source's ``KeyframeRequestGate`` (at most one
///   forced key frame per 500 ms); a subscriber gets frames from a key frame on, so one
///   that joins mid-stream starts within that bound. A file passed through (IVF) cannot
///   force one: a joining subscriber starts at the file's next key frame, and PLI/FIR are
///   counted as unserviceable (``HubSourceStats/unserviceableKeyframeRequests``).
/// - Lifetime: a source opens with its first subscriber and stops, freeing its encoder,
///   when its last one leaves; a frame's payload is freed when the last subscriber (and
///   retransmission history) lets go of it.
public final class MediaHub: Sendable {
    /// How the hub's sources run.
    public enum Pacing: Sendable, Equatable {
        /// Each source is pulled in real time by its frames' timestamps (``MediaPacer``).
        case realTime
        /// Nothing runs by itself: ``pump(_:frames:)`` produces frames when the caller
        /// says (tests with an injected clock, benchmarks without waiting).
        case manual
    }

    /// How sources run.
    public let pacing: Pacing
    /// Milliseconds on a monotonic clock: the key-frame gate's time.
    let clock: @Sendable () -> Int64
    private struct Entry {
        let source: SharedSource
        var subscribers: Int
    }
    private let sources = Mutex<[HubSourceSpec: Entry]>([:])
    private let nextID = Atomic<UInt64>(1)
    private let madeCounts = Mutex((sources: 0, encoders: 0))

    /// A hub whose sources run by `pacing`, its key-frame gates on `clock` (ms; default the
    /// monotonic clock, ``monotonicMs``).
    public init(pacing: Pacing = .realTime, clock: @escaping @Sendable () -> Int64 = MediaHub.monotonicMs) {
        self.pacing = pacing
        self.clock = clock
    }

    /// Milliseconds since boot on the monotonic clock.
    public static let monotonicMs: @Sendable () -> Int64 = { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }

    /// Subscribes to `spec` from `loop`: `deliver` is called on `loop` with each shared
    /// frame from the next key frame on (video; audio at once), until the subscription is
    /// cancelled or released. The source is opened (its encoder made) by its first
    /// subscriber, before this returns; a key frame is requested for this subscriber.
    ///
    /// `deliver` must not hold the subscription strongly (it holds `deliver`).
    /// - Throws: ``MediaHubError/cannotOpen(spec:reason:)`` naming the spec and the source's
    ///   or codec's error (a missing or broken file, a size or bitrate out of range).
    public func subscribe(_ spec: HubSourceSpec, loop: EventLoop,
                          deliver: @escaping @Sendable (PacketizedFrame) -> Void) throws(MediaHubError) -> HubSubscription {
        let source = sources.withLock { s -> SharedSource in
            if let entry = s[spec] {
                s[spec]?.subscribers += 1
                return entry.source
            }
            let source = SharedSource(spec: spec, clock: clock)
            s[spec] = Entry(source: source, subscribers: 1)
            return source
        }
        do {
            if try source.open() {
                madeCounts.withLock {
                    $0.sources += 1
                    if !spec.isPassthrough { $0.encoders += 1 }
                }
            }
        } catch {
            release(spec, source)
            throw .cannotOpen(spec: spec.description, reason: "\(error)")
        }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let subscription = HubSubscription(id: id, spec: spec, loop: loop, source: source, hub: self)
        source.add(id: id, loop: loop, counters: subscription.counters, deliver: deliver)
        subscription.counters.keyframeRequests.wrappingAdd(1, ordering: .relaxed)
        if pacing == .realTime { source.startPacing() }
        return subscription
    }

    /// One subscriber of `source` left: the source stops when it was the last.
    func release(_ spec: HubSourceSpec, _ source: SharedSource) {
        let last = sources.withLock { s -> Bool in
            guard let entry = s[spec], entry.source === source else { return false }
            if entry.subscribers > 1 {
                s[spec]?.subscribers -= 1
                return false
            }
            s[spec] = nil
            return true
        }
        if last { source.stop() }
    }

    /// With ``Pacing/manual``: produces up to `frames` frames of `spec`'s source now, on its
    /// thread (encoded, packetized, handed to the loops as in real time); returns how many.
    /// Waits for the thread (call it from a thread that may block, not from a loop).
    /// 0 when the source has no subscriber. Throws the source's error (a file's).
    public func pump(_ spec: HubSourceSpec, frames: Int) throws -> Int {
        guard let source = sources.withLock({ $0[spec]?.source }) else { return 0 }
        return try source.pump(frames)
    }

    /// The counters of every source that has subscribers (published ones: never waits).
    public var stats: [HubSourceStats] {
        let entries = sources.withLock { Array($0.values) }
        return entries.map { $0.source.stats(subscribers: $0.subscribers) }
    }

    /// The counters of `spec`'s source, nil when it has no subscriber.
    public func stats(of spec: HubSourceSpec) -> HubSourceStats? {
        guard let entry = sources.withLock({ $0[spec] }) else { return nil }
        return entry.source.stats(subscribers: entry.subscribers)
    }

    /// Sources opened and encoders made over the hub's life (one per distinct spec while
    /// it has subscribers; a spec opened again after its last subscriber left counts again).
    public var made: (sources: Int, encoders: Int) { madeCounts.withLock { $0 } }

    /// Sources running now (those with subscribers).
    public var activeSources: Int { sources.withLock { $0.count } }
}

/// Errors of ``MediaHub``.
public enum MediaHubError: Error, Equatable, CustomStringConvertible {
    /// The source `spec` could not be opened or its encoder made: `reason` is its error.
    case cannotOpen(spec: String, reason: String)

    /// One line naming the spec and the reason.
    public var description: String {
        switch self {
        case let .cannotOpen(spec, reason): return "media hub: cannot open \(spec): \(reason)"
        }
    }
}

/// Nanoseconds on the monotonic clock (encode timing).
func monotonicNanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
