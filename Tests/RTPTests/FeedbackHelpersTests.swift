import Testing
@testable import RTP

@Suite struct RetransmissionHistoryTests {
    private func packet(_ seq: UInt16) -> RTPPacket {
        RTPPacket(payloadType: 96, sequenceNumber: seq, timestamp: 3000, ssrc: 7, payload: [UInt8(seq & 0xFF)])
    }

    @Test func answersWhatItHoldsInTheOrderAsked() {
        var h = RetransmissionHistory(capacity: 8, maximumAgeMs: 1000)
        for s in UInt16(65530)...UInt16(65535) { h.record(packet(s), nowMs: 0) }
        h.record(packet(0), nowMs: 10)
        h.record(packet(1), nowMs: 10)
        #expect(h.packets(for: [1, 65531, 0], nowMs: 20).map(\.sequenceNumber) == [1, 65531, 0])
        // 8 slots: sequence number 2 overwrites 65530's slot (65530 % 8 == 2).
        h.record(packet(2), nowMs: 20)
        #expect(h.packets(for: [65530], nowMs: 20).isEmpty)
        #expect(h.packets(for: [99], nowMs: 20).isEmpty)
        // Too old to be useful.
        #expect(h.packets(for: [65531], nowMs: 1_001).isEmpty)
        #expect(h.packets(for: [0], nowMs: 1_001).map(\.payload) == [[0]])
    }
}

@Suite struct NackGeneratorTests {
    @Test func asksForAGapAcrossTheWrapThenRetriesThenGivesUp() {
        var g = NackGenerator(maximumRetries: 3, retryIntervalMs: 40)
        g.received(65533, nowMs: 0)
        g.received(1, nowMs: 5)  // 65534, 65535, 0 missing
        #expect(g.due(nowMs: 5) == [65534, 65535, 0])
        #expect(g.due(nowMs: 20) == [])           // not yet time to ask again
        g.received(65535, nowMs: 30)              // retransmission arrives
        #expect(g.recovered == 1)
        #expect(g.due(nowMs: 45) == [65534, 0])   // second try
        #expect(g.due(nowMs: 85) == [65534, 0])   // third try
        #expect(g.due(nowMs: 125) == [])          // given up after 3
        #expect(g.outstanding == 0)
        #expect(g.requested == 3)
    }

    @Test func reorderedPacketsThatWereNeverAskedForAreNotCountedRecovered() {
        var g = NackGenerator()
        g.received(10, nowMs: 0)
        g.received(12, nowMs: 1)
        g.received(11, nowMs: 2)  // arrives before the NACK went out
        #expect(g.due(nowMs: 3) == [])
        #expect(g.recovered == 0)
        #expect(g.requested == 0)
    }

    @Test func aHugeJumpOnlyTracksTheNewestWindow() {
        var g = NackGenerator(maximumAgePackets: 100)
        g.received(0, nowMs: 0)
        g.received(30_000, nowMs: 1)
        let due = g.due(nowMs: 1)
        #expect(due.count == 100)
        #expect(due.first == 29_900)
        #expect(due.last == 29_999)
    }
}

@Suite struct RTCPIntervalTests {
    @Test func twoMembersAtOneSecondMinimumAverageAboutPoint82Seconds() {
        let low = RTCPInterval.milliseconds(members: 2, averagePacketBytes: 100, rtcpBandwidthBitsPerSecond: 50_000, random: 0)
        let high = RTCPInterval.milliseconds(members: 2, averagePacketBytes: 100, rtcpBandwidthBitsPerSecond: 50_000, random: 1)
        let mid = RTCPInterval.milliseconds(members: 2, averagePacketBytes: 100, rtcpBandwidthBitsPerSecond: 50_000, random: 0.5)
        #expect(abs(low - 410.41) < 0.01)   // 1000 × 0.5 / 1.21828
        #expect(abs(high - 1231.24) < 0.01) // 1000 × 1.5 / 1.21828
        #expect(abs(mid - 820.83) < 0.01)
    }

    @Test func lowBandwidthStretchesTheInterval() {
        // 10 members × 200 bytes at 800 bit/s (100 bytes/s) → 20 s deterministic.
        let ms = RTCPInterval.milliseconds(members: 10, averagePacketBytes: 200, rtcpBandwidthBitsPerSecond: 800, random: 0.5)
        #expect(abs(ms - 20_000 / 1.218_281_828) < 0.1)
    }
}
