// RtpSender: the first RTP sequence number (RFC 3550 §5.1, chosen below 2^15).
import Testing
@testable import PeerAgent

@Suite struct RtpSenderTests {
    /// Every sender starts below 32768, so receivers have room before the first wrap
    /// (as libwebrtc chooses it). 64 senders: without the bound, all 64 below 2^15 by
    /// chance has probability 2^-64.
    @Test func firstSequenceNumberIsBelow32768() {
        var seen: Set<UInt16> = []
        for i in 0..<64 {
            let sender = RtpSender(kind: i % 2 == 0 ? .video : .audio, ssrc: UInt32(i + 1), cname: "c",
                                   encoding: SendEncoding(), video: nil, audio: nil)
            #expect(sender.firstSequenceNumber < 0x8000, "sender \(i) starts at \(sender.firstSequenceNumber)")
            seen.insert(sender.firstSequenceNumber)
        }
        // Still random: 64 draws from 32768 values are not all equal.
        #expect(seen.count > 1)
    }
}
