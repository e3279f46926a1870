// SharedSource: one source of the media hub — its thread pacing the source in real time, its one encoder and packetizer, the merged key-frame requests, and one hop per frame to each event loop with subscribers.
import EventLoop
import Media
import RTP
import Synchronization

/// One shared source (``HubSourceSpec``) and everything made once for all its
/// subscribers: the source, its encoder (or a file passed through), the packetization,
/// the ``KeyframeRequestGate``, and one ``LoopFanout`` per event loop its subscribers live on.
///
/// Threads: one ``MediaThread`` per shared source (`peer.hub.video`, `peer.hub.audio`), not
/// per subscriber or connection: it pulls the source in real time (``MediaPacer``), encodes,
/// packetizes and hands each frame to each loop once. Subscribers, requests and the
/// counters are reached from any thread through locks the frame path takes once per frame.
final class SharedSource: Sendable {
    let spec: HubSourceSpec
    let thread: MediaThread
    private let clock: @Sendable () -> Int64
    /// The producer and pacer, on ``thread``.
    private let core: ThreadBound<Core>
    private let gate: Mutex<KeyframeRequestGate>
    private let routing = Mutex(Routing())
    private let published: Mutex<Published>

    private final class Core {
        var producer: FrameProducer?
        var pacer: MediaPacer<SourceItem>?
    }

    /// The fanouts by loop, and the list the frame path reads.
    private struct Routing {
        var fanouts: [ObjectIdentifier: (fanout: LoopFanout, subscribers: Int)] = [:]
        var list: [LoopFanout] = []
    }

    /// What the thread publishes after each frame, for ``stats``.
    private struct Published {
        var producer = ProducerCounts()
        var framesProduced = 0, keyFramesProduced = 0, payloadBytes = 0
        var unserviceableKeyframeRequests = 0
        var failure: String?
    }

    /// A source for `spec` (nothing opened yet: ``open()``); `clock` gives the gate's milliseconds.
    init(spec: HubSourceSpec, clock: @escaping @Sendable () -> Int64) {
        self.spec = spec
        self.clock = clock
        let thread = MediaThread(name: spec.isVideo ? "peer.hub.video" : "peer.hub.audio")
        self.thread = thread
        core = ThreadBound(Core(), thread: thread)
        gate = Mutex(KeyframeRequestGate())
        published = Mutex(Published())
    }

    deinit { thread.stop() }

    /// Opens the source and makes its encoder, once (on the thread; the first subscriber
    /// waits for it, ~30 ms for a 640x480 VP8 encoder). Returns true when this call made
    /// it. Throws the source's or codec's error.
    func open() throws -> Bool {
        try thread.sync { () throws -> Bool in
            let c = core.value
            guard c.producer == nil else { return false }
            c.producer = try makeProducer(spec)
            return true
        }
    }

    /// Starts pacing the source in real time (the first subscriber does); no-op when running.
    func startPacing() {
        thread.async { [self] in
            let c = core.value
            guard c.pacer == nil, let producer = c.producer else { return }
            let pacer = MediaPacer<SourceItem>(thread: thread, clockRate: producer.clockRate, pull: { try producer.pull() },
                                               timestamp: { $0.timestamp },
                                               deliver: { [weak self] (item: consuming SourceItem) in
                                                   guard let self else { return }
                                                   self.step(item)
                                               },
                                               finished: { [weak self] error in self?.finished(error) })
            c.pacer = pacer
            pacer.start()
        }
    }

    /// Produces up to `count` frames now, on the thread, without pacing (a hub made with
    /// ``MediaHub/Pacing/manual``: tests and benchmarks drive time). Returns how many
    /// items were pulled. Throws the source's error.
    func pump(_ count: Int) throws -> Int {
        try thread.sync { () throws -> Int in
            guard let producer = core.value.producer else { return 0 }
            var pulled = 0
            while pulled < count, let item = try producer.pull() {
                pulled += 1
                step(item)
            }
            return pulled
        }
    }

    /// Stops the source and lets go of its encoder (the last subscriber left). Returns at once.
    func stop() {
        thread.async { [self] in
            let c = core.value
            c.pacer?.stop()
            c.pacer = nil
            c.producer = nil
        }
        thread.stop()
    }

    // MARK: Subscribers

    /// Adds a subscriber on `loop`, waiting for a key frame, which is requested.
    func add(id: UInt64, loop: EventLoop, counters: SubscriberCounters, deliver: @escaping @Sendable (PacketizedFrame) -> Void) {
        let key = ObjectIdentifier(loop)
        let fanout = routing.withLock { r -> LoopFanout in
            if let entry = r.fanouts[key] {
                r.fanouts[key] = (entry.fanout, entry.subscribers + 1)
                return entry.fanout
            }
            let fanout = LoopFanout(loop: loop) { [weak self] in self?.requestKeyframe(join: true) }
            r.fanouts[key] = (fanout, 1)
            r.list.append(fanout)
            return fanout
        }
        fanout.add(id: id, counters: counters, deliver: deliver)
        requestKeyframe(join: true)
    }

    /// Removes subscriber `id` of `loop`.
    func remove(id: UInt64, loop: EventLoop) {
        let key = ObjectIdentifier(loop)
        let fanout = routing.withLock { r -> LoopFanout? in
            guard let entry = r.fanouts[key] else { return nil }
            if entry.subscribers > 1 {
                r.fanouts[key] = (entry.fanout, entry.subscribers - 1)
            } else {
                r.fanouts[key] = nil
                r.list.removeAll { $0 === entry.fanout }
            }
            return entry.fanout
        }
        fanout?.remove(id: id)
    }

    /// Makes subscriber `id` of `loop` wait for the next key frame, which is requested.
    func waitForKeyframe(id: UInt64, loop: EventLoop) {
        routing.withLock { $0.fanouts[ObjectIdentifier(loop)]?.fanout }?.waitForKeyframe(id: id)
        requestKeyframe(join: true)
    }

    /// A key frame is asked for: by a subscriber's PLI or FIR (`join` false) or because one
    /// joined or must start again (`join` true). Audio needs none (every Opus packet stands
    /// alone). A file passed through cannot make one: a PLI or FIR is counted as
    /// unserviceable, and a joining subscriber starts at the file's next key frame.
    func requestKeyframe(join: Bool) {
        guard spec.isVideo else { return }
        guard !spec.isPassthrough else {
            if !join { published.withLock { $0.unserviceableKeyframeRequests += 1 } }
            return
        }
        let now = clock()
        gate.withLock { _ = $0.request(nowMs: now) }
    }

    // MARK: The thread

    /// One item: encoded (forced to a key frame when the gate says so), packetized, and
    /// handed to each loop once.
    private func step(_ item: consuming SourceItem) {
        guard let producer = core.value.producer else { return }
        let force = spec.isVideo && producer.canForceKeyframes && gate.withLock { $0.takeForce(nowMs: clock()) }
        let frames: [PacketizedFrame]
        do { frames = try producer.produce(item, forceKeyframe: force) } catch {
            published.withLock { $0.failure = "\(error)" }
            return
        }
        let fanouts = routing.withLock { $0.list }
        for frame in frames {
            if spec.isVideo { gate.withLock { $0.produced(isKeyframe: frame.isKeyframe, forced: force) } }
            published.withLock { p in
                p.producer = producer.counts
                p.framesProduced += 1
                if frame.isKeyframe, spec.isVideo { p.keyFramesProduced += 1 }
                p.payloadBytes += frame.payloadByteCount
            }
            for fanout in fanouts { fanout.hand(frame) }
        }
    }

    /// The source ended (a file that does not loop) or failed.
    private func finished(_ error: Error?) {
        published.withLock { $0.failure = error.map { "\($0)" } ?? "source ended" }
    }

    // MARK: Stats

    /// What the source did so far (reads published counters; never waits for the thread).
    func stats(subscribers: Int) -> HubSourceStats {
        let p = published.withLock { $0 }
        let g = gate.withLock { $0.counts }
        let fanouts = routing.withLock { $0.list }
        var s = HubSourceStats(spec: spec)
        s.subscribers = subscribers
        s.loops = fanouts.count
        s.framesProduced = p.framesProduced
        s.keyFramesProduced = p.keyFramesProduced
        s.framesEncoded = p.producer.framesEncoded
        s.encodeSeconds = Double(p.producer.encodeNanos) / 1e9
        s.framesRead = p.producer.framesRead
        s.payloadBytes = p.payloadBytes
        s.keyframeRequests = g
        s.unserviceableKeyframeRequests = p.unserviceableKeyframeRequests
        s.hops = fanouts.reduce(0) { $0 + $1.hops.load(ordering: .relaxed) }
        s.framesDroppedForSlowLoops = fanouts.reduce(0) { $0 + $1.dropped.load(ordering: .relaxed) }
        s.failure = p.failure
        return s
    }
}
