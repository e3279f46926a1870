// MediaPlane: the RTP session of one BUNDLE transport — the transceivers, RTP routed in, RTCP reports and feedback out (RFC 3550 §6, RFC 8843 §9.2, RFC 4585).
import DTLS
import EventLoop
import RTP
import SDP
import Synchronization

/// The media side of a ``PeerConnection``: its transceivers and what flows between them
/// and the one DTLS-SRTP transport of the BUNDLE group.
///
/// - In: each unprotected RTP packet goes to the receiver of its m-section
///   (``BundleRouter``, RFC 8843 §9.2), and the feedback that receiver asks for (NACK,
///   PLI) goes out at once; each RTCP compound goes to ``RTCPSession``.
/// - Out: once DTLS is connected, ``start(on:minimumIntervalMs:isOpen:senderFailed:)``
///   starts the senders and the RTCP timers (regular report, 20 ms NACK tick); ``close()``
///   stops the senders, sends BYE (RFC 3550 §6.6) and closes the receivers' files.
///
/// Threading: the receive path and the timers run on the event-loop thread; the rest
/// from any thread. The transceivers, the router and the transport are behind one
/// `Mutex`, never held while sending or while handing a packet to a receiver; it is held
/// while an answer is applied (``negotiate(_:)`` configures senders and receivers) and
/// while routing asks a receiver for its payload types. Lock order: the connection's
/// lock, then this one, then a transceiver's or receiver's — never the other way.
final class MediaPlane: Sendable {
    /// The RTCP of the transport: reports, feedback compounds, received RTCP and RTT.
    let rtcp: RTCPSession
    private let state = Mutex(State())

    private struct State {
        var transceivers: [RtpTransceiver] = []
        var router = BundleRouter()
        var transport: DtlsSrtpTransport?
        var closed = false
        /// Set by ``start(on:minimumIntervalMs:isOpen:senderFailed:)``: senders follow each
        /// negotiation from then on (``applyDirections()``).
        var senderFailed: (@Sendable (MediaKind, Error) -> Void)?
        /// Whether the peer runs on this host (from the selected pair), nil before one.
        var sameHost: Bool?
        /// RTP packets dropped here, by reason (counted under this lock, which routing holds).
        var drops = RTPDrops()
    }

    /// Unprotected RTP packets the plane dropped, by reason (the `transport` stats object's
    /// `rtpMalformedDrops`, `rtpUnknownPayloadTypeDrops`, `rtpUnknownSsrcDrops`).
    struct RTPDrops: Sendable, Equatable {
        /// Packets that do not parse (RFC 3550 §5.1).
        var malformed = 0
        /// Packets whose payload type their m-section does not take (``BundleRouter/Route``).
        var unknownPayloadType = 0
        /// Packets with a mid that names no m-section and nothing else to route them by;
        /// those a receiver refuses for their SSRC are its own count (``RtpReceiver/unknownSSRCDrops``).
        var unknownSource = 0
    }

    /// The RTP packets dropped so far by reason, with those the receivers refused for
    /// their SSRC added to ``RTPDrops/unknownSource``.
    var rtpDrops: RTPDrops {
        let (drops, list) = state.withLock { ($0.drops, $0.transceivers) }
        var all = drops
        for t in list { all.unknownSource += t.receiver.unknownSSRCDrops }
        return all
    }

    /// A plane whose RTCP reports with `cname`.
    init(cname: String) { rtcp = RTCPSession(cname: cname) }

    /// The transceivers, in the order added.
    var transceivers: [RtpTransceiver] { state.withLock { $0.transceivers } }

    /// Adds a transceiver (before negotiation).
    func add(_ transceiver: RtpTransceiver) {
        let sameHost = state.withLock { s in
            s.transceivers.append(transceiver)
            return s.sameHost
        }
        if let sameHost { transceiver.receiver.setSameHost(sameHost) }
    }

    /// The selected pair's remote address is one of this host's (or not): the receivers'
    /// marker latency needs no clock offset (or an estimated one).
    func setSameHost(_ same: Bool) {
        let list = state.withLock { s in
            s.sameHost = same
            return s.transceivers
        }
        for t in list { t.receiver.setSameHost(same) }
    }

    /// Sets the DTLS-SRTP transport media goes through (once, when the ICE agent is made).
    func attach(_ transport: DtlsSrtpTransport) { state.withLock { $0.transport = transport } }

    /// Runs `body` with the transceivers and the router, e.g. to apply a negotiated answer.
    func negotiate<T>(_ body: ([RtpTransceiver], inout BundleRouter) -> T) -> T {
        state.withLock { body($0.transceivers, &$0.router) }
    }

    /// Starts media once DTLS is connected: every transceiver that sends starts its sender
    /// (`senderFailed` is told the kind and error of one whose encoder cannot start), and the
    /// RTCP timers start on `loop` (the report about every `minimumIntervalMs`, RFC 3550
    /// §6.2; the NACK tick every 20 ms while packets are missing), running while `isOpen` says so.
    func start(on loop: EventLoop, minimumIntervalMs: Double, isOpen: @escaping @Sendable () -> Bool,
               senderFailed: @escaping @Sendable (MediaKind, Error) -> Void) {
        guard state.withLock({ s -> Bool in
            guard s.transport != nil, s.senderFailed == nil else { return false }
            s.senderFailed = senderFailed
            return true
        }) else { return }
        applyDirections()
        rtcp.startTimers(on: loop, minimumIntervalMs: minimumIntervalMs, report: { [weak self] in
            guard let self, isOpen() else { return false }
            sendReports()
            return true
        }, tick: { [weak self] in
            guard let self, isOpen() else { return .stop }
            return tick() ? .again : .idle
        })
    }

    /// Makes every sender follow its transceiver's negotiated direction once media has
    /// started (DTLS connected): one that now sends starts or resumes, one that no longer
    /// does pauses (RFC 3264 §8.4). Returns at once (the senders act on their threads).
    func applyDirections() {
        guard let (list, transport, failed) = state.withLock({ s -> ([RtpTransceiver], DtlsSrtpTransport, @Sendable (MediaKind, Error) -> Void)? in
            guard !s.closed, let transport = s.transport, let failed = s.senderFailed else { return nil }
            return (s.transceivers, transport, failed)
        }) else { return }
        for t in list {
            let kind = t.kind
            let sends = t.currentDirection?.sends == true
            t.sender.setSending(sends, transport: transport) { error in failed(kind, error) }
        }
    }

    /// Makes every video sender that sends send a key frame next (a new DTLS association:
    /// the peer's new decoder needs one to start).
    func requestKeyFrames() {
        for t in transceivers where t.kind == .video && t.currentDirection?.sends == true { t.sender.generateKeyFrame() }
    }

    /// Ends media (idempotent): cancels the RTCP timers on `loop`, stops the senders, sends
    /// BYE for our SSRCs when DTLS is connected, and closes the receivers (waiting for
    /// their sink threads to finish writing, so files are complete).
    func close(on loop: EventLoop) {
        guard let (list, transport) = state.withLock({ s -> ([RtpTransceiver], DtlsSrtpTransport?)? in
            guard !s.closed else { return nil }
            s.closed = true
            return (s.transceivers, s.transport)
        }) else { return }
        rtcp.stopTimers(on: loop)
        for t in list { t.sender.stop() }
        if let transport, transport.state == .connected {
            transport.sendRTCP(RTCPCompound.serialize(rtcp.goodbyeCompound(ssrcs: list.map(\.sender.ssrc))))
        }
        for t in list { t.receiver.close() }
    }

    /// Hands one unprotected RTP packet to its receiver (loop thread); one that does not
    /// parse or that no receiver takes is dropped and counted by reason (``RTPDrops``).
    func receiveRTP(_ bytes: [UInt8]) {
        guard let packet = try? RTPPacket(parsing: bytes) else { return state.withLock { $0.drops.malformed += 1 } }
        let receiver: RtpReceiver? = state.withLock { s in
            guard !s.closed else { return nil }
            switch s.router.resolve(packet, among: s.transceivers) {
            case let .receiver(r): return r
            case .unknownPayloadType: s.drops.unknownPayloadType += 1
            case .unknownSource: s.drops.unknownSource += 1
            }
            return nil
        }
        guard let receiver else { return }
        let header = bytes.count - packet.payload.count - Int(packet.paddingLength)
        sendFeedback(receiver.handle(packet, payloadBytes: packet.payload.count, headerBytes: header))
        if receiver.packetsMissing { rtcp.wakeTick() }
    }

    /// Hands one unprotected RTCP compound to ``RTCPSession/receive(_:transceivers:)`` (loop thread).
    func receiveRTCP(_ bytes: [UInt8]) {
        rtcp.receive(bytes, transceivers: transceivers)
    }

    /// Sends `feedback` (PLI, NACK) at once, in a compound led by an empty RR from our
    /// first SSRC (``RTCPSession/feedbackCompound(_:reporter:)``); nothing before DTLS.
    func sendFeedback(_ feedback: [RTCPPacket]) {
        guard !feedback.isEmpty, let (transport, reporter) = state.withLock({ s in
            s.transport.map { ($0, s.transceivers.first?.sender.ssrc ?? 0) }
        }) else { return }
        transport.sendRTCP(RTCPCompound.serialize(rtcp.feedbackCompound(feedback, reporter: reporter)))
    }

    /// NACKs due now, from every receiving transceiver (every 20 ms while packets are
    /// missing); true while some are still missing.
    private func tick() -> Bool {
        let now = monotonicMs()
        var feedback: [RTCPPacket] = []
        var missing = false
        for t in transceivers where t.currentDirection?.receives == true {
            feedback += t.receiver.tick(nowMs: now)
            missing = missing || t.receiver.packetsMissing
        }
        sendFeedback(feedback)
        return missing
    }

    /// Our regular compound (``RTCPSession/reports(for:ntp:)``, RFC 3550 §6.4, §6.5).
    private func sendReports() {
        guard let (list, transport) = state.withLock({ s in s.transport.map { (s.transceivers, $0) } }) else { return }
        transport.sendRTCP(RTCPCompound.serialize(rtcp.reports(for: list, ntp: ntpNow())))
    }
}
