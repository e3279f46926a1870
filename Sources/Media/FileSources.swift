/// A video source reading a Y4M file (4:2:0) frame by frame, optionally looping;
/// frames are raw I420 for the encoder, timestamps from the file's frame rate.
public final class Y4MSource: VideoSource {
    private let reader: Y4MReader

    /// Opens `path`. Throws ``Y4MError`` (unsupported colour space, interlacing, bad header, I/O).
    public init(path: String, loop: Bool = false) throws(Y4MError) {
        reader = try Y4MReader(path: path, loop: loop)
    }

    /// The file's frame rate (`F` token), frames per second.
    public var frameRate: Double {
        Double(reader.header.frameRateNumerator) / Double(max(1, reader.header.frameRateDenominator))
    }
    /// The file's `W` and `H`.
    public var dimensions: (width: Int, height: Int) { (reader.header.width, reader.header.height) }

    /// The next frame (timestamps keep increasing across loops); nil at the end.
    /// Throws ``Y4MError`` for a broken or truncated frame.
    public func nextFrame() throws -> VideoSourceFrame? {
        try reader.next().map(VideoSourceFrame.raw)
    }
}

/// A video source passing the VP8 frames of an IVF file through without
/// re-encoding, paced by the file's timestamps; optionally looping (timestamps
/// continue one frame interval after the last frame).
public final class IVFSource: VideoSource {
    private let reader: IVFReader
    private let loop: Bool
    private var offset: Int64 = 0
    private var lastTimestamp: Int64 = 0
    private var interval: Int64 = 3_000
    private var yielded = 0

    /// Opens `path` and validates its header. Throws ``IVFError``.
    public init(path: String, loop: Bool = false) throws(IVFError) {
        reader = try IVFReader(path: path)
        self.loop = loop
    }

    /// Nominal frame rate: the header's time base when it looks like a frame rate
    /// (rate/scale ≤ 240, as vpxenc writes 30/1), else 30.
    public var frameRate: Double {
        let h = reader.header
        let fps = Double(h.timeBaseRate) / Double(max(1, h.timeBaseScale))
        return fps > 0 && fps <= 240 ? fps : 30
    }
    /// The header's width and height.
    public var dimensions: (width: Int, height: Int) { (reader.header.width, reader.header.height) }

    /// The next VP8 frame with its timestamp in 90 kHz ticks; nil at the end.
    /// Throws ``IVFError`` for a frame beyond the end of the file or a broken frame, and
    /// ``IVFError/badTimestamp(index:offset:value:)`` when a timestamp is beyond ±2^53 ticks
    /// or looping would carry it past the 64-bit range (all arithmetic is overflow-checked).
    public func nextFrame() throws -> VideoSourceFrame? {
        var frame = try reader.next()
        if frame == nil, loop, yielded > 0 {
            reader.rewind()
            frame = try reader.next()
            if let first = frame {
                // The loop continues one frame interval after the last frame.
                let (next, o1) = lastTimestamp.addingReportingOverflow(interval)
                let (shift, o2) = next.subtractingReportingOverflow(first.timestamp)
                guard !o1, !o2 else { throw overflow(first.timestamp) }
                offset = shift
            }
        }
        guard var frame else { return nil }
        let (ts, o) = frame.timestamp.addingReportingOverflow(offset)
        guard !o else { throw overflow(frame.timestamp) }
        frame.timestamp = ts
        if yielded > 0, ts > lastTimestamp {
            let (d, o) = ts.subtractingReportingOverflow(lastTimestamp)
            if !o { interval = d }
        }
        lastTimestamp = ts
        yielded += 1
        return .encoded(frame)
    }

    /// The error for a frame whose looped timestamp would overflow.
    private func overflow(_ value: Int64) -> IVFError {
        .badTimestamp(index: max(0, reader.framesRead - 1), offset: reader.lastFrameOffset, value: value)
    }
}

/// An audio source reading a WAV file (PCM 16-bit, 48 kHz, mono or stereo),
/// optionally looping; the last short block is padded with silence.
public final class WAVSource: AudioSource {
    private let reader: WAVReader
    private var timestamp: Int64 = 0

    /// Opens and checks `path`. Throws ``WAVError`` (another sample rate, bit depth,
    /// format, channel count; missing chunks; I/O).
    public init(path: String, loop: Bool = false) throws(WAVError) {
        reader = try WAVReader(path: path, loop: loop)
    }

    /// The file's channel count.
    public var channels: Int { reader.channels }

    /// The next `sampleCount` samples per channel, timestamps counting 48 kHz ticks of
    /// whole blocks; a block crossing the end of a looping file continues from its start;
    /// nil at the end. Throws ``WAVError/io(_:)``.
    public func nextFrame(sampleCount: Int) throws -> AudioFrame? {
        var samples: [Int16] = []
        let wanted = sampleCount * reader.channels
        while samples.count < wanted, let block = try reader.read(samplesPerChannel: (wanted - samples.count) / reader.channels) {
            samples += block.samples
        }
        guard !samples.isEmpty else { return nil }
        samples += [Int16](repeating: 0, count: wanted - samples.count)
        defer { timestamp += Int64(sampleCount) }
        return try AudioFrame(channels: reader.channels, samples: samples, timestamp: timestamp)
    }
}
