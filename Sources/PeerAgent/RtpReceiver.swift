// RtpReceiver: W3C RTCRtpReceiver — RTP in (RFC 3550 A.1–A.8 statistics, NACK RFC 4585, VP8 RFC 7741 / Opus RFC 7587 depacketizing) to a bounded sink thread that records and decodes (a new remote source in RtpReceiverSourceRestart.swift, previous payload types in RtpReceiverPreviousPayloadTypes.swift).
import Bytes
import Dispatch
import Foundation
import Media
import RTP
import SDP
import Synchronization

/// What a receiving track does with what arrives (the sinks of a W3C
/// `RTCRtpReceiver`'s track).
public struct ReceiveOptions: Sendable, Equatable {
    /// Record video to this IVF file (VP8 frames as received, from the first key frame).
    public var ivfPath: String?
    /// Record audio to this Ogg Opus file (Opus packets as received, gaps filled).
    public var oggPath: String?
    /// Also write decoded audio to this WAV file (implies decoding audio).
    public var wavPath: String?
    /// Record this track alone to this WebM or Matroska file (`.webm`, `.mkv`, `.mka`;
    /// libavformat's muxer), VP8 frames or Opus packets as received.
    public var matroskaPath: String?
    /// Decode what arrives (VP8 → framesDecoded, frame markers; Opus → samples), for
    /// statistics and checks. Costs CPU; recording does not need it.
    public var decode: Bool = true

    /// Nothing recorded, decoding on.
    public init(ivfPath: String? = nil, oggPath: String? = nil, wavPath: String? = nil, matroskaPath: String? = nil, decode: Bool = true) {
        self.ivfPath = ivfPath
        self.oggPath = oggPath
        self.wavPath = wavPath
        self.matroskaPath = matroskaPath
        self.decode = decode
    }

    /// Record this track into one file with the connection's other track (`--record`):
    /// audio and video of one peer in sync (``SyncedRecorder``).
    public var recorder: SyncedRecorder?

    /// Whether `path` names a WebM or Matroska file (`.webm`, `.mkv`, `.mka`).
    public static func isMatroska(_ path: String) -> Bool {
        let p = path.lowercased()
        return p.hasSuffix(".webm") || p.hasSuffix(".mkv") || p.hasSuffix(".mka")
    }

    /// The sinks of a track of `kind` recording to `path` (nil: none), the format by its
    /// extension: video `.webm`/`.mkv` (Matroska) or else IVF; audio `.webm`/`.mka`/`.mkv`
    /// (Matroska), `.wav` (decoded PCM) or else Ogg Opus.
    public static func recording(_ kind: MediaKind, to path: String?, decode: Bool) -> ReceiveOptions {
        guard let path else { return ReceiveOptions(decode: decode) }
        if isMatroska(path) { return ReceiveOptions(matroskaPath: path, decode: decode) }
        if kind == .video { return ReceiveOptions(ivfPath: path, decode: decode) }
        if path.lowercased().hasSuffix(".wav") { return ReceiveOptions(wavPath: path, decode: decode) }
        return ReceiveOptions(oggPath: path, decode: decode)
    }
}

/// The W3C `RTCRtpReceiver` of one transceiver: statistics (RFC 3550 A.1–A.8),
/// NACK generation, VP8 frame assembly / Opus depayloading, PLI after a lost
/// frame, and the sinks (IVF, Ogg Opus, WAV writers, decoders) on a sink thread
/// so file I/O and decoding never stall the network thread.
///
/// The sink thread's queue is bounded: when decoding or writing falls more than
/// ``maximumSinkBacklog`` frames (video) or packets (audio) behind what arrives (a
/// machine too busy for this stream), what arrives is dropped instead of queued, so
/// memory stays bounded. Video then waits for a key frame (counted in `framesDropped`;
/// the PLI goes out once the backlog is down to half, so a slow sink does not make the
/// sender send key frames back to back) and the recording resumes there, still
/// decodable; audio packets are counted in `packetsDiscarded` and the Ogg file's
/// timestamp gap is filled as for a loss.
///
/// Threading: ``handle(_:payloadBytes:headerBytes:)`` and ``tick(nowMs:)`` run on the
/// event-loop thread; the network-side state is one `Mutex` (`network`), held only for its
/// own fields: what a call decides under it (the first-frame report, the items for the
/// sinks, the feedback to send) is done once it is released. The sinks (``ReceiveSinks``)
/// are bound to `sinkThread` (``ThreadBound``).
final class RtpReceiver: Sendable {
    /// Most items (video frames, audio packets) waiting for the sink thread: 2 s of
    /// 30 fps video, 2 s of 20 ms Opus packets.
    static func maximumSinkBacklog(_ kind: MediaKind) -> Int { kind == .video ? 60 : 100 }

    let kind: MediaKind
    let options: ReceiveOptions
    /// Our SSRC for RTCP feedback about this stream (the sender's SSRC when we send
    /// on the same transceiver, else a random one).
    let localSSRC: UInt32
    /// Told, with no lock held, on the loop thread (or the thread that closes the receiver,
    /// for a frame its flush completes): ``PeerConnectionEvent/firstRemoteFrame(kind:mid:)``
    /// once, when the first frame (video) or packet (audio) arrives, and
    /// ``PeerConnectionEvent/previousPayloadType(mid:payloadType:negotiated:)`` once, at the
    /// first packet taken with a payload type the last negotiation renumbered.
    let onEvent: (@Sendable (PeerConnectionEvent) -> Void)?
    private let sinkThread: MediaThread
    /// How the remote sender's clock relates to ours, for the markers' latency.
    private let endToEndClock = EndToEndClockState()
    /// Items queued to `sinkThread` and not yet run (any thread).
    private let sinkBacklog = Atomic<Int>(0)
    let network: Mutex<NetworkState>
    /// The writers and decoders (`sinkThread`).
    private let sinks: ThreadBound<ReceiveSinks>

    /// The network side: loop thread, statistics readers, ``close()``.
    struct NetworkState {
        var mid: String?
        /// The payload types the last negotiation gave this m-section, the first its codec's.
        var payloadTypes: Set<UInt8> = [], negotiatedPayloadType: Int?
        /// Payload types earlier negotiations gave this m-section and later ones renumbered,
        /// still taken (a sender that keeps the old numbers: aiortc 1.16).
        var previousPayloadTypes: Set<UInt8> = []
        /// Whether a packet with a previous payload type was reported (once: ``onEvent``).
        var reportedPreviousPayloadType = false
        /// Packets routed here from another SSRC than the stream's, dropped.
        var unknownSSRCDrops = 0
        var remoteSSRC: UInt32?
        var statistics = ReceiverStatistics()
        var nacks = NackGenerator()
        /// Waits up to 300 ms (27 000 ticks) for a missing packet: long enough for several
        /// NACK rounds on a busy machine; a recorder prefers complete frames to low latency.
        var assembler = VP8FrameAssembler(reorderWindow: 256, reorderDelay: 27_000)
        var opusDepayloader = OpusDepayloader(reorderWindow: 5)
        var lastSenderReport: (middle: UInt32, arrivalMs: Int64)?
        /// Sender's NTP time minus our arrival time, ms, of the last 8 sender reports.
        var clockSamples: [Double] = []
        /// The last sender report's NTP time (seconds) and RTP timestamp (RFC 3550 §6.4.1).
        var senderSync: (ntpSeconds: Double, rtp: UInt32)?
        var stats: InboundRTPStats
        var awaitingKeyframe = true
        var lastPLIms: Int64 = -10_000
        var firstFrameAtMs: Int64?
        var timestamps = TimestampUnwrapper()
        var firstTimestamp: Int64?
        /// Where this source's timeline starts in the sinks' (ticks): 0 for the first
        /// source; after ``RtpReceiver/remoteSourceRestarted()``, past the old one's end.
        var timelineBase: Int64 = 0
        /// The last timestamp handed to the sinks (ticks) and when (monotonic ms).
        var lastOutput: (ticks: Int64, atMs: Int64)?
        /// RTP packets of the current source (its first one may ask for a key frame).
        var sourcePackets = 0
        /// What the sources before this one counted, kept in the W3C counters (which only
        /// grow): packets lost (RFC 3550 A.3, `packetsLost`), discarded (late, `packetsDiscarded`)
        /// and duplicated (`packetsDuplicated`) by their depayloaders.
        var lostBefore: Int64 = 0, discardedBefore = 0, duplicatedBefore = 0
        /// The next frame (packet) delivered is reported as a first one (a new source's).
        var reportFirstFrame = false
        var ended = false
        /// Frames / packets dropped because the sink was ``maximumSinkBacklog(_:)`` behind
        /// (video: and the inter frames after them, up to the key frame that resumes decoding).
        var sinkOverflowDrops = 0
        /// Video waits for a key frame because the sink fell behind (not because of a loss).
        var sinkOverflowing = false
        /// Audio samples (48 kHz, per channel) of packets and gaps dropped for a full sink,
        /// not yet handed to the decoder as a gap.
        var droppedAudioSamples = 0
        /// Video: when each frame's first packet came (RTP timestamp, monotonic ms), oldest
        /// first, for W3C `jitterBufferDelay` (first packet → frame out to the sink).
        var frameArrivals: [(timestamp: UInt32, ms: Int64)] = []
        var jitterBufferDelay = 0.0, jitterBufferEmittedCount = 0
    }

    /// What a call under the lock leaves to do once it is released: callbacks and sends
    /// (sink items are queued under the lock, so they reach the sink thread in the order
    /// taken and before ``close()``'s flush).
    struct Effects: Sendable {
        /// The events to report to ``onEvent``: the first frame, a previous payload type.
        var events: [PeerConnectionEvent] = []
        /// RTCP feedback to send now.
        var feedback: [RTCPPacket] = []
    }

    /// A receiver of `kind`. Sinks are opened on the first packet and run on `sinkThread`
    /// (by default a new `peer.sink.<kind>` thread); ``close()`` ends that thread.
    /// `onEvent` is told the receiver's events (``onEvent``).
    /// `onFirstWritten` is called once on the sink thread when the first video frame is in
    /// a file, with the time (`systemUptime`, s).
    init(kind: MediaKind, options: ReceiveOptions, localSSRC: UInt32, sinkThread: MediaThread? = nil,
         onEvent: (@Sendable (PeerConnectionEvent) -> Void)? = nil, onFirstWritten: (@Sendable (Double) -> Void)? = nil) {
        self.kind = kind
        self.options = options
        self.localSSRC = localSSRC
        self.onEvent = onEvent
        let sinkThread = sinkThread ?? MediaThread(name: "peer.sink.\(kind)")
        self.sinkThread = sinkThread
        var stats = InboundRTPStats(id: "IT-\(kind)-\(localSSRC)", timestamp: 0, ssrc: 0, kind: "\(kind)")
        if kind == .video {
            stats.pliCount = 0
            stats.firCount = 0
            stats.framesReceived = 0
            stats.framesDropped = 0
        }
        network = Mutex(NetworkState(stats: stats))
        sinks = ThreadBound(ReceiveSinks(options: options, thread: sinkThread, senderClock: endToEndClock, onFirstWritten: onFirstWritten),
                            thread: sinkThread)
    }

    deinit { sinkThread.stop() }

    /// Applies the negotiated mid, payload types (the first its codec's) and the remote SSRC
    /// from the SDP (if announced). The payload types earlier negotiations gave this
    /// m-section and this one does not are still taken (``accepts(payloadType:)``): a peer
    /// may renumber in a re-offer while its running sender keeps the old numbers (aiortc
    /// 1.16), and those packets name this section by mid or SSRC all the same (RFC 8843
    /// §9.2). Routing by payload type alone prefers the section that negotiates a number now
    /// (``BundleRouter``), so a number given to another section goes there.
    func configure(mid: String, payloadTypes: [Int], remoteSSRC: UInt32?) {
        let now = Set(payloadTypes.map { UInt8(clamping: $0) })
        network.withLock { n in
            n.previousPayloadTypes = Self.previousPayloadTypes(n, mid: mid, negotiated: now)
            n.mid = mid
            n.payloadTypes = now
            n.negotiatedPayloadType = payloadTypes.first
            if let remoteSSRC { n.remoteSSRC = remoteSSRC }
            n.stats.mid = mid
            n.stats.codecId = payloadTypes.first.map { "CO-\($0)" }
        }
    }

    /// The negotiated mid, once configured.
    var mid: String? { network.withLock { $0.mid } }
    /// Packets routed here from another SSRC than the stream's, dropped (counted in the
    /// transport's `rtpUnknownSsrcDrops`).
    var unknownSSRCDrops: Int { network.withLock { $0.unknownSSRCDrops } }
    /// The remote SSRC, once known.
    var ssrc: UInt32? { network.withLock { $0.remoteSSRC } }
    /// True when a packet from `ssrc` would be taken, not dropped as from an unknown SSRC:
    /// the stream's SSRC, or any while none is known yet (the first packet's becomes it).
    func takes(ssrc: UInt32) -> Bool { network.withLock { $0.remoteSSRC.map { $0 == ssrc } ?? true } }
    /// When the first complete frame (video) or packet (audio) arrived (monotonic ms).
    var firstFrameMs: Int64? { network.withLock { $0.firstFrameAtMs } }

    /// Handles one RTP packet (loop thread); returns RTCP feedback to send now (PLI).
    func handle(_ packet: RTPPacket, payloadBytes: Int, headerBytes: Int) -> [RTCPPacket] {
        let now = monotonicMs()
        let effects = network.withLock { n -> Effects in
            var e = Effects()
            guard !n.ended else { return e }
            if n.remoteSSRC == nil { n.remoteSSRC = packet.ssrc }
            guard packet.ssrc == n.remoteSSRC else {
                n.unknownSSRCDrops += 1
                return e
            }
            if !n.payloadTypes.contains(packet.payloadType) { previousPayloadType(packet.payloadType, &n, &e) }
            n.stats.ssrc = packet.ssrc
            n.stats.packetsReceived += 1
            n.sourcePackets += 1
            n.stats.bytesReceived += payloadBytes
            n.stats.headerBytesReceived += headerBytes
            n.stats.lastPacketReceivedTimestamp = unixTimeMs()
            let clock: Int64 = kind == .video ? 90 : 48
            n.statistics.record(sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                                arrival: UInt32(truncatingIfNeeded: now &* clock))
            if kind == .video {
                if n.sourcePackets == 1, !Self.startsKeyframe(packet) {
                    // The stream's first packet is not the start of a key frame: what came before
                    // it cannot be NACKed (its sequence numbers are unknown), so ask for a key
                    // frame now instead of after the reassembly wait.
                    e.feedback += pli(&n, now: now)
                }
                n.nacks.received(packet.sequenceNumber, nowMs: now)
                // A frame's packets come together: a new timestamp starts a frame (a late packet
                // of an older one adds an entry that the next emitted frame clears).
                if n.frameArrivals.last?.timestamp != packet.timestamp {
                    n.frameArrivals.append((packet.timestamp, now))
                    if n.frameArrivals.count > 256 { n.frameArrivals.removeFirst(n.frameArrivals.count - 256) }
                }
                for event in n.assembler.push(packet) {
                    let feedback = videoEvent(event, now: now, &n, &e)
                    e.feedback += feedback
                }
            } else {
                for event in n.opusDepayloader.push(packet) { audioEvent(event, now: now, &n, &e) }
            }
            return e
        }
        return act(effects)
    }

    /// True while the NACK generator has packets it may still ask for (video).
    var packetsMissing: Bool {
        kind == .video && network.withLock { $0.nacks.outstanding > 0 }
    }

    /// Periodic work (loop thread, every ~20 ms while ``packetsMissing``): the NACKs that are due.
    func tick(nowMs: Int64) -> [RTCPPacket] {
        network.withLock { n in
            guard kind == .video, !n.ended, let remoteSSRC = n.remoteSSRC else { return [] }
            let due = n.nacks.due(nowMs: nowMs)
            guard !due.isEmpty else { return [] }
            n.stats.nackCount += 1
            return [.nack(TransportLayerNack(senderSSRC: localSSRC, mediaSSRC: remoteSSRC, lost: due))]
        }
    }

    /// A sender report of the remote stream arrived (loop thread): kept for LSR/DLSR, and
    /// unless sender and receiver share a clock (``setSameHost(_:)``), the sender's clock
    /// estimated from it: its NTP time against our arrival time (of the last 8 reports the
    /// least delayed), plus half `roundTripTime` (s, when known: the one-way delay the
    /// report took; a receive-only peer has none, and the estimate is short by that delay).
    func senderReport(_ report: SenderReport, roundTripTime: Double? = nil) {
        let arrivalMs = unixTimeMs()
        let matched = network.withLock { n -> Bool in
            guard report.ssrc == n.remoteSSRC else { return false }
            n.lastSenderReport = (RoundTripTime.middle32(ofNTP: report.ntpTimestamp), monotonicMs())
            n.senderSync = (RoundTripTime.seconds(ofNTP: report.ntpTimestamp), report.rtpTimestamp)
            return true
        }
        guard matched, endToEndClock.current.0 != .sameHost else { return }
        let senderMs = (RoundTripTime.seconds(ofNTP: report.ntpTimestamp) - 2_208_988_800) * 1000
        // Of the last 8 reports, the one that took least time to come (the largest
        // sender − arrival): queueing only ever delays a report.
        let best = network.withLock { n -> Double in
            n.clockSamples.append(senderMs - arrivalMs)
            if n.clockSamples.count > 8 { n.clockSamples.removeFirst(n.clockSamples.count - 8) }
            return n.clockSamples.max() ?? (senderMs - arrivalMs)
        }
        endToEndClock.set(.senderReportEstimate, offsetMs: best + (roundTripTime ?? 0) * 500)
    }

    /// The sender runs on this host (the selected pair's remote address is one of ours):
    /// one clock, the markers' latency needs no offset.
    func setSameHost(_ same: Bool) {
        if same { endToEndClock.set(.sameHost, offsetMs: 0) } else if endToEndClock.current.0 == .sameHost {
            endToEndClock.set(.uncorrected, offsetMs: 0)
        }
    }

    /// The sender's clock from its last report, in the stream's own ticks (counted from
    /// its first timestamp, as the sinks get them); nil before a report or a packet.
    private func senderClock(_ n: NetworkState) -> SenderClock? {
        guard let sync = n.senderSync, let first = n.firstTimestamp else { return nil }
        var peek = n.timestamps  // a copy: the report's timestamp unwrapped near the stream's last
        return SenderClock(ntpSeconds: sync.ntpSeconds, ticks: peek.unwrap(sync.rtp) - first + n.timelineBase)
    }

    /// Our report block about the remote stream (RFC 3550 §6.4.1), nil before a packet.
    func receptionReport() -> ReceptionReport? {
        network.withLock { n in
            guard let remoteSSRC = n.remoteSSRC, n.stats.packetsReceived > 0 else { return nil }
            var lsr: UInt32 = 0, dlsr: UInt32 = 0
            if let sr = n.lastSenderReport {
                lsr = sr.middle
                dlsr = UInt32(truncatingIfNeeded: (monotonicMs() - sr.arrivalMs) * 65_536 / 1_000)
            }
            return n.statistics.makeReport(ssrc: remoteSSRC, lastSenderReport: lsr, delay: dlsr)
        }
    }

    /// Sends a PLI now if none went out in the last 100 ms (loop thread or any).
    func requestKeyframe() -> [RTCPPacket] {
        network.withLock { pli(&$0, now: monotonicMs()) }
    }

    /// The remote sender said BYE: flush what is complete.
    func goodbye() {
        let effects = network.withLock { n -> Effects in
            var e = Effects()
            guard !n.ended else { return e }
            drain(&n, &e)
            return e
        }
        _ = act(effects)
    }

    /// Ends reception: flushes the assembler, closes the files (waits for the sink thread)
    /// and ends the sink thread.
    func close() {
        let effects = network.withLock { n -> Effects in
            var e = Effects()
            if !n.ended { drain(&n, &e) }
            n.ended = true
            return e
        }
        _ = act(effects)
        sinkThread.sync { sinks.value.close() }
        sinkThread.stop()
    }

    /// A snapshot of the `inbound-rtp` statistics (waits for the sink thread).
    func snapshot() -> InboundRTPStats {
        var s = network.withLock { n -> InboundRTPStats in
            var s = n.stats
            s.packetsLost = Int(n.lostBefore + Int64(n.statistics.cumulativeLost))
            s.jitter = Double(n.statistics.jitter) / (kind == .video ? 90_000 : 48_000)
            // W3C: late (and, for audio, jitter-buffer overflow) discards; duplicates apart.
            s.packetsDiscarded = n.discardedBefore + n.assembler.counters.latePackets + n.opusDepayloader.counters.latePackets
                + (kind == .audio ? n.sinkOverflowDrops : 0)
            s.packetsDuplicated = n.duplicatedBefore + n.assembler.counters.duplicatePackets + n.opusDepayloader.counters.duplicatePackets
            s.sinkOverflowDrops = n.sinkOverflowDrops
            if kind == .video {
                s.jitterBufferDelay = n.jitterBufferDelay
                s.jitterBufferEmittedCount = n.jitterBufferEmittedCount
            }
            return s
        }
        let (sink, fps) = sinkThread.sync { sinks.value.snapshot() }
        s.timestamp = unixTimeMs()
        s.framesWritten = sink.framesWritten
        if kind == .video {
            if options.decode {
                s.framesDecoded = sink.framesDecoded
                s.keyFramesDecoded = sink.keyFramesDecoded
                s.qpSum = sink.qpSum
                s.totalDecodeTime = sink.decodeSeconds
            }
            s.frameWidth = sink.width ?? s.frameWidth
            s.frameHeight = sink.height ?? s.frameHeight
            let t = sink.timing
            s.framesPerSecond = fps
            s.totalInterFrameDelay = t.totalInterFrameDelay
            s.totalSquaredInterFrameDelay = t.totalSquaredInterFrameDelay
            s.freezeCount = t.freezeCount
            s.totalFreezesDuration = t.totalFreezesDuration
            s.pauseCount = t.pauseCount
            s.totalPausesDuration = t.totalPausesDuration
        } else if options.decode || options.wavPath != nil {
            s.totalSamplesReceived = sink.samples
            s.concealedSamples = sink.concealed
            s.concealmentEvents = sink.concealmentEvents
            s.audioLevel = sink.audioLevel
            s.totalAudioEnergy = sink.audioEnergy
            s.totalSamplesDuration = sink.samplesDuration
        }
        return s
    }

    /// The `peer-e2e` object of this stream (video whose frames carry the test pattern's
    /// marker, decoding on); nil when no marker was read.
    func endToEndSnapshot(inboundId: String) -> EndToEndStats? {
        guard kind == .video, options.decode else { return nil }
        let e = sinkThread.sync { sinks.value.stats.endToEnd }
        guard e.samples > 0 else { return nil }
        let (clock, offset) = endToEndClock.current
        let now = unixTimeMs()
        return EndToEndStats(id: "E2E-\(inboundId)", timestamp: now, inboundRtpId: inboundId, clock: clock, clockOffsetMs: offset,
                             framesWithMarker: e.distinct, latencyP50Ms: e.percentile(0.5), latencyP95Ms: e.percentile(0.95),
                             latencyMaxMs: e.maximumMs, latencyMeanMs: e.meanMs, latencyRecentP50Ms: e.recentMedian(nowMs: now),
                             framesMissing: e.missing, framesOutOfOrder: e.outOfOrder, framesRepeated: e.repeated,
                             freezeCount: e.timing.freezeCount, totalFreezesDuration: e.timing.totalFreezesDuration)
    }

    /// The frame numbers read from decoded frames' markers, in arrival order (video,
    /// decoding on); the test pattern's way of saying which frames arrived.
    func markers() -> [Int] { sinkThread.sync { sinks.value.stats.markers }.numbers }

    /// Problems the sinks met (a file that could not be written), oldest first.
    func errors() -> [String] { sinkThread.sync { sinks.value.errors } }

    // MARK: After the lock

    /// Does what a call under the lock left to do: reports the first frame; returns the
    /// feedback to send.
    func act(_ effects: Effects) -> [RTCPPacket] {
        for event in effects.events { onEvent?(event) }
        return effects.feedback
    }

    // MARK: Under lock

    private func pli(_ n: inout NetworkState, now: Int64) -> [RTCPPacket] {
        guard let remoteSSRC = n.remoteSSRC, now - n.lastPLIms >= 100 else { return [] }
        n.lastPLIms = now
        n.stats.pliCount = (n.stats.pliCount ?? 0) + 1
        return [.pictureLossIndication(PictureLossIndication(senderSSRC: localSSRC, mediaSSRC: remoteSSRC))]
    }

    private func videoEvent(_ event: VP8FrameAssembler.Event, now: Int64, _ n: inout NetworkState,
                            _ e: inout Effects) -> [RTCPPacket] {
        switch event {
        case let .delivered(frame):
            n.stats.framesReceived = (n.stats.framesReceived ?? 0) + 1
            let backlog = sinkBacklog.load(ordering: .relaxed)
            if frame.isKeyframe {
                if let w = frame.width, let h = frame.height { n.stats.frameWidth = w; n.stats.frameHeight = h }
                if backlog < Self.maximumSinkBacklog(kind) {
                    n.awaitingKeyframe = false
                    n.sinkOverflowing = false
                }
            }
            guard !n.awaitingKeyframe else {
                // An inter frame after a loss (or before the first key frame) would decode
                // to garbage: skip it and ask again (PLI is rate-limited to one per 100 ms).
                n.stats.framesDropped = (n.stats.framesDropped ?? 0) + 1
                if n.sinkOverflowing { n.sinkOverflowDrops += 1 }
                return keyframeRequest(&n, now: now)
            }
            guard backlog < Self.maximumSinkBacklog(kind) else {
                n.stats.framesDropped = (n.stats.framesDropped ?? 0) + 1
                n.sinkOverflowDrops += 1
                n.sinkOverflowing = true
                n.awaitingKeyframe = true
                return []
            }
            if let i = n.frameArrivals.firstIndex(where: { $0.timestamp == frame.timestamp }) {
                n.jitterBufferDelay += Double(now - n.frameArrivals[i].ms) / 1000
                n.jitterBufferEmittedCount += 1
                n.frameArrivals.removeFirst(i + 1)
            }
            let ts = arrived(timestamp: frame.timestamp, now: now, &n, &e)
            toSink(.video(EncodedVideoFrame(data: frame.data, isKeyframe: frame.isKeyframe, timestamp: ts,
                                            width: frame.width, height: frame.height), clock: senderClock(n)), &e)
            return []
        case let .missing(loss):
            n.stats.framesDropped = (n.stats.framesDropped ?? 0) + max(1, loss.frames.count)
            n.awaitingKeyframe = true
            return keyframeRequest(&n, now: now)
        }
    }

    private func audioEvent(_ event: OpusDepayloader.Event, now: Int64, _ n: inout NetworkState, _ e: inout Effects) {
        switch event {
        case let .delivered(packet):
            guard sinkBacklog.load(ordering: .relaxed) < Self.maximumSinkBacklog(kind) else {
                n.sinkOverflowDrops += 1
                n.droppedAudioSamples += packet.sampleCount ?? 960
                return
            }
            let ts = arrived(timestamp: packet.timestamp, now: now, &n, &e)
            let frame = EncodedAudioFrame(data: packet.data, sampleCount: packet.sampleCount ?? 960, timestamp: ts)
            // The time of packets dropped for a full sink goes to the decoder as a gap, so
            // decoded audio (WAV, totalSamplesReceived) keeps the call's length.
            let gap = n.droppedAudioSamples
            n.droppedAudioSamples = 0
            toSink(.audio(frame, gapBefore: gap > 0 ? gap : nil, clock: senderClock(n)), &e)
        case let .missing(gap):
            guard sinkBacklog.load(ordering: .relaxed) < Self.maximumSinkBacklog(kind) else {
                n.droppedAudioSamples += Int(gap.duration)
                return
            }
            let samples = Int(gap.duration) + n.droppedAudioSamples
            n.droppedAudioSamples = 0
            toSink(.audio(nil, gapBefore: samples, clock: nil), &e)
        }
    }

    /// Queues `item` to the sink thread (with the lock held, so items keep their order and
    /// none comes after ``close()``'s; queueing never waits), counted in ``sinkBacklog``
    /// until it has run.
    func toSink(_ item: SinkItem, _ e: inout Effects) {
        sinkBacklog.add(1, ordering: .relaxed)
        sinkThread.async { [self] in
            sinks.value.take(item)
            sinkBacklog.subtract(1, ordering: .relaxed)
        }
    }

    /// A PLI after a loss or while waiting for a key frame, held back while the sink is
    /// still more than half its ``maximumSinkBacklog(_:)`` behind — also after a network
    /// loss: a key frame could not be taken before the backlog is down anyway.
    private func keyframeRequest(_ n: inout NetworkState, now: Int64) -> [RTCPPacket] {
        guard sinkBacklog.load(ordering: .relaxed) <= Self.maximumSinkBacklog(kind) / 2 else { return [] }
        return pli(&n, now: now)
    }

    /// True when `packet` is the first packet of a VP8 key frame (S=1, PID 0, P bit 0; RFC 7741 §4).
    static func startsKeyframe(_ packet: RTPPacket) -> Bool {
        guard let (descriptor, length) = try? VP8PayloadDescriptor.parse(packet.payload), descriptor.isFrameStart else { return false }
        return VP8FrameHeader.isKeyframe(Array(packet.payload.dropFirst(length)))
    }

    /// A frame (video) or packet (audio) was delivered at `now`: the first one is reported
    /// (once the lock is released); returns its timestamp unwrapped and counted from the
    /// stream's first.
    private func arrived(timestamp: UInt32, now: Int64, _ n: inout NetworkState, _ e: inout Effects) -> Int64 {
        if n.firstFrameAtMs == nil || n.reportFirstFrame {
            if n.firstFrameAtMs == nil { n.firstFrameAtMs = now }
            n.reportFirstFrame = false
            e.events.append(.firstRemoteFrame(kind: "\(kind)", mid: n.mid ?? ""))
        }
        let ts = n.timestamps.unwrap(timestamp)
        let first = n.firstTimestamp ?? ts
        n.firstTimestamp = first
        let out = ts - first + n.timelineBase
        n.lastOutput = (out, now)
        return out
    }

    /// Flushes the assembler / depayloader into the sinks (their feedback is not sent).
    func drain(_ n: inout NetworkState, _ e: inout Effects) {
        let now = monotonicMs()
        if kind == .video {
            for event in n.assembler.flush() { _ = videoEvent(event, now: now, &n, &e) }
        } else {
            for event in n.opusDepayloader.flush() { audioEvent(event, now: now, &n, &e) }
        }
    }
}
