import Testing
import TestSupport
import Bytes
@testable import RTP

/// The Opus RTP payload format (RFC 7587) and the TOC byte (RFC 6716 §3.1).
@Suite struct OpusPayloadTests {
    /// TOC 0x78: config 15 (Hybrid fullband 20 ms), mono, code 0 → one 960-sample frame,
    /// what Chromium sends. Other configs and codes by the RFC 6716 table.
    @Test func tocDurations() throws {
        let chromium = try OpusTOC(parsing: [0x78, 0x0B])
        #expect(chromium.config == 15 && !chromium.isStereo && chromium.frameCount == 1)
        #expect(chromium.sampleCount == 960)
        #expect(try OpusTOC(parsing: [0xFC]).sampleCount == 960)              // CELT FB 20 ms, stereo
        #expect(try OpusTOC(parsing: [0xFC]).isStereo)
        #expect(try OpusTOC(parsing: [0x18]).sampleCount == 2880)             // SILK NB 60 ms (config 3)
        #expect(try OpusTOC(parsing: [0x09, 0, 0]).sampleCount == 2 * 960)   // config 1 code 1: 2 × 20 ms
        #expect(try OpusTOC(parsing: [0x83, 0x03]).sampleCount == 3 * 120)   // config 16 code 3, M=3: 3 × 2.5 ms
        #expect(throws: OpusPayloadError.badFrameCount(offset: 1, count: 0)) { try OpusTOC(parsing: [0x83, 0x00]) }
        // config 3 (60 ms) × 3 frames = 180 ms > 120 ms.
        #expect(throws: OpusPayloadError.badFrameCount(offset: 1, count: 3)) { try OpusTOC(parsing: [0x1B, 0x03]) }
        #expect(throws: OpusPayloadError.self) { try OpusTOC(parsing: []) }
        #expect(throws: OpusPayloadError.self) { try OpusTOC(parsing: [0x7B]) }
    }

    @Test func packetizerFields() throws {
        var p = OpusPacketizer(ssrc: 0xABCD, payloadType: 111, sequenceNumber: 65_535)
        let a = try p.packetize([0x78, 1, 2], timestamp: 4_294_966_336)
        let b = try p.packetize([0x78, 3], timestamp: 4_294_966_336 &+ 960)
        #expect(a.sequenceNumber == 65_535 && b.sequenceNumber == 0)
        #expect(!a.marker && !b.marker)
        #expect(a.payloadType == 111 && a.ssrc == 0xABCD)
        #expect(a.payload == [0x78, 1, 2])
        #expect(b.timestamp == 0)
        #expect(OpusPacketizer.clockRate == 48_000)
        #expect(throws: OpusPayloadError.emptyPacket) { try p.packetize([], timestamp: 0) }
        // Through the wire format and back.
        #expect(try RTPPacket(parsing: a.serialized()) == a)
        // The first packet after DTX silence carries the marker (RFC 7587 §4.1): byte 1's top bit.
        let talk = try p.packetize([0x78, 4], timestamp: 96_000, marker: true)
        #expect(talk.marker && talk.sequenceNumber == 1)
        #expect(talk.serialized()[1] == 0x80 | 111)
        #expect(try RTPPacket(parsing: talk.serialized()).marker)
    }

    /// 1000 packets of 20 ms (960 ticks), sequence numbers and timestamps both wrapping,
    /// 10 % dropped (not the first or last), ~3 % duplicated, neighbours swapped up to 2
    /// apart. Every packet not dropped comes out once, byte-identical, in order; every
    /// run of dropped packets is one gap with its count, first sequence number, start
    /// timestamp and duration.
    @Test func roundTripWithLossAndReorder() throws {
        var g = SplitMix64(state: 7587)
        var p = OpusPacketizer(ssrc: 1, payloadType: 111, sequenceNumber: 65_000)
        let ts0: UInt32 = 0xFFFF_0000
        var sent: [RTPPacket] = []
        var dropped: [Bool] = []
        var wire: [RTPPacket] = []
        for i in 0..<1000 {
            let body = (0..<Int.random(in: 1...200, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            let q = try p.packetize([0x78] + body, timestamp: ts0 &+ UInt32(i * 960))
            sent.append(q)
            let drop = i != 0 && i != 999 && Int.random(in: 0..<100, using: &g) < 10
            dropped.append(drop)
            if drop { continue }
            wire.append(q)
            if Int.random(in: 0..<100, using: &g) < 3 { wire.append(q) }
        }
        var k = 0
        while k < wire.count - 2 {
            if Int.random(in: 0..<100, using: &g) < 10 {
                let j = k + Int.random(in: 1...2, using: &g)
                wire.swapAt(k, j)
                k = j
            }
            k += 1
        }
        // The expected events: runs of dropped packets become gaps.
        var expected: [OpusDepayloader.Event] = []
        var i = 0
        while i < 1000 {
            if dropped[i] {
                var j = i
                while dropped[j] { j += 1 }
                expected.append(.missing(.init(missingPackets: j - i, firstSequenceNumber: sent[i].sequenceNumber,
                                           timestamp: sent[i].timestamp, duration: UInt32((j - i) * 960))))
                i = j
            } else {
                expected.append(.delivered(.init(data: sent[i].payload, timestamp: sent[i].timestamp,
                                              sequenceNumber: sent[i].sequenceNumber, sampleCount: 960)))
                i += 1
            }
        }
        var d = OpusDepayloader(reorderWindow: 16)
        var events: [OpusDepayloader.Event] = []
        for q in wire { events += d.push(q) }
        events += d.flush()
        #expect(events.count == expected.count)
        let firstDifference = zip(events, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "first differing event at \(firstDifference ?? -1)")
        let droppedCount = dropped.filter { $0 }.count
        let gaps = expected.filter { if case .missing = $0 { true } else { false } }.count
        #expect(d.counters.packetsMissing == droppedCount)
        #expect(d.counters.missingReports == gaps)
        #expect(d.counters.delivered == 1000 - droppedCount)
        #expect(d.counters.duplicatePackets == wire.count - (1000 - droppedCount))
        #expect(d.counters.latePackets == 0)
        print("Opus: 1000 packets, \(droppedCount) dropped in \(gaps) gaps, \(d.counters.duplicatePackets) duplicates, \(d.counters.delivered) delivered")
    }

    /// A packet later than the window is reported in a gap, then ignored and counted;
    /// a silence (DTX) timestamp jump without a sequence gap is no gap.
    @Test func lateAfterWindowAndDTX() throws {
        var p = OpusPacketizer(ssrc: 1, payloadType: 111, sequenceNumber: 10)
        let q = try (0..<6).map { try p.packetize([0x78, UInt8($0)], timestamp: UInt32($0 * 960) + ($0 >= 4 ? 48_000 : 0)) }
        var d = OpusDepayloader(reorderWindow: 2)
        var events: [OpusDepayloader.Event] = []
        for i in [0, 2, 3, 4, 5] { events += d.push(q[i]) }
        #expect(events.count == 6)
        #expect(events[1] == .missing(.init(missingPackets: 1, firstSequenceNumber: 11, timestamp: 960, duration: 960)))
        #expect(d.push(q[1]).isEmpty)
        #expect(d.counters.latePackets == 1)
        #expect(d.counters.missingReports == 1)   // the 1 s jump at packet 4 (DTX) is not a gap
    }

    /// Chromium's Opus packets from a real call: 14 packets, each 960 samples (TOC 0x78),
    /// timestamps 960 apart, no gaps.
    @Test func chromiumCapture() throws {
        let capture = try CaptureFile(named: "chromium-rtp.txt")
        let opus = try #require(capture.encodingOfPayloadType.first { $0.value.hasPrefix("opus/") }?.key)
        let packets = try capture.packets.map { try RTPPacket(parsing: $0) }.filter { $0.payloadType == opus }
        var d = OpusDepayloader()
        var out: [OpusDepayloader.Packet] = []
        for p in packets { for case let .delivered(x) in d.push(p) { out.append(x) } }
        for case let .delivered(x) in d.flush() { out.append(x) }
        #expect(out.count == 14)
        #expect(out.allSatisfy { $0.sampleCount == 960 })
        #expect(zip(out, out.dropFirst()).allSatisfy { $1.timestamp == $0.timestamp &+ 960 })
        #expect(out.map(\.data) == packets.map(\.payload))
        #expect(d.counters.missingReports == 0)
    }
}
