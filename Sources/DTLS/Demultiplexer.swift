/// What kind of packet a datagram on the ICE path carries (RFC 7983 §7).
public enum DatagramKind: Sendable, Equatable, CaseIterable {
    /// STUN (first byte 0–3, RFC 5389).
    case stun
    /// DTLS record (first byte 20–63, RFC 7983 §7).
    case dtls
    /// TURN ChannelData (first byte 64–79, RFC 8656 §12.5).
    case turnChannel
    /// RTP or SRTP (first byte 128–191, second byte not an RTCP packet type).
    case rtp
    /// RTCP or SRTCP (first byte 128–191, second byte 192–223: RFC 5761 §4).
    case rtcp
    /// Anything else: empty datagrams, ZRTP (16–19), unassigned ranges, and a
    /// single byte in the RTP range (too short to tell RTP from RTCP).
    case unknown
}

/// Demultiplexes datagrams arriving on one transport by their first byte,
/// per RFC 7983 §7 (which updates RFC 5764 §5.1.2), with RTP told apart from
/// RTCP by the second byte per RFC 5761 §4. Pure and stateless, so safe from any thread.
public enum Demultiplexer {
    /// Classifies one datagram (any byte collection, e.g. `[UInt8]` or `ArraySlice<UInt8>`).
    ///
    /// | first byte | kind |
    /// |---|---|
    /// | 0–3 | STUN |
    /// | 20–63 | DTLS |
    /// | 64–79 | TURN channel |
    /// | 128–191 | RTCP if the second byte is 192–223, else RTP |
    /// | others, or empty | unknown |
    ///
    /// Never fails: malformed input gives ``DatagramKind/unknown``.
    public static func classify<Bytes: Collection>(_ datagram: Bytes) -> DatagramKind where Bytes.Element == UInt8 {
        guard let first = datagram.first else { return .unknown }
        switch first {
        case 0...3: return .stun
        case 20...63: return .dtls
        case 64...79: return .turnChannel
        case 128...191:
            let rest = datagram.dropFirst()
            guard let second = rest.first else { return .unknown }
            return (192...223).contains(second) ? .rtcp : .rtp
        default: return .unknown
        }
    }
}
