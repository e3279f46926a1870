// HubSources: the command line's media specs (--video, --audio) as the media hub's shared sources, with the sender's encoding settings.
import Hub
import PeerAgent

extension VideoSpec {
    /// The media hub's source for this spec, encoded with `encoding`'s VP8 settings
    /// (bitrate, cpu-used, key-frame distance, payload size): equal specs and settings
    /// share one source and encoder in a ``MediaHub``. Nil for `none`.
    public func hubSource(encoding: SendEncoding) -> HubSourceSpec? {
        let video = HubVideoEncoding(bitrateKbps: encoding.videoBitrateKbps, cpuUsed: encoding.videoCpuUsed,
                                     keyframeInterval: encoding.keyframeInterval, maximumPayloadSize: encoding.maximumPayloadSize)
        switch self {
        case .none: return nil
        case let .pattern(w, h, fps): return .pattern(width: w, height: h, frameRate: fps, encoding: video)
        case let .y4m(path): return .y4m(path: path, encoding: video)
        case let .ivf(path): return .ivf(path: path, maximumPayloadSize: encoding.maximumPayloadSize)
        }
    }
}

extension AudioSpec {
    /// The media hub's source for this spec, encoded with `encoding`'s Opus settings
    /// (bitrate, frame duration, in-band FEC). Nil for `none`.
    public func hubSource(encoding: SendEncoding) -> HubSourceSpec? {
        let audio = HubAudioEncoding(bitrate: encoding.audioBitrate, frameDurationMs: encoding.audioFrameDurationMs,
                                     inbandFEC: encoding.audioInbandFEC)
        switch self {
        case .none: return nil
        case let .tone(hz): return .tone(frequency: hz, encoding: audio)
        case let .wav(path): return .wav(path: path, encoding: audio)
        case let .ogg(path): return .ogg(path: path)
        }
    }
}
