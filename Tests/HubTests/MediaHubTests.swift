// MediaHubTests: one source, one encoder and one packetization shared by many subscribers on their own event loops; files read once; key frames merged and rate-limited; late joiners start at a key frame.
import EventLoop
import Foundation
import Hub
import Media
import RTP
import Synchronization
import Testing
import TestSupport

/// Serialized: the tests count the process's `peer.hub.*` threads, which only this suite makes.
@Suite(.serialized) struct MediaHubTests {
    /// Two and fifty subscribers of one pattern source (on two loops) share one encoder:
    /// 30 frames are encoded 30 times in all, and every subscriber gets the same 30 frame
    /// objects, one hop per frame and loop.
    @Test(arguments: [2, 50]) func subscribersShareOneEncoder(count: Int) async throws {
        let hub = MediaHub(pacing: .manual)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = patternSpec()
        let collected = (0..<count).map { _ in Collected() }
        let subscriptions = try collected.enumerated().map { i, c in try hub.subscribe(spec, loop: loops[i % 2], deliver: c.add) }
        #expect(try await pump(hub, spec, frames: 30, loops: loops) == 30)
        #expect(hub.made.sources == 1 && hub.made.encoders == 1)
        let stats = try #require(hub.stats(of: spec))
        print("hub: \(count) subscribers: \(stats.framesEncoded) encodes, \(stats.framesProduced) frames, \(stats.hops) hops, "
            + "\(stats.payloadBytes) payload bytes held once")
        #expect(stats.framesEncoded == 30 && stats.framesProduced == 30)
        #expect(stats.subscribers == count && stats.loops == 2 && stats.hops == 60)
        let first = collected[0].all
        #expect(first.count == 30 && first.first?.isKeyframe == true)
        for c in collected {
            let frames = c.all
            #expect(frames.count == 30)
            #expect(zip(frames, first).allSatisfy { $0 === $1 }, "the same shared frame objects")
        }
        #expect(subscriptions.allSatisfy { $0.framesDelivered == 30 && $0.framesSkipped == 0 })
        subscriptions.forEach { $0.cancel() }
        #expect(hub.activeSources == 0)
    }

    /// An IVF file with two subscribers is read once: 45 frames pulled, 45 read, none
    /// encoded, no encoder made; both subscribers get the same frames.
    @Test func fileIsReadOnce() async throws {
        let path = try writePatternIVF(frames: 60, keyframeInterval: 30)
        let hub = MediaHub(pacing: .manual)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = HubSourceSpec.ivf(path: path)
        let a = Collected(), b = Collected()
        let subA = try hub.subscribe(spec, loop: loops[0], deliver: a.add)
        let subB = try hub.subscribe(spec, loop: loops[1], deliver: b.add)
        #expect(try await pump(hub, spec, frames: 45, loops: loops) == 45)
        let stats = try #require(hub.stats(of: spec))
        #expect(stats.framesRead == 45 && stats.framesEncoded == 0 && stats.framesProduced == 45)
        #expect(hub.made.sources == 1 && hub.made.encoders == 0)
        #expect(a.count == 45 && zip(a.all, b.all).allSatisfy { $0 === $1 })
        // The file loops: frames read go on past its end, still once.
        #expect(try await pump(hub, spec, frames: 30, loops: loops) == 30)
        #expect(hub.stats(of: spec)?.framesRead == 75)
        subA.cancel()
        subB.cancel()
    }

    /// PLIs from every subscriber are merged and rate-limited through the hub: ten
    /// subscribers asking before every frame for 3 s (90 frames at 33 ms on the test's
    /// clock) get a key frame every 500 ms, never closer, all of them the same frames.
    @Test func pliFromAllSubscribersMergedAndLimited() async throws {
        let clock = TestClock()
        let hub = MediaHub(pacing: .manual, clock: clock.closure)
        let loop = EventLoop(name: "hub-test-a")
        defer { loop.stop() }
        let spec = patternSpec()
        let collected = (0..<10).map { _ in Collected() }
        let subscriptions = try collected.map { try hub.subscribe(spec, loop: loop, deliver: $0.add) }
        var keyframeTimes: [Int64] = []
        for i in 0..<91 {
            if i > 0 { subscriptions.forEach { $0.requestKeyframe() } }
            #expect(try await TestServices.offload { try hub.pump(spec, frames: 1) } == 1)
            loop.drain()
            if collected[0].all.last?.isKeyframe == true { keyframeTimes.append(clock.now) }
            clock.advance(33)
        }
        let gaps = zip(keyframeTimes, keyframeTimes.dropFirst()).map { $1 - $0 }
        print("hub: 10 subscribers × PLI every frame for 3 s: key frames \(keyframeTimes.count), gaps \(gaps) ms")
        #expect(keyframeTimes.count == 6)
        #expect(gaps.allSatisfy { (500..<533).contains($0) })
        let stats = try #require(hub.stats(of: spec))
        #expect(stats.keyframeRequests.requests == 10 + 900)
        #expect(stats.keyframeRequests.forced == 6)
        #expect(stats.keyFramesProduced == 6)
        #expect(collected.allSatisfy { $0.count == 91 })
    }

    /// A subscriber that joins 100 ms after a forced key frame gets, as its first frame,
    /// the key frame forced 500 ms after that one — not an inter frame, not sooner, and
    /// the subscriber already there sees the same key frame.
    @Test func lateSubscriberStartsAtAKeyframeWithin500ms() async throws {
        let clock = TestClock()
        let hub = MediaHub(pacing: .manual, clock: clock.closure)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = patternSpec()
        let early = Collected(), late = Collected()
        let first = try hub.subscribe(spec, loop: loops[0], deliver: early.add)
        func frame() async throws {
            _ = try await TestServices.offload { try hub.pump(spec, frames: 1) }
            clock.advance(33)
        }
        for _ in 0..<20 { try await frame() }  // frame 0: the first subscriber's key frame, forced at t0
        first.requestKeyframe()
        try await frame()  // frame 20: forced (660 ms after frame 0)
        loops[0].drain()
        let forcedAt = clock.now - 33
        #expect(early.all.last?.isKeyframe == true)
        clock.advance(100 - 33)
        let joinedAt = clock.now
        let second = try hub.subscribe(spec, loop: loops[1], deliver: late.add)
        for _ in 0..<30 { try await frame() }
        loops.forEach { $0.drain() }
        let got = late.all
        let firstFrame = try #require(got.first)
        #expect(firstFrame.isKeyframe)
        // Frames from the join every 33 ms; the first at or after forcedAt + 500 is forced.
        let waitedMs = Int64(second.framesSkipped) * 33
        print("hub: joined \(joinedAt - forcedAt) ms after a forced key frame; first frame (a key frame) after \(waitedMs) ms")
        #expect(joinedAt + waitedMs >= forcedAt + 500)
        #expect(waitedMs <= 500)
        #expect(early.all.contains { $0 === firstFrame })
        #expect(hub.stats(of: spec)?.keyframeRequests.deferred == 1)
        first.cancel()
        second.cancel()
    }

    /// An IVF file passed through cannot make key frames: a late subscriber starts at the
    /// file's next key frame, and PLIs are counted as unserviceable.
    @Test func passthroughStartsLateSubscriberAtTheFilesNextKeyframe() async throws {
        let path = try writePatternIVF(frames: 90, keyframeInterval: 30)
        let keyframes = try IVFReader.readAll(path: path).enumerated().filter { $0.element.isKeyframe }.map(\.offset)
        let hub = MediaHub(pacing: .manual)
        let loop = EventLoop(name: "hub-test-a")
        defer { loop.stop() }
        let spec = HubSourceSpec.ivf(path: path)
        let early = Collected(), late = Collected()
        let a = try hub.subscribe(spec, loop: loop, deliver: early.add)
        _ = try await pump(hub, spec, frames: 40, loops: [loop])
        let b = try hub.subscribe(spec, loop: loop, deliver: late.add)
        b.requestKeyframe()
        b.requestKeyframe()
        _ = try await pump(hub, spec, frames: 50, loops: [loop])
        let next = try #require(keyframes.first { $0 >= 40 })
        print("hub: IVF key frames at \(keyframes); late subscriber at frame 40 started at \(late.all.first?.sequence ?? 0)")
        #expect(late.all.first?.sequence == UInt64(next))
        #expect(late.all.first?.isKeyframe == true)
        #expect(late.count == 90 - next && b.framesSkipped == next - 40)
        #expect(early.count == 90)
        let stats = try #require(hub.stats(of: spec))
        #expect(stats.unserviceableKeyframeRequests == 2 && stats.keyframeRequests.requests == 0)
        a.cancel()
        b.cancel()
    }
}
