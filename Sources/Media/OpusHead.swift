// OpusHead: the identification header of an Ogg Opus stream (RFC 7845 §5.1), the first
// packet of the stream, alone on its page.

import Bytes

/// The OpusHead identification header (RFC 7845 §5.1), 19 bytes for mapping family 0.
public struct OpusHead: Equatable, Sendable {
    /// Version (1).
    public var version: Int
    /// Output channel count (1 or 2 for mapping family 0).
    public var channels: Int
    /// Pre-skip: 48 kHz samples to drop from the start of the decoded output (the encoder's lookahead).
    public var preSkip: Int
    /// Sample rate of the original input in Hz (informational; 48000 here).
    public var inputSampleRate: UInt32
    /// Output gain in Q7.8 dB (0 here).
    public var outputGain: Int16
    /// Channel mapping family (0: mono or stereo, no mapping table).
    public var mappingFamily: Int

    /// A header from its fields.
    public init(version: Int = 1, channels: Int, preSkip: Int, inputSampleRate: UInt32 = 48_000,
                outputGain: Int16 = 0, mappingFamily: Int = 0) {
        self.version = version
        self.channels = channels
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
        self.mappingFamily = mappingFamily
    }

    /// Parses an OpusHead packet. Throws ``OggOpusError/badOpusHead(_:)`` naming the problem
    /// (missing magic "OpusHead", shorter than 19 bytes, version not 1.x, channel count 0,
    /// more than 2 channels with mapping family 0 — RFC 7845 §5.1).
    public init(parsing p: [UInt8]) throws(OggOpusError) {
        guard p.count >= 19 else { throw .badOpusHead("\(p.count) bytes, need 19") }
        var r = ByteReader(p)
        guard p.starts(with: Array("OpusHead".utf8)) else { throw .badOpusHead("no OpusHead magic") }
        do throws(ByteReaderError) {
            try r.skip(8, "OpusHead magic")
            version = Int(try r.u8("version"))
            channels = Int(try r.u8("channel count"))
            preSkip = Int(try r.u16le("pre-skip"))
            inputSampleRate = try r.u32le("input sample rate")
            outputGain = Int16(bitPattern: try r.u16le("output gain"))
            mappingFamily = Int(try r.u8("channel mapping family"))
        } catch { throw .badOpusHead("\(error)") }
        guard version >> 4 == 0 else { throw .badOpusHead("version \(version)") }
        // RFC 7845 §5.1: the channel count "MUST NOT be zero"; family 0 allows 1 or 2.
        guard channels > 0 else { throw .badOpusHead("channel count 0 at byte 9") }
        guard mappingFamily != 0 || channels <= 2 else {
            throw .badOpusHead("channel count \(channels) at byte 9 with mapping family 0 (at most 2)")
        }
    }

    /// The header packet bytes (19 bytes; mapping family 0 has no mapping table).
    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: 19)
        w.append(Array("OpusHead".utf8))
        w.u8(UInt8(truncatingIfNeeded: version))
        w.u8(UInt8(truncatingIfNeeded: channels))
        w.u16le(UInt16(truncatingIfNeeded: preSkip))
        w.u32le(inputSampleRate)
        w.u16le(UInt16(bitPattern: outputGain))
        w.u8(UInt8(truncatingIfNeeded: mappingFamily))
        return w.bytes
    }
}
