// RtpReceiver when the remote source is replaced (a new DTLS association, RFC 8842 §5): the W3C inbound-rtp counters (packetsLost, packetsDiscarded, packetsDuplicated, packetsReceived) only grow across it.
import Media
import RTP
import SDP
import Testing
@testable import PeerAgent

@Suite struct RtpReceiverSourceRestartTests {
    /// An Opus packet (a 20 ms CELT frame's TOC byte and two bytes) from `ssrc`.
    static func opus(_ seq: UInt16, ssrc: UInt32) -> RTPPacket {
        RTPPacket(payloadType: 111, sequenceNumber: seq, timestamp: UInt32(seq) * 960, ssrc: ssrc, payload: [0xFC, 0xFF, 0xFE])
    }

    /// Feeds `seqs` from `ssrc` to `receiver`.
    static func feed(_ receiver: RtpReceiver, _ seqs: [UInt16], ssrc: UInt32) {
        for seq in seqs {
            let p = opus(seq, ssrc: ssrc)
            _ = receiver.handle(p, payloadBytes: p.payload.count, headerBytes: 12)
        }
    }

    /// The old source sends 100–119 with 105 twice while it waits (a duplicate), 99 after
    /// 100 went out (late: discarded) and 125 after a gap (lost): the counts are kept when
    /// the source is replaced, and the new source's own duplicate, late packet and loss
    /// add to them — every W3C counter of inbound-rtp is at least what it was.
    @Test func theCountersOnlyGrowAcrossANewSource() {
        let receiver = RtpReceiver(kind: .audio, options: ReceiveOptions(decode: false), localSSRC: 1)
        defer { receiver.close() }
        receiver.configure(mid: "0", payloadTypes: [111], remoteSSRC: nil)
        Self.feed(receiver, Array(100...104) + [105, 105] + Array(106...119) + [99] + [125], ssrc: 0xA)
        let before = receiver.snapshot()
        #expect(before.packetsDuplicated == 1 && before.packetsDiscarded == 1, "\(before)")
        // RFC 3550 A.3: 26 expected (100–125), 23 received (the duplicate and the late one count).
        #expect(before.packetsLost == 3 && before.packetsReceived == 23)

        receiver.remoteSourceRestarted()
        let at = receiver.snapshot()
        #expect(at.packetsDuplicated == before.packetsDuplicated && at.packetsDiscarded == before.packetsDiscarded, "\(at)")
        #expect(at.packetsLost == before.packetsLost && at.packetsReceived == before.packetsReceived)

        // The new source (another SSRC, its own numbers): one duplicate, one late, and 26
        // expected (7000–7025) for 23 received.
        Self.feed(receiver, Array(7000...7004) + [7004] + Array(7005...7019) + [6999] + [7025], ssrc: 0xB)
        let after = receiver.snapshot()
        #expect(after.ssrc == 0xB)
        #expect(after.packetsDuplicated == 2 && after.packetsDiscarded == 2, "\(after)")
        #expect(after.packetsLost == before.packetsLost + 3 && after.packetsReceived == before.packetsReceived + 23)
    }
}
