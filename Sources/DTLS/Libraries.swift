// Libraries: facts about the crypto libraries DTLS-SRTP is built on (OpenSSL, libsrtp2 versions).
import COpenSSL
import CSRTP

/// Facts about the crypto libraries DTLS-SRTP is built on.
public enum CryptoLibraries {
    /// OpenSSL's run-time version text, e.g. "OpenSSL 3.0.19 27 Jan 2026" (`OpenSSL_version`).
    public static var openSSLVersionText: String {
        guard let text = OpenSSL_version(Int32(OPENSSL_VERSION)) else { return "unknown" }
        return String(cString: text)
    }

    /// OpenSSL's run-time version, "MAJOR.MINOR.PATCH" (`OPENSSL_version_major()` …).
    public static var openSSLVersion: String {
        "\(OPENSSL_version_major()).\(OPENSSL_version_minor()).\(OPENSSL_version_patch())"
    }

    /// libsrtp2's run-time version, "MAJOR.MINOR.MICRO", from `srtp_get_version()`
    /// (packed as 0xMMmmuu).
    public static var srtpVersion: String {
        let v = srtp_get_version()
        return "\(v >> 24).\((v >> 16) & 0xff).\(v & 0xff)"
    }

    /// libsrtp2's own version text, e.g. "libsrtp2 2.5.0" (`srtp_get_version_string()`).
    public static var srtpVersionText: String {
        guard let text = srtp_get_version_string() else { return "unknown" }
        return String(cString: text)
    }

    /// The library versions this module links, name → version.
    public static var libraryVersions: [String: String] { ["openssl": openSSLVersion, "libsrtp2": srtpVersion] }
}
