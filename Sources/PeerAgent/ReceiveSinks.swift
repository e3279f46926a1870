// ReceiveSinks: the sink side of an RtpReceiver — IVF, Ogg Opus, WAV and WebM/Matroska writers and the decoders, on the receiver's sink thread.
import Foundation
import Media

/// One thing the network side hands to the sinks: a video frame, or an audio packet
/// (nil: a gap only) with the samples lost before it (to conceal).
enum SinkItem: Sendable {
    /// A complete VP8 frame, timestamp counted from the stream's first, and the sender's
    /// clock as its last sender report gave it (nil before one).
    case video(EncodedVideoFrame, clock: SenderClock?)
    /// An Opus packet (nil: none, only the gap), the samples (48 kHz, per channel)
    /// missing before it, if any, and the sender's clock.
    case audio(EncodedAudioFrame?, gapBefore: Int?, clock: SenderClock?)
    /// The remote sender was replaced (``RtpReceiver/remoteSourceRestarted()``): what is
    /// counted per sender (frame markers) starts again; the files go on.
    case sourceRestarted
}

/// What an ``RtpReceiver``'s sinks counted (sink thread).
struct SinkStats: Sendable {
    var framesDecoded = 0, keyFramesDecoded = 0, framesWritten = 0
    var width: Int?, height: Int?
    var samples = 0, concealed = 0
    /// Video: when frames were rendered (decoded, or written with decoding off).
    var timing = VideoFrameTiming()
    /// Video: what the test pattern's markers say (decoding on).
    var endToEnd = EndToEndQuality()
    /// Video: the decoder's quantizer sum and seconds spent decoding.
    var qpSum = 0, decodeSeconds = 0.0
    /// Audio (decoding on): concealment events, energy (W3C `totalAudioEnergy`), seconds
    /// of samples, and the level of the last ~100 ms (0…1, W3C `audioLevel`).
    var concealmentEvents = 0, audioEnergy = 0.0, samplesDuration = 0.0, audioLevel = 0.0
    /// (energy, seconds) of the last blocks, at least 100 ms of them (for `audioLevel`).
    var recentEnergy: [(energy: Double, seconds: Double)] = []
    var markers = FrameNumberRuns()
}

/// The sinks of one receiving track: the files it records (opened on the first item),
/// its decoders, and what they counted and met. Confined to the receiver's sink thread
/// (held in a ``ThreadBound``), so none of it needs to be `Sendable`.
final class ReceiveSinks {
    /// What to record and whether to decode.
    let options: ReceiveOptions
    /// The sink thread (the IVF writer rewrites its header there).
    let thread: MediaThread
    private var ivf: IVFWriter?
    private var ogg: OggOpusWriter?
    private var wav: WAVWriter?
    private var mkv: MatroskaWriter?
    private var vp8: VP8Decoder?
    private var opus: OpusDecoder?
    /// What the sinks counted.
    private(set) var stats = SinkStats()
    /// Problems the sinks met (a file that could not be written), oldest first.
    private(set) var errors: [String] = []
    /// Called once, on the sink thread, when the first video frame is written to a file,
    /// with the time (`systemUptime`, s).
    private var onFirstWritten: ((Double) -> Void)?

    /// How the sender's clock relates to ours (for the markers' latency).
    private let senderClock: EndToEndClockState

    /// Sinks for `options` on `thread`; nothing is opened before the first item.
    init(options: ReceiveOptions, thread: MediaThread, senderClock: EndToEndClockState = EndToEndClockState(),
         onFirstWritten: ((Double) -> Void)? = nil) {
        self.options = options
        self.thread = thread
        self.senderClock = senderClock
        self.onFirstWritten = onFirstWritten
    }

    /// What the sinks counted, with `framesPerSecond` as of now.
    func snapshot() -> (stats: SinkStats, framesPerSecond: Double) {
        (stats, stats.timing.framesPerSecond(at: Self.monotonicSeconds()))
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Records and decodes `item`.
    func take(_ item: SinkItem) {
        switch item {
        case let .video(frame, clock):
            video(frame)
            options.recorder?.video(frame, clock: clock)
        case let .audio(frame, gapBefore, clock):
            audio(frame, gapBefore: gapBefore)
            if let frame { options.recorder?.audio(frame, clock: clock) }
        case .sourceRestarted:
            stats.endToEnd.newSource()
        }
    }

    /// Closes the files (errors ignored, as a call's end does).
    func close() {
        try? ivf?.close()
        try? ogg?.close()
        try? wav?.close()
        try? mkv?.close()
        // A `--record` file is the link's, closed when the link ends (CallEnding): one
        // track's sinks closing (a stopped section, or the first of the two at the end)
        // must not end the other's.
    }

    /// `body`'s result, or nil with its error noted in ``errors`` (a file that could not be
    /// opened or written: the call goes on, the problem is reported).
    private func noting<T>(_ body: () throws -> T) -> T? {
        do { return try body() } catch {
            errors.append("\(error)")
            return nil
        }
    }

    private func video(_ frame: EncodedVideoFrame) {
        if ivf == nil, let path = options.ivfPath {
            ivf = noting { try IVFWriter(path: path, thread: thread) }
        }
        if let ivf, noting({ try ivf.write(frame) }) != nil { stats.framesWritten = ivf.framesWritten }
        if mkv == nil, let path = options.matroskaPath { mkv = noting { try MatroskaWriter(path: path, tracks: [.vp8]) } }
        if let mkv, noting({ try mkv.write(video: frame, track: 0, ms: frame.timestamp / 90) }) != nil { stats.framesWritten = mkv.packetsWritten[0] }
        if stats.framesWritten > 0, let first = onFirstWritten {
            onFirstWritten = nil
            first(ProcessInfo.processInfo.systemUptime)
        }
        let writtenMs = unixTimeMs()
        guard options.decode else {
            stats.timing.rendered(at: Self.monotonicSeconds())  // written is as far as a frame goes
            return
        }
        if vp8 == nil { vp8 = PreparedCodecs.takeDecoder() ?? (try? VP8Decoder()) }
        guard let vp8 else { return }
        let (clock, offset) = senderClock.current
        let offsetMs = clock == .uncorrected ? nil : offset  // no latency before the clocks are related
        var markers: [FrameMarker] = []
        // Read in libvpx's own buffer: no packed copy of each picture.
        let pictures = (try? vp8.decode(frame.data) { luma, stride, width, height in
            if let marker = FrameMarker.read(luma: luma, stride: stride, width: width, height: height) { markers.append(marker) }
            stats.width = width
            stats.height = height
        }) ?? 0
        let decoded = Self.monotonicSeconds()
        if pictures > 0 { stats.timing.rendered(at: decoded) }
        for marker in markers {
            stats.markers.append(marker.frameNumber)
            stats.endToEnd.frame(number: marker.frameNumber, captureMs: marker.captureTimeMs, writtenMs: writtenMs,
                                 monotonic: decoded, offsetMs: offsetMs)
        }
        stats.framesDecoded = vp8.framesDecoded
        stats.keyFramesDecoded = vp8.keyFramesDecoded
        stats.qpSum = vp8.qpSum
        stats.decodeSeconds = vp8.totalDecodeTime
    }

    private func audio(_ frame: EncodedAudioFrame?, gapBefore: Int?) {
        let channels = 2  // Opus in WebRTC is negotiated as opus/48000/2; decoders output stereo
        if let frame {
            if ogg == nil, let path = options.oggPath {
                let channelCount = frame.data.first.map { ($0 & 0x04) != 0 ? 2 : 1 } ?? 1
                ogg = noting { try OggOpusWriter(path: path, channels: channelCount) }
            }
            if let ogg, noting({ try ogg.write(frame) }) != nil { stats.framesWritten = ogg.packetsWritten }
            if mkv == nil, let path = options.matroskaPath { mkv = noting { try MatroskaWriter(path: path, tracks: [.opus]) } }
            if let mkv, noting({ try mkv.write(audio: frame, track: 0, ms: frame.timestamp / 48) }) != nil { stats.framesWritten = mkv.packetsWritten[0] }
        }
        guard options.decode || options.wavPath != nil else { return }
        if opus == nil { opus = try? OpusDecoder(channels: channels) }
        if wav == nil, let path = options.wavPath {
            wav = noting { try WAVWriter(path: path, channels: channels) }
        }
        guard let opus else { return }
        var blocks: [AudioFrame] = []
        if let gap = gapBefore, gap > 0, gap <= 48_000 {
            // libopus conceals at most 120 ms (5,760 samples, a multiple of 2.5 ms) per call:
            // a longer gap (up to 1 s) is concealed in pieces.
            var left = gap - gap % 120
            var concealedAny = false
            while left > 0, let pcm = try? opus.concealLoss(sampleCount: min(left, 5_760)), pcm.samplesPerChannel > 0 {
                blocks.append(pcm)
                stats.concealed += pcm.samplesPerChannel
                left -= pcm.samplesPerChannel
                concealedAny = true
            }
            if concealedAny { stats.concealmentEvents += 1 }
        }
        if let frame, let pcm = try? opus.decode(frame.data, timestamp: frame.timestamp) {
            blocks.append(pcm)
            // A WAV-only recording counts the packets it holds, as the Ogg writer does.
            if wav != nil, ogg == nil, mkv == nil { stats.framesWritten += 1 }
        }
        for block in blocks {
            stats.samples += block.samplesPerChannel
            Self.measure(block, into: &stats)
            if let wav { try? wav.write(block) }
        }
    }

    /// W3C audio figures of one decoded block (webrtc-stats §8.6): `totalAudioEnergy` adds
    /// each sample's level (its value over full scale; of several channels, the loudest)
    /// squared, times its duration (1/48 000 s); `totalSamplesDuration` the block's seconds;
    /// `audioLevel` is the same average over the last ~100 ms, as a level:
    /// √(energy / seconds).
    static func measure(_ block: AudioFrame, into stats: inout SinkStats) {
        let perChannel = block.samplesPerChannel, channels = max(1, block.channels)
        guard perChannel > 0 else { return }
        var energy = 0.0
        block.samples.withUnsafeBufferPointer { samples in
            for i in 0..<perChannel {
                var loudest = 0.0
                for c in 0..<channels where i * channels + c < samples.count {
                    let x = Double(samples[i * channels + c]) / 32_768
                    loudest = max(loudest, x * x)
                }
                energy += loudest
            }
        }
        energy /= Double(AudioFrame.sampleRate)
        let seconds = Double(perChannel) / Double(AudioFrame.sampleRate)
        stats.audioEnergy += energy
        stats.samplesDuration += seconds
        stats.recentEnergy.append((energy, seconds))
        // Keep the newest blocks that make up at least 100 ms.
        var kept = 0.0, first = stats.recentEnergy.count
        while first > 0, kept < 0.1 {
            first -= 1
            kept += stats.recentEnergy[first].seconds
        }
        if first > 0 { stats.recentEnergy.removeFirst(first) }
        let total = stats.recentEnergy.reduce(0.0) { $0 + $1.energy }
        stats.audioLevel = kept > 0 ? min(1, (total / kept).squareRoot()) : 0
    }
}
