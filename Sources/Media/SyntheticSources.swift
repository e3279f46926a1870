// SyntheticSources: the synthetic video source (TestPattern frames of any size and rate) and the audio tone source.
import Foundation

/// The synthetic video source: ``TestPattern`` frames of any size and rate with
/// the frame marker (frame number, capture time) drawn in, endless or for a
/// given number of frames.
public final class PatternSource: MarkedVideoSource {
    /// The pattern generator.
    public let pattern: TestPattern
    /// Frames to yield; nil for no end.
    public let frameCount: Int?
    private let clock: @Sendable () -> Int64
    private var next = 0
    private var startMs: Int64?
    /// A frame the encoder is done with (``recycle(_:)``), drawn into next.
    private var spare: I420Frame?

    /// A pattern of `width × height` at `frameRate` frames per second.
    /// - Parameters:
    ///   - frameCount: how many frames before the end (nil: endless).
    ///   - clock: wall-clock milliseconds for the marker's capture time (default: Unix time in ms).
    /// - Throws: ``TestPatternError`` for sizes below 16×16 or a rate outside 1…240.
    public init(width: Int, height: Int, frameRate: Int = 30, frameCount: Int? = nil,
                clock: @escaping @Sendable () -> Int64 = PatternSource.unixTimeMs) throws(TestPatternError) {
        pattern = try TestPattern(width: width, height: height, frameRate: frameRate)
        self.frameCount = frameCount
        self.clock = clock
    }

    /// Unix time in milliseconds (`clock_gettime(CLOCK_REALTIME)`).
    public static let unixTimeMs: @Sendable () -> Int64 = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Frames per second.
    public var frameRate: Double { Double(pattern.frameRate) }
    /// Width and height in pixels.
    public var dimensions: (width: Int, height: Int) { (pattern.width, pattern.height) }

    /// Frame `n` (from 0) with its nominal capture time: the first frame's wall-clock
    /// time plus `n / frameRate` seconds (a sender stamps the time it really goes out,
    /// ``stamp(_:captureTimeMs:)``). Drawn into a recycled frame's buffer when there is
    /// one: no new 460 KB (at 640x480) allocated, cleared and faulted in per frame (kernel
    /// page clearing was the sender thread's largest cost after libvpx); every pixel is
    /// drawn again, so the frame is the same either way. Nil after ``frameCount`` frames.
    public func nextFrame() throws -> VideoSourceFrame? {
        if let frameCount, next >= frameCount { return nil }
        let start = startMs ?? clock()
        startMs = start
        defer { next += 1 }
        let capture = start + Int64(next) * 1000 / Int64(pattern.frameRate)
        guard var frame = spare else { return .raw(pattern.frame(number: next, captureTimeMs: capture)) }
        spare = nil
        pattern.render(number: next, captureTimeMs: capture, into: &frame)
        return .raw(frame)
    }

    /// Draws `frame`'s marker again with `captureTimeMs`: its frame number, read back from
    /// its timestamp, and the moment it goes to the encoder (after a stall too).
    public func stamp(_ frame: inout I420Frame, captureTimeMs: Int64) {
        let number = Int((frame.timestamp * Int64(pattern.frameRate) + 45_000) / 90_000)
        _ = FrameMarker(frameNumber: number, captureTimeMs: captureTimeMs).draw(into: &frame)
    }

    /// Takes back a frame of this source its consumer is done with.
    public func recycle(_ frame: I420Frame) {
        if frame.width == pattern.width, frame.height == pattern.height { spare = frame }
    }
}

/// The synthetic audio source: an endless sine tone (``ToneGenerator``).
public final class ToneSource: AudioSource {
    private var generator: ToneGenerator

    /// A tone of `frequency` Hz at `levelDBFS` (peak, ≤ 0) on `channels` channels.
    /// Throws ``MediaFrameError/badChannelCount(_:)``.
    public init(frequency: Double = 440, levelDBFS: Double = -12, channels: Int = 1) throws(MediaFrameError) {
        generator = try ToneGenerator(frequency: frequency, levelDBFS: levelDBFS, channels: channels)
    }

    /// The channel count.
    public var channels: Int { generator.channels }

    /// The next `sampleCount` samples per channel (never nil).
    public func nextFrame(sampleCount: Int) throws -> AudioFrame? {
        generator.next(sampleCount: sampleCount)
    }

    /// The tone's frequency, Hz; setting it plays the new one from the next sample (the
    /// phase continuing). On the thread that pulls the source.
    public var frequency: Double {
        get { generator.frequency }
        set { generator.setFrequency(newValue) }
    }
}
