import Testing
@testable import RTP

@Suite struct RTCPTests {
    /// A report block, hand-built: SSRC 0x902F9E2E, fraction 0x10 (16/256 = 6.25 %),
    /// cumulative lost 0xFFFFFE (−2: duplicates), highest 0x00010004 (cycle 1, seq 4),
    /// jitter 0x19 (25 ticks), LSR 0xB7052000, DLSR 0x00054000 (5.25 s).
    let block: [UInt8] = [0x90, 0x2F, 0x9E, 0x2E, 0x10, 0xFF, 0xFF, 0xFE, 0x00, 0x01, 0x00, 0x04,
                          0x00, 0x00, 0x00, 0x19, 0xB7, 0x05, 0x20, 0x00, 0x00, 0x05, 0x40, 0x00]

    @Test func receiverReport() throws {
        // V=2 RC=1 PT=201 length=7 (32 bytes), sender SSRC 1.
        let bytes: [UInt8] = [0x81, 0xC9, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01] + block
        let rr = try ReceiverReport(parsing: bytes)
        #expect(rr.ssrc == 1)
        #expect(rr.reports == [ReceptionReport(ssrc: 0x902F_9E2E, fractionLost: 16, cumulativeLost: -2,
                                               extendedHighestSequenceNumber: 65540, jitter: 25,
                                               lastSenderReport: 0xB705_2000, delaySinceLastSenderReport: 0x0005_4000)])
        #expect(rr.serialized() == bytes)
    }

    @Test func senderReport() throws {
        // V=2 RC=1 PT=200 length=12 (52 bytes): SSRC 0x11223344, NTP 0xE5F3A2B1_80000000 (…, .5 s),
        // RTP ts 90000, 100 packets, 120000 octets, then the block.
        let bytes: [UInt8] = [0x81, 0xC8, 0x00, 0x0C, 0x11, 0x22, 0x33, 0x44,
                              0xE5, 0xF3, 0xA2, 0xB1, 0x80, 0x00, 0x00, 0x00,
                              0x00, 0x01, 0x5F, 0x90, 0x00, 0x00, 0x00, 0x64, 0x00, 0x01, 0xD4, 0xC0] + block
        let sr = try SenderReport(parsing: bytes)
        #expect(sr.ssrc == 0x1122_3344)
        #expect(sr.ntpTimestamp == 0xE5F3_A2B1_8000_0000)
        #expect(sr.rtpTimestamp == 90_000)
        #expect(sr.packetCount == 100)
        #expect(sr.octetCount == 120_000)
        #expect(sr.reports.count == 1 && sr.reports[0].cumulativeLost == -2)
        #expect(sr.profileExtension.isEmpty)
        #expect(sr.serialized() == bytes)
        #expect(RoundTripTime.middle32(ofNTP: sr.ntpTimestamp) == 0xA2B1_8000)
    }

    @Test func sdesCNAME() throws {
        // SC=1 PT=202 length=3 (16 bytes): SSRC 0x01020304, CNAME(1) len 5 "abcde", end 0, pad 0.
        let bytes: [UInt8] = [0x81, 0xCA, 0x00, 0x03, 0x01, 0x02, 0x03, 0x04,
                              0x01, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65, 0x00]
        let sdes = try SourceDescription(parsing: bytes)
        #expect(sdes.chunks.count == 1)
        #expect(sdes.chunks[0].source == 0x0102_0304)
        #expect(sdes.chunks[0].cname == "abcde")
        #expect(sdes.serialized() == bytes)
        #expect(SourceDescription(ssrc: 0x0102_0304, cname: "abcde").serialized() == bytes)
    }

    @Test func sdesTwoChunksRoundTrip() throws {
        let sdes = SourceDescription(chunks: [
            .init(source: 7, items: [.init(type: 1, text: Array("user@host".utf8)), .init(type: 2, text: Array("N".utf8))]),
            .init(source: 8, items: []),
        ])
        let bytes = sdes.serialized()
        // chunk 1: 4 + (2+9) + (2+1) + 1 = 19 → 20; chunk 2: 4 + 1 → 8; header 4 → 32 bytes.
        #expect(bytes.count == 32)
        #expect(try SourceDescription(parsing: bytes) == sdes)
    }

    @Test func goodbyeWithReason() throws {
        // SC=1 PT=203 length=3: SSRC 0xAABBCCDD, reason len 6 "bye   " → hand: "leave!" then pad 1.
        let bytes: [UInt8] = [0x81, 0xCB, 0x00, 0x03, 0xAA, 0xBB, 0xCC, 0xDD,
                              0x06, 0x6C, 0x65, 0x61, 0x76, 0x65, 0x21, 0x00]
        let bye = try Goodbye(parsing: bytes)
        #expect(bye.sources == [0xAABB_CCDD])
        #expect(String(decoding: bye.reason, as: UTF8.self) == "leave!")
        #expect(bye.serialized() == bytes)
        #expect(try Goodbye(parsing: Goodbye(sources: [1, 2]).serialized()) == Goodbye(sources: [1, 2]))
    }

    /// RFC 4585 §6.2.1: PID = first lost packet; BLP bit i set → PID+i+1 also lost.
    /// PID 100, BLP 0x0005 (bits 0 and 2) → lost 100, 101, 103.
    @Test func genericNackPIDAndBLP() throws {
        let bytes: [UInt8] = [0x81, 0xCD, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                              0x00, 0x64, 0x00, 0x05]
        let nack = try TransportLayerNack(parsing: bytes)
        #expect(nack.senderSSRC == 1 && nack.mediaSSRC == 2)
        #expect(nack.pairs == [.init(packetID: 100, lostPackets: 5)])
        #expect(nack.lostSequenceNumbers == [100, 101, 103])
        #expect(TransportLayerNack(senderSSRC: 1, mediaSSRC: 2, lost: [100, 101, 103]).serialized() == bytes)
    }

    @Test func nackFromListAcrossWrap() throws {
        // 65535 is PID; 0 is 65535+1 → bit 0; 16 is +17 → new pair; 17 → bit 0 of that pair.
        let n = TransportLayerNack(senderSSRC: 1, mediaSSRC: 2, lost: [65535, 0, 16, 17])
        #expect(n.pairs == [.init(packetID: 65535, lostPackets: 0x0001), .init(packetID: 16, lostPackets: 0x0001)])
        #expect(n.lostSequenceNumbers == [65535, 0, 16, 17])
        #expect(try TransportLayerNack(parsing: n.serialized()) == n)
    }

    @Test func pli() throws {
        // RFC 4585 §6.3.1: PSFB (206) FMT=1, length 2, no FCI.
        let bytes: [UInt8] = [0x81, 0xCE, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x12, 0x34, 0x56, 0x78]
        let pli = try PictureLossIndication(parsing: bytes)
        #expect(pli == PictureLossIndication(senderSSRC: 1, mediaSSRC: 0x1234_5678))
        #expect(pli.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [.pictureLossIndication(pli)])
    }

    @Test func fir() throws {
        // RFC 5104 §4.3.1: PSFB FMT=4, media SSRC 0, FCI: SSRC 0x0A0B0C0D, seq nr 3, reserved 0.
        let bytes: [UInt8] = [0x84, 0xCE, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                              0x0A, 0x0B, 0x0C, 0x0D, 0x03, 0x00, 0x00, 0x00]
        let fir = try FullIntraRequest(parsing: bytes)
        #expect(fir.entries == [.init(ssrc: 0x0A0B_0C0D, sequenceNumber: 3)])
        #expect(fir.mediaSSRC == 0)
        #expect(fir.serialized() == bytes)
    }

    /// REMB bytes sent by Chrome while watching a 6 Mb/s stream (as recorded in
    /// pion/rtcp's receiver_estimated_maximum_bitrate_test.go). Num SSRC 1, BR word
    /// 0x1A20DF = 0b000110_10_0010_0000_1101_1111 → exp = top 6 bits = 6, mantissa =
    /// low 18 bits = 0x220DF = 139 487; bitrate = 139 487 × 2^6 = 8 927 168 bit/s.
    /// Re-encoding picks exp 6 again (8 927 168 >> 5 = 278 974 needs 19 bits), so the bytes round-trip.
    @Test func rembFromChrome() throws {
        let bytes: [UInt8] = [143, 206, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 82, 69, 77, 66, 1, 26, 32, 223, 72, 116, 237, 22]
        let remb = try ReceiverEstimatedMaxBitrate(parsing: bytes)
        #expect(remb.bitrate == 8_927_168)
        #expect(remb.ssrcs == [1_215_622_422])
        #expect(remb.senderSSRC == 1)
        #expect(remb.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [.receiverEstimatedMaxBitrate(remb)])
        // One bit/s less cannot be held at exp 6 and rounds down to mantissa 139 486: 8 927 104 bit/s.
        let lower = ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 8_927_167, ssrcs: remb.ssrcs)
        #expect(try ReceiverEstimatedMaxBitrate(parsing: lower.serialized()).bitrate == 8_927_104)
    }

    @Test func compoundRRSDESBye() throws {
        let rr = ReceiverReport(ssrc: 5, reports: [ReceptionReport(ssrc: 6, fractionLost: 1)])
        let sdes = SourceDescription(ssrc: 5, cname: "x")
        let bye = Goodbye(sources: [5])
        let app: [UInt8] = [0x80, 0xCC, 0x00, 0x02, 0, 0, 0, 5, 0x6E, 0x61, 0x6D, 0x65]   // APP (204), kept raw
        let bytes = rr.serialized() + sdes.serialized() + app + bye.serialized()
        let packets = try RTCPCompound.parse(bytes)
        #expect(packets.count == 4)
        #expect(packets[0] == .receiverReport(rr))
        #expect(packets[1] == .sourceDescription(sdes))
        if case let .unknown(h, raw) = packets[2] {
            #expect(h.packetType == 204 && raw == app)
        } else {
            Issue.record("APP not kept raw: \(packets[2])")
        }
        #expect(packets[3] == .goodbye(bye))
        #expect(RTCPCompound.serialize(packets) == bytes)
    }

    @Test func paddedLastPacket() throws {
        // RR RC=0 with P=1: 8 bytes + 4 bytes padding (00 00 00 04); length=2.
        let bytes: [UInt8] = [0xA0, 0xC9, 0x00, 0x02, 0, 0, 0, 9, 0, 0, 0, 4]
        #expect(try RTCPCompound.parse(bytes) == [.receiverReport(ReceiverReport(ssrc: 9))])
    }

    /// RFC 3550 §6.4.1 figure: A = 0xB710:8000 (46864.500 s), LSR = 0xB705:2000
    /// (46853.125 s), DLSR = 0x0005:4000 (5.250 s) → delay 0x0006:2000 = 6.125 s.
    @Test func roundTripTimeFromRFC3550Example() {
        #expect(RoundTripTime.milliseconds(arrival: 0xB710_8000, lastSenderReport: 0xB705_2000,
                                           delaySinceLastSenderReport: 0x0005_4000) == 6125)
        #expect(RoundTripTime.milliseconds(arrival: 0xB710_8000, lastSenderReport: 0,
                                           delaySinceLastSenderReport: 0) == nil)
    }
}

@Suite struct ReceiverStatisticsTests {
    /// RFC 3550 A.8 with 90 kHz timestamps every 3000 ticks. Transit = arrival − ts:
    /// 1000, 1160, 1000, 1000 → |D| = 160, 160, 0. Integer A.8 (J scaled by 16):
    /// J16 = 0+160−0 = 160 (J=10); 160+160−(168>>4=10) = 310 (J=19);
    /// 310+0−(318>>4=19) = 291 (J=18). Floating point gives 10, 19.375, 18.16.
    @Test func jitterWorkedSequence() {
        var s = ReceiverStatistics()
        s.record(sequenceNumber: 1, timestamp: 0, arrival: 1000)
        #expect(s.jitter == 0)
        s.record(sequenceNumber: 2, timestamp: 3000, arrival: 4160)
        #expect(s.jitter == 10)
        s.record(sequenceNumber: 3, timestamp: 6000, arrival: 7000)
        #expect(s.jitter == 19)
        s.record(sequenceNumber: 4, timestamp: 9000, arrival: 10000)
        #expect(s.jitter == 18)
    }

    /// Sequence 65533, 65534, 65535, 1, 2 (0 lost): expected = 65538 − 65533 + 1 = 6,
    /// received 5, lost 1, fraction = 1×256/6 = 42. Then 3, 4, 6 (5 lost):
    /// expected interval 10 − 6 = 4, received 3 → 256/4 = 64.
    @Test func lossAcrossWrap() {
        var s = ReceiverStatistics()
        for (i, seq) in [65533, 65534, 65535, 1, 2].enumerated() {
            s.record(sequenceNumber: UInt16(seq), timestamp: UInt32(i) * 960, arrival: UInt32(i) * 960)
        }
        #expect(s.extendedHighestSequenceNumber == 65538)
        #expect(s.expected == 6)
        #expect(s.cumulativeLost == 1)
        #expect(s.takeFractionLost() == 42)
        for seq in [3, 4, 6] { s.record(sequenceNumber: UInt16(seq), timestamp: 0, arrival: 0) }
        let report = s.makeReport(ssrc: 77)
        #expect(report.fractionLost == 64)
        #expect(report.cumulativeLost == 2)
        #expect(report.extendedHighestSequenceNumber == 65542)
        #expect(report.ssrc == 77)
    }

    @Test func duplicatesMakeLossNegativeAndFractionZero() {
        var s = ReceiverStatistics()
        for seq in [10, 11, 11, 12] as [UInt16] { s.record(sequenceNumber: seq, timestamp: 0, arrival: 0) }
        #expect(s.expected == 3)
        #expect(s.received == 4)
        #expect(s.cumulativeLost == -1)
        #expect(s.takeFractionLost() == 0)
    }

    @Test func largeJumpResyncsAfterTwoSequentialPackets() {
        // A.1: a jump > MAX_DROPOUT is ignored once; the next sequential packet resyncs.
        var s = ReceiverStatistics()
        for seq in [100, 101] as [UInt16] { s.record(sequenceNumber: seq, timestamp: 0, arrival: 0) }
        s.record(sequenceNumber: 20000, timestamp: 0, arrival: 0)
        #expect(s.extendedHighestSequenceNumber == 101)
        s.record(sequenceNumber: 20001, timestamp: 0, arrival: 0)
        #expect(s.extendedHighestSequenceNumber == 20001)
        #expect(s.expected == 1 && s.received == 1)
    }
}
