// OpusTOC: the first byte of an Opus packet, the table-of-contents byte (RFC 6716 §3.1),
// and the frame count byte of a code 3 packet (§3.2.5); gives the packet's duration.

/// The first byte of an Opus packet (RFC 6716 §3.1), read to learn the packet's
/// duration: `config` (5 bits), `s` (stereo) and `c` (frame count code).
///
/// ```
///  0 1 2 3 4 5 6 7
/// | config  |s| c |   c = 0: 1 frame, 1 or 2: 2 frames, 3: M frames (byte 1, low 6 bits)
/// ```
public struct OpusTOC: Equatable, Sendable {
    /// config: mode (SILK 0–11, Hybrid 12–15, CELT 16–31), bandwidth and frame size.
    public var config: UInt8
    /// s: true for a stereo packet.
    public var isStereo: Bool
    /// The number of Opus frames in the packet (1–48).
    public var frameCount: Int

    /// Samples per channel of one frame at 48 kHz (120, 240, 480, 960, 1920 or 2880).
    public var samplesPerFrame: Int { OpusTOC.samplesPerFrame(config: config) }

    /// Samples per channel at 48 kHz of one frame of TOC configuration `config` (0–31,
    /// RFC 6716 §3.1 Table 2): SILK 10/20/40/60 ms, Hybrid 10/20 ms, CELT 2.5/5/10/20 ms.
    public static func samplesPerFrame(config: UInt8) -> Int {
        switch config {
        case 0...11: return [480, 960, 1920, 2880][Int(config % 4)]
        case 12...15: return [480, 960][Int(config % 2)]
        default: return [120, 240, 480, 960][Int(config % 4)]
        }
    }

    /// The packet's duration in samples per channel at 48 kHz (= RTP timestamp ticks, RFC 7587 §4.1).
    public var sampleCount: Int { samplesPerFrame * frameCount }

    /// Reads the TOC byte (and the frame count byte for code 3) of `packet`.
    ///
    /// Throws ``OpusPayloadError``: `.truncated` (empty packet, or code 3 without its
    /// count byte), `.badFrameCount` (code 3 with M = 0, or longer than 120 ms, RFC 6716 §3.2.5).
    public init(parsing packet: [UInt8]) throws(OpusPayloadError) {
        var r = ByteReader(packet)
        func read(_ field: String) throws(OpusPayloadError) -> UInt8 {
            do { return try r.u8(field) } catch { throw .truncated(error) }
        }
        let toc = try read("Opus TOC byte")
        config = toc >> 3
        isStereo = toc & 0x04 != 0
        switch toc & 0x03 {
        case 0: frameCount = 1
        case 1, 2: frameCount = 2
        default:
            let m = Int(try read("Opus frame count byte") & 0x3F)
            frameCount = m
            guard m > 0, m * samplesPerFrame <= 5760 else { throw .badFrameCount(offset: 1, count: m) }
        }
    }
}
