// OggOpusSource: an Ogg Opus file (RFC 7845) as an audio source whose packets are sent as they are, each at its place by the samples before it (the file's granules), looped.
import Bytes

/// Sends an Ogg Opus file's packets without decoding or re-encoding (`--audio ogg:PATH`):
/// each packet's timestamp (48 kHz ticks) is the samples of the packets before it (their
/// TOC bytes, RFC 6716 §3.1), as the file's granule positions count them, so the pacer
/// sends them in real time; the file loops, timestamps going on.
public final class OggOpusSource: AudioSource {
    private let packets: [[UInt8]]
    private var index = 0
    private var timestamp: Int64 = 0
    private let loop: Bool
    /// The file's channel count (OpusHead): 1 or 2.
    public let channels: Int
    /// True: the sender takes ``nextPacket()`` as it is.
    public var sendsEncoded: Bool { true }

    /// Reads `path` whole (its headers and packets).
    /// - Throws: ``OggOpusError`` for a file that is not Ogg Opus, a multistream one
    ///   (mapping family ≠ 0 or more than 2 channels: ``OggOpusError/badChannelCount(_:)``), one without audio
    ///   (``OggOpusError/noOggPages(path:)``); ``OggOpusError/badPacket(index:timestamp:reason:)``
    ///   for a packet whose TOC byte cannot be read.
    public init(path: String, loop: Bool = true) throws(OggOpusError) {
        let reader = try OggOpusReader(path: path)
        // RFC 7587 carries one Opus stream of 1 or 2 channels: not a multistream file.
        guard reader.head.mappingFamily == 0, (1...2).contains(reader.head.channels) else { throw .badChannelCount(reader.head.channels) }
        guard !reader.packets.isEmpty else { throw .noOggPages(path: path) }
        var at: Int64 = 0
        for (i, p) in reader.packets.enumerated() {
            do throws(OpusPayloadError) { at += Int64(try OpusTOC(parsing: p).sampleCount) } catch {
                throw .badPacket(index: i, timestamp: at, reason: "\(error)")
            }
        }
        packets = reader.packets
        channels = reader.head.channels
        self.loop = loop
    }

    /// Not used: the sender takes ``nextPacket()``.
    public func nextFrame(sampleCount: Int) throws -> AudioFrame? { nil }

    /// The next packet at its timestamp; nil at the end when not looping.
    public func nextPacket() throws -> EncodedAudioFrame? {
        if index == packets.count {
            guard loop else { return nil }
            index = 0
        }
        let data = packets[index]
        index += 1
        let samples = (try? OpusTOC(parsing: data).sampleCount) ?? 960
        defer { timestamp += Int64(samples) }
        return EncodedAudioFrame(data: data, sampleCount: samples, timestamp: timestamp)
    }
}
