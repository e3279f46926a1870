// HubTestSupport: what the hub's tests share — a clock the test moves, a collector of delivered frames, an IVF file of the pattern.
import EventLoop
import Foundation
import Hub
import Media
import RTP
import Synchronization
import TestSupport

/// Milliseconds the test sets (the hub's key-frame gate reads it).
final class TestClock: Sendable {
    private let ms = Atomic<Int64>(1_000_000)
    /// The current time, ms.
    var now: Int64 { ms.load(ordering: .acquiring) }
    /// Moves time on by `delta` ms.
    func advance(_ delta: Int64) { ms.wrappingAdd(delta, ordering: .acquiringAndReleasing) }
    /// The hub's clock closure.
    var closure: @Sendable () -> Int64 { { [self] in now } }
}

/// The frames one subscriber got, in order (appended on its loop, read by the test).
final class Collected: Sendable {
    private let frames = Mutex<[PacketizedFrame]>([])
    /// Appends a frame (the subscriber's `deliver`).
    func add(_ frame: PacketizedFrame) { frames.withLock { $0.append(frame) } }
    /// The frames so far.
    var all: [PacketizedFrame] { frames.withLock { $0 } }
    /// How many.
    var count: Int { frames.withLock { $0.count } }
    /// Lets go of the frames held.
    func clear() { frames.withLock { $0.removeAll() } }
}

extension EventLoop {
    /// Waits until everything queued on the loop before this call has run.
    func drain() { sync {} }
}

/// The pattern spec the tests use: 320x240@30 at 300 kbit/s, fastest encoder speed.
func patternSpec(keyframeInterval: Int = 3_000) -> HubSourceSpec {
    .pattern(width: 320, height: 240, frameRate: 30,
             encoding: HubVideoEncoding(bitrateKbps: 300, cpuUsed: 8, keyframeInterval: keyframeInterval))
}

/// Writes `frames` pattern frames (320x240@30), a key frame every `keyframeInterval`, as an
/// IVF file in a new temporary directory; returns its path.
func writePatternIVF(frames: Int, keyframeInterval: Int) throws -> String {
    let path = TestServices.temporaryDirectory("hub-ivf") + "/pattern.ivf"
    let source = try PatternSource(width: 320, height: 240, frameRate: 30, frameCount: frames)
    var config = VP8EncoderConfiguration(width: 320, height: 240, frameRate: 30, bitrateKbps: 300)
    config.cpuUsed = 8
    config.keyframeInterval = keyframeInterval
    let encoder = try VP8Encoder(configuration: config)
    let writer = try IVFWriter(path: path)
    while case let .raw(frame)? = try source.nextFrame() {
        for encoded in try encoder.encode(frame) { try writer.write(encoded) }
    }
    try writer.close()
    return path
}

/// Pumps `frames` frames of `spec` in steps of at most 16, letting `loops` deliver them
/// after each step (a loop more than 32 frames behind has frames dropped, as it should;
/// the tests that are not about that keep their loops within it on a loaded machine).
/// Returns how many were pumped.
func pump(_ hub: MediaHub, _ spec: HubSourceSpec, frames: Int, loops: [EventLoop]) async throws -> Int {
    var done = 0
    while done < frames {
        let step = min(16, frames - done)
        let pumped = try await TestServices.offload { try hub.pump(spec, frames: step) }
        loops.forEach { $0.drain() }
        done += pumped
        if pumped < step { break }
    }
    return done
}
