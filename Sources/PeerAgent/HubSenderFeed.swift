// HubSenderFeed: an RtpSender fed by the media hub — no source or encoder of its own: on its connection's loop each shared frame gets this sender's RTP header and SRTP and goes out (RFC 3550 §5.1); PLI/FIR go to the hub (RFC 4585 §6.3.1, RFC 5104 §4.3.1), NACKs are answered from its own history (RFC 4585 §6.2.1).
import DTLS
import Dispatch
import EventLoop
import Hub
import RTP
import SDP
import Synchronization

/// The sending side of an ``RtpSender`` in hub mode (``PeerConnection/addTransceiver(_:direction:shared:encoding:receive:)``):
/// its frames come from a ``MediaHub`` subscription on the connection's loop, where this
/// sender writes its header in front of each shared payload (one copy into one reused
/// buffer), SRTP protects it in place and the transport sends it — from the hub's frame to
/// `nice_agent_send` on the loop, no queue between. Key-frame requests are merged by the
/// hub; NACKs are answered from this sender's ``SharedPayloadHistory`` (the shared
/// payloads, 1 s); the counters are published after each frame, so ``snapshot()`` and
/// ``senderReport(ntp:)`` never wait.
///
/// The subscription is made when the sender starts (DTLS connected), on the loop: the
/// first subscriber of a spec in the process waits there for the hub to make the encoder
/// (~30 ms at 640x480); later ones find it made.
final class HubSenderFeed: Sendable {
    let hub: MediaHub
    let spec: HubSourceSpec
    let loop: EventLoop
    let kind: MediaKind
    let ssrc: UInt32
    /// What the loop changes.
    private let state: LoopBound<State>
    /// The counters, published after each frame and feedback.
    private let published: Mutex<Published>

    private final class State {
        var stream: SharedFrameStream
        var subscription: HubSubscription?
        var transport: DtlsSrtpTransport?
        var paused = false
        var lastFIRSequence: UInt8?
        /// When the frames of the last second were sent (ms, `framesPerSecond`).
        var frameTimes: [Int64] = []
        init(stream: SharedFrameStream) { self.stream = stream }
    }

    private struct Published {
        var stats: OutboundRTPStats
        var counts = SharedFrameStream.Counts()
        var lastSentNanos: UInt64 = 0
    }

    /// A feed for the sender `ssrc` of `kind`, from `spec` of `hub`, on `loop`: its first
    /// sequence number random below 2^15 and its timestamp offset random (RFC 3550 §5.1),
    /// as ``RtpSender`` picks them; `targetBitrate` in bit/s for its stats.
    init(hub: MediaHub, spec: HubSourceSpec, loop: EventLoop, kind: MediaKind, ssrc: UInt32, targetBitrate: Double) {
        self.hub = hub
        self.spec = spec
        self.loop = loop
        self.kind = kind
        self.ssrc = ssrc
        let header = RTPStreamHeader(ssrc: ssrc, payloadType: 0, sequenceNumber: UInt16.random(in: 0..<0x8000),
                                     timestampOffset: UInt32.random(in: 0...UInt32.max))
        state = LoopBound(State(stream: SharedFrameStream(header: header, trailer: SRTPProfile.maxTrailerLength)), loop: loop)
        var stats = OutboundRTPStats(id: "OT-\(kind)-\(ssrc)", timestamp: 0, ssrc: ssrc, kind: "\(kind)")
        if kind == .video {
            stats.framesEncoded = 0
            stats.keyFramesEncoded = 0
            stats.framesSent = 0
        }
        stats.targetBitrate = targetBitrate
        published = Mutex(Published(stats: stats))
    }

    /// The negotiated payload type, mid and mid-extension id (from any thread; applied on the loop).
    func configure(payloadType: Int, mid: String, midExtensionID: Int?) {
        published.withLock { p in
            p.stats.mid = mid
            p.stats.codecId = "CO-\(payloadType)"
        }
        onLoop { [self] in
            let s = state.value
            s.stream.header.payloadType = UInt8(clamping: payloadType)
            if let id = midExtensionID, (1...14).contains(id) {
                s.stream.header.setHeaderExtension(.oneByte([RTPExtensionElement(id: UInt8(id), data: Array(mid.utf8))]))
            } else {
                s.stream.header.setHeaderExtension(nil)
            }
        }
    }

    /// Starts (subscribes), pauses or resumes (from a key frame) sending over `transport`;
    /// `failed` gets the hub's error when the source cannot be opened. On the loop.
    func setSending(_ sending: Bool, transport: DtlsSrtpTransport, failed: @escaping @Sendable (Error) -> Void) {
        onLoop { [self] in
            let s = state.value
            guard sending else {
                s.paused = true
                s.stream.forgetHistory()
                return
            }
            s.transport = transport
            if s.subscription == nil {
                s.paused = false
                do {
                    s.subscription = try hub.subscribe(spec, loop: loop) { [weak self] frame in self?.deliver(frame) }
                } catch {
                    failed(error)
                }
            } else if s.paused {
                s.paused = false
                s.subscription?.waitForKeyframe()
            }
        }
    }

    /// Stops: the subscription ends, the history is let go of.
    func stop() {
        onLoop { [self] in
            let s = state.value
            s.subscription?.cancel()
            s.subscription = nil
            s.transport = nil
            s.stream.forgetHistory()
        }
    }

    /// PLI (RFC 4585 §6.3.1), or W3C `generateKeyFrame`: to the hub, merged there.
    func pictureLossIndication() {
        published.withLock { $0.stats.pliCount += 1 }
        onLoop { [self] in state.value.subscription?.requestKeyframe() }
    }

    /// FIR (RFC 5104 §4.3.1): to the hub unless it repeats the last command sequence number.
    func fullIntraRequest(sequenceNumber: UInt8) {
        published.withLock { $0.stats.firCount += 1 }
        onLoop { [self] in
            let s = state.value
            guard s.lastFIRSequence != sequenceNumber else { return }
            s.lastFIRSequence = sequenceNumber
            s.subscription?.requestKeyframe()
        }
    }

    /// Generic NACK (RFC 4585 §6.2.1): the packets still in this sender's history, sent
    /// again as first sent, at most `maximumPerNack` of them.
    func nack(_ sequenceNumbers: [UInt16], maximumPerNack: Int) {
        published.withLock { $0.stats.nackCount += 1 }
        let asked = Array(sequenceNumbers.prefix(maximumPerNack))
        onLoop { [self] in
            let s = state.value
            guard let transport = s.transport else { return }
            s.stream.resend(asked, nowMs: monotonicMs()) { transport.sendRTP(inPlace: &$0) }
            publish(s)
        }
    }

    /// The sender report's fields for now (RFC 3550 §6.4.1), nil before the first packet:
    /// the last frame's RTP timestamp advanced by the time since it was sent. No wait.
    func senderReport(ntp: UInt64) -> SenderReport? {
        let p = published.withLock { $0 }
        guard p.counts.packetsSent > 0 else { return nil }
        let clock: UInt64 = kind == .video ? 90_000 : 48_000
        let elapsed = DispatchTime.now().uptimeNanoseconds &- p.lastSentNanos
        let advance = UInt32(truncatingIfNeeded: elapsed * clock / 1_000_000_000)
        return SenderReport(ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: p.counts.lastRTPTimestamp &+ advance,
                            packetCount: UInt32(truncatingIfNeeded: p.counts.packetsSent),
                            octetCount: UInt32(truncatingIfNeeded: p.counts.bytesSent), reports: [])
    }

    /// The `outbound-rtp` statistics as last published (no wait).
    func snapshot() -> OutboundRTPStats {
        var stats = published.withLock { $0.stats }
        stats.timestamp = unixTimeMs()
        return stats
    }

    // MARK: The loop

    /// One shared frame from the hub: this sender's packets of it, sent.
    private func deliver(_ frame: PacketizedFrame) {
        let s = state.value
        guard !s.paused, let transport = s.transport else { return }
        let now = monotonicMs()
        s.stream.send(frame, nowMs: now) { transport.sendRTP(inPlace: &$0) }
        s.frameTimes.append(now)
        if let first = s.frameTimes.first, now - first >= 1_000 { s.frameTimes.removeAll { now - $0 >= 1_000 } }
        publish(s, frame: frame)
    }

    /// Publishes the stream's counts (after a frame, when given, or a retransmission).
    private func publish(_ s: State, frame: PacketizedFrame? = nil) {
        let counts = s.stream.counts
        let fps = Double(s.frameTimes.count)
        published.withLock { p in
            p.counts = counts
            p.stats.packetsSent = counts.packetsSent
            p.stats.bytesSent = counts.bytesSent
            p.stats.headerBytesSent = counts.headerBytesSent
            p.stats.retransmittedPacketsSent = counts.retransmittedPacketsSent
            p.stats.retransmittedBytesSent = counts.retransmittedBytesSent
            guard let frame else { return }
            p.lastSentNanos = DispatchTime.now().uptimeNanoseconds
            guard kind == .video else { return }
            // The hub encoded the frame once for every sender; each counts it as its own.
            p.stats.framesEncoded = counts.framesSent
            p.stats.framesSent = counts.framesSent
            p.stats.keyFramesEncoded = counts.keyFramesSent
            p.stats.framesPerSecond = fps
            p.stats.qualityLimitationReason = "none"
            if let w = frame.width, let h = frame.height {
                p.stats.frameWidth = w
                p.stats.frameHeight = h
            }
        }
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.isCurrent { body() } else { loop.async(body) }
    }
}
