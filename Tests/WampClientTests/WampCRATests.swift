import Testing
@testable import WampClient

@Suite struct WampCRATests {
    /// RFC 4231 §4.3, test case 2: HMAC-SHA256(key "Jefe", "what do ya want for nothing?").
    @Test func hmacSHA256OfRFC4231TestCase2() throws {
        let signature = try #require(WampCRA.sign(challenge: "what do ya want for nothing?", key: "Jefe"))
        let bytes = try #require(Data(base64Encoded: signature))
        #expect(bytes.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// RFC 7914 §11: PBKDF2-HMAC-SHA256(P="passwd", S="salt", c=1, dkLen=64).
    @Test func pbkdf2OfRFC7914() throws {
        let key = try #require(WampCRA.deriveKey(secret: "passwd", salt: "salt", iterations: 1, keyLength: 64))
        let bytes = try #require(Data(base64Encoded: key))
        #expect(bytes.map { String(format: "%02x", $0) }.joined()
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        #expect(WampCRA.deriveKey(secret: "x", salt: "y", iterations: 0, keyLength: 32) == nil)
        // A hostile router's huge iteration count is refused, not trapped on or obeyed.
        #expect(WampCRA.deriveKey(secret: "x", salt: "y", iterations: Int(Int32.max) + 1, keyLength: 32) == nil)
        #expect(WampCRA.deriveKey(secret: "x", salt: "y", iterations: 1000, keyLength: 4096) == nil)
    }
}

import Foundation
