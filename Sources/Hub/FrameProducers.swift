// FrameProducers: what a shared source runs on its thread — pull the source, encode (VP8 RFC 6386, Opus RFC 6716) or pass through, packetize once (RFC 7741, RFC 7587) into shared frames.
import Media
import RTP

/// One item a shared source pulls: a video frame (raw or VP8 from a file), a PCM block,
/// or an Opus packet from a file. Its timestamp is in 90 kHz (video) or 48 kHz ticks.
enum SourceItem: Sendable {
    case video(VideoSourceFrame)
    case pcm(AudioFrame)
    case opus(EncodedAudioFrame)

    /// The item's media timestamp (90 kHz or 48 kHz ticks).
    var timestamp: Int64 {
        switch self {
        case let .video(f): return f.timestamp
        case let .pcm(f): return f.timestamp
        case let .opus(f): return f.timestamp
        }
    }
}

/// The work of one shared source on its thread: pull the next item (paced by its
/// timestamp), then turn it into the frames every subscriber shares — encoded at most
/// once, packetized once. Used from the source's thread only.
protocol FrameProducer: AnyObject {
    /// Ticks per second of the items' timestamps.
    var clockRate: Int64 { get }
    /// Whether a key frame can be forced (an encoder); false for a file passed through.
    var canForceKeyframes: Bool { get }
    /// What the producer did so far.
    var counts: ProducerCounts { get }
    /// The next item, nil at the end. Throws the source's error (file I/O, format).
    func pull() throws -> SourceItem?
    /// The item encoded (a key frame when `forceKeyframe`) and packetized; usually one
    /// frame. Throws the codec's or packetizer's error.
    func produce(_ item: consuming SourceItem, forceKeyframe: Bool) throws -> [PacketizedFrame]
}

/// Counters of a ``FrameProducer``.
struct ProducerCounts: Sendable, Equatable {
    /// Frames (or Opus packets) read from a file.
    var framesRead = 0
    /// Frames (or blocks) given to an encoder, and the time encoding took (ns).
    var framesEncoded = 0
    var encodeNanos: UInt64 = 0
}

/// The producer a spec names, with its source opened and its encoder made.
/// Throws the source's or codec's own error (``IVFError``, ``Y4MError``, ``WAVError``,
/// ``OggOpusError``, ``TestPatternError``, ``VP8CodecError``, ``OpusCodecError``,
/// ``VP8PayloadError``).
func makeProducer(_ spec: HubSourceSpec) throws -> FrameProducer {
    switch spec {
    case let .pattern(w, h, fps, encoding):
        return try VideoEncodingProducer(source: try PatternSource(width: w, height: h, frameRate: fps),
                                         encoding: encoding, readsFile: false)
    case let .y4m(path, encoding):
        return try VideoEncodingProducer(source: try Y4MSource(path: path, loop: true), encoding: encoding, readsFile: true)
    case let .ivf(path, size):
        return try PassthroughVideoProducer(source: try IVFSource(path: path, loop: true), maximumPayloadSize: size)
    case let .tone(hz, encoding):
        return try AudioEncodingProducer(source: try ToneSource(frequency: hz, levelDBFS: -12, channels: 1),
                                         encoding: encoding, readsFile: false)
    case let .wav(path, encoding):
        return try AudioEncodingProducer(source: try WAVSource(path: path, loop: true), encoding: encoding, readsFile: true)
    case let .ogg(path):
        return PassthroughAudioProducer(source: try OggOpusSource(path: path, loop: true))
    }
}

/// Raw video (the pattern, a Y4M file) encoded by one VP8 encoder and packetized once.
final class VideoEncodingProducer: FrameProducer {
    let clockRate: Int64 = 90_000
    var canForceKeyframes: Bool { true }
    private(set) var counts = ProducerCounts()
    private let source: VideoSource
    private let encoder: VP8Encoder
    private var packetizer: SharedVP8Packetizer
    private let readsFile: Bool

    /// Throws ``VP8CodecError`` (bad size, rate, bitrate) or ``VP8PayloadError`` (payload size).
    init(source: VideoSource, encoding: HubVideoEncoding, readsFile: Bool) throws {
        let (w, h) = source.dimensions
        var config = VP8EncoderConfiguration(width: w, height: h, frameRate: max(1, Int(source.frameRate.rounded())),
                                             bitrateKbps: encoding.bitrateKbps)
        config.cpuUsed = encoding.cpuUsed
        config.keyframeInterval = encoding.keyframeInterval
        encoder = try VP8Encoder(configuration: config)
        packetizer = try SharedVP8Packetizer(pictureID: UInt16.random(in: 0...0x7FFF), maximumPayloadSize: encoding.maximumPayloadSize)
        self.source = source
        self.readsFile = readsFile
    }

    func pull() throws -> SourceItem? {
        guard let frame = try source.nextFrame() else { return nil }
        if readsFile { counts.framesRead += 1 }
        return .video(frame)
    }

    func produce(_ item: consuming SourceItem, forceKeyframe: Bool) throws -> [PacketizedFrame] {
        guard case .video(.raw(var image)) = consume item else { return [] }
        // The pattern's marker says when the frame went to the encoder; its buffer goes back after.
        let marked = source as? MarkedVideoSource
        marked?.stamp(&image, captureTimeMs: PatternSource.unixTimeMs())
        defer { marked?.recycle(image) }
        let t0 = monotonicNanos()
        let encoded = try encoder.encode(image, forceKeyframe: forceKeyframe)
        counts.framesEncoded += 1
        counts.encodeNanos += monotonicNanos() &- t0
        return try encoded.map { e in
            try packetizer.packetize(e.data, timestamp: e.timestamp, isKeyframe: e.isKeyframe, width: e.width, height: e.height)
        }
    }
}

/// An IVF file's VP8 frames, read once and packetized once, never re-encoded.
final class PassthroughVideoProducer: FrameProducer {
    let clockRate: Int64 = 90_000
    var canForceKeyframes: Bool { false }
    private(set) var counts = ProducerCounts()
    private let source: IVFSource
    private var packetizer: SharedVP8Packetizer

    /// Throws ``VP8PayloadError`` for a payload size that leaves no room.
    init(source: IVFSource, maximumPayloadSize: Int) throws {
        self.source = source
        packetizer = try SharedVP8Packetizer(pictureID: UInt16.random(in: 0...0x7FFF), maximumPayloadSize: maximumPayloadSize)
    }

    func pull() throws -> SourceItem? {
        guard let frame = try source.nextFrame() else { return nil }
        counts.framesRead += 1
        return .video(frame)
    }

    func produce(_ item: consuming SourceItem, forceKeyframe: Bool) throws -> [PacketizedFrame] {
        guard case let .video(.encoded(e)) = consume item else { return [] }
        return [try packetizer.packetize(e.data, timestamp: e.timestamp, isKeyframe: e.isKeyframe, width: e.width, height: e.height)]
    }
}

/// PCM audio (the tone, a WAV file) encoded by one Opus encoder, one packet per block.
final class AudioEncodingProducer: FrameProducer {
    let clockRate = Int64(AudioFrame.sampleRate)
    var canForceKeyframes: Bool { true }  // every Opus packet stands alone: nothing to force
    private(set) var counts = ProducerCounts()
    private let source: AudioSource
    private let encoder: OpusEncoder
    private let samplesPerBlock: Int
    private let readsFile: Bool
    private var sequence: UInt64 = 0

    /// Throws ``OpusCodecError`` (frame duration, bitrate, channels).
    init(source: AudioSource, encoding: HubAudioEncoding, readsFile: Bool) throws {
        let config = OpusEncoderConfiguration(channels: source.channels, frameDurationMs: encoding.frameDurationMs,
                                              bitrate: encoding.bitrate, inbandFEC: encoding.inbandFEC,
                                              packetLossPercent: encoding.inbandFEC ? 10 : 0)
        encoder = try OpusEncoder(configuration: config)
        samplesPerBlock = config.samplesPerFrame
        self.source = source
        self.readsFile = readsFile
    }

    func pull() throws -> SourceItem? {
        guard let block = try source.nextFrame(sampleCount: samplesPerBlock) else { return nil }
        if readsFile { counts.framesRead += 1 }
        return .pcm(block)
    }

    func produce(_ item: consuming SourceItem, forceKeyframe: Bool) throws -> [PacketizedFrame] {
        guard case let .pcm(block) = consume item else { return [] }
        let t0 = monotonicNanos()
        let encoded = try encoder.encode(block)
        counts.framesEncoded += 1
        counts.encodeNanos += monotonicNanos() &- t0
        defer { sequence += 1 }
        return [try PacketizedFrame(opusPacket: encoded.data, timestamp: encoded.timestamp, sequence: sequence)]
    }
}

/// An Ogg Opus file's packets, read once (the file is read whole when opened) and sent as
/// they are.
final class PassthroughAudioProducer: FrameProducer {
    let clockRate = Int64(AudioFrame.sampleRate)
    var canForceKeyframes: Bool { true }  // every Opus packet stands alone: nothing to force
    private(set) var counts = ProducerCounts()
    private let source: OggOpusSource
    private var sequence: UInt64 = 0

    init(source: OggOpusSource) { self.source = source }

    func pull() throws -> SourceItem? {
        guard let packet = try source.nextPacket() else { return nil }
        counts.framesRead += 1
        return .opus(packet)
    }

    func produce(_ item: consuming SourceItem, forceKeyframe: Bool) throws -> [PacketizedFrame] {
        guard case let .opus(packet) = consume item else { return [] }
        defer { sequence += 1 }
        return [try PacketizedFrame(opusPacket: packet.data, timestamp: packet.timestamp, sequence: sequence)]
    }
}
