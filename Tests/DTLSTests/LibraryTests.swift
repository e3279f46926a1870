import Testing
@testable import DTLS

@Suite struct CryptoLibraryTests {
    @Test func openSSLIsThree() {
        let parts = CryptoLibraries.openSSLVersion.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect(parts.first == 3)
        #expect(CryptoLibraries.openSSLVersionText.hasPrefix("OpenSSL \(CryptoLibraries.openSSLVersion)"))
    }

    @Test func libsrtpIsTwo() {
        #expect(CryptoLibraries.srtpVersion.hasPrefix("2."))
        #expect(CryptoLibraries.srtpVersionText == "libsrtp2 \(CryptoLibraries.srtpVersion)")
    }
}
