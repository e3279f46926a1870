import Testing
@testable import RTP

/// A compound RTCP packet from a packet dump of a Firefox call (the CNAME is a
/// Firefox-style `{uuid}`), as committed in pion/rtcp's packet_test.go:
/// RR (offset 0), SDES (32), BYE (84), PLI (92), RTPFB FMT 5 (104, not decoded
/// here → kept raw), APP (116, kept raw). 132 bytes.
let capturedCompound: [UInt8] = [
    0x81, 0xC9, 0x00, 0x07, 0x90, 0x2F, 0x9E, 0x2E, 0xBC, 0x5E, 0x9A, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x46, 0xE1, 0x00, 0x00, 0x01, 0x11, 0x09, 0xF3, 0x64, 0x32, 0x00, 0x02, 0x4A, 0x79,
    0x81, 0xCA, 0x00, 0x0C, 0x90, 0x2F, 0x9E, 0x2E, 0x01, 0x26,
    0x7B, 0x39, 0x63, 0x30, 0x30, 0x65, 0x62, 0x39, 0x32, 0x2D, 0x31, 0x61, 0x66, 0x62, 0x2D, 0x39,
    0x64, 0x34, 0x39, 0x2D, 0x61, 0x34, 0x37, 0x64, 0x2D, 0x39, 0x31, 0x66, 0x36, 0x34, 0x65, 0x65,
    0x65, 0x36, 0x39, 0x66, 0x35, 0x7D, 0x00, 0x00, 0x00, 0x00,
    0x81, 0xCB, 0x00, 0x01, 0x90, 0x2F, 0x9E, 0x2E,
    0x81, 0xCE, 0x00, 0x02, 0x90, 0x2F, 0x9E, 0x2E, 0x90, 0x2F, 0x9E, 0x2E,
    0x85, 0xCD, 0x00, 0x02, 0x90, 0x2F, 0x9E, 0x2E, 0x90, 0x2F, 0x9E, 0x2E,
    0x80, 0xCC, 0x00, 0x03, 0x4B, 0xAA, 0xE1, 0xAB, 0x4E, 0x41, 0x4D, 0x45, 0x41, 0x42, 0x43, 0x44,
]

@Suite struct RTCPCaptureTests {
    @Test func parsesCapturedCompound() throws {
        #expect(capturedCompound.count == 132)
        let packets = try RTCPCompound.parse(capturedCompound)
        #expect(packets.count == 6)
        // RR: jitter 0x111 = 273 ticks, highest seq 0x46E1 = 18145, LSR 0x09F36432, DLSR 0x24A79 = 150137/65536 s ≈ 2.291 s.
        #expect(packets[0] == .receiverReport(ReceiverReport(ssrc: 0x902F_9E2E, reports: [
            ReceptionReport(ssrc: 0xBC5E_9A40, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 18145,
                            jitter: 273, lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 150_137)])))
        guard case let .sourceDescription(sdes) = packets[1] else { Issue.record("not SDES"); return }
        #expect(sdes.chunks.count == 1)
        #expect(sdes.chunks[0].source == 0x902F_9E2E)
        #expect(sdes.chunks[0].cname == "{9c00eb92-1afb-9d49-a47d-91f64eee69f5}")
        #expect(packets[2] == .goodbye(Goodbye(sources: [0x902F_9E2E])))
        #expect(packets[3] == .pictureLossIndication(PictureLossIndication(senderSSRC: 0x902F_9E2E, mediaSSRC: 0x902F_9E2E)))
        guard case let .unknown(rrr, rrrBytes) = packets[4], case let .unknown(app, appBytes) = packets[5] else {
            Issue.record("RTPFB FMT 5 / APP not kept raw"); return
        }
        #expect(rrr == RTCPHeader(count: 5, packetType: 205, length: 2))
        #expect(rrrBytes == Array(capturedCompound[104..<116]))
        #expect(app.packetType == 204 && appBytes == Array(capturedCompound[116...]))
        // Everything, including the SDES chunk's 4 bytes of END + padding, serializes back unchanged.
        #expect(RTCPCompound.serialize(packets) == capturedCompound)
    }

    @Test func everyTruncationOfTheCaptureIsATypedError() {
        let boundaries: Set<Int> = [32, 84, 92, 104, 116]
        for n in 1..<capturedCompound.count where !boundaries.contains(n) {
            #expect(throws: RTCPError.self) { _ = try RTCPCompound.parse(Array(capturedCompound.prefix(n))) }
        }
    }
}
