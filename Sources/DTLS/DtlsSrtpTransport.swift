// DtlsSrtpTransport: one DTLS-SRTP association over one ICE transport, with RFC 7983 demultiplexing (RFC 5764, RFC 5761 rtcp-mux).
import Dispatch
import EventLoop
import Synchronization

/// The W3C `RTCDtlsTransport` of a BUNDLE group: one DTLS-SRTP association
/// (RFC 5764) over the group's one ICE transport, with RTP and RTCP multiplexed
/// on it (RFC 5761, rtcp-mux).
///
/// Incoming datagrams are told apart by their first byte (RFC 7983): DTLS
/// records go to the handshake, SRTP and SRTCP are unprotected with the keys the
/// handshake exported and handed on. Outgoing RTP and RTCP are protected and sent
/// with `send`, on the ICE transport's selected pair.
///
/// Threading: ``receive(_:)`` is called on the event-loop thread (where ICE
/// delivers datagrams) and `onRTP`/`onRTCP`/`onState` run there. ``sendRTP(_:)``
/// and ``sendRTCP(_:)`` may be called from any thread: they protect on the caller's
/// thread (libsrtp sessions lock) and `send` always runs on the loop thread — from another
/// thread the datagram joins a bounded queue (``maximumQueuedDatagrams``) that the loop
/// drains when a ``Doorbell`` (an eventfd, no GLib lock) rings. So the loop thread is the only one inside libnice,
/// and it never waits for libnice's agent lock held by a sender thread that the scheduler
/// has put aside (that wait was the loop's longest delay during a 720p call). Each piece
/// of state is behind its own `Mutex`, none held while calling out.
public final class DtlsSrtpTransport: Sendable {
    /// The current association's DTLS side (``Handshake``).
    private let dtls = Mutex(Handshake())
    /// The DTLS handshake of the current association (nil until
    /// ``start(role:remoteFingerprints:roundTripMs:)``), the DTLS records that arrived before it (at most
    /// 16, fed to it at start), the association's number (`generation`: callbacks of an
    /// association replaced by ``beginNewAssociation()`` carry an older one and are dropped),
    /// and whether ``close()`` ran (then nothing starts or begins again).
    private struct Handshake {
        var transport: DTLSTransport?
        var early: [[UInt8]] = []
        var generation = 0
        var closed = false
    }
    /// The inbound SRTP counters of the associations replaced so far (``snapshot`` adds them).
    private let retiredInbound = Mutex(SRTPCounters())
    private let sessions = Mutex<(outbound: SRTPSession, inbound: SRTPSession)?>(nil)
    private let counters = Mutex(TransportCounters())
    /// Protected datagrams from other threads waiting for the loop thread, and whether a
    /// drain is queued there.
    private let outbound = Mutex<(datagrams: [[UInt8]], drainQueued: Bool)>(([], false))
    /// Rings the loop thread to drain `outbound` (made at start; without one, a drain is
    /// queued with ``EventLoop/async(_:)``).
    private let doorbell = Mutex<Doorbell?>(nil)
    /// Most protected datagrams waiting for the loop thread (about 2.4 MB of 1,200-byte
    /// packets, several seconds of video); more are dropped and counted in `sendFailures`.
    public static let maximumQueuedDatagrams = 2_048
    private let send: @Sendable ([UInt8]) -> Bool
    private let certificate: Certificate
    private let loop: EventLoop
    /// The connection's name in log lines (`peer load`: `load.17`); nil: none.
    public let logTag: String?
    private let onState: @Sendable (DTLSTransportState, DTLSError?, Int) -> Void
    private let onRTP: @Sendable ([UInt8]) -> Void
    private let onRTCP: @Sendable ([UInt8]) -> Void
    /// Where application data (SCTP packets, RFC 8261) goes, and what came before a
    /// handler was set (at most ``maximumEarlyApplicationData`` records).
    /// (The handler sits in a class: a closure stored in a `Mutex`'s value is re-wrapped in
    /// a reabstraction thunk at every `withLock`, a chain that grew with every record.)
    private let applicationData = Mutex<(handler: ApplicationDataHandler?, early: [[UInt8]])>((nil, []))
    /// Most application data records kept before a handler is set (the peer's SCTP INIT
    /// and what follows it, when its DTLS connected first).
    public static let maximumEarlyApplicationData = 64
    /// From DTLS connected until the peer's first SRTP or SRTCP packet: whether it may
    /// still lack our last handshake flight (``DTLSTransport/peerIsDone()``); loop thread.
    private let peerMayLackLastFlight = Atomic<Bool>(false)
    /// Test hook: returns true for an incoming datagram to drop before it is processed
    /// (the loss injector of the NACK tests). Set before media starts.
    public let dropInbound: (@Sendable ([UInt8]) -> Bool)?
    /// Test hook: runs on the loop thread when an association connected, between making its
    /// SRTP sessions and installing them (to widen that window for the tests of a renewal
    /// meanwhile).
    let beforeSessionsInstalled = Mutex<(@Sendable () -> Void)?>(nil)

    /// Bytes and packets through the transport, for `transport` and `candidate-pair` stats.
    public struct TransportCounters: Sendable {
        /// Datagram bytes and datagrams sent (after protection) and received (before it).
        public var bytesSent = 0, bytesReceived = 0, packetsSent = 0, packetsReceived = 0
        /// SRTP/SRTCP protect or unprotect failures; inbound datagrams dropped by
        /// ``DtlsSrtpTransport/dropInbound``; datagrams `send` refused.
        public var srtpFailures = 0, dropped = 0, sendFailures = 0
        /// Inbound datagrams (past libnice, which drops those from unknown sources) that
        /// are neither DTLS nor RTP/RTCP by RFC 7983's first byte: STUN libnice did not
        /// take, TURN ChannelData, or garbage.
        public var unknownDropped = 0
        /// The inbound SRTP session's failures by kind (all of them are in `srtpFailures`).
        public var inboundSRTP = SRTPCounters()
        /// Received datagrams dropped here, by reason (counted where they are dropped, so
        /// they outlive the SRTP sessions).
        public var inboundDrops = InboundDrops()
    }

    /// Received datagrams the transport dropped, by reason; all plain counts.
    public struct InboundDrops: Sendable, Equatable {
        /// SRTP/SRTCP whose authentication tag did not verify (`srtp_err_status_auth_fail`).
        public var authFailures = 0
        /// SRTP/SRTCP replays: an index already seen (`srtp_err_status_replay_fail`) or older
        /// than the replay window (`srtp_err_status_replay_old`, RFC 3711 §3.3.2).
        public var replays = 0
        /// SRTP/SRTCP that could not be unprotected otherwise: too short for its header or
        /// tag, or another libsrtp status.
        public var malformed = 0
        /// SRTP/SRTCP that came before the DTLS handshake gave the keys (the peer's
        /// handshake finished first) or after close, and DTLS records before ours started other than a ClientHello or beyond
        /// the 16 kept.
        public var early = 0

        /// No drops.
        public init() {}

        /// Counts one failed unprotect by libsrtp's status.
        mutating func count(_ error: SRTPError) {
            switch error {
            case .libsrtp(_, .authFail): authFailures += 1
            case .libsrtp(_, .replayFail), .libsrtp(_, .replayOld): replays += 1
            default: malformed += 1
            }
        }
    }

    /// Creates the transport; nothing happens before ``start(role:remoteFingerprints:roundTripMs:)``.
    /// - Parameters:
    ///   - send: sends one datagram on the ICE transport's selected pair (any thread);
    ///     false when it could not.
    ///   - certificate: our DTLS certificate (its fingerprint is in our SDP).
    ///   - loop: the event loop the DTLS retransmission timers run on.
    ///   - dropInbound: test hook, true for an incoming datagram to drop unprocessed.
    ///   - onState: DTLS state changes (and the error of a failure), on the loop thread, with
    ///     the generation of the association they are about (0 for the first, then what
    ///     ``beginNewAssociation()`` returned): one from an association replaced meanwhile
    ///     carries an older one, for the owner to ignore.
    ///   - onRTP, onRTCP: each unprotected RTP packet and RTCP compound, on the loop thread.
    ///   - logTag: the connection's name in the DTLS log lines (nil: none).
    public init(send: @escaping @Sendable ([UInt8]) -> Bool, certificate: Certificate, loop: EventLoop,
                dropInbound: (@Sendable ([UInt8]) -> Bool)? = nil,
                onState: @escaping @Sendable (DTLSTransportState, DTLSError?, Int) -> Void,
                onRTP: @escaping @Sendable ([UInt8]) -> Void,
                onRTCP: @escaping @Sendable ([UInt8]) -> Void, logTag: String? = nil) {
        self.logTag = logTag
        self.send = send
        self.certificate = certificate
        self.loop = loop
        self.dropInbound = dropInbound
        self.onState = onState
        self.onRTP = onRTP
        self.onRTCP = onRTCP
        // libsrtp's NSS set-up (~4 ms) while ICE runs, not when DTLS has connected.
        DispatchQueue.global(qos: .userInitiated).async { SRTPSession.prepare() }
    }

    /// Creates the DTLS association with our negotiated role and the remote
    /// fingerprints and starts the handshake (the client sends its ClientHello; the
    /// server waits). Call once ICE is connected. A second call for the same association
    /// does nothing (after ``beginNewAssociation()`` it starts the new one).
    /// - Parameter roundTripMs: the round trip the ICE checks saw, ms (`IceAgent.roundTripMs`),
    ///   from which a lost handshake flight is sent again (``DTLSRetransmissionTimer``:
    ///   twice it, at least 50 ms); nil: unknown, 100 ms.
    /// - Returns: true when it started the handshake; false when it dropped this start —
    ///   the association was started already, was replaced by ``beginNewAssociation()``
    ///   while this call ran, or the transport is closed — so that a caller that claimed the
    ///   start can undo its claim.
    /// - Throws: ``DTLSError/openSSL(step:reason:)`` when OpenSSL cannot be set up.
    @discardableResult
    public func start(role: DTLSRole, remoteFingerprints: [(algorithm: String, hex: String)],
                      roundTripMs: Double? = nil) throws(DTLSError) -> Bool {
        guard let generation = dtls.withLock({ d in d.closed || d.transport != nil ? nil : d.generation }) else { return false }
        let transport = try DTLSTransport(
            role: role, certificate: certificate, remoteFingerprints: remoteFingerprints,
            send: { [weak self] datagram in self?.sendRaw(datagram) }, loop: loop,
            onStateChange: { [weak self] state in self?.dtlsStateChanged(state, generation: generation) },
            onApplicationData: { [weak self] record in self?.applicationDataArrived(record, generation: generation) }, logTag: logTag)
        let pending: [[UInt8]]? = dtls.withLock { d in
            // Started already, replaced or closed meanwhile: this one is dropped.
            guard !d.closed, d.transport == nil, d.generation == generation else { return nil }
            d.transport = transport
            defer { d.early = [] }
            return d.early
        }
        guard let pending else { return false }
        doorbell.withLock { bell in
            if bell == nil { bell = try? Doorbell(loop: loop, priority: Self.drainPriority) { [weak self] in self?.drainOutbound() } }
        }
        Log.write(.debug, "dtls", tag: logTag, "ICE checks' round trip \(roundTripMs.map { "\(Int($0.rounded())) ms" } ?? "unknown")")
        transport.start(retransmission: DTLSRetransmissionTimer(roundTripMs: roundTripMs))
        for record in pending { transport.receive(record) }
        return true
    }

    /// Replaces the DTLS association with a new one, not started yet (RFC 8842 §5, RFC
    /// 8829 §5.11: the peer came back with a new certificate, through an ICE restart):
    /// the old handshake and its SRTP sessions are dropped — without close_notify, whose
    /// peer is gone and whose path now leads to the new one — and so are the DTLS records
    /// kept for a start, the application data handler and records kept for one, and the
    /// datagrams protected with the old keys still queued for the loop. The inbound SRTP
    /// counters so far stay in ``snapshot``. Until ``start(role:remoteFingerprints:)``
    /// starts the new handshake (and it connects), RTP and RTCP are neither sent nor taken.
    /// After ``close()`` it does nothing (a closed transport stays closed).
    /// - Returns: the new association's generation, which its state changes carry
    ///   (`onState`); after close, the closed one's.
    @discardableResult
    public func beginNewAssociation() -> Int {
        let (old, generation, closed) = dtls.withLock { d -> (DTLSTransport?, Int, Bool) in
            guard !d.closed else { return (nil, d.generation, true) }
            let old = d.transport
            d = Handshake(generation: d.generation + 1)
            return (old, d.generation, false)
        }
        guard !closed else { return generation }
        if let inbound = sessions.withLock({ s in defer { s = nil }; return s?.inbound }) {
            let final = inbound.counters
            retiredInbound.withLock { $0.add(final) }
        }
        applicationData.withLock { $0 = (nil, []) }
        outbound.withLock { $0.datagrams = [] }
        peerMayLackLastFlight.store(false, ordering: .relaxed)
        _ = old  // let go here: its deinit cancels its retransmission timer; nothing is sent
        return generation
    }

    /// Sets where the peer's application data records go (loop thread): those that came
    /// before go there first, in order.
    public func setApplicationDataHandler(_ handler: @escaping @Sendable ([UInt8]) -> Void) {
        let early = applicationData.withLock { a in
            a.handler = ApplicationDataHandler(body: handler)
            defer { a.early = [] }
            return a.early
        }
        for record in early { handler(record) }
    }

    /// Sends one application data record (an SCTP packet) over DTLS, on the loop thread;
    /// false before DTLS is connected or when OpenSSL refused it.
    @discardableResult
    public func sendApplicationData(_ record: [UInt8]) -> Bool {
        handshake?.write(record) ?? false
    }

    private func applicationDataArrived(_ record: [UInt8], generation: Int) {
        guard dtls.withLock({ $0.generation }) == generation else { return }  // a replaced association's
        let handler = applicationData.withLock { a -> ApplicationDataHandler? in
            if a.handler == nil, a.early.count < Self.maximumEarlyApplicationData { a.early.append(record) }
            return a.handler
        }
        handler?.body(record)
    }

    /// The DTLS state (`new` before start).
    public var state: DTLSTransportState { handshake?.state ?? .new }
    /// The negotiated SRTP profile, once connected.
    public var srtpProfile: SRTPProfile? { handshake?.srtpProfile }
    /// Why DTLS failed, if it did.
    public var error: DTLSError? { handshake?.error }
    /// A snapshot of the byte and packet counters.
    public var snapshot: TransportCounters {
        var c = counters.withLock { $0 }
        if let inbound = sessions.withLock({ $0?.inbound }) { c.inboundSRTP = inbound.counters }
        c.inboundSRTP.add(retiredInbound.withLock { $0 })
        return c
    }
    /// The DTLS role, once started.
    public var role: DTLSRole? { handshake?.role }
    /// The DTLS handshake, once started.
    private var handshake: DTLSTransport? { dtls.withLock { $0.transport } }

    /// Handles one datagram from ICE (loop thread).
    public func receive(_ datagram: [UInt8]) {
        if let dropInbound, dropInbound(datagram) {
            counters.withLock { $0.dropped += 1 }
            return
        }
        counters.withLock { $0.bytesReceived += datagram.count; $0.packetsReceived += 1 }
        switch Demultiplexer.classify(datagram) {
        case .dtls:
            // The peer's ClientHello may come before we start (its ICE connected first):
            // keep up to 16 records and feed them at start, rather than wait ~1 s for a resend.
            // Only a datagram that opens a handshake is kept — its first record the peer's
            // ClientHello (RFC 6347 §4.1, §4.2.2) — not what an association that was
            // replaced still sends (the peer's last flight again: a NewSessionTicket, a
            // ChangeCipherSpec and an epoch-1 Finished), which OpenSSL would buffer as
            // messages of the new handshake and fail on (decrypt_error).
            let opensHandshake = Self.opensHandshake(datagram)
            let (transport, kept): (DTLSTransport?, Bool) = dtls.withLock { d in
                guard d.transport == nil else { return (d.transport, true) }
                guard opensHandshake, d.early.count < 16 else { return (nil, false) }
                d.early.append(datagram)
                return (nil, true)
            }
            if !kept { counters.withLock { $0.inboundDrops.early += 1 } }
            transport?.receive(datagram)
        case .rtp:
            guard let inbound = sessions.withLock({ $0?.inbound }) else { return counters.withLock { $0.inboundDrops.early += 1 } }
            do {
                let packet = try inbound.unprotect(srtp: datagram)
                if peerMayLackLastFlight.load(ordering: .relaxed) { peerShowedItIsDone() }
                onRTP(packet)
            } catch {
                counters.withLock { $0.srtpFailures += 1; $0.inboundDrops.count(error) }
            }
        case .rtcp:
            guard let inbound = sessions.withLock({ $0?.inbound }) else { return counters.withLock { $0.inboundDrops.early += 1 } }
            do {
                let packet = try inbound.unprotectRTCP(datagram)
                if peerMayLackLastFlight.load(ordering: .relaxed) { peerShowedItIsDone() }
                onRTCP(packet)
            } catch {
                counters.withLock { $0.srtpFailures += 1; $0.inboundDrops.count(error) }
            }
        case .stun, .turnChannel, .unknown:
            // libnice consumed the STUN it could use; anything else is not ours.
            counters.withLock { $0.unknownDropped += 1 }
        }
    }

    /// Protects one RTP packet and sends it (on the loop thread: at once; from another
    /// thread: queued for the loop, in order). False before DTLS is connected, after close,
    /// when protecting failed, or when the datagram could not be sent or queued (counted).
    @discardableResult
    public func sendRTP(_ rtp: [UInt8]) -> Bool {
        guard let session = sessions.withLock({ $0?.outbound }) else { return false }
        guard let srtp = try? session.protect(rtp: rtp) else {
            counters.withLock { $0.srtpFailures += 1 }
            return false
        }
        return sendFromAnyThread(srtp)
    }

    /// Protects the RTP packet in `packet` in place (``SRTPSession/protect(rtpInPlace:)``:
    /// no copy when it has room for the trailer) and sends it, as ``sendRTP(_:)``; false as
    /// there. For senders that build each packet in one reused buffer (the media hub's
    /// `SharedFrameStream`): on the loop thread the datagram goes out before this returns.
    @discardableResult
    public func sendRTP(inPlace packet: inout [UInt8]) -> Bool {
        guard let session = sessions.withLock({ $0?.outbound }) else { return false }
        guard (try? session.protect(rtpInPlace: &packet)) != nil else {
            counters.withLock { $0.srtpFailures += 1 }
            return false
        }
        return sendFromAnyThread(packet)
    }

    /// Protects one RTCP compound packet and sends it; false as for ``sendRTP(_:)``.
    @discardableResult
    public func sendRTCP(_ rtcp: [UInt8]) -> Bool {
        guard let session = sessions.withLock({ $0?.outbound }) else { return false }
        guard let srtcp = try? session.protectRTCP(rtcp) else {
            counters.withLock { $0.srtpFailures += 1 }
            return false
        }
        return sendFromAnyThread(srtcp)
    }

    /// Sends `datagram` now on the loop thread; from another thread queues it for the loop
    /// (one drain queued at a time). False when it was not sent or the queue is full.
    private func sendFromAnyThread(_ datagram: [UInt8]) -> Bool {
        if loop.isCurrent {
            drainOutbound(all: true)  // what other threads queued first, in order
            return sendRaw(datagram)
        }
        let (taken, queueDrain) = outbound.withLock { q -> (Bool, Bool) in
            guard q.datagrams.count < Self.maximumQueuedDatagrams else { return (false, false) }
            q.datagrams.append(datagram)
            defer { q.drainQueued = true }
            return (true, !q.drainQueued)
        }
        guard taken else {
            counters.withLock { $0.sendFailures += 1 }
            return false
        }
        guard queueDrain else { return true }
        if let bell = doorbell.withLock({ $0 }) {
            bell.ring()
        } else if !loop.async({ [weak self] in self?.drainOutbound() }) {
            outbound.withLock { $0 = ([], false) }  // the loop is stopped: nothing will send them
            return false
        }
        return true
    }

    /// Most queued datagrams sent per doorbell ring: a key frame's burst (~85 packets at
    /// 720p) goes out in pieces, with timers, ICE, DTLS and received packets handled between.
    static let datagramsPerDrain = 16
    /// The drain's GLib priority: just after `G_PRIORITY_DEFAULT` (timers, sockets), so
    /// what is due on the loop runs before the rest of a burst is sent.
    static let drainPriority: Int32 = 1

    /// Sends what other threads queued, in order (loop thread): ``datagramsPerDrain`` at a
    /// time, ringing again for the rest; everything when `all`.
    private func drainOutbound(all: Bool = false) {
        let bell = doorbell.withLock { $0 }
        let (datagrams, more) = outbound.withLock { q -> ([[UInt8]], Bool) in
            guard !all, bell != nil, q.datagrams.count > Self.datagramsPerDrain else {
                defer { q = ([], false) }
                return (q.datagrams, false)
            }
            defer { q.datagrams.removeFirst(Self.datagramsPerDrain) }
            return (Array(q.datagrams.prefix(Self.datagramsPerDrain)), true)
        }
        for datagram in datagrams { sendRaw(datagram) }
        if more { bell?.ring() }
    }

    /// Sends what is still queued for the loop thread, then close_notify, and drops the
    /// SRTP keys (keeping the inbound session's counters for the final stats); nothing
    /// starts or begins on it afterwards. Waits for the loop thread (never call it from a
    /// thread the loop waits on). Idempotent.
    public func close() {
        // What other threads queued (the last media, our BYE) goes out before close_notify.
        loop.sync { drainOutbound(all: true) }
        doorbell.withLock { $0 }?.close()
        let handshake = dtls.withLock { d in
            d.closed = true
            return d.transport
        }
        handshake?.close()
        if let inbound = sessions.withLock({ s in defer { s = nil }; return s?.inbound }) {
            let final = inbound.counters
            counters.withLock { $0.inboundSRTP = final }
        }
    }

    @discardableResult
    private func sendRaw(_ datagram: [UInt8]) -> Bool {
        let sent = send(datagram)
        counters.withLock {
            if sent { $0.bytesSent += datagram.count; $0.packetsSent += 1 } else { $0.sendFailures += 1 }
        }
        return sent
    }

    /// True when `datagram`'s first DTLS record (RFC 6347 §4.1: type, version, epoch,
    /// sequence number, length; 13 bytes) is a handshake record (type 22) of epoch 0 whose
    /// message (§4.2.2: its type the first byte after the record header) is a ClientHello
    /// (1): the only thing that may come before our handshake has started.
    static func opensHandshake(_ datagram: [UInt8]) -> Bool {
        datagram.count > 13 && datagram[0] == 22 && datagram[3] == 0 && datagram[4] == 0 && datagram[13] == 1
    }

    /// The peer protected a packet with the keys of the handshake: it is done, and our
    /// last flight, if we sent it, need not go again (loop thread).
    private func peerShowedItIsDone() {
        peerMayLackLastFlight.store(false, ordering: .relaxed)
        handshake?.peerIsDone()
    }

    /// On the loop thread: makes the SRTP sessions when DTLS connects, then reports with the
    /// association's `generation` (only for the current association: a replaced one's is
    /// older). The sessions are installed only while the association is still the current
    /// one — checked again under the lock that ``beginNewAssociation()`` takes — so a
    /// replaced association that connects meanwhile never leaves its keys on the next one.
    private func dtlsStateChanged(_ state: DTLSTransportState, generation: Int) {
        guard let transport = dtls.withLock({ $0.generation == generation ? $0.transport : nil }) else { return }
        if state == .connected {
            guard let material = transport.keyingMaterial else {
                onState(.failed, .noSRTPProfile, generation)
                return
            }
            let isClient = transport.role == .client
            let local = material.local(isClient: isClient), remote = material.remote(isClient: isClient)
            do {
                let outbound = try SRTPSession(profile: material.profile, key: local.key, salt: local.salt, direction: .outbound)
                let inbound = try SRTPSession(profile: material.profile, key: remote.key, salt: remote.salt, direction: .inbound)
                beforeSessionsInstalled.withLock { $0 }?()
                let current = dtls.withLock { d -> Bool in
                    guard d.generation == generation, !d.closed else { return false }
                    sessions.withLock { $0 = (outbound, inbound) }
                    return true
                }
                guard current else { return }
                peerMayLackLastFlight.store(true, ordering: .relaxed)
            } catch {
                onState(.failed, .keyingMaterial(error), generation)
                return
            }
        }
        onState(state, transport.error, generation)
    }
}

/// Where a transport's application data goes (a class, so the closure is stored once).
private final class ApplicationDataHandler: Sendable {
    let body: @Sendable ([UInt8]) -> Void
    init(body: @escaping @Sendable ([UInt8]) -> Void) { self.body = body }
}
