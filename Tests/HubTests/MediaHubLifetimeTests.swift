// MediaHubLifetimeTests: the hub's memory and threads — payloads held once and freed after the last subscriber, one thread per source, real-time pacing, slow loops, bad specs.
import EventLoop
import Foundation
import Hub
import Media
import RTP
import Synchronization
import Testing
import TestSupport

/// The names of this process's threads (`/proc/self/task/*/comm`).
private func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// One connection's stream of a shared source, kept on its loop's side (the test's sink).
private final class StreamBox: Sendable {
    let stream: Mutex<SharedFrameStream>
    let packets = Atomic<Int>(0)
    init(ssrc: UInt32) {
        stream = Mutex(SharedFrameStream(header: RTPStreamHeader(ssrc: ssrc, payloadType: 96, sequenceNumber: UInt16(ssrc & 0x7FFF),
                                                                 timestampOffset: ssrc), trailer: 144))
    }
    func send(_ frame: PacketizedFrame) {
        var sent = 0
        stream.withLock { s in s.send(frame, nowMs: 0) { _ in sent += 1; return true } }
        packets.wrappingAdd(sent, ordering: .relaxed)
    }
}

extension MediaHubTests {
    /// Two subscribers' retransmission histories hold the same payload (identity), not
    /// copies; once both unsubscribe and let go of their histories the frames are freed,
    /// and the source with its encoder is gone.
    @Test func payloadSharedAndReleasedAfterUnsubscribe() async throws {
        let hub = MediaHub(pacing: .manual)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = patternSpec()
        let boxes = [StreamBox(ssrc: 1), StreamBox(ssrc: 2)]
        let seen = Collected()
        let subs = try (0..<2).map { i in
            try hub.subscribe(spec, loop: loops[i], deliver: { [box = boxes[i]] frame in
                box.send(frame)
                if i == 0 { seen.add(frame) }
            })
        }
        _ = try await TestServices.offload { try hub.pump(spec, frames: 10) }
        loops.forEach { $0.drain() }
        let weakFrames = try checkShared(seen.all, boxes)
        seen.clear()
        subs.forEach { $0.cancel() }
        loops.forEach { $0.drain() }
        #expect(hub.activeSources == 0)
        #expect(weakFrames.allSatisfy { $0.frame != nil }, "still held by the histories")
        boxes.forEach { $0.stream.withLock { $0.forgetHistory() } }
        #expect(weakFrames.allSatisfy { $0.frame == nil }, "freed once every subscriber let go")
    }

    /// One thread per distinct source, not per subscriber: twelve subscribers of one video
    /// and one audio source in real time make one `peer.hub.video` and one `peer.hub.audio`
    /// thread, which end with the last subscriber; frames arrive paced (~30 per second; a
    /// video subscriber that joins after the first key frame waits up to 500 ms for the next).
    @Test func oneThreadPerSourceInRealTime() async throws {
        #expect(await eventually(within: 5) { !threadNames().contains { $0.hasPrefix("peer.hub.") } })
        let hub = MediaHub()
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let video = patternSpec()
        let audio = HubSourceSpec.tone(frequency: 440, encoding: HubAudioEncoding())
        let collected = (0..<12).map { _ in Collected() }
        let start = ContinuousClock.now
        let subs = try collected.enumerated().map { i, c in try hub.subscribe(i % 3 == 2 ? audio : video, loop: loops[i % 2], deliver: c.add) }
        try await Task.sleep(for: .milliseconds(1_000))
        let names = threadNames()
        #expect(names.filter { $0 == "peer.hub.video" }.count == 1)
        #expect(names.filter { $0 == "peer.hub.audio" }.count == 1)
        let videoFrames = collected.enumerated().filter { $0.offset % 3 != 2 }.map(\.element.count)
        let audioFrames = collected.enumerated().filter { $0.offset % 3 == 2 }.map(\.element.count)
        print("hub: real time, about 1 s: video frames per subscriber \(videoFrames), audio packets \(audioFrames); threads \(names.filter { $0.hasPrefix("peer.hub") })")
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // Paced: at most 30 frames and 50 Opus packets a second (a late joiner waits up to
        // 500 ms for its key frame); a loaded machine may make the sleep longer, not the rate.
        #expect(videoFrames.allSatisfy { $0 >= 5 && Double($0) <= 30 * seconds + 2 }, "\(seconds) s")
        #expect(audioFrames.allSatisfy { $0 >= 10 && Double($0) <= 50 * seconds + 2 }, "\(seconds) s")
        #expect(hub.stats(of: video)?.framesEncoded == hub.stats(of: video)?.framesProduced)
        subs.forEach { $0.cancel() }
        #expect(hub.activeSources == 0)
        #expect(await eventually(within: 5) { !threadNames().contains { $0.hasPrefix("peer.hub.") } })
    }

    /// A loop that falls 32 frames behind does not hold the source up: frames for it are
    /// dropped (counted) and a key frame is requested at once; its subscriber gets the
    /// frames from before the gap, then waits for that key frame; the other loop's
    /// subscriber loses nothing.
    @Test func slowLoopDropsFramesAndRestartsAtAKeyframe() async throws {
        let clock = TestClock()
        let hub = MediaHub(pacing: .manual, clock: clock.closure)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = patternSpec()
        let fast = Collected(), slow = Collected()
        let a = try hub.subscribe(spec, loop: loops[0], deliver: fast.add)
        let b = try hub.subscribe(spec, loop: loops[1], deliver: slow.add)
        let release = DispatchSemaphore(value: 0)
        loops[1].async { release.wait() }  // the slow loop is busy
        _ = try await TestServices.offload { try hub.pump(spec, frames: 40) }
        release.signal()
        loops[1].drain()
        let stats = try #require(hub.stats(of: spec))
        #expect(stats.framesDroppedForSlowLoops == 8)
        #expect(stats.keyframeRequests.deferred == 1, "requested at the first drop, within 500 ms of frame 0")
        #expect(slow.count == 32 && b.framesSkipped == 0)
        clock.advance(600)
        _ = try await TestServices.offload { try hub.pump(spec, frames: 5) }
        loops.forEach { $0.drain() }
        #expect(fast.count == 45)
        #expect(slow.count == 37)
        #expect(slow.all[32].isKeyframe && slow.all[32] === fast.all[40])
        #expect(hub.stats(of: spec)?.keyFramesProduced == 2)
        a.cancel()
        b.cancel()
    }

    /// Bad specs are refused with the spec and the reason, and leave no source behind.
    @Test func badSpecsAreRefused() throws {
        let hub = MediaHub(pacing: .manual)
        let loop = EventLoop(name: "hub-test-a")
        defer { loop.stop() }
        let missing = "/nonexistent/peer-hub-\(getpid()).ivf"
        let cases: [(HubSourceSpec, String)] = [
            (.ivf(path: missing), missing),
            (.pattern(width: 8, height: 8, frameRate: 30, encoding: HubVideoEncoding()), "8x8"),
            (.pattern(width: 320, height: 240, frameRate: 30, encoding: HubVideoEncoding(bitrateKbps: 0)), "bitrateKbps"),
            (.tone(frequency: 440, encoding: HubAudioEncoding(frameDurationMs: 15)), "15"),
            (.ogg(path: missing), missing),
        ]
        for (spec, named) in cases {
            do {
                _ = try hub.subscribe(spec, loop: loop) { _ in }
                Issue.record("\(spec) was accepted")
            } catch {
                #expect(error.description.contains(named), "\(error)")
                #expect(error.description.contains("cannot open"))
            }
        }
        #expect(hub.activeSources == 0 && hub.made.sources == 0)
    }
}

/// Checks that both streams' histories hold the same frame objects as `frames` (ten),
/// references not copies; returns weak references to them.
private func checkShared(_ frames: [PacketizedFrame], _ boxes: [StreamBox]) throws -> [WeakFrame] {
    #expect(frames.count == 10)
    // The first packet of frame 3 in each stream's history: one object, one buffer.
    let packetsBefore = frames[..<3].map(\.packets.count).reduce(0, +)
    let inA = boxes[0].stream.withLock { $0.history.frame(of: UInt16(1 + packetsBefore)) }
    let inB = boxes[1].stream.withLock { $0.history.frame(of: UInt16(2 + packetsBefore)) }
    #expect(inA != nil && inA === inB && inA === frames[3])
    let heldA = boxes[0].stream.withLock { $0.history.payloadBytesReferenced }
    #expect(heldA == frames.map(\.payloadByteCount).reduce(0, +))
    #expect(boxes[0].packets.load(ordering: .relaxed) == frames.map(\.packets.count).reduce(0, +))
    let weak = frames.map { WeakFrame($0) }
    #expect(weak.allSatisfy { $0.frame != nil }, "held")
    return weak
}

/// A weak reference to a shared frame (tests of its release).
private struct WeakFrame: @unchecked Sendable {
    weak var frame: PacketizedFrame?
    init(_ frame: PacketizedFrame) { self.frame = frame }
}
