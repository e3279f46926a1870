/// When to send the next RTCP compound packet (RFC 3550 §6.3.1 and §A.7).
///
/// The deterministic interval is `max(minimum, members × average RTCP size /
/// RTCP bandwidth)`; it is then multiplied by a random factor in [0.5, 1.5] and
/// divided by e − 3/2 ≈ 1.21828 (the compensation for the timer reconsideration
/// algorithm), so reports from many members do not synchronise. With two
/// members and a 1 s minimum the mean interval is about 0.82 s: "about once a
/// second".
public enum RTCPInterval {
    /// e − 3/2, RFC 3550 §6.3.1.
    public static let compensation = 2.718_281_828_459_045 - 1.5

    /// The randomised interval in milliseconds.
    ///
    /// - Parameters:
    ///   - members: session members (≥ 1; two in a one-to-one call).
    ///   - averagePacketBytes: average compound RTCP packet size including UDP/IP overhead.
    ///   - rtcpBandwidthBitsPerSecond: the RTCP share of the session bandwidth (5 %).
    ///   - minimumMs: the minimum interval (5000 ms in RFC 3550; WebRTC uses 1000 ms
    ///     for video, RFC 8888 and RFC 3550 §6.2 allow a reduced minimum).
    ///   - random: a number in [0, 1) (pass `Double.random(in: 0..<1)`).
    public static func milliseconds(members: Int, averagePacketBytes: Double, rtcpBandwidthBitsPerSecond: Double,
                                    minimumMs: Double = 1_000, random: Double) -> Double {
        let bandwidthBytesPerMs = max(rtcpBandwidthBitsPerSecond, 1) / 8 / 1000
        let deterministic = max(minimumMs, Double(max(members, 1)) * averagePacketBytes / bandwidthBytesPerMs)
        let factor = 0.5 + min(max(random, 0), 1)
        return deterministic * factor / compensation
    }
}
