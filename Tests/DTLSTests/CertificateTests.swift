import COpenSSL
import Foundation
import Testing
@testable import DTLS

@Suite struct CertificateTests {
    @Test func aFreshP256CertificateSignedByItsOwnKey() throws {
        let cert = try Certificate()
        #expect(EVP_PKEY_get_bits(cert.privateKey) == 256)
        #expect(EVP_PKEY_get_base_id(cert.privateKey) == EVP_PKEY_EC)
        #expect(X509_verify(cert.x509, cert.privateKey) == 1)
        #expect(cert.commonName == "peer")
        // notAfter is 30 days away (allow a minute for the test itself).
        #expect(abs(cert.secondsUntilExpiry - 30 * 86_400) < 60)
    }

    @Test func oneCertificatePerProcess() throws {
        let a = try Certificate.shared(), b = try Certificate.shared()
        #expect(a === b)
        #expect(try a.fingerprint() == (try b.fingerprint()))
        #expect(try Certificate().fingerprint() != (try a.fingerprint()))
    }

    @Test func fingerprintsHaveTheRightLengthsAndDifferPerCertificate() throws {
        let a = try Certificate(), b = try Certificate()
        let fa = try a.fingerprint()
        #expect(fa.split(separator: ":").count == 32)
        #expect(fa == fa.uppercased())
        #expect(try a.fingerprint("sha-384").split(separator: ":").count == 48)
        #expect(try a.fingerprint("SHA-512").split(separator: ":").count == 64)
        #expect(fa != (try b.fingerprint()))
        #expect(throws: CertificateError.unsupportedAlgorithm("md5")) { try a.fingerprint("md5") }
    }

    /// The openssl command-line tool computes the same SHA-256 fingerprint from our PEM.
    @Test func opensslAgreesOnTheFingerprint() throws {
        let cert = try Certificate()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("peer-cert-\(UUID()).pem").path
        try cert.pem.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["x509", "-in", path, "-noout", "-fingerprint", "-sha256", "-subject"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 0)
        #expect(text.contains("sha256 Fingerprint=\(try cert.fingerprint())"), "\(text)")
        #expect(text.contains("CN = peer"), "\(text)")
    }
}
