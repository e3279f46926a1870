// OpusEncoder: an Opus encoder over libopus (RFC 6716) at 48 kHz, with in-band FEC.
import COpus
import Synchronization

/// Errors from the Opus encoder and decoder over libopus; each names the offending value.
public enum OpusCodecError: Error, Equatable, CustomStringConvertible {
    /// A frame duration other than 10, 20, 40 or 60 ms.
    case badFrameDuration(ms: Int)
    /// A channel count other than 1 or 2.
    case badChannelCount(Int)
    /// A configuration value outside its range: the field, the value, the allowed range.
    case badConfiguration(field: String, value: Int, allowed: String)
    /// An audio block with `actual` samples per channel where `expected` were needed.
    case wrongSampleCount(expected: Int, actual: Int)
    /// An audio block with `actual` channels given to a codec of `expected` channels.
    case channelMismatch(expected: Int, actual: Int)
    /// An empty packet given to the decoder (libopus would take it for a lost packet:
    /// call ``OpusDecoder/concealLoss(sampleCount:timestamp:)`` for that).
    case emptyPacket
    /// libopus returned an error: the function, the code (`OPUS_*`, negative) and `opus_strerror`'s text.
    case libopus(function: String, code: Int, message: String)

    /// One line naming the offending values.
    public var description: String {
        switch self {
        case let .badFrameDuration(ms): return "Opus frame duration \(ms) ms, allowed 10, 20, 40, 60"
        case let .badChannelCount(c): return "Opus channel count \(c), expected 1 or 2"
        case let .badConfiguration(field, value, allowed): return "Opus \(field) = \(value), allowed \(allowed)"
        case let .wrongSampleCount(e, a): return "Opus block has \(a) samples per channel, expected \(e)"
        case let .channelMismatch(e, a): return "Opus block has \(a) channels, the codec has \(e)"
        case .emptyPacket: return "Opus decoder given an empty packet"
        case let .libopus(function, code, message): return "libopus \(function) failed (\(code)): \(message)"
        }
    }

    /// Builds ``libopus(function:code:message:)`` from a libopus return code.
    static func from(_ function: String, _ code: Int32) -> OpusCodecError {
        let text = opus_strerror(code).map { String(cString: $0) } ?? "unknown error"
        return .libopus(function: function, code: Int(code), message: text)
    }
}

/// Settings of an ``OpusEncoder``: 48 kHz, mono or stereo (RFC 6716, RFC 7587).
public struct OpusEncoderConfiguration: Sendable, Equatable {
    /// The coding mode libopus optimises for (`OPUS_APPLICATION_*`).
    public enum Application: Sendable, Equatable {
        /// `OPUS_APPLICATION_VOIP`: speech intelligibility, SILK at low rates.
        case voip
        /// `OPUS_APPLICATION_AUDIO`: music and general audio, fidelity first.
        case audio
    }

    /// Channel count: 1 or 2.
    public var channels: Int
    /// Frame duration in ms: 10, 20 (default), 40 or 60.
    public var frameDurationMs: Int
    /// Target bit rate in bits per second (`OPUS_SET_BITRATE`), 6 000…510 000. Default 32 000.
    public var bitrate: Int
    /// In-band forward error correction (`OPUS_SET_INBAND_FEC`): each packet carries a
    /// low-rate copy of the previous frame (SILK and hybrid modes only). Default off.
    public var inbandFEC: Bool
    /// Expected packet loss in percent (`OPUS_SET_PACKET_LOSS_PERC`, 0…100): how much FEC to spend. Default 0.
    public var packetLossPercent: Int
    /// Discontinuous transmission (`OPUS_SET_DTX`): during silence libopus emits packets of
    /// at most 2 bytes that need not be sent (RFC 7587 §3.1.3). Default off.
    public var dtx: Bool
    /// VOIP (default) or AUDIO.
    public var application: Application
    /// Encoder complexity (`OPUS_SET_COMPLEXITY`, 0…10). Default 9.
    public var complexity: Int

    /// Creates a configuration; every field has a WebRTC-like default.
    public init(channels: Int = 1, frameDurationMs: Int = 20, bitrate: Int = 32_000, inbandFEC: Bool = false,
                packetLossPercent: Int = 0, dtx: Bool = false, application: Application = .voip, complexity: Int = 9) {
        self.channels = channels
        self.frameDurationMs = frameDurationMs
        self.bitrate = bitrate
        self.inbandFEC = inbandFEC
        self.packetLossPercent = packetLossPercent
        self.dtx = dtx
        self.application = application
        self.complexity = complexity
    }

    /// Samples per channel in one frame at 48 kHz (960 for 20 ms).
    public var samplesPerFrame: Int { AudioFrame.sampleRate / 1000 * frameDurationMs }
}

/// An Opus encoder (RFC 6716) over libopus at 48 kHz.
///
/// Thread-safe: the libopus encoder and its output buffer live in one `Mutex`, taken by every call.
public final class OpusEncoder: Sendable {
    /// The configuration the encoder was opened with.
    public let configuration: OpusEncoderConfiguration
    /// The encoder's delay in 48 kHz samples per channel (`OPUS_GET_LOOKAHEAD`): the number
    /// of decoded samples to drop at the start, the Ogg Opus pre-skip (RFC 7845 §5.1).
    public let lookahead: Int

    /// The libopus encoder and the buffer it encodes into.
    private struct State {
        let encoder: OpaquePointer
        var output = [UInt8](repeating: 0, count: 4000)
    }

    private let state: Mutex<State>

    /// Opens a libopus encoder.
    ///
    /// Throws ``OpusCodecError/badChannelCount(_:)``, ``OpusCodecError/badFrameDuration(ms:)``
    /// (anything but 10/20/40/60 ms), ``OpusCodecError/badConfiguration(field:value:allowed:)``
    /// for bitrate, loss or complexity out of range, and
    /// ``OpusCodecError/libopus(function:code:message:)`` when libopus refuses a setting.
    public init(configuration: OpusEncoderConfiguration) throws(OpusCodecError) {
        let c = configuration
        guard c.channels == 1 || c.channels == 2 else { throw .badChannelCount(c.channels) }
        guard [10, 20, 40, 60].contains(c.frameDurationMs) else { throw .badFrameDuration(ms: c.frameDurationMs) }
        guard (6_000...510_000).contains(c.bitrate) else {
            throw .badConfiguration(field: "bitrate", value: c.bitrate, allowed: "6000…510000 bit/s")
        }
        guard (0...100).contains(c.packetLossPercent) else {
            throw .badConfiguration(field: "packetLossPercent", value: c.packetLossPercent, allowed: "0…100")
        }
        guard (0...10).contains(c.complexity) else {
            throw .badConfiguration(field: "complexity", value: c.complexity, allowed: "0…10")
        }
        let app = c.application == .voip ? OPUS_APPLICATION_VOIP : OPUS_APPLICATION_AUDIO
        var err: Int32 = OPUS_OK
        guard let enc = opus_encoder_create(Int32(AudioFrame.sampleRate), Int32(c.channels), Int32(app), &err),
              err == OPUS_OK else {
            throw OpusCodecError.from("opus_encoder_create", err)
        }
        let settings: [(String, Int32)] = [
            ("OPUS_SET_BITRATE", peer_opus_set_bitrate(enc, Int32(c.bitrate))),
            ("OPUS_SET_COMPLEXITY", peer_opus_set_complexity(enc, Int32(c.complexity))),
            ("OPUS_SET_INBAND_FEC", peer_opus_set_inband_fec(enc, c.inbandFEC ? 1 : 0)),
            ("OPUS_SET_PACKET_LOSS_PERC", peer_opus_set_packet_loss_perc(enc, Int32(c.packetLossPercent))),
            ("OPUS_SET_DTX", peer_opus_set_dtx(enc, c.dtx ? 1 : 0)),
        ]
        for (name, code) in settings where code != OPUS_OK {
            opus_encoder_destroy(enc)
            throw OpusCodecError.from(name, code)
        }
        var look: Int32 = 0
        let code = peer_opus_get_lookahead(enc, &look)
        guard code == OPUS_OK else {
            opus_encoder_destroy(enc)
            throw OpusCodecError.from("OPUS_GET_LOOKAHEAD", code)
        }
        state = Mutex(State(encoder: enc))
        self.configuration = c
        lookahead = Int(look)
    }

    deinit { state.withLock { opus_encoder_destroy($0.encoder) } }

    /// Encodes exactly one frame duration of samples (``OpusEncoderConfiguration/samplesPerFrame``
    /// per channel) into one Opus packet carrying the block's timestamp and sample count.
    /// With DTX on, packets of 1–2 bytes mark silence and need not be sent.
    ///
    /// Throws ``OpusCodecError/channelMismatch(expected:actual:)``,
    /// ``OpusCodecError/wrongSampleCount(expected:actual:)`` and
    /// ``OpusCodecError/libopus(function:code:message:)`` when `opus_encode` fails.
    public func encode(_ frame: AudioFrame) throws(OpusCodecError) -> EncodedAudioFrame {
        try state.withLock { s throws(OpusCodecError) in
            guard frame.channels == configuration.channels else {
                throw .channelMismatch(expected: configuration.channels, actual: frame.channels)
            }
            let n = configuration.samplesPerFrame
            guard frame.samplesPerChannel == n, frame.samples.count == n * frame.channels else {
                throw .wrongSampleCount(expected: n, actual: frame.samplesPerChannel)
            }
            let capacity = s.output.count
            let encoder = s.encoder
            let result = frame.samples.withUnsafeBufferPointer { pcm in
                s.output.withUnsafeMutableBufferPointer { out -> Int32 in
                    guard let src = pcm.baseAddress, let dst = out.baseAddress else { return OPUS_BAD_ARG }
                    return opus_encode(encoder, src, Int32(n), dst, Int32(capacity))
                }
            }
            guard result > 0 else { throw OpusCodecError.from("opus_encode", result) }
            return EncodedAudioFrame(data: Array(s.output[0..<Int(result)]), sampleCount: n, timestamp: frame.timestamp)
        }
    }
}
