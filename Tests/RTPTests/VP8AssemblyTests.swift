import Testing
import TestSupport
import Bytes
@testable import RTP

/// VP8 packetizer (RFC 7741 §4.4) and frame assembler: fragmentation, wrap-around,
/// loss, reordering and duplicates, checked against the source frames byte for byte.
@Suite struct VP8AssemblyTests {
    // MARK: - Synthetic frames

    /// Frame `i` of a synthetic stream: random bytes, 50 B–30 KB, with a VP8 frame tag;
    /// every 60th frame is a key frame with start code and 640×360 (scale bits set on width).
    static func syntheticFrame(_ i: Int, using g: inout SplitMix64) -> [UInt8] {
        let size = Int.random(in: 50...30_000, using: &g)
        var f: [UInt8] = []
        f.reserveCapacity(size + 8)
        while f.count < size { withUnsafeBytes(of: g.next()) { f += $0 } }
        f.removeLast(f.count - size)
        if i % 60 == 0 {
            f.replaceSubrange(0..<10, with: [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x42, 0x68, 0x01])
        } else {
            f[0] |= 0x01
        }
        return f
    }

    struct Outcome {
        var delivered: [Int] = []       // source frame indices, in event order
        var lost: [Int] = []            // source frame indices, in event order
        var lossEvents = 0
        var counters = VP8FrameAssembler.Counters()
        var packetsSent = 0
        var packetsDropped = 0
    }

    /// Packetizes `count` synthetic frames, drops `lossPercent` % of the packets (never
    /// from the first or last frame: a receiver cannot know of frames before its first
    /// packet or after its last), duplicates ~3 %, swaps ~10 % of packets with one up to 3 places later (disjoint swaps), and
    /// feeds the assembler. Checks every event against the source and returns the tally.
    func run(count: Int, sequenceNumber: UInt16, pictureID: UInt16, timestamp: UInt32,
             lossPercent: Int, seed: UInt64, reorderDelay: UInt32? = nil) throws -> Outcome {
        var g = SplitMix64(state: seed)
        var packetizer = try VP8Packetizer(ssrc: 0x1234_5678, payloadType: 96, sequenceNumber: sequenceNumber,
                                           pictureID: pictureID)
        var frames: [[UInt8]] = []
        var wire: [(packet: RTPPacket, frame: Int)] = []
        var outcome = Outcome()
        var hit = Set<Int>()
        for i in 0..<count {
            let f = Self.syntheticFrame(i, using: &g)
            frames.append(f)
            let ps = try packetizer.packetize(f, timestamp: timestamp &+ UInt32(i * 3000))
            for p in ps {
                #expect(p.payload.count <= 1200)
                outcome.packetsSent += 1
                if i != 0 && i != count - 1 && Int.random(in: 0..<100, using: &g) < lossPercent {
                    hit.insert(i)
                    outcome.packetsDropped += 1
                    continue
                }
                wire.append((p, i))
                if Int.random(in: 0..<100, using: &g) < 3 { wire.append((p, i)) }
            }
        }
        var k = 0
        while k < wire.count - 3 {
            if Int.random(in: 0..<100, using: &g) < 10 {
                let j = k + Int.random(in: 1...3, using: &g)
                wire.swapAt(k, j)
                k = j
            }
            k += 1
        }
        let timestampToFrame = Dictionary(uniqueKeysWithValues: (0..<count).map { (timestamp &+ UInt32($0 * 3000), $0) })
        let pictureIDToFrame = Dictionary(uniqueKeysWithValues: (0..<count).map { (UInt16((Int(pictureID) + $0) % 32768), $0) })

        var assembler = VP8FrameAssembler(reorderDelay: reorderDelay)
        var events: [VP8FrameAssembler.Event] = []
        for (p, _) in wire { events += assembler.push(p) }
        events += assembler.flush()
        for e in events {
            switch e {
            case let .delivered(f):
                let i = try #require(timestampToFrame[f.timestamp])
                #expect(f.pictureID == UInt16((Int(pictureID) + i) % 32768))
                #expect(f.data == frames[i], "frame \(i) not byte-identical")
                #expect(f.isKeyframe == (i % 60 == 0))
                if i % 60 == 0 {
                    #expect(f.width == 640 && f.height == 360)
                }
                outcome.delivered.append(i)
            case let .missing(loss):
                outcome.lossEvents += 1
                #expect(!loss.frames.isEmpty)
                for lf in loss.frames {
                    if let ts = lf.timestamp {
                        let i = try #require(timestampToFrame[ts])
                        #expect(lf.pictureID == UInt16((Int(pictureID) + i) % 32768))
                        #expect(lf.receivedPackets > 0)
                        outcome.lost.append(i)
                    } else {
                        let pid = try #require(lf.pictureID, "a lost frame with neither timestamp nor PictureID")
                        outcome.lost.append(try #require(pictureIDToFrame[pid]))
                    }
                }
            }
        }
        outcome.counters = assembler.counters
        // Decode order: delivered and lost frames together come out in source order, each once.
        let order = events.flatMap { e -> [Int] in
            switch e {
            case let .delivered(f): return timestampToFrame[f.timestamp].map { [$0] } ?? []
            case let .missing(l): return l.frames.compactMap { lf in
                lf.timestamp.flatMap { timestampToFrame[$0] } ?? lf.pictureID.flatMap { pictureIDToFrame[$0] } }
            }
        }
        #expect(order == Array(0..<count), "every frame exactly once, delivered or lost, in decode order")
        // Exactly the frames that lost a packet are lost (reordering stays inside the window).
        #expect(Set(outcome.lost) == hit)
        #expect(Set(outcome.delivered) == Set(0..<count).subtracting(hit))
        #expect(outcome.counters.delivered == outcome.delivered.count)
        #expect(outcome.counters.framesLost == outcome.lost.count)
        #expect(outcome.counters.packetsMissing == outcome.packetsDropped)
        #expect(outcome.counters.duplicatePackets == wire.count - (outcome.packetsSent - outcome.packetsDropped))
        #expect(outcome.counters.keyFramesEmitted == outcome.delivered.filter { $0 % 60 == 0 }.count)
        return outcome
    }

    func report(_ name: String, _ o: Outcome) {
        print("""
            VP8 \(name): \(o.packetsSent) packets sent, \(o.packetsDropped) dropped, \
            \(o.counters.duplicatePackets) duplicates; frames delivered \(o.delivered.count), \
            lost \(o.lost.count) in \(o.lossEvents) reports, late \(o.counters.latePackets), \
            discarded \(o.counters.discardedPackets)
            """)
    }

    // MARK: - Acceptance 1: loss, reordering, duplicates

    @Test func lossReorderAndDuplicates() throws {
        let o = try run(count: 500, sequenceNumber: 1000, pictureID: 100, timestamp: 90_000,
                        lossPercent: 10, seed: 1)
        report("10 % loss", o)
        #expect(o.delivered.count >= 100, "a meaningful share is delivered")
        #expect(o.lost.count >= 100)
    }

    /// The same with sequence numbers starting at 65 500 (wrapping after 36 packets), the
    /// PictureID at 32 700 (wrapping after 68 frames) and the timestamp near 2^32.
    @Test func lossReorderAndDuplicatesAcrossWraps() throws {
        let o = try run(count: 500, sequenceNumber: 65_500, pictureID: 32_700, timestamp: 0xFFFF_0000,
                        lossPercent: 10, seed: 2)
        report("10 % loss, wrapping", o)
        #expect(o.delivered.count >= 100)
        #expect(o.packetsSent > 65_536 - 65_500)
    }

    /// The same with the media-clock time bound (frames are 3000 ticks apart, the bound
    /// 9000): reordering by up to 3 packets never outlasts it, so the outcome is as exact.
    @Test func lossReorderAndDuplicatesWithReorderDelay() throws {
        let o = try run(count: 500, sequenceNumber: 30_000, pictureID: 0, timestamp: 1,
                        lossPercent: 10, seed: 4, reorderDelay: 9000)
        report("10 % loss, 100 ms bound", o)
        #expect(o.delivered.count >= 100)
    }

    /// Without loss, reordering and duplicates alone lose nothing.
    @Test func noLossDeliversEverything() throws {
        let o = try run(count: 120, sequenceNumber: 65_000, pictureID: 5, timestamp: 0, lossPercent: 0, seed: 3)
        #expect(o.delivered == Array(0..<120))
        #expect(o.lost.isEmpty && o.lossEvents == 0)
    }

    // MARK: - Acceptance 2: PictureID wrap

    @Test func pictureIDWrapsAt2To15() throws {
        var packetizer = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 7, pictureID: 32766)
        var assembler = VP8FrameAssembler()
        var descriptorIDs: [UInt16] = []
        var emitted: [UInt16?] = []
        for i in 0..<5 {
            let frame = [UInt8(0x01)] + [UInt8](repeating: UInt8(i), count: 2000)
            for p in try packetizer.packetize(frame, timestamp: UInt32(i * 3000)) {
                let (d, _) = try VP8PayloadDescriptor.parse(p.payload)
                if d.isFrameStart { descriptorIDs.append(try #require(d.pictureID).value) }
                #expect(d.pictureID?.isFifteenBit == true)
                for case let .delivered(f) in assembler.push(p) { emitted.append(f.pictureID) }
            }
        }
        #expect(descriptorIDs == [32766, 32767, 0, 1, 2])
        #expect(emitted == [32766, 32767, 0, 1, 2])
        #expect(packetizer.nextPictureID == 3)
    }

    /// A frame lost whole across the PictureID wrap is named by the PictureID it must have had.
    @Test func wholeFrameLostAcrossPictureIDWrapIsInferred() throws {
        var packetizer = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 100, pictureID: 32766)
        var assembler = VP8FrameAssembler(reorderWindow: 2)
        var events: [VP8FrameAssembler.Event] = []
        for i in 0..<6 {
            let ps = try packetizer.packetize([0x01, UInt8(i), 2, 3], timestamp: UInt32(i * 3000))
            if i == 2 || i == 3 { continue }       // PictureIDs 0 and 1 never arrive
            for p in ps { events += assembler.push(p) }
        }
        events += assembler.flush()
        #expect(events == [
            .delivered(.init(data: [0x01, 0, 2, 3], timestamp: 0, pictureID: 32766, isKeyframe: false, width: nil, height: nil,
                         firstSequenceNumber: 100, lastSequenceNumber: 100, packetCount: 1)),
            .delivered(.init(data: [0x01, 1, 2, 3], timestamp: 3000, pictureID: 32767, isKeyframe: false, width: nil, height: nil,
                         firstSequenceNumber: 101, lastSequenceNumber: 101, packetCount: 1)),
            .missing(.init(frames: [.init(timestamp: nil, pictureID: 0, receivedPackets: 0),
                                 .init(timestamp: nil, pictureID: 1, receivedPackets: 0)],
                        missingSequenceNumbers: [102, 103], missingPacketCount: 2)),
            .delivered(.init(data: [0x01, 4, 2, 3], timestamp: 12000, pictureID: 2, isKeyframe: false, width: nil, height: nil,
                         firstSequenceNumber: 104, lastSequenceNumber: 104, packetCount: 1)),
            .delivered(.init(data: [0x01, 5, 2, 3], timestamp: 15000, pictureID: 3, isKeyframe: false, width: nil, height: nil,
                         firstSequenceNumber: 105, lastSequenceNumber: 105, packetCount: 1)),
        ])
    }

    // MARK: - Acceptance 3: hand-built packets, MTU, duplicates, missing packets

    /// A hand-built packet: descriptor bytes, then VP8 bytes.
    func packet(_ seq: UInt16, ts: UInt32, marker: Bool, _ descriptor: [UInt8], _ vp8: [UInt8]) -> RTPPacket {
        RTPPacket(marker: marker, payloadType: 96, sequenceNumber: seq, timestamp: ts, ssrc: 9, payload: descriptor + vp8)
    }

    /// 7-bit PictureIDs (M=0) from another sender: accepted, wrapping at 128, and a frame
    /// lost whole between 127 and 1 is inferred as PictureID 0.
    @Test func sevenBitPictureIDsOnReceive() throws {
        var a = VP8FrameAssembler(reorderWindow: 3)
        var events: [VP8FrameAssembler.Event] = []
        // Frame PictureID 126: two packets (S=1 then S=0).
        events += a.push(packet(10, ts: 1000, marker: false, [0x90, 0x80, 0x7E], [0x11, 0x22]))
        events += a.push(packet(11, ts: 1000, marker: true, [0x80, 0x80, 0x7E], [0x33]))
        // PictureID 127: one packet; 0: lost (seq 13); 1: one packet.
        events += a.push(packet(12, ts: 2000, marker: true, [0x90, 0x80, 0x7F], [0x45]))
        events += a.push(packet(14, ts: 4000, marker: true, [0x90, 0x80, 0x01], [0x47]))
        for s in UInt16(15)...17 {
            events += a.push(packet(s, ts: 5000 + UInt32(s), marker: true, [0x90, 0x80, UInt8(s - 13)], [0x49]))
        }
        let frames = events.compactMap { if case let .delivered(f) = $0 { f } else { nil } }
        #expect(frames.map(\.pictureID) == [126, 127, 1, 2, 3, 4])
        #expect(frames.first?.data == [0x11, 0x22, 0x33])
        #expect(frames.first?.firstSequenceNumber == 10 && frames.first?.lastSequenceNumber == 11)
        let losses = events.compactMap { if case let .missing(l) = $0 { l } else { nil } }
        #expect(losses == [.init(frames: [.init(timestamp: nil, pictureID: 0, receivedPackets: 0)],
                                 missingSequenceNumbers: [13], missingPacketCount: 1)])
        #expect(a.counters.framesLost == 1 && a.counters.packetsMissing == 1)
    }

    @Test func mtuBoundaries() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0)
        #expect(p.maximumPayloadSize == 1200)
        let exact = try p.packetize([UInt8](repeating: 1, count: 1196), timestamp: 0)
        #expect(exact.count == 1)
        #expect(exact[0].payload.count == 1200)
        #expect(exact[0].marker)
        let over = try p.packetize([UInt8](repeating: 1, count: 1197), timestamp: 0)
        #expect(over.map(\.payload.count) == [603, 602])
        #expect(over.map(\.marker) == [false, true])
        #expect(over.map(\.sequenceNumber) == [1, 2])

        // Even spread for every size, any MTU: packets ≤ MTU, sizes within one byte, fewest packets.
        var g = SplitMix64(state: 5)
        for _ in 0..<100 {
            let mtu = Int.random(in: 5...1500, using: &g)
            var q = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0, maximumPayloadSize: mtu)
            let size = Int.random(in: 1...20_000, using: &g)
            let frame = (0..<size).map { _ in UInt8.random(in: 0...255, using: &g) }
            let ps = try q.packetize(frame, timestamp: 0)
            #expect(ps.count == (size + mtu - 5) / (mtu - 4))
            #expect(ps.allSatisfy { $0.payload.count <= mtu })
            let sizes = ps.map { $0.payload.count }
            #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1)
            #expect(ps.flatMap { $0.payload.dropFirst(4) } == frame)
        }
        #expect(throws: VP8PayloadError.payloadSizeTooSmall(maximumPayloadSize: 4, descriptorLength: 4)) {
            try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0, maximumPayloadSize: 4)
        }
        #expect(throws: VP8PayloadError.emptyFrame) { try p.packetize([], timestamp: 0) }
    }

    /// The header extension given to the packetizer is on every packet, outside the payload budget.
    @Test func headerExtensionPassesThrough() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0, maximumPayloadSize: 100)
        let mid = RTPHeaderExtension.oneByte([RTPExtensionElement(id: 4, data: Array("0".utf8))])
        let ps = try p.packetize([UInt8](repeating: 3, count: 500), timestamp: 0, headerExtension: mid)
        #expect(ps.count == 6)
        #expect(ps.allSatisfy { $0.headerExtension == mid && $0.payload.count <= 100 })
    }

    @Test func duplicatesAloneDeliverOnce() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 65_530, pictureID: 0)
        var a = VP8FrameAssembler()
        var frames: [VP8FrameAssembler.Frame] = []
        var sent = 0
        for i in 0..<4 {
            let ps = try p.packetize([0x01] + [UInt8](repeating: UInt8(i), count: 3000), timestamp: UInt32(i))
            sent += ps.count
            for q in ps {
                for case let .delivered(f) in a.push(q) { frames.append(f) }
                for case let .delivered(f) in a.push(q) { frames.append(f) }
            }
        }
        for case let .delivered(f) in a.flush() { frames.append(f) }
        #expect(frames.map(\.timestamp) == [0, 1, 2, 3])
        #expect(frames.allSatisfy { $0.data.count == 3001 && $0.packetCount == 3 })
        #expect(frames.map(\.firstSequenceNumber) == [65_530, 65_533, 0, 3])
        #expect(a.counters.duplicatePackets == sent)
        #expect(a.counters.framesLost == 0 && a.counters.delivered == 4)
    }

    /// A 3-packet frame between two good frames, missing its first, middle or last
    /// packet: reported lost with its timestamp and PictureID, the missing sequence number
    /// named, the neighbours delivered, nothing of it emitted. Once declared lost, the
    /// missing packet arriving late is ignored and counted.
    @Test(arguments: [0, 1, 2])
    func frameMissingOnePacket(missing: Int) throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 500, pictureID: 40, maximumPayloadSize: 104)
        let good1 = try p.packetize([0x01] + [UInt8](repeating: 1, count: 150), timestamp: 3000)
        let broken = try p.packetize([0x01] + [UInt8](repeating: 2, count: 250), timestamp: 6000)
        let good2 = try p.packetize([0x01] + [UInt8](repeating: 3, count: 150), timestamp: 9000)
        #expect(broken.count == 3)
        var a = VP8FrameAssembler(reorderWindow: 2)
        var events: [VP8FrameAssembler.Event] = []
        let kept = broken.enumerated().filter { $0.offset != missing }.map(\.element)
        for q in good1 + kept + good2 {
            events += a.push(q)
        }
        events += a.flush()
        #expect(events.count == 3)
        guard events.count == 3, case let .delivered(f1) = events[0], case let .missing(loss) = events[1],
              case let .delivered(f2) = events[2] else {
            Issue.record("unexpected events \(events)")
            return
        }
        #expect(f1.timestamp == 3000 && f1.pictureID == 40 && f1.data == [0x01] + [UInt8](repeating: 1, count: 150))
        #expect(loss.frames == [.init(timestamp: 6000, pictureID: 41, receivedPackets: 2)])
        #expect(loss.missingSequenceNumbers == [broken[missing].sequenceNumber])
        #expect(loss.missingPacketCount == 1)
        #expect(f2.timestamp == 9000 && f2.pictureID == 42 && f2.data == [0x01] + [UInt8](repeating: 3, count: 150))
        // The missing packet turns up after the loss was declared: ignored, counted late.
        #expect(a.push(broken[missing]).isEmpty)
        #expect(a.counters.latePackets == 1)
        #expect(a.counters.delivered == 2 && a.counters.framesLost == 1 && a.counters.discardedPackets == 2)
    }

    /// The loss is declared by the reorder window alone (no flush): once a packet 2
    /// sequence numbers past the hole arrives.
    @Test func lossDeclaredByWindow() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0)
        var a = VP8FrameAssembler(reorderWindow: 2)
        let f = (0..<5).map { i in [UInt8(0x01), UInt8(i)] }
        let ps = try f.enumerated().map { try p.packetize($0.element, timestamp: UInt32($0.offset)) }
        #expect(a.push(ps[0][0]).count == 1)
        #expect(a.push(ps[2][0]).isEmpty)            // seq 1 missing: wait
        let e = a.push(ps[3][0])                       // seq 3: two past the hole → lost, then 2 and 3 emitted
        #expect(e.count == 3)
        #expect(e.first == .missing(.init(frames: [.init(timestamp: nil, pictureID: 1, receivedPackets: 0)],
                                       missingSequenceNumbers: [1], missingPacketCount: 1)))
    }

    /// The time bound from the media clock: one packet per frame, 3000 ticks apart, the
    /// second frame lost. With `reorderDelay: 9000` the loss is declared when a packet
    /// more than 9000 ticks past the last frame arrives (frame 4), long before 64 packets.
    @Test func lossDeclaredByReorderDelay() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 0, pictureID: 0)
        let ps = try (0..<5).map { try p.packetize([0x01, UInt8($0)], timestamp: UInt32($0 * 3000)) }
        var timed = VP8FrameAssembler(reorderDelay: 9000)
        var untimed = VP8FrameAssembler()
        var counts: [Int] = []
        for i in [0, 2, 3, 4] {
            counts.append(timed.push(ps[i][0]).count)
            _ = untimed.push(ps[i][0])
        }
        #expect(counts == [1, 0, 0, 4])   // frame 0; wait; wait (9000 is not past 9000); lost + frames 2, 3, 4
        #expect(timed.counters.framesLost == 1 && timed.counters.delivered == 4)
        #expect(untimed.counters.framesLost == 0 && untimed.counters.delivered == 1)
    }

    /// A sender without PictureIDs (1-byte descriptors): a frame lost whole shows as one
    /// entry with neither timestamp nor PictureID; a partly received one by its timestamp.
    @Test func lossWithoutPictureIDs() throws {
        var a = VP8FrameAssembler(reorderWindow: 2)
        var events: [VP8FrameAssembler.Event] = []
        events += a.push(packet(1, ts: 100, marker: true, [0x10], [0x01]))
        // seq 2 (a whole frame) lost; frame ts 300 = seq 3 (start), seq 4 lost, seq 5 (marker).
        events += a.push(packet(3, ts: 300, marker: false, [0x10], [0x01]))
        events += a.push(packet(5, ts: 300, marker: true, [0x00], [0x02]))
        for s in UInt16(6)...8 { events += a.push(packet(s, ts: 100 * UInt32(s), marker: true, [0x10], [0x01, UInt8(s)])) }
        let losses = events.compactMap { if case let .missing(l) = $0 { l } else { nil } }
        #expect(losses.flatMap(\.frames) == [.init(timestamp: nil, pictureID: nil, receivedPackets: 0),
                                              .init(timestamp: 300, pictureID: nil, receivedPackets: 2)])
        #expect(losses.flatMap(\.missingSequenceNumbers) == [2, 4])
        let frames = events.compactMap { if case let .delivered(f) = $0 { f.timestamp } else { nil } }
        #expect(frames == [100, 600, 700, 800])
    }

    /// The very first packets arrive out of order (second packet first): the assembler
    /// waits for the frame start instead of declaring the stream's first frame lost.
    @Test func reorderedStreamStart() throws {
        var p = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 65_535, pictureID: 9, maximumPayloadSize: 10)
        let ps = try p.packetize([0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9], timestamp: 77)
        #expect(ps.count == 2)
        var a = VP8FrameAssembler()
        #expect(a.push(ps[1]).isEmpty)
        let e = a.push(ps[0])
        #expect(e == [.delivered(.init(data: [0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9], timestamp: 77, pictureID: 9, isKeyframe: false,
                                   width: nil, height: nil, firstSequenceNumber: 65_535, lastSequenceNumber: 0,
                                   packetCount: 2))])
    }

    /// Garbage: bad descriptors, padding-only packets, other SSRCs, random packets —
    /// counted, never a crash, never a frame with a hole.
    @Test func garbageIsCountedNeverFatal() throws {
        var a = VP8FrameAssembler(reorderWindow: 4)
        var events: [VP8FrameAssembler.Event] = []
        events += a.push(packet(1, ts: 10, marker: true, [0x10], [0x01, 0xAA]))
        events += a.push(packet(2, ts: 20, marker: false, [0x80], []))              // truncated descriptor
        events += a.push(packet(3, ts: 20, marker: true, [0x00], [0x01]))
        events += a.push(RTPPacket(payloadType: 96, sequenceNumber: 4, timestamp: 30, ssrc: 9))   // padding only
        events += a.push(packet(5, ts: 40, marker: true, [0x10], [0x01, 0xBB]))
        events += a.push(RTPPacket(payloadType: 96, sequenceNumber: 6, timestamp: 40, ssrc: 77, payload: [0x10, 1]))
        events += a.flush()
        let frames = events.compactMap { if case let .delivered(f) = $0 { f } else { nil } }
        #expect(frames.map(\.data) == [[0x01, 0xAA], [0x01, 0xBB]])
        #expect(a.counters.malformedPackets == 1)
        #expect(a.counters.emptyPackets == 1)
        #expect(a.counters.otherSSRCPackets == 1)
        #expect(a.counters.framesLost == 1)

        var g = SplitMix64(state: 1234)
        var r = VP8FrameAssembler(reorderWindow: 8)
        for _ in 0..<20_000 {
            let payload = (0..<Int.random(in: 0...6, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            let q = RTPPacket(marker: .random(using: &g), payloadType: 96,
                              sequenceNumber: UInt16.random(in: 0...40, using: &g) &* (Bool.random(using: &g) ? 1 : 1500),
                              timestamp: .random(in: 0...3, using: &g), ssrc: 5, payload: payload)
            for case let .delivered(f) in r.push(q) { #expect(!f.data.isEmpty) }
        }
        _ = r.flush()
        #expect(r.counters.packetsReceived == 20_000)
    }

    /// Chromium's VP8 packets from a real call: five frames, the first a 640×480 key
    /// frame in three packets, PictureIDs consecutive, bytes = payloads minus descriptors.
    @Test func chromiumCapture() throws {
        let capture = try CaptureFile(named: "chromium-rtp.txt")
        let vp8 = try #require(capture.encodingOfPayloadType.first { $0.value.hasPrefix("VP8/") }?.key)
        let packets = try capture.packets.map { try RTPPacket(parsing: $0) }.filter { $0.payloadType == vp8 }
        var a = VP8FrameAssembler()
        var frames: [VP8FrameAssembler.Frame] = []
        for p in packets { for case let .delivered(f) in a.push(p) { frames.append(f) } }
        #expect(a.flush().isEmpty)
        #expect(frames.count == 5)
        let key = try #require(frames.first)
        #expect(key.isKeyframe && key.width == 640 && key.height == 480 && key.packetCount == 3)
        #expect(key.data == packets.prefix(3).flatMap { $0.payload.dropFirst(4) })
        #expect(frames.dropFirst().allSatisfy { !$0.isKeyframe && $0.width == nil })
        let ids = frames.compactMap(\.pictureID)
        #expect(ids.count == 5 && zip(ids, ids.dropFirst()).allSatisfy { $1 == $0 + 1 })
        #expect(frames.map(\.packetCount).reduce(0, +) == packets.count)
    }
}
