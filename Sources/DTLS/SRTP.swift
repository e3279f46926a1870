// SRTP: SRTP protection profiles (RFC 5764 §4.1.2, RFC 7714), keying material from DTLS (RFC 5764 §4.2) and libsrtp2 sessions (RFC 3711).
import CSRTP
import EventLoop
import Synchronization

// MARK: - Profiles

/// An SRTP protection profile negotiated through DTLS `use_srtp`
/// (RFC 5764 §4.1.2, RFC 7714 §14.2).
public enum SRTPProfile: String, CaseIterable, Sendable {
    /// `SRTP_AES128_CM_SHA1_80` (RFC 5764 §4.1.2): AES-128 counter mode,
    /// HMAC-SHA1 with an 80-bit (10-byte) tag; 16-byte master key, 14-byte master salt.
    case aes128CmSha1_80
    /// `SRTP_AEAD_AES_128_GCM` (RFC 7714 §14.2): AES-128 GCM with a 16-byte tag;
    /// 16-byte master key, 12-byte master salt.
    case aeadAes128Gcm

    /// Master key length in bytes (16 for both profiles).
    public var keyLength: Int {
        switch self {
        case .aes128CmSha1_80: 16
        case .aeadAes128Gcm: 16
        }
    }

    /// Master salt length in bytes: 14 for AES-CM (RFC 3711 §8.2), 12 for GCM (RFC 7714 §12).
    public var saltLength: Int {
        switch self {
        case .aes128CmSha1_80: 14
        case .aeadAes128Gcm: 12
        }
    }

    /// Bytes of keying material to export with `EXTRACTOR-dtls_srtp` (RFC 5764 §4.2):
    /// 2 × (key + salt), i.e. 60 for AES-CM and 56 for GCM.
    public var keyingMaterialLength: Int { 2 * (keyLength + saltLength) }

    /// The profile's name as OpenSSL spells it for `SSL_CTX_set_tlsext_use_srtp`
    /// and reports from `SSL_get_selected_srtp_profile`.
    public var openSSLName: String {
        switch self {
        case .aes128CmSha1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAes128Gcm: "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// The two-byte SRTPProtectionProfile value on the wire
    /// (RFC 5764 §4.1.2: 0x0001; RFC 7714 §14.2: 0x0007).
    public var protectionProfileID: UInt16 {
        switch self {
        case .aes128CmSha1_80: 0x0001
        case .aeadAes128Gcm: 0x0007
        }
    }

    /// The profile for an OpenSSL profile name (see ``openSSLName``), or nil if unsupported.
    public init?(openSSLName: String) {
        guard let match = Self.allCases.first(where: { $0.openSSLName == openSSLName }) else { return nil }
        self = match
    }

    /// Maximum bytes `srtp_protect` may append to an RTP packet (auth tag + MKI):
    /// libsrtp's `SRTP_MAX_TRAILER_LEN` = `SRTP_MAX_TAG_LEN` (16) + `SRTP_MAX_MKI_LEN` (128).
    public static let maxTrailerLength = Int(SRTP_MAX_TRAILER_LEN)
    /// Maximum bytes `srtp_protect_rtcp` may append to an RTCP packet:
    /// ``maxTrailerLength`` + 4 (E flag and SRTCP index, RFC 3711 §3.4).
    public static let maxRTCPTrailerLength = maxTrailerLength + 4
}

// MARK: - Errors

/// Errors of SRTP/SRTCP set-up and packet processing. Each names the offending value.
public enum SRTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The master key has `actual` bytes; `profile` needs `expected`.
    case invalidKeyLength(profile: SRTPProfile, expected: Int, actual: Int)
    /// The master salt has `actual` bytes; `profile` needs `expected`.
    case invalidSaltLength(profile: SRTPProfile, expected: Int, actual: Int)
    /// The exported keying material has `actual` bytes; `profile` needs `expected` (RFC 5764 §4.2).
    case invalidKeyingMaterialLength(profile: SRTPProfile, expected: Int, actual: Int)
    /// A packet of `length` bytes is malformed for `operation` (`reason` says how),
    /// found before handing it to libsrtp.
    case malformedPacket(operation: String, length: Int, reason: String)
    /// libsrtp's `operation` (e.g. "srtp_unprotect") returned `status` (code and name,
    /// e.g. 7 "srtp_err_status_auth_fail").
    case libsrtp(operation: String, status: SRTPStatus)

    /// A human-readable sentence naming the operation and the offending value.
    public var description: String {
        switch self {
        case let .invalidKeyLength(p, e, a): "SRTP master key for \(p.openSSLName) is \(a) bytes, expected \(e)"
        case let .invalidSaltLength(p, e, a): "SRTP master salt for \(p.openSSLName) is \(a) bytes, expected \(e)"
        case let .invalidKeyingMaterialLength(p, e, a):
            "DTLS-SRTP keying material for \(p.openSSLName) is \(a) bytes, expected \(e)"
        case let .malformedPacket(op, len, reason): "\(op): malformed \(len)-byte packet: \(reason)"
        case let .libsrtp(op, status): "\(op) failed: \(status)"
        }
    }
}

/// A libsrtp2 status code (`srtp_err_status_t`) with its name.
public struct SRTPStatus: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric `srtp_err_status_t` value (0 = ok, 7 = auth_fail, 9 = replay_fail, 10 = replay_old …).
    public let code: Int
    /// `srtp_err_status_auth_fail`: the authentication tag did not verify.
    public static let authFail = SRTPStatus(code: 7)
    /// `srtp_err_status_replay_fail`: the packet index was already seen (a replay).
    public static let replayFail = SRTPStatus(code: 9)
    /// `srtp_err_status_replay_old`: the packet index is older than the replay window.
    public static let replayOld = SRTPStatus(code: 10)

    /// A status from its numeric code.
    public init(code: Int) { self.code = code }

    /// The C enumerator's name, e.g. "srtp_err_status_auth_fail"; "srtp_err_status_<code>" if unknown.
    public var name: String {
        let names = ["ok", "fail", "bad_param", "alloc_fail", "dealloc_fail", "init_fail", "terminus",
                     "auth_fail", "cipher_fail", "replay_fail", "replay_old", "algo_fail", "no_such_op",
                     "no_ctx", "cant_check", "key_expired", "socket_err", "signal_err", "nonce_bad",
                     "read_fail", "write_fail", "parse_err", "encode_err", "semaphore_err", "pfkey_err",
                     "bad_mki", "pkt_idx_old", "pkt_idx_adv"]
        return "srtp_err_status_" + (names.indices.contains(code) ? names[code] : String(code))
    }

    /// The name and code, e.g. "srtp_err_status_auth_fail (7)".
    public var description: String { "\(name) (\(code))" }
}

// MARK: - Keying material

/// The DTLS-SRTP keying material of RFC 5764 §4.2, split into its four parts:
/// `client_write_SRTP_master_key | server_write_SRTP_master_key |
///  client_write_SRTP_master_salt | server_write_SRTP_master_salt`.
public struct SRTPKeyingMaterial: Equatable, Sendable {
    /// The profile whose lengths were used.
    public let profile: SRTPProfile
    /// Master key the DTLS client protects with (``SRTPProfile/keyLength`` bytes).
    public let clientKey: [UInt8]
    /// Master key the DTLS server protects with (``SRTPProfile/keyLength`` bytes).
    public let serverKey: [UInt8]
    /// Master salt of the DTLS client (``SRTPProfile/saltLength`` bytes).
    public let clientSalt: [UInt8]
    /// Master salt of the DTLS server (``SRTPProfile/saltLength`` bytes).
    public let serverSalt: [UInt8]

    /// Splits `material` exported with label `EXTRACTOR-dtls_srtp` (RFC 5764 §4.2).
    /// - Parameter material: exactly ``SRTPProfile/keyingMaterialLength`` bytes
    ///   (60 for AES-CM: 16+16+14+14; 56 for GCM: 16+16+12+12).
    /// - Throws: ``SRTPError/invalidKeyingMaterialLength(profile:expected:actual:)`` for any other length.
    public init(profile: SRTPProfile, material: [UInt8]) throws(SRTPError) {
        let k = profile.keyLength, s = profile.saltLength
        guard material.count == profile.keyingMaterialLength else {
            throw .invalidKeyingMaterialLength(profile: profile, expected: profile.keyingMaterialLength,
                                               actual: material.count)
        }
        self.profile = profile
        clientKey = Array(material[0 ..< k])
        serverKey = Array(material[k ..< 2 * k])
        clientSalt = Array(material[2 * k ..< 2 * k + s])
        serverSalt = Array(material[2 * k + s ..< 2 * k + 2 * s])
    }

    /// Key and salt this endpoint protects outbound packets with: the client's if
    /// `isClient` (DTLS role from `a=setup`), else the server's.
    public func local(isClient: Bool) -> (key: [UInt8], salt: [UInt8]) {
        isClient ? (clientKey, clientSalt) : (serverKey, serverSalt)
    }

    /// Key and salt this endpoint unprotects inbound packets with: the other side's.
    public func remote(isClient: Bool) -> (key: [UInt8], salt: [UInt8]) {
        local(isClient: !isClient)
    }
}

// MARK: - Session

/// libsrtp's one-time initialisation, run on first use by Swift's thread-safe
/// lazy global initialisation; holds `srtp_init()`'s status code. libsrtp's own messages
/// go to the log as `srtp` lines (its error, warning, info and debug levels).
private let srtpInitStatus: Int = {
    let status = Int(srtp_init().rawValue)
    _ = srtp_install_log_handler({ level, message, _ in
        let mapped: LogLevel = switch level {
        case srtp_log_level_error: .error
        case srtp_log_level_warning: .warn
        case srtp_log_level_info: .info
        default: .debug
        }
        Log.write(mapped, "srtp", message.map { String(cString: $0) } ?? "")
    }, nil)
    return status
}()

extension SRTPSession {
    /// Readies libsrtp before the first call needs it: `srtp_init`, and one session of
    /// each profile kept for the life of the process. Debian's libsrtp2 does its crypto
    /// with NSS, which it initialises for each cipher it makes (`NSS_InitContext`) and
    /// shuts down again with the last one: ~3.5 ms per session (softokn loaded, /dev/urandom
    /// read), ~22 ms between DTLS connected and the SRTP sessions of a call. With a session
    /// kept, NSS stays up and another cipher is a reference count (0.03 ms).
    /// Idempotent and thread-safe; the first call takes those ~4 ms, so call it early and
    /// off the critical path (``DtlsSrtpTransport`` does, on a background queue).
    public static func prepare() { _ = keptSessions }

    private static let keptSessions: [SRTPSession] = SRTPProfile.allCases.compactMap { profile in
        try? SRTPSession(profile: profile, key: [UInt8](repeating: 0x5A, count: profile.keyLength),
                         salt: [UInt8](repeating: 0xA5, count: profile.saltLength), direction: .outbound)
    }
}

/// Counts of SRTP/SRTCP operations and failures for statistics.
public struct SRTPCounters: Equatable, Sendable {
    /// Packets protected successfully (RTP and RTCP).
    public var protected = 0
    /// Packets unprotected successfully (RTP and RTCP).
    public var unprotected = 0
    /// Failures with `srtp_err_status_auth_fail` (tag did not verify: tampering or wrong key).
    public var authFailures = 0
    /// Failures with `srtp_err_status_replay_old` (index older than the replay window).
    public var replayOld = 0
    /// Failures with `srtp_err_status_replay_fail` (index already seen: a replay).
    public var replayFailures = 0
    /// Any other failure: malformed packets and other libsrtp statuses.
    public var otherFailures = 0

    /// All failures together.
    public var totalFailures: Int { authFailures + replayOld + replayFailures + otherFailures }

    /// Creates counters, all zero.
    public init() {}

    /// Adds `other`'s counts to these (a replaced session's, kept in the totals).
    public mutating func add(_ other: SRTPCounters) {
        protected += other.protected
        unprotected += other.unprotected
        authFailures += other.authFailures
        replayOld += other.replayOld
        replayFailures += other.replayFailures
        otherFailures += other.otherFailures
    }
}

/// The direction an ``SRTPSession`` serves.
public enum SRTPDirection: Sendable {
    /// Protects packets we send (`ssrc_any_outbound`).
    case outbound
    /// Unprotects packets we receive (`ssrc_any_inbound`).
    case inbound
}

/// One libsrtp2 session (`srtp_t`) for one direction, matching any SSRC
/// (`ssrc_any_outbound` / `ssrc_any_inbound`), protecting or unprotecting SRTP
/// (RFC 3711 §3.3, RFC 7714 §8) and SRTCP (RFC 3711 §3.4, RFC 7714 §9).
/// libsrtp keeps the replay window (``replayWindowPackets``, RFC 3711 §3.3.2) and the
/// rollover counter per SSRC.
///
/// Thread safety: the libsrtp session and the counters live in one `Mutex`, held around
/// every libsrtp call, so a session may be used from any thread; calls are serialised.
///
/// Errors are thrown per packet and counted in ``counters``; none is fatal.
public final class SRTPSession: Sendable {
    /// The protection profile.
    public let profile: SRTPProfile
    /// The direction this session serves.
    public let direction: SRTPDirection
    /// The replay window of an inbound session, packets (RFC 3711 §3.3.2; libsrtp's own
    /// default is 128). It must reach back as far as a sender resends a NACKed packet, or
    /// the retransmission is refused as `replay_old` and the loss it repairs stays: ours
    /// keeps 1024 packets for 1 s (`RetransmissionHistory`), libwebrtc's about as long,
    /// and at 4 Mbit/s a second is ~420 packets of 1200 bytes. 4096 packets cost libsrtp
    /// a 512-byte bitmap per SSRC.
    public static let replayWindowPackets: UInt = 4096
    /// The libsrtp session (`srtp_t`) and the counters of what it did.
    private struct State {
        let session: OpaquePointer
        var counters = SRTPCounters()
    }

    private let state: Mutex<State>

    /// Creates a session from a master key and salt (e.g. from ``SRTPKeyingMaterial``).
    /// - Parameters:
    ///   - key: ``SRTPProfile/keyLength`` bytes (16).
    ///   - salt: ``SRTPProfile/saltLength`` bytes (14 for AES-CM, 12 for GCM).
    ///   - direction: `.outbound` for protect, `.inbound` for unprotect.
    /// - Throws: ``SRTPError/invalidKeyLength(profile:expected:actual:)``,
    ///   ``SRTPError/invalidSaltLength(profile:expected:actual:)``, or
    ///   ``SRTPError/libsrtp(operation:status:)`` from `srtp_init` / `srtp_create`.
    public init(profile: SRTPProfile, key: [UInt8], salt: [UInt8], direction: SRTPDirection) throws(SRTPError) {
        guard key.count == profile.keyLength else {
            throw .invalidKeyLength(profile: profile, expected: profile.keyLength, actual: key.count)
        }
        guard salt.count == profile.saltLength else {
            throw .invalidSaltLength(profile: profile, expected: profile.saltLength, actual: salt.count)
        }
        guard srtpInitStatus == 0 else { throw .libsrtp(operation: "srtp_init", status: SRTPStatus(code: srtpInitStatus)) }
        self.profile = profile
        self.direction = direction

        var policy = srtp_policy_t()
        switch profile {
        case .aes128CmSha1_80:
            // `srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80` is a macro for these two (not imported).
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAes128Gcm:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.ssrc.value = 0
        policy.window_size = Self.replayWindowPackets
        // Outbound: a NACKed packet is sent again in its own stream with its own sequence
        // number (RFC 4588 §1, no RTX negotiated); libsrtp refuses that unless repeats are
        // allowed. Only identical packets are resent, so the keystream/IV reuse encrypts the
        // same plaintext to the same bytes and reveals nothing new.
        policy.allow_repeat_tx = direction == .outbound ? 1 : 0
        policy.next = nil
        // libsrtp wants key ‖ salt in one buffer; it copies it during srtp_create.
        var keyAndSalt = key + salt
        var created: OpaquePointer?
        let status = keyAndSalt.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            policy.key = buffer.baseAddress
            return srtp_create(&created, &policy)
        }
        // Wipe our copy of the key material.
        for i in keyAndSalt.indices { keyAndSalt[i] = 0 }
        guard status.rawValue == 0, let created else {
            throw .libsrtp(operation: "srtp_create", status: SRTPStatus(code: Int(status.rawValue)))
        }
        state = Mutex(State(session: created))
    }

    deinit {
        state.withLock { _ = srtp_dealloc($0.session) }
    }

    /// A snapshot of the operation and failure counters.
    public var counters: SRTPCounters { state.withLock { $0.counters } }

    /// Encrypts and authenticates an RTP packet (RFC 3711 §3.3; RFC 7714 §8 for GCM).
    /// - Parameter rtp: a whole RTP packet, header (≥ 12 bytes, CSRCs and extension included) and payload.
    /// - Returns: the SRTP packet: same header, encrypted payload, then the auth tag
    ///   (10 bytes for AES-CM, 16 for GCM).
    /// - Throws: ``SRTPError/malformedPacket(operation:length:reason:)`` for a truncated header,
    ///   ``SRTPError/libsrtp(operation:status:)`` from `srtp_protect` (e.g. replay_fail when a
    ///   sequence number is sent twice). Counted in ``counters``.
    public func protect(rtp: [UInt8]) throws(SRTPError) -> [UInt8] {
        try run("srtp_protect", rtp, trailer: SRTPProfile.maxTrailerLength, check: Self.rtpHeaderProblem,
                isProtect: true) { srtp_protect($0, $1, $2) }
    }

    /// Encrypts and authenticates the RTP packet in `packet` in place (RFC 3711 §3.3;
    /// RFC 7714 §8): on return it holds the SRTP packet. No copy is made when `packet` has
    /// ``SRTPProfile/maxTrailerLength`` bytes of spare capacity (what
    /// `RTPStreamHeader.write(_:packet:into:reserving:)` reserves): the trailer is appended
    /// into it and libsrtp works on the array's own storage.
    /// - Throws: as ``protect(rtp:)``; `packet` is then left as given. Counted in ``counters``.
    public func protect(rtpInPlace packet: inout [UInt8]) throws(SRTPError) {
        try state.withLock { (state: inout State) throws(SRTPError) in
            if let problem = Self.rtpHeaderProblem(packet) {
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: "srtp_protect", length: packet.count, reason: problem)
            }
            let trailer = SRTPProfile.maxTrailerLength
            guard packet.count <= Int(Int32.max) - trailer else {
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: "srtp_protect", length: packet.count, reason: "longer than Int32.max")
            }
            let count = packet.count
            packet.append(contentsOf: repeatElement(0, count: trailer))
            var length = Int32(count)
            let session = state.session
            let status = packet.withUnsafeMutableBytes { raw -> srtp_err_status_t in
                guard let base = raw.baseAddress else { return srtp_err_status_bad_param }
                return srtp_protect(session, base, &length)
            }
            guard status.rawValue == 0 else {
                packet.removeLast(trailer)
                let code = SRTPStatus(code: Int(status.rawValue))
                if code == .replayFail { state.counters.replayFailures += 1 } else { state.counters.otherFailures += 1 }
                throw .libsrtp(operation: "srtp_protect", status: code)
            }
            guard length >= 0, Int(length) <= packet.count else {
                packet.removeLast(trailer)
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: "srtp_protect", length: count, reason: "libsrtp returned length \(length)")
            }
            state.counters.protected += 1
            packet.removeLast(packet.count - Int(length))
        }
    }

    /// Verifies and decrypts an SRTP packet (RFC 3711 §3.3; RFC 7714 §8), checking
    /// the replay window and tracking the rollover counter.
    /// - Parameter srtp: a whole SRTP packet as received.
    /// - Returns: the RTP packet (header and plaintext payload, tag removed).
    /// - Throws: ``SRTPError/libsrtp(operation:status:)`` with ``SRTPStatus/authFail``,
    ///   ``SRTPStatus/replayFail`` or ``SRTPStatus/replayOld`` among others;
    ///   ``SRTPError/malformedPacket(operation:length:reason:)``. Counted in ``counters``.
    public func unprotect(srtp: [UInt8]) throws(SRTPError) -> [UInt8] {
        try run("srtp_unprotect", srtp, trailer: 0, check: Self.rtpHeaderProblem,
                isProtect: false) { srtp_unprotect($0, $1, $2) }
    }

    /// Encrypts and authenticates an RTCP (compound) packet (RFC 3711 §3.4; RFC 7714 §9).
    /// - Parameter rtcp: the RTCP packet, ≥ 8 bytes.
    /// - Returns: the SRTCP packet: header, encrypted rest, E flag + 31-bit index (4 bytes), auth tag.
    /// - Throws: ``SRTPError/malformedPacket(operation:length:reason:)``,
    ///   ``SRTPError/libsrtp(operation:status:)`` from `srtp_protect_rtcp`. Counted in ``counters``.
    public func protectRTCP(_ rtcp: [UInt8]) throws(SRTPError) -> [UInt8] {
        try run("srtp_protect_rtcp", rtcp, trailer: SRTPProfile.maxRTCPTrailerLength, check: Self.rtcpHeaderProblem,
                isProtect: true) { srtp_protect_rtcp($0, $1, $2) }
    }

    /// Verifies and decrypts an SRTCP packet (RFC 3711 §3.4; RFC 7714 §9), with replay check on the SRTCP index.
    /// - Parameter srtcp: the SRTCP packet as received.
    /// - Returns: the RTCP packet.
    /// - Throws: ``SRTPError/libsrtp(operation:status:)`` (auth_fail, replay_fail …) from
    ///   `srtp_unprotect_rtcp`; ``SRTPError/malformedPacket(operation:length:reason:)``. Counted in ``counters``.
    public func unprotectRTCP(_ srtcp: [UInt8]) throws(SRTPError) -> [UInt8] {
        try run("srtp_unprotect_rtcp", srtcp, trailer: 0, check: Self.rtcpHeaderProblem,
                isProtect: false) { srtp_unprotect_rtcp($0, $1, $2) }
    }

    // MARK: Private

    private func run(_ operation: String, _ packet: [UInt8], trailer: Int,
                     check: ([UInt8]) -> String?, isProtect: Bool,
                     _ call: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t)
        throws(SRTPError) -> [UInt8] {
        return try state.withLock { (state: inout State) throws(SRTPError) -> [UInt8] in
            let session = state.session
            if let problem = check(packet) {
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: operation, length: packet.count, reason: problem)
            }
            guard packet.count <= Int(Int32.max) - trailer else {
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: operation, length: packet.count, reason: "longer than Int32.max")
            }
            var buffer = packet
            buffer.append(contentsOf: repeatElement(0, count: trailer))
            var length = Int32(packet.count)
            let status = buffer.withUnsafeMutableBytes { raw -> srtp_err_status_t in
                guard let base = raw.baseAddress else { return srtp_err_status_bad_param }
                return call(session, base, &length)
            }
            guard status.rawValue == 0 else {
                let code = Int(status.rawValue)
                switch SRTPStatus(code: code) {
                case .authFail: state.counters.authFailures += 1
                case .replayOld: state.counters.replayOld += 1
                case .replayFail: state.counters.replayFailures += 1
                default: state.counters.otherFailures += 1
                }
                throw .libsrtp(operation: operation, status: SRTPStatus(code: code))
            }
            guard length >= 0, Int(length) <= buffer.count else {
                state.counters.otherFailures += 1
                throw .malformedPacket(operation: operation, length: packet.count,
                                       reason: "libsrtp returned length \(length)")
            }
            if isProtect { state.counters.protected += 1 } else { state.counters.unprotected += 1 }
            buffer.removeLast(buffer.count - Int(length))
            return buffer
        }
    }

    /// Why `packet` is not an RTP header libsrtp can safely read (RFC 3550 §5.1), or nil.
    private static func rtpHeaderProblem(_ packet: [UInt8]) -> String? {
        guard packet.count >= 12 else { return "RTP header needs 12 bytes, have \(packet.count)" }
        guard packet[0] >> 6 == 2 else { return "RTP version \(packet[0] >> 6), expected 2" }
        var headerLength = 12 + 4 * Int(packet[0] & 0x0F)
        guard packet.count >= headerLength else {
            return "CSRC count \(packet[0] & 0x0F) needs \(headerLength) bytes, have \(packet.count)"
        }
        if packet[0] & 0x10 != 0 {
            guard packet.count >= headerLength + 4 else {
                return "header extension needs \(headerLength + 4) bytes, have \(packet.count)"
            }
            let words = Int(packet[headerLength + 2]) << 8 | Int(packet[headerLength + 3])
            headerLength += 4 + 4 * words
            guard packet.count >= headerLength else {
                return "header extension of \(words) words needs \(headerLength) bytes, have \(packet.count)"
            }
        }
        return nil
    }

    /// Why `packet` is not an RTCP header libsrtp can safely read (RFC 3550 §6.4), or nil.
    private static func rtcpHeaderProblem(_ packet: [UInt8]) -> String? {
        guard packet.count >= 8 else { return "RTCP header with sender SSRC needs 8 bytes, have \(packet.count)" }
        guard packet[0] >> 6 == 2 else { return "RTCP version \(packet[0] >> 6), expected 2" }
        return nil
    }
}
