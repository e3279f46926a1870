import Testing
@testable import DTLS

@Suite struct DemultiplexerTests {
    /// RFC 7983 §7 ranges at their boundaries (second byte 0x60 = PT 96, so RTP in 128–191).
    @Test(arguments: [
        (UInt8(0), DatagramKind.stun), (3, .stun), (4, .unknown), (19, .unknown),
        (20, .dtls), (63, .dtls), (64, .turnChannel), (79, .turnChannel),
        (80, .unknown), (127, .unknown), (128, .rtp), (191, .rtp), (192, .unknown), (255, .unknown),
    ])
    func firstByteBoundaries(first: UInt8, kind: DatagramKind) {
        #expect(Demultiplexer.classify([first, 0x60, 0, 0]) == kind)
    }

    /// RFC 5761 §4: second byte 192–223 is an RTCP packet type.
    @Test(arguments: [
        (UInt8(0xC8), DatagramKind.rtcp), // 200 SR
        (0xC9, .rtcp), // 201 RR
        (0xCA, .rtcp), // 202 SDES
        (0xCB, .rtcp), // 203 BYE
        (0xCD, .rtcp), // 205 RTPFB (NACK)
        (0xCE, .rtcp), // 206 PSFB (PLI, FIR, REMB)
        (192, .rtcp), (223, .rtcp),
        (191, .rtp), (224, .rtp),
        (0x60, .rtp), // PT 96, marker 0
        (0xE0, .rtp), // PT 96, marker 1
        (0x00, .rtp), (0x7F, .rtp),
    ])
    func rtpVersusRTCP(second: UInt8, kind: DatagramKind) {
        #expect(Demultiplexer.classify([0x80, second, 0, 1]) == kind)
        #expect(Demultiplexer.classify([0xBF, second]) == kind)
    }

    @Test func degenerateInputs() {
        #expect(Demultiplexer.classify([UInt8]()) == .unknown)
        #expect(Demultiplexer.classify([0x80]) == .unknown)
        #expect(Demultiplexer.classify([0x00]) == .stun)
        #expect(Demultiplexer.classify([0x16]) == .dtls)
    }

    @Test func realisticPackets() {
        // STUN Binding Request header (RFC 5389 §6).
        #expect(Demultiplexer.classify([0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42]) == .stun)
        // DTLS 1.2 handshake record (content type 22, version FE FD).
        #expect(Demultiplexer.classify([0x16, 0xFE, 0xFD, 0x00, 0x00]) == .dtls)
        // TURN ChannelData for channel 0x4000.
        #expect(Demultiplexer.classify([0x40, 0x00, 0x00, 0x04, 1, 2, 3, 4]) == .turnChannel)
        // Slices work too.
        let buffer: [UInt8] = [0xFF, 0x80, 0xC8, 0x00]
        #expect(Demultiplexer.classify(buffer[1...]) == .rtcp)
    }
}
