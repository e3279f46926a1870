import Testing
@testable import RTP

/// An input on which parse → serialize → parse changed the value (found in review of
/// the RTP fuzz harness's round-trip check), now refused with its error. (The other
/// finding, a REMB exponent past 64 bits, now saturates: ``REMBSaturationTests``.)
@Suite struct RoundTripRefusalTests {
    /// RR with padding (P=1, one padding word holding 3 bytes of count 3) that leaves a
    /// 1-byte "profile extension" after the SSRC.
    @Test func reportExtensionThatIsNotWholeWordsIsRefused() {
        let bytes: [UInt8] = [0xA0, 0xC9, 0x00, 0x02, 0x00, 0x00, 0x00, 0x05, 0x11, 0x22, 0x33, 0x03]
        #expect(throws: RTCPError.extensionNotWordAligned(offset: 8, length: 1)) { try RTCPCompound.parse(bytes) }
    }
}
