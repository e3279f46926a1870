// RtpSender: the first RTP sequence number (RFC 3550 §5.1, chosen below 2^15).
import Dispatch
import Testing
@testable import PeerAgent
@testable import PeerCall

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

    /// A flood of PLI and NACK while the sender's thread is busy queues one drain, keeps at
    /// most 1,024 sequence numbers to resend, and still counts every message.
    @Test func feedbackWhileTheThreadIsBusyIsMergedAndBounded() {
        let sender = RtpSender(kind: .video, ssrc: 7, cname: "c", encoding: SendEncoding(), video: nil, audio: nil)
        defer { sender.stop() }
        let hold = DispatchSemaphore(value: 0)
        sender.holdThread(until: hold)
        for i in 0..<10_000 {
            sender.pictureLossIndication()
            sender.nack([UInt16(truncatingIfNeeded: i), UInt16(truncatingIfNeeded: i)])
        }
        let pending = sender.pendingFeedback
        #expect(pending.retransmissions == RtpSender.maximumPendingRetransmissions)
        #expect(pending.drainQueued)
        hold.signal()
        let stats = sender.snapshot()
        #expect(stats.pliCount == 10_000)
        #expect(stats.nackCount == 10_000)
        #expect(sender.pendingFeedback.retransmissions == 0 && !sender.pendingFeedback.drainQueued)
    }
}
