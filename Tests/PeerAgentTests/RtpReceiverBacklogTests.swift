// RtpReceiver: a sink that falls behind drops what arrives instead of queueing it without bound.
import Dispatch
import Foundation
import Media
import RTP
import SDP
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

@Suite struct RtpReceiverBacklogTests {
    /// Real VP8 frames of a 160x120 test pattern (the first and `keyframesAt` key frames),
    /// packetized as a sender would.
    static func packets(frames: Int, keyframesAt: Set<Int>) throws -> [[RTPPacket]] {
        let pattern = try TestPattern(width: 160, height: 120, frameRate: 30)
        let encoder = try VP8Encoder(configuration: VP8EncoderConfiguration(width: 160, height: 120, bitrateKbps: 300))
        var packetizer = try VP8Packetizer(ssrc: 0x1234, payloadType: 96, sequenceNumber: 100, pictureID: 1)
        var out: [[RTPPacket]] = []
        for n in 0..<frames {
            let encoded = try encoder.encode(pattern.frame(number: n, captureTimeMs: Int64(n) * 33),
                                             forceKeyframe: keyframesAt.contains(n))
            for e in encoded {
                out.append(try packetizer.packetize(e.data, timestamp: UInt32(truncatingIfNeeded: e.timestamp)))
            }
        }
        return out
    }

    /// A receiver of `kind` whose sinks run on a thread of its own, held by a first item
    /// until the returned semaphore is signalled.
    static func heldReceiver(_ kind: MediaKind, _ options: ReceiveOptions, payloadType: Int,
                             remoteSSRC: UInt32) -> (receiver: RtpReceiver, thread: MediaThread, hold: DispatchSemaphore) {
        let thread = MediaThread(name: "test.sink")
        let receiver = RtpReceiver(kind: kind, options: options, localSSRC: 1, sinkThread: thread)
        receiver.configure(mid: kind == .audio ? "1" : "0", payloadTypes: [payloadType], remoteSSRC: remoteSSRC)
        let hold = DispatchSemaphore(value: 0)
        thread.async { hold.wait() }
        return (receiver, thread, hold)
    }

    /// Feeds one frame's packets; returns whether a PLI came back.
    static func feed(_ receiver: RtpReceiver, _ frame: [RTPPacket]) -> Bool {
        var pli = false
        for p in frame {
            for fb in receiver.handle(p, payloadBytes: p.payload.count, headerBytes: 12) {
                if case .pictureLossIndication = fb { pli = true }
            }
        }
        return pli
    }

    /// With the sink thread held, 200 frames arrive: 60 are queued, the other 140 are
    /// dropped on arrival (framesDropped, sinkOverflowDrops) and no PLI goes out while the
    /// backlog is over half; once the sink has caught up, the next inter frame brings a
    /// PLI and the next key frame is taken, decoded and recorded (the IVF file stays valid).
    @Test func aSinkThatFallsBehindDropsFramesAndResumesAtAKeyFrame() throws {
        let frames = try Self.packets(frames: 203, keyframesAt: [202])
        #expect(frames.count == 203)
        let dir = TestServices.temporaryDirectory("backlog")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ivf = dir + "/v.ivf"
        let (receiver, _, hold) = Self.heldReceiver(.video, ReceiveOptions(ivfPath: ivf), payloadType: 96, remoteSSRC: 0x1234)

        var plis = 0
        for frame in frames[0..<200] where Self.feed(receiver, frame) { plis += 1 }
        #expect(plis == 0)
        let limit = RtpReceiver.maximumSinkBacklog(.video)
        hold.signal()
        let held = receiver.snapshot()  // waits for the sink: everything queued has run
        #expect(held.framesReceived == 200)
        #expect(held.sinkOverflowDrops == 200 - limit)
        #expect(held.framesDropped == 200 - limit)
        #expect(held.framesDecoded == limit)
        #expect(held.framesWritten == limit)

        // Caught up: an inter frame is still skipped but now asks for a key frame.
        #expect(Self.feed(receiver, frames[200]))
        _ = Self.feed(receiver, frames[201])
        _ = Self.feed(receiver, frames[202])  // the key frame
        receiver.close()
        let after = receiver.snapshot()
        // The two inter frames after the sink caught up are counted as overflow drops too:
        // they were lost to it (decoding cannot resume before a key frame).
        #expect(after.sinkOverflowDrops == 202 - limit)
        #expect(after.framesDropped == 202 - limit)
        #expect(after.framesDecoded == limit + 1)
        #expect(after.keyFramesDecoded == 2)
        #expect(after.framesWritten == limit + 1)
        let file = try IVFReader(path: ivf)
        var count = 0
        while try file.next() != nil { count += 1 }
        #expect(count == limit + 1)
    }

    /// The PLI after an overflow waits until the sink is down to half its bound: with 31
    /// frames still queued an inter frame asks for nothing, with 30 it asks for a key frame.
    /// (Gates are put in the sink thread's queue between the receiver's own items.)
    @Test func thePictureLossIndicationWaitsForHalfTheBacklog() throws {
        let frames = try Self.packets(frames: 70, keyframesAt: [])
        let (receiver, thread, hold) = Self.heldReceiver(.video, ReceiveOptions(decode: false), payloadType: 96, remoteSSRC: 0x1234)
        defer { receiver.close() }
        let gates = (1...2).map { _ in DispatchSemaphore(value: 0) }
        let reached = (1...2).map { _ in DispatchSemaphore(value: 0) }
        func gate(_ k: Int) { thread.async { reached[k].signal(); gates[k].wait() } }
        for frame in frames[0..<29] { #expect(!Self.feed(receiver, frame)) }
        gate(0)
        #expect(!Self.feed(receiver, frames[29]))
        gate(1)
        for frame in frames[30..<60] { #expect(!Self.feed(receiver, frame)) }  // 60 queued: full
        #expect(!Self.feed(receiver, frames[60]))  // dropped on arrival; waits for a key frame
        #expect(!Self.feed(receiver, frames[61]))  // 60 behind: no PLI
        hold.signal(); reached[0].wait()           // the sink ran 29: 31 behind
        #expect(!Self.feed(receiver, frames[62]))
        gates[0].signal(); reached[1].wait()       // one more: 30 behind, half
        #expect(Self.feed(receiver, frames[63]))
        gates[1].signal()
        #expect(receiver.snapshot().sinkOverflowDrops == 4)  // frames 60–63
    }

    /// Audio the same way: with the sink held, 120 Opus packets arrive; 100 are queued and
    /// 20 discarded (packetsDiscarded, sinkOverflowDrops). Once the sink has caught up the
    /// next packets are decoded and recorded again: the decoder conceals the 20 packets'
    /// time (so decoded audio keeps the call's length) and the Ogg file fills the gap.
    @Test func anAudioSinkThatFallsBehindDiscardsPackets() throws {
        var tone = try ToneGenerator(frequency: 440, levelDBFS: -20)
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration())
        var packetizer = OpusPacketizer(ssrc: 0x99, payloadType: 111, sequenceNumber: 7)
        var packets: [RTPPacket] = []
        for n in 0..<130 {
            let encoded = try encoder.encode(tone.next(sampleCount: 960))
            packets.append(try packetizer.packetize(encoded.data, timestamp: UInt32(n * 960)))
        }
        let dir = TestServices.temporaryDirectory("backlog")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ogg = dir + "/a.ogg"
        let (receiver, _, hold) = Self.heldReceiver(.audio, ReceiveOptions(oggPath: ogg), payloadType: 111, remoteSSRC: 0x99)
        for p in packets[0..<120] { _ = receiver.handle(p, payloadBytes: p.payload.count, headerBytes: 12) }
        let limit = RtpReceiver.maximumSinkBacklog(.audio)
        hold.signal()
        let held = receiver.snapshot()
        #expect(held.framesWritten == limit)
        #expect(held.sinkOverflowDrops == 120 - limit)
        #expect(held.packetsDiscarded == 120 - limit)
        for p in packets[120..<130] { _ = receiver.handle(p, payloadBytes: p.payload.count, headerBytes: 12) }
        receiver.close()
        let after = receiver.snapshot()
        #expect(after.framesWritten == limit + 10)
        #expect(after.sinkOverflowDrops == 120 - limit)
        #expect(after.concealedSamples == (120 - limit) * 960)
        #expect(after.totalSamplesReceived == 130 * 960)  // decoded + concealed: the call's length
        // The file is whole and its length true: the dropped packets' time is filled.
        let file = try OggOpusReader(path: ogg)
        #expect(file.endOfStream)
        #expect(file.playbackSamples == 130 * 960 - Int64(file.head.preSkip))  // 130 packets of 20 ms
    }
}
