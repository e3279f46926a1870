// MediaSource: what video and audio sources are and yield (raw frames, VP8 frames already encoded, PCM blocks).
import Dispatch

/// What a video source yields: raw frames to encode, or VP8 frames already
/// encoded (an IVF file passed through without re-encoding).
public enum VideoSourceFrame: Sendable {
    /// An uncompressed I420 frame for the VP8 encoder.
    case raw(I420Frame)
    /// An encoded VP8 frame, sent as it is.
    case encoded(EncodedVideoFrame)

    /// The frame's presentation time in 90 kHz ticks from the start of the stream.
    public var timestamp: Int64 {
        switch self {
        case let .raw(f): return f.timestamp
        case let .encoded(f): return f.timestamp
        }
    }
}

/// A source of video frames, pulled one at a time by a ``MediaPacer`` on the
/// track's media thread (it is used from that one thread only).
public protocol VideoSource: AnyObject {
    /// Nominal frames per second (for the encoder's configuration).
    var frameRate: Double { get }
    /// Width and height in pixels of the frames this source yields.
    var dimensions: (width: Int, height: Int) { get }
    /// The next frame, nil at the end; timestamps (90 kHz) do not decrease
    /// except when a looping source starts over.
    /// Throws the source's own error type (a file read or format error).
    func nextFrame() throws -> VideoSourceFrame?
}

/// A video source whose frames carry the test pattern's marker (``FrameMarker``): the
/// sender stamps each frame's capture time when it takes it to the encoder, and hands
/// the frame back when done so its buffer is drawn into again. Both on the thread that
/// pulls the source.
public protocol MarkedVideoSource: VideoSource {
    /// Draws `frame`'s marker with `captureTimeMs` (ms since the Unix epoch).
    func stamp(_ frame: inout I420Frame, captureTimeMs: Int64)
    /// Takes back a frame the consumer is done with (its storage is reused).
    func recycle(_ frame: I420Frame)
}

/// A source of audio, pulled one block at a time (48 kHz, 16-bit) by a
/// ``MediaPacer`` on the track's media thread.
public protocol AudioSource: AnyObject {
    /// Channel count: 1 or 2.
    var channels: Int { get }
    /// The next `sampleCount` samples per channel, nil at the end; a last
    /// short block is padded with silence. Timestamps are 48 kHz ticks.
    /// Throws the source's own error type.
    func nextFrame(sampleCount: Int) throws -> AudioFrame?
    /// True for a source of Opus packets to send as they are (``nextPacket()``), not PCM to
    /// encode; false by default.
    var sendsEncoded: Bool { get }
    /// The next Opus packet to send as it is, its timestamp in 48 kHz ticks; nil at the
    /// end (and always, by default, for a PCM source).
    func nextPacket() throws -> EncodedAudioFrame?
}

extension AudioSource {
    /// False: a PCM source, its blocks encoded by the sender.
    public var sendsEncoded: Bool { false }
    /// Nil: a PCM source has no packets of its own.
    public func nextPacket() throws -> EncodedAudioFrame? { nil }
}

extension MediaPacer where Item == VideoSourceFrame {
    /// A pacer that pulls `source` at its frames' 90 kHz timestamps on `thread`.
    /// `deliver` and `finished` run on `thread`.
    public convenience init(video source: VideoSource, thread: MediaThread,
                            deliver: @escaping (consuming VideoSourceFrame) -> Void,
                            finished: @escaping (Error?) -> Void) {
        self.init(thread: thread, clockRate: 90_000, pull: { try source.nextFrame() },
                  timestamp: { $0.timestamp }, deliver: deliver, finished: finished)
    }
}

extension MediaPacer where Item == AudioFrame {
    /// The block durations (ms) an audio pacer takes: Opus's 10, 20, 40 and 60 ms frames.
    public static var audioFrameDurationsMs: [Int] { [10, 20, 40, 60] }

    /// A pacer that pulls `source` in blocks of `frameDurationMs` (10/20/40/60 ms
    /// for Opus) at their 48 kHz timestamps on `thread`.
    ///
    /// Any other value (0 or negative would pull empty blocks forever) is replaced by
    /// 20 ms; use ``init(audio:checkedFrameDurationMs:thread:deliver:finished:)`` to get an
    /// error instead. `deliver` and `finished` run on `thread`.
    public convenience init(audio source: AudioSource, frameDurationMs: Int, thread: MediaThread,
                            deliver: @escaping (consuming AudioFrame) -> Void,
                            finished: @escaping (Error?) -> Void) {
        let ms = Self.audioFrameDurationsMs.contains(frameDurationMs) ? frameDurationMs : 20
        let count = AudioFrame.sampleRate * ms / 1000
        self.init(thread: thread, clockRate: Int64(AudioFrame.sampleRate),
                  pull: { try source.nextFrame(sampleCount: count) },
                  timestamp: { $0.timestamp }, deliver: deliver, finished: finished)
    }

    /// Like ``init(audio:frameDurationMs:thread:deliver:finished:)`` but refuses a block
    /// duration other than 10, 20, 40 or 60 ms with ``OpusCodecError/badFrameDuration(ms:)``
    /// naming the value.
    public convenience init(audio source: AudioSource, checkedFrameDurationMs frameDurationMs: Int, thread: MediaThread,
                            deliver: @escaping (consuming AudioFrame) -> Void,
                            finished: @escaping (Error?) -> Void) throws(OpusCodecError) {
        guard Self.audioFrameDurationsMs.contains(frameDurationMs) else { throw .badFrameDuration(ms: frameDurationMs) }
        self.init(audio: source, frameDurationMs: frameDurationMs, thread: thread, deliver: deliver, finished: finished)
    }
}
