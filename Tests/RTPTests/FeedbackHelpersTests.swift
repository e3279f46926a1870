import Testing
import TestSupport
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

/// Issue 7 B: received() trims only what fell out of the window, and still behaves like
/// the plain "filter the whole dictionary" algorithm it replaced.
@Suite struct NackGeneratorWindowTests {
    /// The old algorithm, kept as the reference: every forward packet rebuilds the dictionary.
    struct Reference {
        var maximumRetries = 10, retryIntervalMs: Int64 = 40, maximumAgePackets: Int64 = 500
        var unwrapper = SequenceUnwrapper()
        var newest: Int64?
        var missing: [Int64: (tries: Int, lastAskedMs: Int64)] = [:]
        var requested = 0, recovered = 0
        mutating func received(_ sequenceNumber: UInt16, nowMs: Int64) {
            let seq = unwrapper.unwrap(sequenceNumber)
            guard let last = newest else { newest = seq; return }
            if seq > last {
                var s = max(last + 1, seq - maximumAgePackets)
                while s < seq { missing[s] = (0, 0); s += 1 }
                newest = seq
                missing = missing.filter { $0.key >= seq - maximumAgePackets }
            } else if missing.removeValue(forKey: seq).map({ $0.tries > 0 }) == true {
                recovered += 1
            }
        }
        mutating func due(nowMs: Int64) -> [UInt16] {
            var out: [UInt16] = []
            for key in missing.keys.sorted() {
                guard let entry = missing[key] else { continue }
                if entry.tries >= maximumRetries { missing[key] = nil; continue }
                if entry.tries == 0 || nowMs - entry.lastAskedMs >= retryIntervalMs {
                    if entry.tries == 0 { requested += 1 }
                    missing[key] = (entry.tries + 1, nowMs)
                    out.append(UInt16(truncatingIfNeeded: key))
                }
            }
            return out
        }
    }

    @Test func sameRequestsAsTheReferenceOnASeededLossyStream() {
        var rng = SplitMix64(state: 0x7AC4)
        var g = NackGenerator(maximumAgePackets: 64)
        var ref = Reference(maximumAgePackets: 64)
        var seq: UInt16 = 65_000, now: Int64 = 0
        var late: [UInt16] = []
        var asked = 0
        for _ in 0..<20_000 {
            now += Int64.random(in: 0...3, using: &rng)
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 8, let l = late.popLast() {
                g.received(l, nowMs: now); ref.received(l, nowMs: now)          // a late or retransmitted packet
            } else {
                let jump = roll < 20 ? UInt16.random(in: 2...6, using: &rng) : (roll < 21 ? 300 : 1)
                for k in 1..<jump where Int.random(in: 0..<3, using: &rng) == 0 { late.append(seq &+ k) }
                seq &+= jump
                g.received(seq, nowMs: now); ref.received(seq, nowMs: now)
            }
            if roll % 5 == 0 {
                let a = g.due(nowMs: now), b = ref.due(nowMs: now)
                #expect(a == b)
                asked += a.count
                if a != b { return }
            }
            #expect(g.outstanding == ref.missing.count)
        }
        #expect(g.requested == ref.requested && g.recovered == ref.recovered)
        #expect(asked > 1_000 && g.recovered > 100)
        print("NACK model: \(asked) requests, \(g.requested) packets asked, \(g.recovered) recovered")
    }

    /// 100 000 in-order packets with every other one missing (about 250 outstanding in the
    /// 500-packet window): trimming visits about one key per packet. The old filter visited
    /// every outstanding key on every packet: about 250 × 100 000 = 25 million.
    @Test func trimmingCostsAboutOneKeyPerForwardPacket() {
        var g = NackGenerator(maximumRetries: .max)
        var seq: UInt16 = 0
        for i in 0..<100_000 {
            seq &+= 2
            g.received(seq, nowMs: Int64(i))
        }
        #expect(g.outstanding == 250)
        #expect(g.windowWork < 210_000, "visited \(g.windowWork) keys")
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
