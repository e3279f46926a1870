// RTCP between two peer connections: report timing, CNAME and BYE (RFC 3550 §6), and the
// feedback that asks for a key frame: PLI (RFC 4585 §6.3.1) and FIR (RFC 5104 §4.3.1).
import Foundation
import Media
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

/// Key frames a sender reports, with when (monotonic ms).
final class KeyframeLog: @unchecked Sendable {
    let lock = NSLock()
    var keyframes: [Int64] = []
    var frames = 0
    func install(on sender: RtpSender) {
        sender.observeFramesSent { key in
            self.lock.withLock {
                self.frames += 1
                if key { self.keyframes.append(monotonicMs()) }
            }
        }
    }
    func keyframes(since t: Int64) -> [Int64] { lock.withLock { keyframes.filter { $0 >= t } } }
}

/// RTCP reports and key-frame feedback over a ``ConnectedPair``.
@Suite struct PeerConnectionRTCPTests {
    /// RTCP timing (RFC 3550 §6.2, 1 s minimum): over 3.5 s the peer receives between 2 and 6
    /// sender reports for each of our sending SSRCs; every compound carries an SDES CNAME
    /// (RFC 3550 §6.1); close() sends a BYE (§6.6) naming our SSRCs.
    @Test func senderReportsAboutOnceASecondWithCNAMEAndByeOnClose() async throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let ssrcs = pair.a.allTransceivers.map(\.ssrc)
        #expect(ssrcs.count == 2)
        // Let the first report go out, then count over 3.5 s.
        #expect(await eventually(within: 3) { ssrcs.allSatisfy { (pair.b.receivedRTCPCounts().senderReportsBySSRC[$0] ?? 0) >= 1 } })
        let before = pair.b.receivedRTCPCounts()
        try await Task.sleep(nanoseconds: 3_500_000_000)
        let after = pair.b.receivedRTCPCounts()
        print("RTCP received by B in 3.5 s: SR \(after.senderReports - before.senderReports), RR \(after.receiverReports - before.receiverReports), "
            + "SDES \(after.sourceDescriptions - before.sourceDescriptions), PLI \(after.pictureLossIndications - before.pictureLossIndications), "
            + "NACK \(after.nacks - before.nacks), compounds \(after.compounds - before.compounds)")
        for ssrc in ssrcs {
            let srs = (after.senderReportsBySSRC[ssrc] ?? 0) - (before.senderReportsBySSRC[ssrc] ?? 0)
            print("SRs for SSRC \(ssrc) in 3.5 s: \(srs)")
            #expect((2...6).contains(srs), "SSRC \(ssrc): \(srs) sender reports in 3.5 s")
        }
        let compounds = after.compounds
        #expect(compounds > 0)
        #expect(after.compoundsWithCNAME == compounds, "\(after.compoundsWithCNAME) of \(compounds) compounds carry a CNAME")
        #expect(after.goodbyes == 0)
        pair.a.close()
        #expect(await eventually(within: 3) { ssrcs.allSatisfy { (pair.b.receivedRTCPCounts().goodbyesBySSRC[$0] ?? 0) >= 1 } })
        let final = pair.b.receivedRTCPCounts()
        print("after A's close B received BYE × \(final.goodbyes) naming \(final.goodbyesBySSRC.keys.sorted()); our SSRCs \(ssrcs)")
        #expect(final.compoundsWithCNAME == final.compounds, "the BYE compound carries a CNAME too")
    }

    /// FIR (RFC 5104 §4.3.1): a FIR for our video SSRC yields a key frame; a repeat with the
    /// same command sequence number does not; a new sequence number does again.
    @Test func fullIntraRequestYieldsAKeyFrameOncePerSequenceNumber() async throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        let log = KeyframeLog()
        log.install(on: va.sender)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(log.keyframes(since: 0).isEmpty, "no key frame without a request")

        let first = monotonicMs()
        va.sender.fullIntraRequest(sequenceNumber: 7)
        #expect(await eventually(within: 2) { !log.keyframes(since: first).isEmpty })
        let delay = log.keyframes(since: first).first.map { $0 - first }
        try await Task.sleep(nanoseconds: 300_000_000)

        let repeated = monotonicMs()
        let plisBefore = va.sender.snapshot().pliCount
        va.sender.fullIntraRequest(sequenceNumber: 7)
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let afterRepeat = log.keyframes(since: repeated)
        // A PLI B sends on its own (a late frame on a loaded machine) explains a key frame.
        let plisDuring = va.sender.snapshot().pliCount - plisBefore
        let framesAfterRepeat = log.lock.withLock { log.frames }

        let next = monotonicMs()
        va.sender.fullIntraRequest(sequenceNumber: 8)
        #expect(await eventually(within: 2) { !log.keyframes(since: next).isEmpty })
        print("FIR #7 → key frame after \(delay.map { "\($0)" } ?? "-") ms; repeated #7 → \(afterRepeat.count) key frames in 1 s "
            + "(\(framesAfterRepeat) frames sent so far); FIR #8 → \(log.keyframes(since: next).count) key frame(s)")
        #expect((delay ?? 1000) <= 100)
        #expect(afterRepeat.count <= plisDuring, "a repeated FIR (same sequence number) produced \(afterRepeat.count) key frames (\(plisDuring) PLIs meanwhile)")
        #expect(va.sender.snapshot().firCount == 3)
        #expect(await eventually(within: 2) { (vb.receiver.snapshot().keyFramesDecoded ?? 0) >= 3 })
    }

    /// Every RTP packet of one video frame dropped at B (retransmissions too): B counts the
    /// frame dropped, sends a PLI (RFC 4585 §6.3.1), and A's next key frame follows.
    @Test func aLostFrameIsCountedAndAnsweredWithAPLIAndAKeyFrame() async throws {
        final class Dropper: @unchecked Sendable {
            let lock = NSLock()
            var armed = false
            var lastTimestamp: UInt32?
            var target: UInt32?
            var dropped = 0
            var armedAt: Int64 = 0
        }
        let dropper = Dropper()
        let pair = try ConnectedPair(configureB: { c in
            c.inboundDropFilter = { d in
                // SRTP keeps the RTP header in clear: VP8 is payload type 96.
                guard d.count > 12, (128...191).contains(d[0]), d[1] & 0x7F == 96 else { return false }
                let ts = UInt32(d[4]) << 24 | UInt32(d[5]) << 16 | UInt32(d[6]) << 8 | UInt32(d[7])
                return dropper.lock.withLock {
                    defer { dropper.lastTimestamp = ts }
                    if dropper.armed, dropper.target == nil, let last = dropper.lastTimestamp, last != ts { dropper.target = ts }
                    if dropper.target == ts { dropper.dropped += 1; return true }
                    return false
                }
            }
        })
        defer { pair.close() }
        let (va, vb) = try await pair.negotiateUntilVideoArrives()
        // Counted from here: a frame lost at start-up (seen once in a full serial run: the
        // first packets racing the receiver's set-up) must not fake the loss below.
        let before = vb.receiver.snapshot()
        let pliBeforeA = va.sender.snapshot().pliCount
        if (before.framesDropped ?? 0) > 0 || (before.pliCount ?? 0) > 0 {
            print("start-up before arming: framesDropped \(before.framesDropped ?? 0), pliCount \(before.pliCount ?? 0)")
        }
        let log = KeyframeLog()
        log.install(on: va.sender)
        let armedAt = monotonicMs()
        dropper.lock.withLock { dropper.armed = true }
        #expect(await eventually(within: 5) { (vb.receiver.snapshot().framesDropped ?? 0) > (before.framesDropped ?? 0) && !log.keyframes(since: armedAt).isEmpty })
        // B's PLI and the decoded key frame follow (within the 0.5 s this always allowed).
        _ = await eventually(within: 0.5) {
            let s = vb.receiver.snapshot()
            return (s.pliCount ?? 0) >= (before.pliCount ?? 0) + 1 && (s.keyFramesDecoded ?? 0) >= (before.keyFramesDecoded ?? 0) + 1
                && va.sender.snapshot().pliCount >= pliBeforeA + 1
        }
        let inbound = vb.receiver.snapshot()
        let (dropped, target) = dropper.lock.withLock { (dropper.dropped, dropper.target) }
        print("dropped \(dropped) packets of frame ts \(target.map { "\($0)" } ?? "-"): framesDropped \(inbound.framesDropped ?? 0), "
            + "pliCount B \(inbound.pliCount ?? 0), A pliCount \(va.sender.snapshot().pliCount), key frames after \(log.keyframes(since: armedAt).map { $0 - armedAt }) ms, keyFramesDecoded \(inbound.keyFramesDecoded ?? 0)")
        #expect(dropped >= 1)
        #expect((inbound.framesDropped ?? 0) >= (before.framesDropped ?? 0) + 1)
        #expect((inbound.pliCount ?? 0) >= (before.pliCount ?? 0) + 1)
        #expect(va.sender.snapshot().pliCount >= pliBeforeA + 1)
        #expect(!log.keyframes(since: armedAt).isEmpty)
        #expect((inbound.keyFramesDecoded ?? 0) >= (before.keyFramesDecoded ?? 0) + 1, "the key frame after the loss was decoded")
    }

    /// The very first video packet lost: its sequence number is unknown, so NACK cannot ask
    /// for it; the receiver asks for a key frame at once, and only the frames before that
    /// key frame are missing (not the ~300 ms of the reassembly wait).
    @Test func aLostFirstVideoPacketIsAnsweredWithAnImmediatePLI() async throws {
        final class Once: @unchecked Sendable { let lock = NSLock(); var dropped = false }
        let once = Once()
        let pair = try ConnectedPair(configureB: { c in
            c.inboundDropFilter = { d in
                // SRTP keeps the RTP header in the clear: payload type 96 is VP8.
                guard d.count > 12, (128...191).contains(d[0]), d[1] & 0x7F == 96 else { return false }
                return once.lock.withLock { defer { once.dropped = true }; return !once.dropped }
            }
        })
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let (va, vb) = try #require(pair.video)
        #expect(await eventually(within: 5) { (vb.receiver.snapshot().framesDecoded ?? 0) >= 30 })
        let inbound = vb.receiver.snapshot()
        print("first video packet lost: framesDropped \(inbound.framesDropped ?? -1), pliCount \(inbound.pliCount ?? -1), "
            + "framesDecoded \(inbound.framesDecoded ?? 0), sender keyFramesEncoded \(va.sender.snapshot().keyFramesEncoded ?? 0)")
        #expect(once.lock.withLock { once.dropped })
        #expect((inbound.pliCount ?? 0) >= 1)
        #expect((inbound.framesDropped ?? 99) <= 3)
    }
}
