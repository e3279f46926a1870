import Testing
@testable import Media

@Suite struct MediaLibraryTests {
    @Test func libvpxIsAtLeast1_12WithVP8() {
        let parts = MediaLibraries.vpxVersion.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect(parts[0] > 1 || (parts[0] == 1 && parts[1] >= 12))
        #expect(MediaLibraries.vp8EncoderName.contains("VP8 Encoder"))
    }

    @Test func libopusIs1_3() {
        #expect(MediaLibraries.opusVersionText.hasPrefix("libopus 1.3"))
        #expect(MediaLibraries.opusVersion.hasPrefix("1.3"))
    }

    @Test func liboggWritesAPageWithOurSerial() {
        #expect(MediaLibraries.oggRoundTrip(serial: 0x5EED) == 0x5EED)
    }
}
