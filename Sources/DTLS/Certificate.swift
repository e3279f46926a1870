// Certificate: a self-signed ECDSA P-256 certificate per process and its fingerprint for DTLS-SRTP (RFC 8827 §6.5, RFC 8122 §5).
import COpenSSL

/// A self-signed ECDSA P-256 certificate and its private key, made fresh per
/// process for DTLS-SRTP (RFC 8827 §6.5: a new certificate per call is fine;
/// browsers and aiortc accept ECDSA P-256, aiortc refuses RSA).
///
/// Owns an OpenSSL `X509*` and `EVP_PKEY*`, freed on deinit. Immutable after
/// init, so safe to share between threads.
// @unchecked: the public `X509*`/`EVP_PKEY*` (OpaquePointer, not Sendable) are never changed after init; OpenSSL reads them from any thread.
public final class Certificate: @unchecked Sendable {
    /// The OpenSSL certificate (`X509*`).
    public let x509: OpaquePointer
    /// The OpenSSL private key (`EVP_PKEY*`).
    public let privateKey: OpaquePointer
    /// Validity in days from creation (notBefore is one day earlier, for clock skew).
    public let validityDays: Int

    /// The process's certificate: made on first use, then the same for every call of
    /// this process (its fingerprint goes into every local description).
    /// - Throws: ``CertificateError`` if OpenSSL could not make it (and again on each call).
    public static func shared() throws(CertificateError) -> Certificate {
        try processCertificate.get()
    }

    /// Generates a key pair and a self-signed certificate with subject `CN=<commonName>`,
    /// a random 63-bit serial number, SHA-256 signature, valid for `validityDays` days.
    /// - Throws: ``CertificateError/openSSL(step:reason:)`` naming the OpenSSL call that failed.
    public init(commonName: String = "peer", validityDays: Int = 30) throws(CertificateError) {
        self.validityDays = validityDays
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw .openSSL(step: "EVP_PKEY_CTX_new_id", reason: lastError()) }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) == 1,
              EVP_PKEY_keygen(ctx, &key) == 1, let key else {
            throw .openSSL(step: "EVP_PKEY_keygen(P-256)", reason: lastError())
        }
        guard let cert = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL(step: "X509_new", reason: lastError())
        }
        privateKey = key
        x509 = cert
        var serial: UInt64 = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), 8) }
        let name = X509_get_subject_name(cert)
        let ok = X509_set_version(cert, 2) == 1
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert), serial >> 1) == 1
            && X509_gmtime_adj(X509_getm_notBefore(cert), -86_400) != nil
            && X509_gmtime_adj(X509_getm_notAfter(cert), validityDays * 86_400) != nil
            && X509_set_pubkey(cert, key) == 1
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1
            && X509_set_issuer_name(cert, name) == 1
            && X509_sign(cert, key, EVP_sha256()) > 0
        guard ok else { throw .openSSL(step: "X509 self-signing", reason: lastError()) }
    }

    deinit {
        X509_free(x509)
        EVP_PKEY_free(privateKey)
    }

    /// The certificate's fingerprint with `algorithm` "sha-256", "sha-384" or "sha-512"
    /// (RFC 8122 §5): upper-case hex bytes separated by colons.
    /// - Throws: ``CertificateError/unsupportedAlgorithm(_:)`` for other names.
    public func fingerprint(_ algorithm: String = "sha-256") throws(CertificateError) -> String {
        let md: OpaquePointer?
        switch algorithm.lowercased() {
        case "sha-256": md = EVP_sha256()
        case "sha-384": md = EVP_sha384()
        case "sha-512": md = EVP_sha512()
        default: throw .unsupportedAlgorithm(algorithm)
        }
        var buffer = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(x509, md, &buffer, &length) == 1 else { throw .openSSL(step: "X509_digest", reason: lastError()) }
        return buffer.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// The certificate in PEM form ("-----BEGIN CERTIFICATE-----" …), for other tools.
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, x509) == 1 else { return "" }
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)  // BIO_get_mem_data is a macro
        guard length > 0, let pointer else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// The certificate's subject common name.
    public var commonName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = X509_NAME_get_text_by_NID(X509_get_subject_name(x509), NID_commonName, &buffer, 256)
        guard n >= 0 else { return "" }
        return String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Seconds from now until notAfter (negative once expired).
    public var secondsUntilExpiry: Int {
        var days: Int32 = 0, seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(x509)) == 1 else { return 0 }
        return Int(days) * 86_400 + Int(seconds)
    }
}

/// Errors of ``Certificate``.
public enum CertificateError: Error, Equatable, CustomStringConvertible {
    /// OpenSSL call `step` failed; `reason` is OpenSSL's error queue text.
    case openSSL(step: String, reason: String)
    /// A fingerprint hash function other than sha-256/384/512.
    case unsupportedAlgorithm(String)

    public var description: String {
        switch self {
        case let .openSSL(step, reason): return "OpenSSL \(step) failed: \(reason)"
        case .unsupportedAlgorithm(let name): return "unsupported fingerprint hash function \"\(name)\" (sha-256, sha-384, sha-512)"
        }
    }
}

/// The text of OpenSSL's most recent queued error, emptying the queue.
func lastError() -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "no OpenSSL error queued" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, 256)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Made once per process, on first use (a `let` global is initialised lazily and once).
private let processCertificate: Result<Certificate, CertificateError> = Result { () throws(CertificateError) -> Certificate in
    try Certificate()
}

