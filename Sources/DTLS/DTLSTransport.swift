// DTLSTransport: a DTLS 1.2 handshake on OpenSSL memory BIOs over a datagram send closure (RFC 6347, use_srtp RFC 5764 §4.1), with retransmission timers on the event loop.
import COpenSSL
import EventLoop
import Synchronization

/// Errors of ``DTLSTransport``.
public enum DTLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// OpenSSL call `step` failed; `reason` is OpenSSL's error queue text.
    case openSSL(step: String, reason: String)
    /// The peer's certificate digest matches none of the expected fingerprints.
    /// `expected` are the (algorithm, hex) pairs from the remote SDP, `actual` the
    /// peer certificate's digests for those algorithms.
    case fingerprintMismatch(expected: [String], actual: [String])
    /// No fingerprint was given, or none with a supported algorithm (sha-256/384/512).
    case noUsableFingerprint([String])
    /// The peer did not present a certificate.
    case noPeerCertificate
    /// The handshake finished without an SRTP profile (the peer did not offer `use_srtp`).
    case noSRTPProfile
    /// The negotiated SRTP profile name is not one of ``SRTPProfile``.
    case unknownSRTPProfile(String)
    /// The exported keying material did not split (wrong length).
    case keyingMaterial(SRTPError)

    /// A sentence naming the failing step and the reason.
    public var description: String {
        switch self {
        case let .openSSL(step, reason): "DTLS: OpenSSL \(step) failed: \(reason)"
        case let .fingerprintMismatch(expected, actual):
            "DTLS: peer certificate fingerprint \(actual.joined(separator: ", ")) matches none of \(expected.joined(separator: ", "))"
        case let .noUsableFingerprint(given):
            "DTLS: no usable remote fingerprint (sha-256/384/512) among [\(given.joined(separator: ", "))]"
        case .noPeerCertificate: "DTLS: the peer presented no certificate"
        case .noSRTPProfile: "DTLS: no SRTP profile negotiated (use_srtp)"
        case let .unknownSRTPProfile(name): "DTLS: unsupported negotiated SRTP profile \(name)"
        case let .keyingMaterial(error): "DTLS: \(error)"
        }
    }
}

/// DTLS 1.2 (RFC 6347) with the DTLS-SRTP extension (RFC 5764) over any datagram
/// transport, built on OpenSSL with BIOs in memory: incoming datagrams are written into
/// a memory BIO (one at a time), outgoing records are caught datagram by datagram by a
/// small in-memory sink BIO and handed to `send`.
///
/// Threading rule: every OpenSSL call and all mutable transport state are confined to
/// `loop`'s thread. The public methods may be called from any thread; they hop onto the
/// loop. The observable results (``state``, ``error``, ``srtpProfile``,
/// ``keyingMaterial``) are published behind one lock and may be read from any thread.
/// `send` and `onStateChange` are called on the loop thread, never under the lock.
///
/// Lifetime: the transport holds itself only weakly in timers and loop closures; keep
/// a reference until ``close()``.
// @unchecked: the OpenSSL objects and loop state are confined to the loop thread, where OpenSSL's C callbacks (verify, sink BIO) reach them.
public final class DTLSTransport: @unchecked Sendable {
    /// The role given at init.
    public let role: DTLSRole
    /// The connection's name in log lines (`peer load`: `load.17`); nil: none.
    public let logTag: String?
    /// The SRTP profiles offered or accepted, most preferred first.
    public let srtpProfiles: [SRTPProfile]
    /// The path MTU in bytes the handshake records are cut to, and the most bytes of
    /// records one outgoing datagram carries (1200).
    public static let mtu = 1200

    /// OpenSSL's info callback (`SSL_set_info_callback`): each handshake state it enters
    /// ("SSLv3/TLS write client hello") and each alert, as `dtls` debug lines.
    static let infoCallback: @convention(c) (OpaquePointer?, Int32, Int32) -> Void = { ssl, where_, ret in
        let side = where_ & SSL_ST_CONNECT != 0 ? "client" : (where_ & SSL_ST_ACCEPT != 0 ? "server" : "")
        // The transport (ex data 0, set before the handshake starts) names the connection.
        let tag = ssl.flatMap { SSL_get_ex_data($0, 0) }.flatMap { Unmanaged<DTLSTransport>.fromOpaque($0).takeUnretainedValue().logTag }
        if where_ & SSL_CB_ALERT != 0 {
            let desc = SSL_alert_desc_string_long(ret).map { String(cString: $0) } ?? "?"
            Log.write(.debug, "dtls", tag: tag, "alert \(where_ & SSL_CB_READ != 0 ? "received" : "sent"): \(desc)")
        } else if where_ & SSL_CB_LOOP != 0 || where_ & SSL_CB_HANDSHAKE_DONE != 0 {
            let state = SSL_state_string_long(ssl).map { String(cString: $0) } ?? "?"
            Log.write(.debug, "dtls", tag: tag, where_ & SSL_CB_HANDSHAKE_DONE != 0 ? "handshake done" : "\(side): \(state)")
        }
    }
    /// How many times the handshake's last flight, when we sent it, goes again while the
    /// peer shows nothing of being done, on the handshake's timer (50, 100, 200 ms at the
    /// least). RFC 6347 §4.2.4 resends it only when the peer resends its own, so a lost
    /// last flight cost the peer's doubling timer round after round (DTLS 1.3, RFC 9147,
    /// acknowledges it instead). The same datagrams go: a peer that has them drops them
    /// as replays (RFC 6347 §4.1.2.6).
    public static let lastFlightResends = 3
    /// The largest application data record read, bytes (TLS's 2^14 plaintext limit).
    static let maximumRecord = 16_384
    /// Label for `SSL_export_keying_material` (RFC 5764 §4.2).
    public static let exporterLabel = "EXTRACTOR-dtls_srtp"

    private let loop: EventLoop
    private let send: @Sendable ([UInt8]) -> Void
    private let onStateChange: @Sendable (DTLSTransportState) -> Void
    private let onApplicationData: @Sendable ([UInt8]) -> Void
    private let remoteFingerprints: [(algorithm: String, hex: String)]

    // Confined to the loop thread.
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private var outbox: [[UInt8]] = []
    /// Where application data records are read (one record at a time, reused).
    private var readBuffer = [UInt8](repeating: 0, count: DTLSTransport.maximumRecord)
    /// Datagrams given from other threads and not yet read on the loop.
    private let queuedReceives = Atomic<Int>(0)
    private var timer: UInt32 = 0
    /// The first wait of the handshake's retransmission timer, ms: set by
    /// ``start(retransmission:)`` on the caller's thread, before the records that came
    /// early are fed (a server may start on them), lowered by the handshake's own round
    /// trips; read by OpenSSL's timer callback (loop thread).
    private let initialTimeoutMs = Atomic<UInt32>(DTLSRetransmissionTimer.defaultInitialMs)
    private var retransmission: DTLSRetransmissionTimer {
        DTLSRetransmissionTimer(initialMs: initialTimeoutMs.load(ordering: .relaxed))
    }
    /// When our last flight went out, while sent only once (Karn's rule); the round trip to
    /// the datagram being read, taken if it starts our next flight (``nextTimeoutUs``).
    private var flightSentAt: ContinuousClock.Instant?
    private var pendingRoundTrip: Duration?
    /// Our last flight's datagrams (the server's), sent again until ``peerIsDone()``; how
    /// often they went again; whether ``flush()`` is sending that flight now.
    private var lastFlight: [[UInt8]] = []
    private var lastFlightResent = 0
    private var capturingLastFlight = false
    private var handshakeDone = false
    /// Set by the verify callback when the peer's certificate matches no fingerprint.
    private var verifyFailure: DTLSError?
    private var loopState: DTLSTransportState = .new

    private struct Published {
        var state: DTLSTransportState = .new
        var error: DTLSError?
        var profile: SRTPProfile?
        var material: SRTPKeyingMaterial?
    }
    private let published = Mutex(Published())

    /// Creates a transport; nothing is sent before ``start()``.
    /// - Parameters:
    ///   - role: ``DTLSRole/client`` or ``DTLSRole/server`` (from the negotiated `a=setup`).
    ///   - certificate: our certificate and key, presented to the peer.
    ///   - remoteFingerprints: (algorithm, hex) pairs from the remote SDP `a=fingerprint`,
    ///     algorithm "sha-256", "sha-384" or "sha-512", hex with or without colons, any case.
    ///     The peer certificate must match at least one supported pair.
    ///   - srtpProfiles: SRTP profiles in preference order (`use_srtp`); repeats are dropped.
    ///   - send: called on the loop thread with each outgoing datagram.
    ///   - loop: the event loop the transport is confined to (timers, callbacks).
    ///   - onStateChange: called on the loop thread with each new state.
    ///   - onApplicationData: called on the loop thread with each application data record
    ///     the peer sent once connected (SCTP packets, RFC 8261).
    ///   - logTag: the connection's name in the transport's log lines (nil: none).
    /// - Throws: ``DTLSError/openSSL(step:reason:)`` when setting up the OpenSSL context fails.
    public init(role: DTLSRole, certificate: Certificate, remoteFingerprints: [(algorithm: String, hex: String)],
                srtpProfiles: [SRTPProfile] = [.aeadAes128Gcm, .aes128CmSha1_80],
                send: @escaping @Sendable ([UInt8]) -> Void, loop: EventLoop,
                onStateChange: @escaping @Sendable (DTLSTransportState) -> Void = { _ in },
                onApplicationData: @escaping @Sendable ([UInt8]) -> Void = { _ in }, logTag: String? = nil) throws(DTLSError) {
        self.role = role
        self.logTag = logTag
        var unique: [SRTPProfile] = []
        for profile in srtpProfiles where !unique.contains(profile) { unique.append(profile) }
        self.srtpProfiles = unique  // OpenSSL refuses a list naming a profile twice
        self.remoteFingerprints = remoteFingerprints
        self.send = send
        self.loop = loop
        self.onStateChange = onStateChange
        self.onApplicationData = onApplicationData

        guard let ctx = SSL_CTX_new(DTLS_method()) else { throw .openSSL(step: "SSL_CTX_new", reason: lastError()) }
        func fail(_ step: String) -> DTLSError {
            let error = DTLSError.openSSL(step: step, reason: lastError())
            SSL_CTX_free(ctx)
            return error
        }
        guard SSL_CTX_use_certificate(ctx, certificate.x509) == 1 else { throw fail("SSL_CTX_use_certificate") }
        guard SSL_CTX_use_PrivateKey(ctx, certificate.privateKey) == 1 else { throw fail("SSL_CTX_use_PrivateKey") }
        guard SSL_CTX_check_private_key(ctx) == 1 else { throw fail("SSL_CTX_check_private_key") }
        // SSL_CTX_set_min/max_proto_version are macros.
        guard SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(DTLS1_2_VERSION), nil) == 1,
              SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(DTLS1_2_VERSION), nil) == 1 else {
            throw fail("SSL_CTX_set_min/max_proto_version(DTLS 1.2)")
        }
        // Self-signed certificates are expected: the chain is not checked, the peer's
        // certificate is compared with the SDP fingerprints right in the handshake, so a
        // mismatch sends a bad_certificate alert and fails both sides.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, store in
            guard let store, X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
            guard let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
                  let owner = SSL_get_ex_data(OpaquePointer(ssl), 0),
                  let certificate = X509_STORE_CTX_get_current_cert(store) else { return 1 }
            let transport = Unmanaged<DTLSTransport>.fromOpaque(owner).takeUnretainedValue()
            return transport.verifyPeer(certificate) ? 1 : 0
        }
        let names = unique.map(\.openSSLName).joined(separator: ":")
        // Returns 0 on success, unlike most of OpenSSL.
        guard !unique.isEmpty, SSL_CTX_set_tlsext_use_srtp(ctx, names) == 0 else {
            throw fail("SSL_CTX_set_tlsext_use_srtp(\(names))")
        }
        guard let ssl = SSL_new(ctx) else { throw fail("SSL_new") }
        guard let rbio = BIO_new(BIO_s_mem()), let method = datagramSinkMethod, let wbio = BIO_new(method) else {
            SSL_free(ssl)
            throw fail("BIO_new")
        }
        // An empty memory BIO reports "retry" rather than EOF (BIO_set_mem_eof_return is a macro).
        BIO_ctrl(rbio, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, rbio, wbio)
        // Our datagrams go through a sink that cannot tell the MTU: fix it at 1200.
        SSL_set_options(ssl, UInt64(1) << 12)  // SSL_OP_NO_QUERY_MTU
        SSL_set_options(ssl, UInt64(1) << 30)  // SSL_OP_NO_RENEGOTIATION: the checked certificate stays
        SSL_ctrl(ssl, SSL_CTRL_SET_MTU, Self.mtu, nil)  // SSL_set_mtu
        SSL_ctrl(ssl, DTLS_CTRL_SET_LINK_MTU, Self.mtu, nil)  // DTLS_set_link_mtu
        // Retransmission as browsers do it (DTLSRetransmissionTimer; RFC 6347 §4.2.4.1
        // suggests 1 s up to 60 s). OpenSSL passes the previous value, 0 for a flight's
        // first, on the loop thread (inside SSL_do_handshake or DTLSv1_handle_timeout).
        DTLS_set_timer_cb(ssl) { ssl, previousUs in
            guard let ssl, let owner = SSL_get_ex_data(ssl, 0) else {
                return DTLSRetransmissionTimer(roundTripMs: nil).nextTimeoutUs(afterUs: previousUs)
            }
            let transport = Unmanaged<DTLSTransport>.fromOpaque(owner).takeUnretainedValue()
            return transport.nextTimeoutUs(afterUs: previousUs)
        }
        // --log-level debug: each handshake step and alert, as OpenSSL names them.
        if Log.enabled(.debug) { SSL_set_info_callback(ssl, DTLSTransport.infoCallback) }
        if role == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        self.context = ctx
        self.ssl = ssl
        self.readBIO = rbio
        BIO_set_data(wbio, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())  // for the verify callback
        BIO_set_init(wbio, 1)
    }

    deinit {
        if timer != 0 { loop.cancelTimer(timer) }
        SSL_free(ssl)  // frees both BIOs
        SSL_CTX_free(context)
    }

    // MARK: Published results

    /// The current state (any thread).
    public var state: DTLSTransportState { published.withLock { $0.state } }
    /// Why the transport failed, when ``state`` is ``DTLSTransportState/failed``.
    public var error: DTLSError? { published.withLock { $0.error } }
    /// The negotiated SRTP profile, once ``DTLSTransportState/connected``.
    public var srtpProfile: SRTPProfile? { published.withLock { $0.profile } }
    /// The exported SRTP keying material (RFC 5764 §4.2), once ``DTLSTransportState/connected``.
    public var keyingMaterial: SRTPKeyingMaterial? { published.withLock { $0.material } }

    // MARK: Public operations

    /// Starts the handshake: the client sends its ClientHello, the server waits for one.
    /// - Parameter retransmission: when a flight that got no answer is sent again
    ///   (RFC 6347 §4.2.4.1): from the round trip the connection's ICE checks saw,
    ///   ``DTLSRetransmissionTimer/init(roundTripMs:)``; by default 100 ms, doubling.
    ///   Taken at once, so datagrams given after this call (a server starts on the
    ///   first) run on it.
    /// Starts nothing unless the state is ``DTLSTransportState/new``.
    public func start(retransmission: DTLSRetransmissionTimer = DTLSRetransmissionTimer(roundTripMs: nil)) {
        initialTimeoutMs.store(retransmission.initialMs, ordering: .relaxed)
        loop.async { [weak self] in
            guard let self else { return }
            Log.write(.debug, "dtls", tag: logTag, "\(self.role == .client ? "client" : "server") start, resends \(retransmission)")
            guard self.loopState == .new else { return }
            self.setState(.connecting)
            self.drive()
        }
    }

    /// Feeds one incoming DTLS datagram (first byte 20–63, RFC 7983) from the peer.
    /// A server that was not started yet starts on its first datagram.
    /// On the loop thread (where ICE hands datagrams over) it is read at once, unless
    /// datagrams given from other threads are still waiting for the loop (order is kept).
    public func receive(_ datagram: [UInt8]) {
        if loop.isCurrent, queuedReceives.load(ordering: .acquiring) == 0 {
            take(datagram)
            return
        }
        queuedReceives.add(1, ordering: .releasing)
        let queued = loop.async { [weak self] in
            guard let self else { return }
            self.queuedReceives.subtract(1, ordering: .releasing)
            self.take(datagram)
        }
        if !queued { queuedReceives.subtract(1, ordering: .releasing) }
    }

    /// One incoming datagram into OpenSSL, then the handshake or the records it completes
    /// (loop thread).
    private func take(_ datagram: [UInt8]) {
        switch loopState {
        case .new: setState(.connecting)
        case .connecting, .connected: break
        case .closed, .failed: return
        }
        guard !datagram.isEmpty, datagram.count <= Int(Int32.max) else { return }
        let written = datagram.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(datagram.count) else {
            fail(.openSSL(step: "BIO_write", reason: lastError()))
            return
        }
        if !handshakeDone, let sent = flightSentAt { pendingRoundTrip = ContinuousClock.now - sent }
        drive()
        pendingRoundTrip = nil
    }

    /// The wait OpenSSL arms next (its timer callback, loop thread). A flight that starts
    /// (`previousUs` 0) on the peer's answer to ours, sent once, lowers the first wait to
    /// twice that round trip (at least 50 ms; Karn's rule), for this flight and later ones.
    private func nextTimeoutUs(afterUs previousUs: UInt32) -> UInt32 {
        if previousUs == 0, let rtt = pendingRoundTrip {
            pendingRoundTrip = nil
            let ms = Double(rtt.components.seconds) * 1000 + Double(rtt.components.attoseconds) / 1e15
            let lowered = retransmission.lowered(byRoundTripMs: ms)
            if lowered != retransmission {
                Log.write(.debug, "dtls", tag: logTag, "round trip \(Int(ms.rounded())) ms in the handshake: resends \(lowered)")
                initialTimeoutMs.store(lowered.initialMs, ordering: .relaxed)
            }
        }
        return retransmission.nextTimeoutUs(afterUs: previousUs)
    }

    /// Sends close_notify (when a handshake ran) and moves to ``DTLSTransportState/closed``.
    /// Idempotent; does nothing once failed.
    public func close() {
        loop.async { [self] in  // strong: close_notify goes out even if the caller lets go now
            switch self.loopState {
            case .closed, .failed: return
            case .connecting, .connected:
                _ = SSL_shutdown(self.ssl)
                clearOpenSSLErrors()
                self.flush()
            case .new: break
            }
            self.cancelTimer()
            self.setState(.closed)
        }
    }

    /// Sends `data` as one application data record (an SCTP packet, RFC 8261 §5), on
    /// the loop thread. False unless connected, or when OpenSSL refuses it (the
    /// record is lost, as a datagram would be: SCTP retransmits).
    @discardableResult
    public func write(_ data: [UInt8]) -> Bool {
        precondition(loop.isCurrent, "DTLSTransport.write is called on the loop thread")
        guard loopState == .connected, !data.isEmpty, data.count <= Int(Int32.max) else { return false }
        clearOpenSSLErrors()
        let written = data.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        clearOpenSSLErrors()
        flush()
        return written == Int32(data.count)
    }

    // MARK: Loop-thread internals

    /// Called by the sink BIO with each write of OpenSSL's (whole records), sent by ``flush()``.
    func enqueue(_ datagram: [UInt8]) { outbox.append(datagram) }

    /// Sends what OpenSSL wrote, consecutive writes packed into one datagram while they
    /// fit in ``mtu`` (RFC 6347 §4.1.1). A flight's first sending is one write (OpenSSL
    /// buffers it), a resend one write per message: five for the client's second flight,
    /// all five arriving at 15 % loss 44 % of the time (0.85⁵), one packed datagram 85 %.
    private func flush() {
        if outbox.count <= 1 {  // an application data record, or nothing: no copy
            guard let only = outbox.popLast() else { return }
            sendDatagram(only)
            return
        }
        let datagrams = outbox
        outbox.removeAll()
        var pending: [UInt8] = []
        for datagram in datagrams {
            if !pending.isEmpty, pending.count + datagram.count > Self.mtu {
                sendDatagram(pending)
                pending = []
            }
            pending += datagram
        }
        if !pending.isEmpty { sendDatagram(pending) }
    }

    private func sendDatagram(_ datagram: [UInt8]) {
        if capturingLastFlight { lastFlight.append(datagram) }
        send(datagram)
    }

    /// Sends the handshake's last flight again after the handshake timer's wait for the
    /// next send (``lastFlightResends``), unless the peer shows it is done first.
    private func resendLastFlightLater() {
        let waitMs = min(DTLSRetransmissionTimer.maximumMs, retransmission.initialMs << UInt32(min(lastFlightResent, 6)))
        timer = loop.after(milliseconds: waitMs) { [weak self] in
            guard let self else { return }
            self.timer = 0
            guard self.loopState == .connected, !self.lastFlight.isEmpty else { return }
            for datagram in self.lastFlight { self.send(datagram) }
            self.lastFlightResent += 1
            Log.write(.debug, "dtls", tag: logTag, "last flight sent again (\(self.lastFlightResent) of \(Self.lastFlightResends)): the peer shows nothing of being done")
            if self.lastFlightResent < Self.lastFlightResends {
                self.resendLastFlightLater()
            } else {
                self.lastFlight = []
            }
        }
    }

    /// The peer shows it finished the handshake (its first SRTP or SRTCP packet, which it
    /// can protect only then, or DTLS application data): the last flight, if we sent it,
    /// is not sent again. Any thread; the work is on the loop.
    public func peerIsDone() {
        guard loop.isCurrent else {
            _ = loop.async { [weak self] in self?.peerIsDone() }
            return
        }
        guard !lastFlight.isEmpty else { return }
        lastFlight = []
        cancelTimer()
    }

    private func setState(_ new: DTLSTransportState) {
        guard loopState != new else { return }
        loopState = new
        published.withLock { $0.state = new }
        onStateChange(new)
    }

    private func fail(_ error: DTLSError) {
        cancelTimer()
        loopState = .failed
        published.withLock {
            $0.error = error
            $0.state = .failed
        }
        flush()  // e.g. an alert
        onStateChange(.failed)
    }

    private func cancelTimer() {
        if timer != 0 { loop.cancelTimer(timer) }
        timer = 0
    }

    /// Runs the handshake (or reads application data once connected), sends what
    /// OpenSSL wrote, and re-arms the retransmission timer.
    private func drive() {
        guard loopState == .connecting || loopState == .connected else { return }
        if !handshakeDone {
            clearOpenSSLErrors()
            let result = SSL_do_handshake(ssl)
            // Output here is a new flight (resends come from the timer, below).
            flightSentAt = outbox.isEmpty ? flightSentAt : ContinuousClock.now
            if result == 1 {
                handshakeDone = true
                flightSentAt = nil
                capturingLastFlight = true
                flush()
                capturingLastFlight = false
                cancelTimer()
                finishHandshake()
                if loopState == .connected, !lastFlight.isEmpty { resendLastFlightLater() }
            } else {
                let code = SSL_get_error(ssl, result)
                flush()
                if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE {
                    armTimer()
                } else {
                    fail(verifyFailure ?? .openSSL(step: "SSL_do_handshake", reason: Self.sslErrorText(code)))
                }
                return
            }
        }
        // Connected: drain records; application data (SCTP, RFC 8261) is handed on.
        while loopState == .connected {
            clearOpenSSLErrors()
            let n = readBuffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                if !lastFlight.isEmpty { peerIsDone() }
                onApplicationData(Array(readBuffer[0..<Int(n)]))
                continue
            }
            let code = SSL_get_error(ssl, n)
            flush()
            if code == SSL_ERROR_ZERO_RETURN {  // close_notify from the peer
                _ = SSL_shutdown(ssl)
                flush()
                cancelTimer()
                setState(.closed)
            } else if code == SSL_ERROR_SSL || code == SSL_ERROR_SYSCALL {  // fatal alert or broken record layer
                fail(.openSSL(step: "SSL_read", reason: Self.sslErrorText(code)))
                return
            }
            clearOpenSSLErrors()
            break
        }
    }

    private func armTimer() {
        // A handshake that ended meanwhile (the peer's answer came back within our own
        // send, as on a wire in memory) leaves its timer to the last flight's resends.
        guard !handshakeDone else { return }
        cancelTimer()
        var timeout = timeval()
        // DTLSv1_get_timeout is a macro.
        guard SSL_ctrl(ssl, DTLS_CTRL_GET_TIMEOUT, 0, &timeout) == 1 else { return }
        let ms = max(1, Int(timeout.tv_sec) * 1000 + Int(timeout.tv_usec) / 1000)
        timer = loop.after(milliseconds: UInt32(min(ms, 60_000))) { [weak self] in
            guard let self else { return }
            self.timer = 0
            guard self.loopState == .connecting, !self.handshakeDone else { return }
            self.flightSentAt = nil  // resent: its answer times no round trip
            // DTLSv1_handle_timeout is a macro.
            if SSL_ctrl(self.ssl, DTLS_CTRL_HANDLE_TIMEOUT, 0, nil) < 0 {
                self.flush()
                self.fail(.openSSL(step: "DTLSv1_handle_timeout", reason: lastError()))
                return
            }
            self.flush()
            self.armTimer()
        }
    }

    /// Compares `certificate` with the remote SDP fingerprints (loop thread, from the
    /// verify callback). False, with ``verifyFailure`` set, when none matches.
    fileprivate func verifyPeer(_ certificate: OpaquePointer) -> Bool {
        switch fingerprintCheck(certificate) {
        case .success: return true
        case .failure(let error):
            verifyFailure = error
            return false
        }
    }

    /// The peer certificate's digests against the remote SDP fingerprints (sha-256/384/512).
    private func fingerprintCheck(_ peer: OpaquePointer) -> Result<Void, DTLSError> {
        var expected: [String] = [], actual: [String] = [], matched = false
        for (algorithm, hex) in remoteFingerprints {
            let md: OpaquePointer?
            switch algorithm.lowercased() {
            case "sha-256": md = EVP_sha256()
            case "sha-384": md = EVP_sha384()
            case "sha-512": md = EVP_sha512()
            default: continue
            }
            let want = hex.uppercased().filter { $0 != ":" }
            expected.append("\(algorithm) \(want)")
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard X509_digest(peer, md, &digest, &length) == 1 else {
                return .failure(.openSSL(step: "X509_digest", reason: lastError()))
            }
            let have = digest.prefix(Int(length)).map { b in
                let h = String(b, radix: 16, uppercase: true)
                return h.count == 1 ? "0" + h : h
            }.joined()
            actual.append("\(algorithm) \(have)")
            if have == want { matched = true }
        }
        guard !expected.isEmpty else { return .failure(.noUsableFingerprint(remoteFingerprints.map { "\($0.algorithm) \($0.hex)" })) }
        guard matched else { return .failure(.fingerprintMismatch(expected: expected, actual: actual)) }
        return .success(())
    }

    private func finishHandshake() {
        // 1. The peer certificate against the SDP fingerprints (checked again here: a
        //    resumed or renegotiated session would not run the verify callback).
        guard let peer = SSL_get1_peer_certificate(ssl) else { return fail(.noPeerCertificate) }
        defer { X509_free(peer) }
        if case .failure(let error) = fingerprintCheck(peer) { return fail(error) }

        // 2. The negotiated SRTP profile.
        guard let selected = SSL_get_selected_srtp_profile(ssl) else { return fail(.noSRTPProfile) }
        guard let cName = selected.pointee.name else { return fail(.noSRTPProfile) }
        let name = String(cString: cName)
        guard let profile = SRTPProfile(openSSLName: name) else { return fail(.unknownSRTPProfile(name)) }

        // 3. Keying material, RFC 5764 §4.2.
        var out = [UInt8](repeating: 0, count: profile.keyingMaterialLength)
        let label = Self.exporterLabel
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            SSL_export_keying_material(ssl, buffer.baseAddress, buffer.count, label, label.utf8.count, nil, 0, 0)
        }
        guard ok == 1 else { return fail(.openSSL(step: "SSL_export_keying_material", reason: lastError())) }
        let material: SRTPKeyingMaterial
        do { material = try SRTPKeyingMaterial(profile: profile, material: out) } catch { return fail(.keyingMaterial(error)) }
        published.withLock {
            $0.profile = profile
            $0.material = material
        }
        setState(.connected)
    }

    private static func sslErrorText(_ code: Int32) -> String {
        let queued = lastError()
        return "SSL_get_error \(code): \(queued)"
    }
}

/// Empties this thread's OpenSSL error queue, which `SSL_get_error` needs empty before each
/// operation, only when something is in it: `ERR_clear_error` walks and resets all 16
/// slots every time, which was 6 % of the loop thread's time in `peer-bench data` (two
/// calls per record each way), while `ERR_peek_error` only compares two indices.
@inline(__always)
func clearOpenSSLErrors() {
    if ERR_peek_error() != 0 { ERR_clear_error() }
}

