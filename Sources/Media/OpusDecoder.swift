// OpusDecoder: an Opus decoder over libopus (RFC 6716) at 48 kHz, with packet-loss concealment.
import COpus
import Synchronization

/// An Opus decoder (RFC 6716) over libopus at 48 kHz, with packet-loss concealment and
/// in-band FEC recovery.
///
/// Thread-safe: the libopus decoder, its scratch buffer and the counts live in one `Mutex`,
/// taken by every call.
public final class OpusDecoder: Sendable {
    /// Largest packet duration Opus allows: 120 ms at 48 kHz, in samples per channel.
    public static let maxSamplesPerChannel = 5760

    /// Channel count of the output: 1 or 2 (libopus mixes or duplicates the packets' channels).
    public let channels: Int

    /// The libopus decoder, the buffer it decodes into, and the counts.
    fileprivate struct State {
        let decoder: OpaquePointer
        let channels: Int
        let template: AudioFrame
        var pcm: [Int16]
        var next: Int64 = 0
        var decoded = 0
        var concealed = 0
    }

    private let state: Mutex<State>

    /// 48 kHz timestamp following the last block returned (the default start of a concealed block).
    public var nextTimestamp: Int64 { state.withLock { $0.next } }
    /// Samples per channel decoded from packets (FEC recoveries included).
    public var samplesDecoded: Int { state.withLock { $0.decoded } }
    /// Samples per channel produced by loss concealment (W3C `concealedSamples`).
    public var concealedSamples: Int { state.withLock { $0.concealed } }

    /// Opens a libopus decoder of `channels` output channels at 48 kHz. Throws
    /// ``OpusCodecError/badChannelCount(_:)`` or ``OpusCodecError/libopus(function:code:message:)``.
    public init(channels: Int) throws(OpusCodecError) {
        guard channels == 1 || channels == 2 else { throw .badChannelCount(channels) }
        var err: Int32 = OPUS_OK
        guard let dec = opus_decoder_create(Int32(AudioFrame.sampleRate), Int32(channels), &err), err == OPUS_OK else {
            throw OpusCodecError.from("opus_decoder_create", err)
        }
        let template: AudioFrame
        do {
            template = try AudioFrame(channels: channels, samples: [])
        } catch {
            opus_decoder_destroy(dec)
            throw .badChannelCount(channels)
        }
        self.channels = channels
        state = Mutex(State(decoder: dec, channels: channels, template: template,
                            pcm: [Int16](repeating: 0, count: OpusDecoder.maxSamplesPerChannel * channels)))
    }

    deinit { state.withLock { opus_decoder_destroy($0.decoder) } }

    /// Decodes one Opus packet into a block stamped `timestamp` (48 kHz ticks) holding the
    /// packet's whole duration (2.5…120 ms).
    ///
    /// Throws ``OpusCodecError/emptyPacket`` for no bytes and
    /// ``OpusCodecError/libopus(function:code:message:)`` (`opus_strerror` text, e.g.
    /// "corrupted stream") for a packet libopus rejects (RFC 6716 §3.4).
    public func decode(_ packet: [UInt8], timestamp: Int64) throws(OpusCodecError) -> AudioFrame {
        try state.withLock { s throws(OpusCodecError) in
            guard !packet.isEmpty else { throw .emptyPacket }
            let n = try s.run("opus_decode", packet, samples: OpusDecoder.maxSamplesPerChannel, fec: false)
            s.decoded += n
            return s.block(n, timestamp: timestamp)
        }
    }

    /// Packet-loss concealment: `sampleCount` samples per channel extrapolated from the past
    /// (`opus_decode` with a NULL packet), stamped `timestamp` or, when nil, ``nextTimestamp``.
    ///
    /// `sampleCount` must be a positive multiple of 120 (2.5 ms) up to 5760 (120 ms), else
    /// ``OpusCodecError/badConfiguration(field:value:allowed:)``; libopus failures throw
    /// ``OpusCodecError/libopus(function:code:message:)``.
    public func concealLoss(sampleCount: Int, timestamp: Int64? = nil) throws(OpusCodecError) -> AudioFrame {
        try state.withLock { s throws(OpusCodecError) in
            try OpusDecoder.checkCount(sampleCount)
            let n = try s.run("opus_decode(PLC)", nil, samples: sampleCount, fec: false)
            s.concealed += n
            return s.block(n, timestamp: timestamp ?? s.next)
        }
    }

    /// Recovers a lost packet from the in-band FEC data of the packet after it (`opus_decode`
    /// with `decode_fec` 1): call it with the packet that followed the loss, before decoding
    /// that packet normally. `sampleCount` is the lost packet's duration (samples per channel,
    /// a multiple of 120 up to 5760); when `nextPacket` carries no FEC, libopus conceals instead.
    ///
    /// Throws ``OpusCodecError/emptyPacket``, ``OpusCodecError/badConfiguration(field:value:allowed:)``
    /// for a bad `sampleCount`, and ``OpusCodecError/libopus(function:code:message:)``.
    public func decodeFEC(from nextPacket: [UInt8], sampleCount: Int, timestamp: Int64) throws(OpusCodecError) -> AudioFrame {
        try state.withLock { s throws(OpusCodecError) in
            guard !nextPacket.isEmpty else { throw .emptyPacket }
            try OpusDecoder.checkCount(sampleCount)
            let n = try s.run("opus_decode(FEC)", nextPacket, samples: sampleCount, fec: true)
            s.decoded += n
            return s.block(n, timestamp: timestamp)
        }
    }

    private static func checkCount(_ sampleCount: Int) throws(OpusCodecError) {
        guard sampleCount > 0, sampleCount <= OpusDecoder.maxSamplesPerChannel, sampleCount % 120 == 0 else {
            throw .badConfiguration(field: "sampleCount", value: sampleCount, allowed: "120…5760 in steps of 120")
        }
    }
}

extension OpusDecoder.State {
    /// Calls `opus_decode` into the scratch buffer; returns samples per channel.
    mutating func run(_ name: String, _ packet: [UInt8]?, samples: Int, fec: Bool) throws(OpusCodecError) -> Int {
        let decoder = self.decoder
        let result: Int32 = pcm.withUnsafeMutableBufferPointer { out in
            guard let dst = out.baseAddress else { return OPUS_BAD_ARG }
            if let packet {
                return packet.withUnsafeBufferPointer { p in
                    opus_decode(decoder, p.baseAddress, Int32(p.count), dst, Int32(samples), fec ? 1 : 0)
                }
            }
            return opus_decode(decoder, nil, 0, dst, Int32(samples), 0)
        }
        guard result >= 0 else { throw OpusCodecError.from(name, result) }
        return Int(result)
    }

    /// Wraps the first `n` samples per channel of the scratch buffer as a block and advances ``nextTimestamp``.
    mutating func block(_ n: Int, timestamp: Int64) -> AudioFrame {
        var frame = template
        frame.samples = Array(pcm[0..<(n * channels)])
        frame.timestamp = timestamp
        next = timestamp + Int64(n)
        return frame
    }
}
