import DTLS
import EventLoop
import ICE
import Synchronization

/// The W3C `RTCDtlsTransport` of a BUNDLE group: one DTLS-SRTP association
/// (RFC 5764) over the group's one ICE transport, with RTP and RTCP multiplexed
/// on it (RFC 5761, rtcp-mux).
///
/// Incoming datagrams are told apart by their first byte (RFC 7983): DTLS
/// records go to the handshake, SRTP and SRTCP are unprotected with the keys the
/// handshake exported and handed on. Outgoing RTP and RTCP are protected and sent
/// on the ICE transport's selected pair.
///
/// Threading: ``receive(_:)`` is called on the event-loop thread (where ICE
/// delivers datagrams) and `onRTP`/`onRTCP`/`onState` run there. ``sendRTP(_:)``
/// and ``sendRTCP(_:)`` may be called from any thread (libsrtp sessions lock,
/// libnice's send is thread-safe). The SRTP sessions are published behind a lock.
final class DtlsSrtpTransport: @unchecked Sendable {
    /// The DTLS handshake; nil until ``start(role:remoteFingerprints:)``.
    private let dtls = Mutex<DTLSTransport?>(nil)
    /// DTLS records that arrived before ``start(role:remoteFingerprints:)`` (guarded by `dtls`'s lock).
    private var early: [[UInt8]] = []
    private let sessions = Mutex<(outbound: SRTPSession, inbound: SRTPSession)?>(nil)
    private let counters = Mutex(TransportCounters())
    private let ice: IceAgent
    private let certificate: Certificate
    private let loop: EventLoop
    private let onState: @Sendable (DTLSTransportState, DTLSError?) -> Void
    private let onRTP: @Sendable ([UInt8]) -> Void
    private let onRTCP: @Sendable ([UInt8]) -> Void
    /// Test hook: returns true for an incoming datagram to drop before it is processed
    /// (the loss injector of the NACK tests). Set before media starts.
    let dropInbound: (@Sendable ([UInt8]) -> Bool)?

    /// Bytes and packets through the transport, for `transport` and `candidate-pair` stats.
    struct TransportCounters: Sendable {
        var bytesSent = 0, bytesReceived = 0, packetsSent = 0, packetsReceived = 0
        var srtpFailures = 0, dropped = 0, sendFailures = 0
        /// Inbound datagrams (past libnice, which drops those from unknown sources) that
        /// are neither DTLS nor RTP/RTCP by RFC 7983's first byte: STUN libnice did not
        /// take, TURN ChannelData, or garbage.
        var unknownDropped = 0
        /// The inbound SRTP session's failures by kind (all of them are in `srtpFailures`).
        var inboundSRTP = SRTPCounters()
    }

    /// Creates the transport over `ice`; nothing happens before ``start(role:remoteFingerprints:)``.
    init(ice: IceAgent, certificate: Certificate, loop: EventLoop,
         dropInbound: (@Sendable ([UInt8]) -> Bool)? = nil,
         onState: @escaping @Sendable (DTLSTransportState, DTLSError?) -> Void,
         onRTP: @escaping @Sendable ([UInt8]) -> Void,
         onRTCP: @escaping @Sendable ([UInt8]) -> Void) {
        self.ice = ice
        self.certificate = certificate
        self.loop = loop
        self.dropInbound = dropInbound
        self.onState = onState
        self.onRTP = onRTP
        self.onRTCP = onRTCP
    }

    /// Creates the DTLS association with our negotiated role and the remote
    /// fingerprints and starts the handshake (the client sends its ClientHello; the
    /// server waits). Call once ICE is connected. A second call does nothing.
    /// - Throws: ``DTLSError/openSSL(step:reason:)`` when OpenSSL cannot be set up.
    func start(role: DTLSRole, remoteFingerprints: [(algorithm: String, hex: String)]) throws(DTLSError) {
        let transport = try DTLSTransport(
            role: role, certificate: certificate, remoteFingerprints: remoteFingerprints,
            send: { [weak self] datagram in self?.sendRaw(datagram) }, loop: loop,
            onStateChange: { [weak self] state in self?.dtlsStateChanged(state) })
        let pending: [[UInt8]]? = dtls.withLock { current in
            guard current == nil else { return nil }  // started already: this one is dropped
            current = transport
            defer { early = [] }
            return early
        }
        guard let pending else { return }
        transport.start()
        for record in pending { transport.receive(record) }
    }

    /// The DTLS state (`new` before start).
    var state: DTLSTransportState { dtls.withLock { $0?.state } ?? .new }
    /// The negotiated SRTP profile, once connected.
    var srtpProfile: SRTPProfile? { dtls.withLock { $0?.srtpProfile } }
    /// Why DTLS failed, if it did.
    var error: DTLSError? { dtls.withLock { $0?.error } }
    /// A snapshot of the byte and packet counters.
    var snapshot: TransportCounters {
        var c = counters.withLock { $0 }
        if let inbound = sessions.withLock({ $0?.inbound }) { c.inboundSRTP = inbound.counters }
        return c
    }
    /// The DTLS role, once started.
    var role: DTLSRole? { dtls.withLock { $0?.role } }

    /// Handles one datagram from ICE (loop thread).
    func receive(_ datagram: [UInt8]) {
        if let dropInbound, dropInbound(datagram) {
            counters.withLock { $0.dropped += 1 }
            return
        }
        counters.withLock { $0.bytesReceived += datagram.count; $0.packetsReceived += 1 }
        switch Demultiplexer.classify(datagram) {
        case .dtls:
            // The peer's ClientHello may come before we start (its ICE connected first):
            // keep up to 16 records and feed them at start, rather than wait ~1 s for a resend.
            let transport: DTLSTransport? = dtls.withLock { current in
                if current == nil, early.count < 16 { early.append(datagram) }
                return current
            }
            transport?.receive(datagram)
        case .rtp:
            guard let inbound = sessions.withLock({ $0?.inbound }) else { return }
            do { onRTP(try inbound.unprotect(srtp: datagram)) } catch {
                counters.withLock { $0.srtpFailures += 1 }
            }
        case .rtcp:
            guard let inbound = sessions.withLock({ $0?.inbound }) else { return }
            do { onRTCP(try inbound.unprotectRTCP(datagram)) } catch {
                counters.withLock { $0.srtpFailures += 1 }
            }
        case .stun, .turnChannel, .unknown:
            // libnice consumed the STUN it could use; anything else is not ours.
            counters.withLock { $0.unknownDropped += 1 }
        }
    }

    /// Protects and sends one RTP packet; false before DTLS is connected, after close,
    /// or when protecting or sending failed (counted). Any thread.
    @discardableResult
    func sendRTP(_ rtp: [UInt8]) -> Bool {
        guard let outbound = sessions.withLock({ $0?.outbound }) else { return false }
        guard let srtp = try? outbound.protect(rtp: rtp) else {
            counters.withLock { $0.srtpFailures += 1 }
            return false
        }
        return sendRaw(srtp)
    }

    /// Protects and sends one RTCP compound packet; false as for ``sendRTP(_:)``.
    @discardableResult
    func sendRTCP(_ rtcp: [UInt8]) -> Bool {
        guard let outbound = sessions.withLock({ $0?.outbound }) else { return false }
        guard let srtcp = try? outbound.protectRTCP(rtcp) else {
            counters.withLock { $0.srtpFailures += 1 }
            return false
        }
        return sendRaw(srtcp)
    }

    /// Sends close_notify and drops the SRTP keys (keeping the inbound session's
    /// counters for the final stats). Idempotent.
    func close() {
        dtls.withLock { $0 }?.close()
        if let inbound = sessions.withLock({ s in defer { s = nil }; return s?.inbound }) {
            let final = inbound.counters
            counters.withLock { $0.inboundSRTP = final }
        }
    }

    @discardableResult
    private func sendRaw(_ datagram: [UInt8]) -> Bool {
        let sent = ice.send(datagram)
        counters.withLock {
            if sent { $0.bytesSent += datagram.count; $0.packetsSent += 1 } else { $0.sendFailures += 1 }
        }
        return sent
    }

    /// On the loop thread: makes the SRTP sessions when DTLS connects, then reports.
    private func dtlsStateChanged(_ state: DTLSTransportState) {
        guard let transport = dtls.withLock({ $0 }) else { return }
        if state == .connected {
            guard let material = transport.keyingMaterial else {
                onState(.failed, .noSRTPProfile)
                return
            }
            let isClient = transport.role == .client
            let local = material.local(isClient: isClient), remote = material.remote(isClient: isClient)
            do {
                let outbound = try SRTPSession(profile: material.profile, key: local.key, salt: local.salt, direction: .outbound)
                let inbound = try SRTPSession(profile: material.profile, key: remote.key, salt: remote.salt, direction: .inbound)
                sessions.withLock { $0 = (outbound, inbound) }
            } catch {
                onState(.failed, .keyingMaterial(error))
                return
            }
        }
        onState(state, transport.error)
    }
}
