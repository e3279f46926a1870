// RtpReceiver: W3C RTCRtpReceiver — RTP in (RFC 3550 A.1–A.8 statistics, NACK RFC 4585, VP8 RFC 7741 / Opus RFC 7587 depacketizing) to a bounded sink thread that records and decodes.
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
    /// Decode what arrives (VP8 → framesDecoded, frame markers; Opus → samples), for
    /// statistics and checks. Costs CPU; recording does not need it.
    public var decode: Bool = true

    /// Nothing recorded, decoding on.
    public init(ivfPath: String? = nil, oggPath: String? = nil, wavPath: String? = nil, decode: Bool = true) {
        self.ivfPath = ivfPath
        self.oggPath = oggPath
        self.wavPath = wavPath
        self.decode = decode
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
/// Threading: ``handle(_:payloadBytes:)`` and ``tick(nowMs:)`` run on the event-loop
/// thread; the network-side state is behind `lock`; sinks run on `sinkThread`.
// @unchecked: the network side is behind `lock` (loop thread and stats readers), the sink side confined to `sinkThread`.
final class RtpReceiver: @unchecked Sendable {
    /// Most items (video frames, audio packets) waiting for the sink thread: 2 s of
    /// 30 fps video, 2 s of 20 ms Opus packets.
    static func maximumSinkBacklog(_ kind: MediaKind) -> Int { kind == .video ? 60 : 100 }

    let kind: MediaKind
    let options: ReceiveOptions
    /// Our SSRC for RTCP feedback about this stream (the sender's SSRC when we send
    /// on the same transceiver, else a random one).
    let localSSRC: UInt32
    private let lock = NSLock()
    private let sinkThread: MediaThread
    /// Items queued to `sinkThread` and not yet run (any thread).
    private let sinkBacklog = Atomic<Int>(0)

    // Network side (lock).
    private(set) var mid: String?
    private var payloadTypes: Set<UInt8> = []
    private var remoteSSRC: UInt32?
    private var statistics = ReceiverStatistics()
    private var nacks = NackGenerator()
    /// Waits up to 300 ms (27 000 ticks) for a missing packet: long enough for several
    /// NACK rounds on a busy machine; a recorder prefers complete frames to low latency.
    private var assembler = VP8FrameAssembler(reorderWindow: 256, reorderDelay: 27_000)
    private var opusDepayloader = OpusDepayloader(reorderWindow: 5)
    private var lastSenderReport: (middle: UInt32, arrivalMs: Int64)?
    private var stats: InboundRTPStats
    private var awaitingKeyframe = true
    private var lastPLIms: Int64 = -10_000
    private var firstFrameAtMs: Int64?
    private var timestamps = TimestampUnwrapper()
    private var firstTimestamp: Int64?
    private var ended = false
    /// Frames / packets dropped because the sink was ``maximumSinkBacklog`` behind (video:
    /// and the inter frames after them, up to the key frame that resumes decoding).
    private var sinkOverflowDrops = 0
    /// Video waits for a key frame because the sink fell behind (not because of a loss).
    private var sinkOverflowing = false
    /// Audio samples (48 kHz, per channel) of packets and gaps dropped for a full sink,
    /// not yet handed to the decoder as a gap.
    private var droppedAudioSamples = 0
    /// Called once, on the loop thread, when the first frame (video) or packet (audio)
    /// arrives, with the mid. Set before media flows.
    var onFirstFrame: (@Sendable (String) -> Void)?

    // Sink side (sinkThread).
    private var ivf: IVFWriter?
    private var ogg: OggOpusWriter?
    private var wav: WAVWriter?
    private var vp8: VP8Decoder?
    private var opus: OpusDecoder?
    private var sinkStats = SinkStats()
    private var sinkErrors: [String] = []

    /// What the sinks counted (sinkThread).
    struct SinkStats: Sendable {
        var framesDecoded = 0, keyFramesDecoded = 0, framesWritten = 0
        var width: Int?, height: Int?
        var samples = 0, concealed = 0
        var markers = FrameNumberRuns()
    }

    /// A receiver of `kind`. Sinks are opened on the first packet and run on `sinkThread`
    /// (by default a new `peer.sink.<kind>` thread); ``close()`` ends that thread.
    init(kind: MediaKind, options: ReceiveOptions, localSSRC: UInt32, sinkThread: MediaThread? = nil) {
        self.kind = kind
        self.options = options
        self.localSSRC = localSSRC
        self.sinkThread = sinkThread ?? MediaThread(name: "peer.sink.\(kind)")
        stats = InboundRTPStats(id: "IT-\(kind)-\(localSSRC)", timestamp: 0, ssrc: 0, kind: "\(kind)")
        if kind == .video {
            stats.pliCount = 0
            stats.firCount = 0
            stats.framesReceived = 0
            stats.framesDropped = 0
        }
    }

    deinit { sinkThread.stop() }

    /// Applies the negotiated mid, payload types and the remote SSRC from the SDP (if announced).
    func configure(mid: String, payloadTypes: [Int], remoteSSRC: UInt32?) {
        lock.withLock {
            self.mid = mid
            self.payloadTypes = Set(payloadTypes.map { UInt8(clamping: $0) })
            if let remoteSSRC { self.remoteSSRC = remoteSSRC }
            stats.mid = mid
            stats.codecId = payloadTypes.first.map { "CO-\($0)" }
        }
    }

    /// True when this receiver takes packets of `payloadType`.
    func accepts(payloadType: UInt8) -> Bool { lock.withLock { payloadTypes.contains(payloadType) } }
    /// The remote SSRC, once known.
    var ssrc: UInt32? { lock.withLock { remoteSSRC } }
    /// When the first complete frame (video) or packet (audio) arrived (monotonic ms).
    var firstFrameMs: Int64? { lock.withLock { firstFrameAtMs } }

    /// Handles one RTP packet (loop thread); returns RTCP feedback to send now (PLI).
    func handle(_ packet: RTPPacket, payloadBytes: Int, headerBytes: Int) -> [RTCPPacket] {
        let now = monotonicMs()
        return lock.withLock { () -> [RTCPPacket] in
            guard !ended else { return [] }
            if remoteSSRC == nil { remoteSSRC = packet.ssrc }
            guard packet.ssrc == remoteSSRC else { return [] }
            stats.ssrc = packet.ssrc
            stats.packetsReceived += 1
            stats.bytesReceived += payloadBytes
            stats.headerBytesReceived += headerBytes
            stats.lastPacketReceivedTimestamp = unixTimeMs()
            let clock: Int64 = kind == .video ? 90 : 48
            statistics.record(sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                              arrival: UInt32(truncatingIfNeeded: now &* clock))
            var feedback: [RTCPPacket] = []
            if kind == .video {
                if stats.packetsReceived == 1, !Self.startsKeyframe(packet) {
                    // The stream's first packet is not the start of a key frame: what came before
                    // it cannot be NACKed (its sequence numbers are unknown), so ask for a key
                    // frame now instead of after the reassembly wait.
                    feedback += pli(now: now)
                }
                nacks.received(packet.sequenceNumber, nowMs: now)
                for event in assembler.push(packet) { feedback += videoEvent(event, now: now) }
            } else {
                for event in opusDepayloader.push(packet) { audioEvent(event, now: now) }
            }
            return feedback
        }
    }

    /// Periodic work (loop thread, every ~20 ms): the NACKs that are due.
    func tick(nowMs: Int64) -> [RTCPPacket] {
        lock.withLock {
            guard kind == .video, !ended, let remoteSSRC else { return [] }
            let due = nacks.due(nowMs: nowMs)
            guard !due.isEmpty else { return [] }
            stats.nackCount += 1
            return [.nack(TransportLayerNack(senderSSRC: localSSRC, mediaSSRC: remoteSSRC, lost: due))]
        }
    }

    /// A sender report of the remote stream arrived (loop thread): kept for LSR/DLSR.
    func senderReport(_ report: SenderReport) {
        lock.withLock {
            guard report.ssrc == remoteSSRC else { return }
            lastSenderReport = (RoundTripTime.middle32(ofNTP: report.ntpTimestamp), monotonicMs())
        }
    }

    /// Our report block about the remote stream (RFC 3550 §6.4.1), nil before a packet.
    func receptionReport() -> ReceptionReport? {
        lock.withLock {
            guard let remoteSSRC, stats.packetsReceived > 0 else { return nil }
            var lsr: UInt32 = 0, dlsr: UInt32 = 0
            if let sr = lastSenderReport {
                lsr = sr.middle
                dlsr = UInt32(truncatingIfNeeded: (monotonicMs() - sr.arrivalMs) * 65_536 / 1_000)
            }
            return statistics.makeReport(ssrc: remoteSSRC, lastSenderReport: lsr, delay: dlsr)
        }
    }

    /// Sends a PLI now if none went out in the last 100 ms (loop thread or any).
    func requestKeyframe() -> [RTCPPacket] {
        lock.withLock { pli(now: monotonicMs()) }
    }

    /// The remote sender said BYE: flush what is complete.
    func goodbye() {
        lock.withLock {
            guard !ended else { return }
            drain()
        }
    }

    /// Ends reception: flushes the assembler, closes the files (waits for the sink thread)
    /// and ends the sink thread.
    func close() {
        lock.withLock {
            if !ended { drain() }
            ended = true
        }
        sinkThread.sync {
            try? ivf?.close()
            try? ogg?.close()
            try? wav?.close()
        }
        sinkThread.stop()
    }

    /// A snapshot of the `inbound-rtp` statistics (waits for the sink thread).
    func snapshot() -> InboundRTPStats {
        var s = lock.withLock { () -> InboundRTPStats in
            var s = stats
            s.packetsLost = Int(statistics.cumulativeLost)
            s.jitter = Double(statistics.jitter) / (kind == .video ? 90_000 : 48_000)
            s.packetsDiscarded = assembler.counters.duplicatePackets + assembler.counters.latePackets
                + opusDepayloader.counters.duplicatePackets + opusDepayloader.counters.latePackets
                + (kind == .audio ? sinkOverflowDrops : 0)
            s.sinkOverflowDrops = sinkOverflowDrops
            return s
        }
        let sink = sinkThread.sync { sinkStats }
        s.timestamp = unixTimeMs()
        s.framesWritten = sink.framesWritten
        if kind == .video {
            if options.decode {
                s.framesDecoded = sink.framesDecoded
                s.keyFramesDecoded = sink.keyFramesDecoded
            }
            s.frameWidth = sink.width ?? s.frameWidth
            s.frameHeight = sink.height ?? s.frameHeight
        } else if options.decode || options.wavPath != nil {
            s.totalSamplesReceived = sink.samples
            s.concealedSamples = sink.concealed
        }
        return s
    }

    /// The frame numbers read from decoded frames' markers, in arrival order (video,
    /// decoding on); the test pattern's way of saying which frames arrived.
    func markers() -> [Int] { sinkThread.sync { sinkStats.markers }.numbers }

    /// Problems the sinks met (a file that could not be written), oldest first.
    func errors() -> [String] { sinkThread.sync { sinkErrors } }

    // MARK: Under lock

    private func pli(now: Int64) -> [RTCPPacket] {
        guard let remoteSSRC, now - lastPLIms >= 100 else { return [] }
        lastPLIms = now
        stats.pliCount = (stats.pliCount ?? 0) + 1
        return [.pictureLossIndication(PictureLossIndication(senderSSRC: localSSRC, mediaSSRC: remoteSSRC))]
    }

    private func videoEvent(_ event: VP8FrameAssembler.Event, now: Int64) -> [RTCPPacket] {
        switch event {
        case let .delivered(frame):
            stats.framesReceived = (stats.framesReceived ?? 0) + 1
            let backlog = sinkBacklog.load(ordering: .relaxed)
            if frame.isKeyframe {
                if let w = frame.width, let h = frame.height { stats.frameWidth = w; stats.frameHeight = h }
                if backlog < Self.maximumSinkBacklog(kind) {
                    awaitingKeyframe = false
                    sinkOverflowing = false
                }
            }
            guard !awaitingKeyframe else {
                // An inter frame after a loss (or before the first key frame) would decode
                // to garbage: skip it and ask again (PLI is rate-limited to one per 100 ms).
                stats.framesDropped = (stats.framesDropped ?? 0) + 1
                if sinkOverflowing { sinkOverflowDrops += 1 }
                return keyframeRequest(now: now)
            }
            guard backlog < Self.maximumSinkBacklog(kind) else {
                stats.framesDropped = (stats.framesDropped ?? 0) + 1
                sinkOverflowDrops += 1
                sinkOverflowing = true
                awaitingKeyframe = true
                return []
            }
            let ts = arrived(timestamp: frame.timestamp, now: now)
            let encoded = EncodedVideoFrame(data: frame.data, isKeyframe: frame.isKeyframe, timestamp: ts,
                                            width: frame.width, height: frame.height)
            toSink { [self] in sinkVideo(encoded) }
            return []
        case let .missing(loss):
            stats.framesDropped = (stats.framesDropped ?? 0) + max(1, loss.frames.count)
            awaitingKeyframe = true
            return keyframeRequest(now: now)
        }
    }

    private func audioEvent(_ event: OpusDepayloader.Event, now: Int64) {
        switch event {
        case let .delivered(packet):
            guard sinkBacklog.load(ordering: .relaxed) < Self.maximumSinkBacklog(kind) else {
                sinkOverflowDrops += 1
                droppedAudioSamples += packet.sampleCount ?? 960
                return
            }
            let ts = arrived(timestamp: packet.timestamp, now: now)
            let frame = EncodedAudioFrame(data: packet.data, sampleCount: packet.sampleCount ?? 960, timestamp: ts)
            // The time of packets dropped for a full sink goes to the decoder as a gap, so
            // decoded audio (WAV, totalSamplesReceived) keeps the call's length.
            let gap = droppedAudioSamples
            droppedAudioSamples = 0
            toSink { [self] in sinkAudio(frame, gapBefore: gap > 0 ? gap : nil) }
        case let .missing(gap):
            guard sinkBacklog.load(ordering: .relaxed) < Self.maximumSinkBacklog(kind) else {
                droppedAudioSamples += Int(gap.duration)
                return
            }
            let samples = Int(gap.duration) + droppedAudioSamples
            droppedAudioSamples = 0
            toSink { [self] in sinkAudio(nil, gapBefore: samples) }
        }
    }

    /// Queues `work` to the sink thread, counted in ``sinkBacklog`` until it has run.
    private func toSink(_ work: @escaping @Sendable () -> Void) {
        sinkBacklog.add(1, ordering: .relaxed)
        sinkThread.async { [self] in
            work()
            sinkBacklog.subtract(1, ordering: .relaxed)
        }
    }

    /// A PLI after a loss or while waiting for a key frame, held back while the sink is
    /// still more than half its ``maximumSinkBacklog`` behind — also after a network loss:
    /// a key frame could not be taken before the backlog is down anyway (under lock).
    private func keyframeRequest(now: Int64) -> [RTCPPacket] {
        guard sinkBacklog.load(ordering: .relaxed) <= Self.maximumSinkBacklog(kind) / 2 else { return [] }
        return pli(now: now)
    }

    /// True when `packet` is the first packet of a VP8 key frame (S=1, PID 0, P bit 0; RFC 7741 §4).
    static func startsKeyframe(_ packet: RTPPacket) -> Bool {
        guard let (descriptor, length) = try? VP8PayloadDescriptor.parse(packet.payload), descriptor.isFrameStart else { return false }
        return VP8FrameHeader.isKeyframe(Array(packet.payload.dropFirst(length)))
    }

    /// A frame (video) or packet (audio) was delivered at `now`: the first one is reported;
    /// returns its timestamp unwrapped and counted from the stream's first (under lock).
    private func arrived(timestamp: UInt32, now: Int64) -> Int64 {
        if firstFrameAtMs == nil {
            firstFrameAtMs = now
            onFirstFrame?(mid ?? "")
        }
        let ts = timestamps.unwrap(timestamp)
        let first = firstTimestamp ?? ts
        firstTimestamp = first
        return ts - first
    }

    /// Flushes the assembler / depayloader into the sinks (under lock).
    private func drain() {
        let now = monotonicMs()
        if kind == .video {
            for event in assembler.flush() { _ = videoEvent(event, now: now) }
        } else {
            for event in opusDepayloader.flush() { audioEvent(event, now: now) }
        }
    }

    // MARK: Sink thread

    private func sinkVideo(_ frame: EncodedVideoFrame) {
        if ivf == nil, let path = options.ivfPath {
            do { ivf = try IVFWriter(path: path, thread: sinkThread) } catch { sinkErrors.append("\(error)") }
        }
        if let ivf {
            do {
                try ivf.write(frame)
                sinkStats.framesWritten = ivf.framesWritten
            } catch { sinkErrors.append("\(error)") }
        }
        guard options.decode else { return }
        if vp8 == nil { vp8 = try? VP8Decoder() }
        guard let vp8, let decoded = try? vp8.decode(frame.data, timestamp: frame.timestamp) else { return }
        for d in decoded {
            if let marker = FrameMarker.read(from: d.frame) { sinkStats.markers.append(marker.frameNumber) }
            sinkStats.width = d.frame.width
            sinkStats.height = d.frame.height
        }
        sinkStats.framesDecoded = vp8.framesDecoded
        sinkStats.keyFramesDecoded = vp8.keyFramesDecoded
    }

    private func sinkAudio(_ frame: EncodedAudioFrame?, gapBefore: Int?) {
        let channels = 2  // Opus in WebRTC is negotiated as opus/48000/2; decoders output stereo
        if let frame {
            if ogg == nil, let path = options.oggPath {
                let channelCount = frame.data.first.map { ($0 & 0x04) != 0 ? 2 : 1 } ?? 1
                do { ogg = try OggOpusWriter(path: path, channels: channelCount) } catch { sinkErrors.append("\(error)") }
            }
            if let ogg {
                do {
                    try ogg.write(frame)
                    sinkStats.framesWritten = ogg.packetsWritten
                } catch { sinkErrors.append("\(error)") }
            }
        }
        guard options.decode || options.wavPath != nil else { return }
        if opus == nil { opus = try? OpusDecoder(channels: channels) }
        if wav == nil, let path = options.wavPath {
            do { wav = try WAVWriter(path: path, channels: channels) } catch { sinkErrors.append("\(error)") }
        }
        guard let opus else { return }
        var blocks: [AudioFrame] = []
        if let gap = gapBefore, gap > 0, gap <= 48_000 {
            // libopus conceals at most 120 ms (5,760 samples, a multiple of 2.5 ms) per call:
            // a longer gap (up to 1 s) is concealed in pieces.
            var left = gap - gap % 120
            while left > 0, let pcm = try? opus.concealLoss(sampleCount: min(left, 5_760)), pcm.samplesPerChannel > 0 {
                blocks.append(pcm)
                sinkStats.concealed += pcm.samplesPerChannel
                left -= pcm.samplesPerChannel
            }
        }
        if let frame, let pcm = try? opus.decode(frame.data, timestamp: frame.timestamp) { blocks.append(pcm) }
        for block in blocks {
            sinkStats.samples += block.samplesPerChannel
            if let wav { try? wav.write(block) }
        }
    }
}
