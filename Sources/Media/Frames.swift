/// One uncompressed video frame in I420 (YUV 4:2:0 planar, 8 bits per sample,
/// BT.601 limited range): the shape every video source produces and the VP8
/// encoder and decoder exchange.
///
/// `data` holds the three planes back to back with no row padding: Y
/// (`width × height` bytes), then U, then V (`chromaWidth × chromaHeight` bytes
/// each). Odd widths and heights round the chroma planes up.
public struct I420Frame: Sendable, Equatable {
    /// Width in pixels (≥ 1).
    public let width: Int
    /// Height in pixels (≥ 1).
    public let height: Int
    /// Y, U and V planes back to back, ``byteCount`` bytes.
    public var data: [UInt8]
    /// Presentation time in 90 kHz ticks from the start of the stream.
    public var timestamp: Int64

    /// Width of the U and V planes in samples: `(width + 1) / 2`.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Height of the U and V planes in rows: `(height + 1) / 2`.
    public var chromaHeight: Int { (height + 1) / 2 }
    /// Bytes in the Y plane.
    public var lumaCount: Int { width * height }
    /// Bytes in each of the U and V planes.
    public var chromaCount: Int { chromaWidth * chromaHeight }
    /// Offset of the U plane in ``data``.
    public var uOffset: Int { lumaCount }
    /// Offset of the V plane in ``data``.
    public var vOffset: Int { lumaCount + chromaCount }
    /// Total bytes of a frame of this size: `lumaCount + 2 × chromaCount`.
    public var byteCount: Int { lumaCount + 2 * chromaCount }

    /// Bytes a frame of `width × height` needs in I420.
    public static func byteCount(width: Int, height: Int) -> Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }

    /// A black frame (Y = 16, U = V = 128) of the given size.
    ///
    /// Throws ``MediaFrameError/badDimensions(width:height:)`` when either side
    /// is below 1 or above 16384 pixels.
    public init(width: Int, height: Int, timestamp: Int64 = 0) throws(MediaFrameError) {
        guard (1...16384).contains(width), (1...16384).contains(height) else {
            throw .badDimensions(width: width, height: height)
        }
        self.width = width
        self.height = height
        self.timestamp = timestamp
        let luma = width * height
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        data = [UInt8](repeating: 16, count: luma) + [UInt8](repeating: 128, count: 2 * chroma)
    }

    /// A frame over existing plane bytes (Y, U, V back to back).
    ///
    /// Throws ``MediaFrameError/badDimensions(width:height:)`` for sizes outside
    /// 1…16384 and ``MediaFrameError/wrongByteCount(expected:actual:)`` when `data`
    /// is not exactly ``byteCount(width:height:)`` bytes.
    public init(width: Int, height: Int, data: [UInt8], timestamp: Int64 = 0) throws(MediaFrameError) {
        guard (1...16384).contains(width), (1...16384).contains(height) else {
            throw .badDimensions(width: width, height: height)
        }
        let expected = I420Frame.byteCount(width: width, height: height)
        guard data.count == expected else { throw .wrongByteCount(expected: expected, actual: data.count) }
        self.width = width
        self.height = height
        self.data = data
        self.timestamp = timestamp
    }
}

/// One encoded VP8 frame (RFC 6386): the unit the encoder emits, the IVF files
/// hold, and the RTP payloader splits (RFC 7741).
public struct EncodedVideoFrame: Sendable, Equatable {
    /// The VP8 frame bytes, starting with the 3-byte frame tag.
    public var data: [UInt8]
    /// True for a key frame (the frame tag's P bit is 0, RFC 6386 §9.1).
    public var isKeyframe: Bool
    /// Presentation time in 90 kHz ticks from the start of the stream.
    public var timestamp: Int64
    /// Width in pixels from a key frame's header; nil for inter frames or when unknown.
    public var width: Int?
    /// Height in pixels from a key frame's header; nil for inter frames or when unknown.
    public var height: Int?

    /// Creates a frame from its fields.
    public init(data: [UInt8], isKeyframe: Bool, timestamp: Int64, width: Int? = nil, height: Int? = nil) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.timestamp = timestamp
        self.width = width
        self.height = height
    }
}

/// A block of uncompressed audio: signed 16-bit PCM at 48 kHz, channels
/// interleaved (L R L R … for stereo).
public struct AudioFrame: Sendable, Equatable {
    /// The sample rate in Hz; 48 000 throughout this module (the Opus RTP clock, RFC 7587).
    public static let sampleRate = 48_000
    /// Channel count: 1 (mono) or 2 (stereo).
    public let channels: Int
    /// Interleaved samples, `samplesPerChannel × channels` values.
    public var samples: [Int16]
    /// Start time in 48 kHz sample ticks from the start of the stream.
    public var timestamp: Int64

    /// Samples per channel in this block (`samples.count / channels`).
    public var samplesPerChannel: Int { samples.count / channels }
    /// Duration in milliseconds.
    public var durationMs: Double { Double(samplesPerChannel) * 1000 / Double(AudioFrame.sampleRate) }

    /// Creates a block; throws ``MediaFrameError/badChannelCount(_:)`` unless
    /// `channels` is 1 or 2, and ``MediaFrameError/wrongByteCount(expected:actual:)``
    /// (counted in samples) when `samples.count` is not a multiple of `channels`.
    public init(channels: Int, samples: [Int16], timestamp: Int64 = 0) throws(MediaFrameError) {
        guard channels == 1 || channels == 2 else { throw .badChannelCount(channels) }
        guard samples.count % channels == 0 else {
            throw .wrongByteCount(expected: samples.count - samples.count % channels, actual: samples.count)
        }
        self.channels = channels
        self.samples = samples
        self.timestamp = timestamp
    }
}

/// One Opus packet (RFC 6716) with its timing: what the Opus encoder emits, the
/// RTP payload format carries one per packet (RFC 7587), and the Ogg writer stores.
public struct EncodedAudioFrame: Sendable, Equatable {
    /// The Opus packet bytes (TOC byte first).
    public var data: [UInt8]
    /// Decoded duration in samples per channel at 48 kHz (960 for 20 ms).
    public var sampleCount: Int
    /// Start time in 48 kHz ticks from the start of the stream.
    public var timestamp: Int64

    /// Creates a packet from its fields.
    public init(data: [UInt8], sampleCount: Int, timestamp: Int64) {
        self.data = data
        self.sampleCount = sampleCount
        self.timestamp = timestamp
    }
}

/// Errors from building the frame values of this module; each names the values.
public enum MediaFrameError: Error, Equatable, CustomStringConvertible {
    /// Width or height outside 1…16384 pixels.
    case badDimensions(width: Int, height: Int)
    /// A buffer was `actual` bytes (or samples) where `expected` were needed.
    case wrongByteCount(expected: Int, actual: Int)
    /// A channel count other than 1 or 2.
    case badChannelCount(Int)

    /// One line naming the offending values.
    public var description: String {
        switch self {
        case let .badDimensions(w, h): return "frame size \(w)x\(h) outside 1…16384"
        case let .wrongByteCount(e, a): return "frame buffer has \(a), expected \(e)"
        case let .badChannelCount(c): return "channel count \(c), expected 1 or 2"
        }
    }
}
