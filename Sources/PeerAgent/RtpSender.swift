// RtpSender: W3C RTCRtpSender — a source encoded (VP8, Opus), packetized and sent on its own thread, with SR basis (RFC 3550 §6.4.1), PLI/FIR (RFC 4585, 5104) and NACK retransmission.
import DTLS
import Dispatch
import EventLoop
import Foundation
import Hub
import Media
import RTP
import SDP
import Synchronization

/// How a sending track encodes (W3C `RTCRtpEncodingParameters`, reduced to what
/// `peer` needs).
public struct SendEncoding: Sendable, Equatable {
    /// Video target bitrate in kbit/s (CBR, libvpx).
    public var videoBitrateKbps: Int = 1_000
    /// libvpx `cpu-used` (−16…16; negative fixes the speed, 8 is the fastest real-time setting).
    public var videoCpuUsed: Int = -6
    /// Key frame at least every this many frames.
    public var keyframeInterval: Int = 3_000
    /// Opus bitrate in bit/s.
    public var audioBitrate: Int = 32_000
    /// Opus frame duration: 10, 20, 40 or 60 ms (the packetization time).
    public var audioFrameDurationMs: Int = 20
    /// Opus in-band FEC (RFC 6716 §2.1.7), on as `useinbandfec=1` in our SDP says.
    public var audioInbandFEC: Bool = true
    /// Payload bytes per RTP packet at most (RFC 7741 fragmentation), default 1200.
    public var maximumPayloadSize: Int = 1_200

    /// The defaults above.
    public init() {}

    /// The VP8 encoder configuration a sender of `source` uses with these settings.
    public func vp8Configuration(for source: VideoSource) -> VP8EncoderConfiguration {
        let (w, h) = source.dimensions
        var config = VP8EncoderConfiguration(width: w, height: h, frameRate: max(1, Int(source.frameRate.rounded())),
                                             bitrateKbps: videoBitrateKbps)
        config.cpuUsed = videoCpuUsed
        config.keyframeInterval = keyframeInterval
        return config
    }
}

/// The W3C `RTCRtpSender` of one transceiver: pulls its source in real time,
/// encodes (or passes VP8 through), packetizes, keeps a retransmission history,
/// and sends through the bundle's ``DtlsSrtpTransport``; answers PLI/FIR with a key
/// frame and NACK with retransmissions; writes its part of the RTCP sender report.
///
/// Threading: everything runs on the sender's own ``MediaThread`` (started with the
/// sender, ended by ``stop()``); the public entry points hop onto it. Its encoder,
/// packetizer and counters are a ``SenderState`` bound to that thread (``ThreadBound``);
/// what other threads read or leave is in Mutexes.
final class RtpSender: Sendable {
    let kind: MediaKind
    let ssrc: UInt32
    let cname: String
    let encoding: SendEncoding
    let thread: MediaThread
    /// The media-thread state (``thread``).
    private let state: ThreadBound<SenderState>
    private let timestampOffset = UInt32.random(in: 0...UInt32.max)
    /// Random (RFC 3550 §5.1) but below 2^15, as libwebrtc picks it: some receivers
    /// need room before the first wrap of the 16-bit sequence number.
    let firstSequenceNumber = UInt16.random(in: 0..<0x8000)
    /// What a sender report needs (counts, last RTP timestamp and when it was sent),
    /// published by the media thread after each send, so the RTCP timer on the event-loop
    /// thread reads it without waiting behind an encode on the thread.
    private struct ReportBasis { var packets = 0, octets = 0, rtpTimestamp: UInt32 = 0, sentAtNanos: UInt64 = 0 }
    private let reportBasis = Mutex(ReportBasis())
    /// The audio source is a ``ToneSource`` (its frequency can change); the video source is
    /// encoded here (not an IVF file passed through).
    private let isTone: Bool, encodesVideo: Bool
    /// Hub mode: the frames come from a ``MediaHub`` (``HubSenderFeed``), not a source and
    /// encoder of this sender's; the entry points below hand over to it.
    let hubFeed: HubSenderFeed?
    /// The connection's name in log lines (`peer load`: `load.17`); nil: none.
    let logTag: String?

    /// A sender of `kind` with its SSRC and CNAME; `video`/`audio` is the source (nil:
    /// negotiated to send but nothing to send, e.g. `--video none`), or `shared` the media
    /// hub's source to send from, on `loop` (hub mode); `logTag` names its connection in
    /// log lines.
    init(kind: MediaKind, ssrc: UInt32, cname: String, encoding: SendEncoding,
         video: VideoSource?, audio: AudioSource?, shared: (hub: MediaHub, spec: HubSourceSpec, loop: EventLoop)? = nil,
         logTag: String? = nil) {
        self.logTag = logTag
        self.kind = kind
        hubFeed = shared.map {
            HubSenderFeed(hub: $0.hub, spec: $0.spec, loop: $0.loop, kind: kind, ssrc: ssrc,
                          targetBitrate: Double(kind == .video ? encoding.videoBitrateKbps * 1000 : encoding.audioBitrate))
        }
        self.ssrc = ssrc
        self.cname = cname
        self.encoding = encoding
        isTone = audio is ToneSource
        encodesVideo = video != nil && !(video is IVFSource)
        let thread = MediaThread(name: "peer.send.\(kind)")
        self.thread = thread
        var stats = OutboundRTPStats(id: "OT-\(kind)-\(ssrc)", timestamp: 0, ssrc: ssrc, kind: "\(kind)")
        if kind == .video {
            stats.framesEncoded = 0
            stats.keyFramesEncoded = 0
            stats.framesSent = 0
            stats.totalEncodeTime = 0
            stats.targetBitrate = Double(encoding.videoBitrateKbps * 1000)
        } else {
            stats.targetBitrate = Double(encoding.audioBitrate)
        }
        state = ThreadBound(SenderState(videoSource: video, audioSource: audio, stats: stats), thread: thread)
    }

    // A running pacer keeps itself (and so the thread) alive through its next timed item:
    // a sender released without stop() must still end its thread.
    deinit { thread.stop() }

    /// Applies the negotiated payload type, mid and mid-extension id, on the sender's
    /// thread: returns at once (the connection calls it under its lock), and takes effect
    /// before anything queued after it (``start(transport:failed:)``, ``snapshot()``).
    func configure(payloadType: Int, mid: String, midExtensionID: Int?) {
        if let hubFeed { return hubFeed.configure(payloadType: payloadType, mid: mid, midExtensionID: midExtensionID) }
        thread.async { [self] in
            let s = state.value
            s.payloadType = UInt8(clamping: payloadType)
            // A renegotiation that renumbered it: the packets from now on carry the new one.
            s.vp8Packetizer?.payloadType = s.payloadType
            s.opusPacketizer?.payloadType = s.payloadType
            s.stats.mid = mid
            s.stats.codecId = "CO-\(payloadType)"
            if !s.started { try? makeEncoders(s) }  // ahead of start; a failure is thrown again there
            if let id = midExtensionID, (1...14).contains(id) {
                s.midExtension = .oneByte([RTPExtensionElement(id: UInt8(id), data: Array(mid.utf8))])
            } else {
                s.midExtension = nil
            }
        }
    }

    /// Starts pulling the source and sending over `transport` (on DTLS connected), on the
    /// sender's thread: returns at once, so the event-loop thread that calls it never waits
    /// behind the thread (or for the encoder to be made). When the encoder cannot be made
    /// (bad size, rate) nothing is sent and `failed` is called on the sender's thread with
    /// the codec's error.
    func start(transport: DtlsSrtpTransport, failed: @escaping @Sendable (Error) -> Void) {
        setSending(true, transport: transport, failed: failed)
    }

    /// Follows a negotiated direction (RFC 3264 §8.4, hold): `sending` false pauses the
    /// sender — the source goes on, its frames are dropped before the encoder, so RTP
    /// timestamps keep wall time and the receiver sees the pause as a timestamp gap;
    /// true starts it (the first time) or resumes it with a key frame. On the sender's
    /// thread; returns at once. `failed` as for ``start(transport:failed:)``.
    func setSending(_ sending: Bool, transport: DtlsSrtpTransport, failed: @escaping @Sendable (Error) -> Void) {
        if let hubFeed { return hubFeed.setSending(sending, transport: transport, failed: failed) }
        thread.async { [self] in
            let s = state.value
            guard sending else { s.paused = true; return }
            if !s.started {
                s.paused = false
                Log.write(.debug, "media", tag: logTag, "\(kind) sender: starting")
                do { try startOnThread(s, transport: transport) } catch { failed(error) }
            } else if s.paused {
                s.paused = false
                s.keyframeRequested = true
            }
        }
    }

    /// ``start(transport:failed:)`` on the thread. Throws the codec's error.
    private func startOnThread(_ s: SenderState, transport: DtlsSrtpTransport) throws {
        guard !s.started else { return }
        s.started = true
        s.transport = transport
        if let source = s.videoSource {
            s.vp8Packetizer = try VP8Packetizer(ssrc: ssrc, payloadType: s.payloadType, sequenceNumber: firstSequenceNumber,
                                                pictureID: UInt16.random(in: 0...0x7FFF),
                                                maximumPayloadSize: encoding.maximumPayloadSize)
            try makeEncoders(s)
            let (w, h) = source.dimensions
            s.stats.frameWidth = w
            s.stats.frameHeight = h
            let pacer = MediaPacer(video: source, thread: thread, deliver: { [weak self] (frame: consuming VideoSourceFrame) in
                guard let self else { return }
                self.sendVideo(consume frame)
            }, finished: { _ in })
            s.videoPacer = pacer
            pacer.start()
        }
        if let source = s.audioSource, source.sendsEncoded {
            // Opus packets sent as they are (an Ogg Opus file), paced by their timestamps.
            s.opusPacketizer = OpusPacketizer(ssrc: ssrc, payloadType: s.payloadType, sequenceNumber: firstSequenceNumber)
            let pacer = MediaPacer<EncodedAudioFrame>(thread: thread, clockRate: 48_000, pull: { try source.nextPacket() },
                                                      timestamp: { $0.timestamp },
                                                      deliver: { [weak self] packet in self?.sendEncodedAudio(packet) }, finished: { _ in })
            s.encodedAudioPacer = pacer
            pacer.start()
        } else if let source = s.audioSource {
            s.opusPacketizer = OpusPacketizer(ssrc: ssrc, payloadType: s.payloadType, sequenceNumber: firstSequenceNumber)
            try makeEncoders(s)
            let pacer = MediaPacer(audio: source, frameDurationMs: encoding.audioFrameDurationMs, thread: thread,
                                   deliver: { [weak self] block in self?.sendAudio(block) }, finished: { _ in })
            s.audioPacer = pacer
            pacer.start()
        }
    }

    /// Makes the encoder (on the sender's thread, or takes one ``PreparedCodecs`` made
    /// ahead) unless it is made: at the first
    /// ``configure(payloadType:mid:midExtensionID:)``, while ICE and DTLS run, not when
    /// DTLS has connected — libvpx takes 30–37 ms to make a 640x480 VP8 encoder here, which
    /// was most of DTLS connected → first frame. Throws the codec's error (``start`` reports it).
    private func makeEncoders(_ s: SenderState) throws {
        if let source = s.videoSource, s.vp8 == nil {
            let config = encoding.vp8Configuration(for: source)
            if let prepared = PreparedCodecs.takeEncoder(config) {
                s.vp8 = prepared
                Log.write(.debug, "media", tag: logTag, "video sender: VP8 encoder \(config.width)x\(config.height) taken ready-made")
            } else {
                let made = DispatchTime.now().uptimeNanoseconds
                s.vp8 = try VP8Encoder(configuration: config)
                Log.write(.debug, "media", tag: logTag, "video sender: VP8 encoder \(config.width)x\(config.height) made in \(Self.ms(since: made)) ms")
            }
        }
        if let source = s.audioSource, !source.sendsEncoded, s.opus == nil {
            s.opus = try OpusEncoder(configuration: OpusEncoderConfiguration(
                channels: source.channels, frameDurationMs: encoding.audioFrameDurationMs, bitrate: encoding.audioBitrate,
                inbandFEC: encoding.audioInbandFEC, packetLossPercent: encoding.audioInbandFEC ? 10 : 0))
        }
    }

    /// Stops the source and ends the thread; nothing is sent after this returns.
    func stop() {
        hubFeed?.stop()
        thread.sync {
            let s = state.value
            s.videoPacer?.stop()
            s.audioPacer?.stop()
            s.encodedAudioPacer?.stop()
            s.videoPacer = nil
            s.audioPacer = nil
            s.encodedAudioPacer = nil
            s.transport = nil
        }
        thread.stop()
    }

    /// Feedback from the peer waiting for the sender's thread, merged: however many PLI,
    /// FIR and NACK messages arrive while the thread is busy (a flood, or an encoder
    /// descheduled), one drain is queued and the requests it finds take bounded room —
    /// one key-frame flag, counters, at most ``maximumPendingRetransmissions`` sequence
    /// numbers — so nothing the peer sends grows the thread's queue.
    private struct PendingFeedback {
        var keyframe = false
        var plis = 0, firs = 0, nacks = 0
        var lastFIRSequence: UInt8?
        var lost: [UInt16] = []
        var lostSet: Set<UInt16> = []
        var drainQueued = false
    }
    private let feedback = Mutex(PendingFeedback())

    /// Makes the next frame a key frame (W3C `generateKeyFrame`; what a PLI asks for).
    func generateKeyFrame() { pictureLossIndication() }

    /// Plays `hz` on a tone source from its next frame; false when the source is not a tone.
    func setToneFrequency(_ hz: Double) -> Bool {
        guard isTone else { return false }
        thread.async { [self] in (state.value.audioSource as? ToneSource)?.frequency = hz }
        return true
    }

    /// Sets the VP8 encoder's target bitrate (kbit/s) from its next frame; false without
    /// a video encoder (audio, or an IVF passed through).
    func setBitrate(kbps: Int) -> Bool {
        guard encodesVideo else { return false }
        thread.async { [self] in
            let s = state.value
            guard let vp8 = s.vp8, (try? vp8.setBitrate(kbps: kbps)) != nil else { return }
            s.stats.targetBitrate = Double(kbps * 1000)
        }
        return true
    }

    /// PLI (RFC 4585 §6.3.1): the next frame is a key frame.
    func pictureLossIndication() {
        if let hubFeed { return hubFeed.pictureLossIndication() }
        merge { $0.plis += 1; $0.keyframe = true }
    }

    /// FIR (RFC 5104 §4.3.1): a key frame, unless this is a repeat of the last request
    /// (same command sequence number).
    func fullIntraRequest(sequenceNumber: UInt8) {
        if let hubFeed { return hubFeed.fullIntraRequest(sequenceNumber: sequenceNumber) }
        merge {
            $0.firs += 1
            guard $0.lastFIRSequence != sequenceNumber else { return }
            $0.lastFIRSequence = sequenceNumber
            $0.keyframe = true
        }
    }

    /// At most this many packets are resent for one NACK message: a hostile or confused
    /// receiver cannot make us resend the whole history at once.
    static let maximumRetransmissionsPerNack = 64
    /// At most this many sequence numbers wait to be resent (the retransmission history's
    /// size); more asked for before the thread gets to them are not resent.
    static let maximumPendingRetransmissions = 1024

    /// Generic NACK (RFC 4585 §6.2.1): sends again the packets still in the history
    /// (at most ``maximumRetransmissionsPerNack`` per message, each once however often asked).
    func nack(_ sequenceNumbers: [UInt16]) {
        if let hubFeed { return hubFeed.nack(sequenceNumbers, maximumPerNack: Self.maximumRetransmissionsPerNack) }
        merge {
            $0.nacks += 1
            for seq in sequenceNumbers.prefix(Self.maximumRetransmissionsPerNack)
            where $0.lost.count < Self.maximumPendingRetransmissions && $0.lostSet.insert(seq).inserted {
                $0.lost.append(seq)
            }
        }
    }

    /// Test hook: how many sequence numbers wait to be resent, and whether a drain is queued.
    var pendingFeedback: (retransmissions: Int, drainQueued: Bool) {
        feedback.withLock { ($0.lost.count, $0.drainQueued) }
    }

    /// Test hook: `observer` is called on the sender's thread after each frame sent, with
    /// whether it was a key frame (tests time the key frame a PLI or FIR asks for). In place
    /// when this returns.
    func observeFramesSent(_ observer: @escaping @Sendable (_ keyframe: Bool) -> Void) {
        thread.sync { state.value.onFrameSent = observer }
    }

    /// Test hook: keeps the sender's thread busy until `release` is signalled, as a long
    /// encode would (tests of feedback that arrives meanwhile).
    func holdThread(until release: DispatchSemaphore) {
        thread.async { release.wait() }
    }

    /// Records feedback in ``feedback`` (any thread) and queues one drain if none is queued.
    private func merge(_ change: (inout PendingFeedback) -> Void) {
        let queue = feedback.withLock { f -> Bool in
            change(&f)
            defer { f.drainQueued = true }
            return !f.drainQueued
        }
        if queue { thread.async { [self] in drainFeedback() } }
    }

    /// Acts on the merged feedback (sender's thread): counters, the key-frame request, the
    /// retransmissions still in the history.
    private func drainFeedback() {
        let f = feedback.withLock { f -> PendingFeedback in
            defer { f = PendingFeedback(lastFIRSequence: f.lastFIRSequence) }
            return f
        }
        let s = state.value
        s.stats.pliCount += f.plis
        s.stats.firCount += f.firs
        s.stats.nackCount += f.nacks
        if f.keyframe { s.keyframeRequested = true }
        guard let transport = s.transport, !f.lost.isEmpty else { return }
        for packet in s.history.packets(for: f.lost, nowMs: monotonicMs()) {
            let bytes = packet.serialized()
            if transport.sendRTP(bytes) {
                s.stats.packetsSent += 1
                s.stats.bytesSent += packet.payload.count
                s.stats.headerBytesSent += bytes.count - packet.payload.count
                s.stats.retransmittedPacketsSent += 1
                s.stats.retransmittedBytesSent += packet.payload.count
            }
        }
        publishReportBasis(s)
    }

    /// Our sender report (RFC 3550 §6.4.1) for now, or nil before the first packet.
    /// The RTP timestamp is the last frame's advanced by the time since it was sent.
    /// Never waits for the media thread (see ``reportBasis``).
    func senderReport(ntp: UInt64) -> SenderReport? {
        if let hubFeed { return hubFeed.senderReport(ntp: ntp) }
        let basis = reportBasis.withLock { $0 }
        guard basis.packets > 0 else { return nil }
        let clock: UInt64 = kind == .video ? 90_000 : 48_000
        let elapsed = DispatchTime.now().uptimeNanoseconds &- basis.sentAtNanos
        let advance = UInt32(truncatingIfNeeded: elapsed * clock / 1_000_000_000)
        return SenderReport(ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: basis.rtpTimestamp &+ advance,
                            packetCount: UInt32(truncatingIfNeeded: basis.packets),
                            octetCount: UInt32(truncatingIfNeeded: basis.octets), reports: [])
    }

    /// Publishes the counts and timing a sender report needs (media thread).
    private func publishReportBasis(_ s: SenderState) {
        let basis = ReportBasis(packets: s.stats.packetsSent, octets: s.stats.bytesSent, rtpTimestamp: s.lastRTPTimestamp,
                                sentAtNanos: s.lastSentAtNanos)
        reportBasis.withLock { $0 = basis }
    }

    /// A snapshot of the `outbound-rtp` statistics.
    func snapshot() -> OutboundRTPStats {
        if let hubFeed { return hubFeed.snapshot() }
        return thread.sync {
            let s = state.value
            var stats = s.stats
            stats.timestamp = unixTimeMs()
            if kind == .video {
                let now = DispatchTime.now().uptimeNanoseconds
                s.encodedTimes.removeAll { now &- $0 >= 1_000_000_000 }
                stats.framesPerSecond = Double(s.encodedTimes.count)
                stats.qualityLimitationReason = "none"  // no adaptation of resolution or rate
            }
            return stats
        }
    }


    // MARK: Media thread

    /// Encodes and sends one frame (media thread). It owns `frame`: the marker is stamped
    /// into its buffer in place, no copy.
    private func sendVideo(_ frame: consuming VideoSourceFrame) {
        let s = state.value
        guard !s.paused else { return }
        var encoded: [EncodedVideoFrame] = []
        switch consume frame {
        case .raw(var image):
            guard let vp8 = s.vp8 else { return }
            // The test pattern's marker says when the frame went to the encoder (the pacer
            // delivers late frames at once after a stall); its buffer goes back afterwards.
            let marked = s.videoSource as? MarkedVideoSource
            marked?.stamp(&image, captureTimeMs: Int64(unixTimeMs()))
            defer { marked?.recycle(image) }
            let t0 = DispatchTime.now().uptimeNanoseconds
            let force = s.keyframeRequested
            s.keyframeRequested = false
            guard let out = try? vp8.encode(image, forceKeyframe: force) else { return }
            encoded = out
            s.stats.totalEncodeTime = (s.stats.totalEncodeTime ?? 0) + Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
            if s.stats.framesEncoded == nil || s.stats.framesEncoded == 0 {
                Log.write(.debug, "media", tag: logTag, "video sender: first frame encoded in \(Self.ms(since: t0)) ms (\(out.map(\.data.count).reduce(0, +)) bytes)")
            }
        case let .encoded(vp8Frame):
            s.keyframeRequested = false  // a file passed through cannot make key frames on request
            encoded = [vp8Frame]
        }
        for e in encoded {
            s.stats.framesEncoded = (s.stats.framesEncoded ?? 0) + 1
            let now = DispatchTime.now().uptimeNanoseconds
            s.encodedTimes.append(now)
            if let first = s.encodedTimes.first, now &- first >= 1_000_000_000 { s.encodedTimes.removeAll { now &- $0 >= 1_000_000_000 } }
            if e.isKeyframe {
                s.stats.keyFramesEncoded = (s.stats.keyFramesEncoded ?? 0) + 1
                if let w = e.width, let h = e.height { s.stats.frameWidth = w; s.stats.frameHeight = h }
            }
            let timestamp = timestampOffset &+ UInt32(truncatingIfNeeded: e.timestamp)
            guard let packets = try? s.vp8Packetizer?.packetize(e.data, timestamp: timestamp, headerExtension: s.midExtension) else { continue }
            send(s, packets, timestamp: timestamp)
            s.stats.framesSent = (s.stats.framesSent ?? 0) + 1
            s.onFrameSent?(e.isKeyframe)
        }
    }

    /// Milliseconds since `start` (DispatchTime ns), one decimal, for log lines.
    static func ms(since start: UInt64) -> String {
        String(format: "%.1f", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }

    private func sendAudio(_ block: AudioFrame) {
        guard let opus = state.value.opus, let encoded = try? opus.encode(block) else { return }
        sendEncodedAudio(encoded)
    }

    /// Packetizes and sends one Opus packet (RFC 7587), unless paused.
    private func sendEncodedAudio(_ encoded: EncodedAudioFrame) {
        let s = state.value
        guard !s.paused else { return }
        let timestamp = timestampOffset &+ UInt32(truncatingIfNeeded: encoded.timestamp)
        guard let packet = try? s.opusPacketizer?.packetize(encoded.data, timestamp: timestamp, headerExtension: s.midExtension) else { return }
        send(s, [packet], timestamp: timestamp)
    }

    private func send(_ s: SenderState, _ packets: [RTPPacket], timestamp: UInt32) {
        guard let transport = s.transport else { return }
        let now = monotonicMs()
        for packet in packets {
            s.history.record(packet, nowMs: now)
            let bytes = packet.serialized()
            if transport.sendRTP(bytes) {
                s.stats.packetsSent += 1
                s.stats.bytesSent += packet.payload.count
                s.stats.headerBytesSent += bytes.count - packet.payload.count
            }
        }
        s.lastRTPTimestamp = timestamp
        s.lastSentAtNanos = DispatchTime.now().uptimeNanoseconds
        publishReportBasis(s)
    }
}

/// What an ``RtpSender``'s thread encodes, packetizes, sends and counts with: confined to
/// that thread (held in a ``ThreadBound``), so none of it needs to be `Sendable`. A class,
/// not a struct: the sender's methods share one state across the callbacks the pacer and
/// the test hooks make into it.
private final class SenderState {
    // Written by configure, start and stop.
    var payloadType: UInt8 = 0
    var midExtension: RTPHeaderExtension?
    var transport: DtlsSrtpTransport?

    let videoSource: VideoSource?
    let audioSource: AudioSource?
    var videoPacer: MediaPacer<VideoSourceFrame>?
    var audioPacer: MediaPacer<AudioFrame>?
    /// For a source of Opus packets (``AudioSource/sendsEncoded``).
    var encodedAudioPacer: MediaPacer<EncodedAudioFrame>?
    var vp8: VP8Encoder?
    var opus: OpusEncoder?
    var vp8Packetizer: VP8Packetizer?
    var opusPacketizer: OpusPacketizer?
    var history = RetransmissionHistory()
    var keyframeRequested = false
    var lastRTPTimestamp: UInt32 = 0
    var lastSentAtNanos: UInt64 = 0
    /// When the frames of the last second were encoded (uptime ns; `framesPerSecond`).
    var encodedTimes: [UInt64] = []
    var stats: OutboundRTPStats
    var started = false
    /// True while the negotiated direction does not send (hold): frames are dropped.
    var paused = false
    /// Called (on the thread) when a frame was sent: whether it was a key frame
    /// (``RtpSender/observeFramesSent(_:)``).
    var onFrameSent: (@Sendable (_ keyframe: Bool) -> Void)?

    init(videoSource: VideoSource?, audioSource: AudioSource?, stats: OutboundRTPStats) {
        self.videoSource = videoSource
        self.audioSource = audioSource
        self.stats = stats
    }
}
