import Testing
@testable import RTP

/// Inputs on which parse → serialize → parse changed the value (found in review of
/// the RTP fuzz harness's round-trip check); both are now refused with their error.
@Suite struct RoundTripRefusalTests {
    /// RR with padding (P=1, one padding word holding 3 bytes of count 3) that leaves a
    /// 1-byte "profile extension" after the SSRC.
    @Test func reportExtensionThatIsNotWholeWordsIsRefused() {
        let bytes: [UInt8] = [0xA0, 0xC9, 0x00, 0x02, 0x00, 0x00, 0x00, 0x05, 0x11, 0x22, 0x33, 0x03]
        #expect(throws: RTCPError.extensionNotWordAligned(offset: 8, length: 1)) { try RTCPCompound.parse(bytes) }
    }

    /// REMB with exponent 50: an 18-bit mantissa shifted 50 places has no 64-bit value.
    @Test func rembExponentBeyond64BitsIsRefused() {
        let exp: UInt32 = 50, mantissa: UInt32 = 1
        let word = exp << 18 | mantissa
        let bytes: [UInt8] = [0x8F, 0xCE, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42,
                              0x01, UInt8(word >> 16), UInt8((word >> 8) & 0xFF), UInt8(word & 0xFF), 0, 0, 0, 9]
        #expect(throws: RTCPError.rembBitrateOverflow(offset: 17, exponent: 50)) { try RTCPCompound.parse(bytes) }
    }
}
