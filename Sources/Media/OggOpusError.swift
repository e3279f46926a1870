// OggOpusError: the errors of the Ogg Opus writer and reader (RFC 7845, libogg pages of
// RFC 3533); each names the offending value.

/// Errors of ``OggOpusWriter`` and ``OggOpusReader``; each names the offending value.
public enum OggOpusError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// A channel count other than 1 or 2.
    case badChannelCount(Int)
    /// A pre-skip outside 0…65535 samples.
    case badPreSkip(Int)
    /// Packet number `index` (0-based, of those given) at 48 kHz `timestamp` is not a valid Opus
    /// packet (RFC 6716 §3: empty, or libopus cannot count its samples; `reason` says which).
    case badPacket(index: Int, timestamp: Int64, reason: String)
    /// libogg refused a call (`call` names it).
    case ogg(call: String)
    /// ``OggOpusWriter/write(_:)`` after ``OggOpusWriter/close()``.
    case closed(path: String)
    /// The file holds no Ogg page.
    case noOggPages(path: String)
    /// The first packet is not a valid OpusHead.
    case badOpusHead(String)
    /// The second packet is not a valid OpusTags.
    case badOpusTags(String)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "Ogg Opus: \(e)"
        case let .badChannelCount(c): return "Ogg Opus: channel count \(c), expected 1 or 2"
        case let .badPreSkip(p): return "Ogg Opus: pre-skip \(p) outside 0…65535"
        case let .badPacket(i, t, r): return "Ogg Opus: packet \(i) at timestamp \(t): \(r)"
        case let .ogg(call): return "Ogg Opus: libogg \(call) failed"
        case let .closed(p): return "Ogg Opus: \(p) is closed"
        case let .noOggPages(p): return "Ogg Opus: \(p) has no Ogg page"
        case let .badOpusHead(r): return "Ogg Opus: bad OpusHead: \(r)"
        case let .badOpusTags(r): return "Ogg Opus: bad OpusTags: \(r)"
        }
    }
}
