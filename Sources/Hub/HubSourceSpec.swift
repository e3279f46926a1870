// HubSourceSpec: what names one shared source in the media hub — the source, its size and frame rate, and the encoder settings (VP8 bitrate, Opus bitrate) — so equal specs share one source and encoder.

/// The VP8 encoder settings a shared video source is encoded with: part of its key, so
/// senders at another bitrate get an encoder of their own.
public struct HubVideoEncoding: Hashable, Sendable {
    /// Target bitrate in kbit/s (CBR, libvpx), 1…100 000.
    public var bitrateKbps: Int
    /// libvpx `cpu-used` (−16…16; negative fixes the speed). Default −6, as `SendEncoding`.
    public var cpuUsed: Int
    /// Key frame at least every this many frames (≥ 1). Default 3,000.
    public var keyframeInterval: Int
    /// Payload bytes per RTP packet at most, VP8 descriptor included (RFC 7741), > 4.
    public var maximumPayloadSize: Int

    /// Settings with the sender's defaults (1,000 kbit/s, cpu-used −6, 3,000 frames, 1,200 bytes).
    public init(bitrateKbps: Int = 1_000, cpuUsed: Int = -6, keyframeInterval: Int = 3_000, maximumPayloadSize: Int = 1_200) {
        self.bitrateKbps = bitrateKbps
        self.cpuUsed = cpuUsed
        self.keyframeInterval = keyframeInterval
        self.maximumPayloadSize = maximumPayloadSize
    }
}

/// The Opus encoder settings a shared PCM audio source is encoded with (part of its key).
public struct HubAudioEncoding: Hashable, Sendable {
    /// Opus bitrate in bit/s.
    public var bitrate: Int
    /// Frame duration: 10, 20, 40 or 60 ms (the packetization time).
    public var frameDurationMs: Int
    /// Opus in-band FEC (RFC 6716 §2.1.7).
    public var inbandFEC: Bool

    /// Settings with the sender's defaults (32 kbit/s, 20 ms, FEC on).
    public init(bitrate: Int = 32_000, frameDurationMs: Int = 20, inbandFEC: Bool = true) {
        self.bitrate = bitrate
        self.frameDurationMs = frameDurationMs
        self.inbandFEC = inbandFEC
    }
}

/// One shared source of the media hub: what it reads or draws, at what size and rate, and
/// how it is encoded. Two subscriptions with equal specs share one source, one encoder
/// and one packetization (``MediaHub``); a file is named by its path as given.
public enum HubSourceSpec: Hashable, Sendable, CustomStringConvertible {
    /// The synthetic test pattern (frame markers drawn in) of `width` × `height` pixels at
    /// `frameRate` frames per second, encoded to VP8.
    case pattern(width: Int, height: Int, frameRate: Int, encoding: HubVideoEncoding)
    /// A Y4M file (4:2:0), looped, encoded to VP8.
    case y4m(path: String, encoding: HubVideoEncoding)
    /// An IVF file of VP8 passed through, looped: read once for every subscriber, never
    /// re-encoded, so a key frame cannot be forced (see ``MediaHub``).
    case ivf(path: String, maximumPayloadSize: Int = 1_200)
    /// A sine tone of `frequency` Hz at −12 dBFS, mono, encoded to Opus.
    case tone(frequency: Double, encoding: HubAudioEncoding)
    /// A WAV file (PCM 16-bit, 48 kHz), looped, encoded to Opus.
    case wav(path: String, encoding: HubAudioEncoding)
    /// An Ogg Opus file, its packets sent as they are, looped.
    case ogg(path: String)

    /// True for video sources (VP8, 90 kHz), false for audio (Opus, 48 kHz).
    public var isVideo: Bool {
        switch self {
        case .pattern, .y4m, .ivf: return true
        case .tone, .wav, .ogg: return false
        }
    }

    /// True when the source's frames are sent as the file holds them (IVF, Ogg Opus): no
    /// encoder, so a request for a key frame cannot be served.
    public var isPassthrough: Bool {
        switch self {
        case .ivf, .ogg: return true
        default: return false
        }
    }

    /// The spec in the command line's words with the encoder settings, e.g.
    /// `pattern:640x480@30 1000 kbit/s`.
    public var description: String {
        switch self {
        case let .pattern(w, h, fps, e): return "pattern:\(w)x\(h)@\(fps) \(e.bitrateKbps) kbit/s"
        case let .y4m(path, e): return "y4m:\(path) \(e.bitrateKbps) kbit/s"
        case let .ivf(path, _): return "ivf:\(path)"
        case let .tone(hz, e): return "tone:\(hz == hz.rounded() ? String(Int(hz)) : String(hz)) \(e.bitrate / 1000) kbit/s"
        case let .wav(path, e): return "wav:\(path) \(e.bitrate / 1000) kbit/s"
        case let .ogg(path): return "ogg:\(path)"
        }
    }
}
