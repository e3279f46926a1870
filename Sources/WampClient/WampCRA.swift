// WampCRA: WAMP challenge-response authentication (WAMP Advanced Profile, WAMP-CRA): HMAC-SHA256 of the challenge, salted keys (PBKDF2).
import COpenSSL
import Foundation

/// WAMP-CRA, challenge-response authentication (WAMP Advanced Profile,
/// "WAMP Challenge-Response Authentication"): the client proves it knows a
/// shared secret by signing the router's challenge string with HMAC-SHA256.
public enum WampCRA {
    /// The most PBKDF2 iterations accepted from a router's CHALLENGE (Crossbar's
    /// default is 1000); more would stall the event loop for seconds.
    public static let maxIterations = 1_000_000

    /// The key for a salted secret: PBKDF2-HMAC-SHA256 of `secret` with `salt`,
    /// `iterations` rounds and `keyLength` bytes, base64-encoded. The base64
    /// *text* is then the HMAC key (as autobahn's `derive_key` and Crossbar do).
    /// Returns nil when `iterations` is outside 1…``maxIterations`` or `keyLength`
    /// outside 1…1024 bytes (values a router sends; refused rather than trusted), or
    /// if OpenSSL fails.
    public static func deriveKey(secret: String, salt: String, iterations: Int, keyLength: Int) -> String? {
        guard (1...maxIterations).contains(iterations), (1...1024).contains(keyLength) else { return nil }
        var out = [UInt8](repeating: 0, count: keyLength)
        let secretBytes = Array(secret.utf8), saltBytes = Array(salt.utf8)
        let ok = secretBytes.withUnsafeBufferPointer { s in
            saltBytes.withUnsafeBufferPointer { salt in
                s.withMemoryRebound(to: CChar.self) { sc in
                    PKCS5_PBKDF2_HMAC(sc.baseAddress, Int32(s.count), salt.baseAddress, Int32(salt.count),
                                      Int32(iterations), EVP_sha256(), Int32(keyLength), &out)
                }
            }
        }
        return ok == 1 ? Data(out).base64EncodedString() : nil
    }

    /// The signature of `challenge` with `key`: base64 of HMAC-SHA256(key, challenge),
    /// both taken as UTF-8 bytes. Returns nil only if OpenSSL fails.
    public static func sign(challenge: String, key: String) -> String? {
        let keyBytes = Array(key.utf8), data = Array(challenge.utf8)
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = HMAC(EVP_sha256(), keyBytes, Int32(keyBytes.count), data, data.count, &out, &length)
        guard result != nil else { return nil }
        return Data(out.prefix(Int(length))).base64EncodedString()
    }
}
