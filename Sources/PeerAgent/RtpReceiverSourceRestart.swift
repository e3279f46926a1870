// RtpReceiver when the remote sender is replaced — the peer's new process or page behind a new DTLS association (RFC 8842 §5): a new source whose statistics start afresh, its timeline continuing the old one's in the same files, the W3C counters going on.
import Media
import RTP

extension RtpReceiver {
    /// The remote sender was replaced (a new DTLS association: the peer's new process or
    /// page, RFC 8842 §5): what is complete of the old source goes to the sinks; the next
    /// packets are a new source — the SSRC a new description announces (``configure``),
    /// else the first that comes, with sequence numbers and RTP timestamps of its own —
    /// whose statistics (RFC 3550 A.1), NACK state, depayloading and sender reports start
    /// afresh, video waiting for a key frame. The sinks keep their files: the new source's
    /// timestamps continue the old one's timeline where the wall clock says (the outage a
    /// gap), so a recording goes on and stays decodable. Counts (packets, bytes, frames,
    /// `packetsLost`, `packetsDiscarded`, `packetsDuplicated`: W3C counters only grow) go on
    /// adding up; the first frame of the new source is reported again.
    /// Called with the plane's lock held: never waits.
    func remoteSourceRestarted() {
        let effects = network.withLock { n -> Effects in
            var e = Effects()
            guard !n.ended else { return e }
            drain(&n, &e)
            let now = monotonicMs()
            let ticksPerMs: Int64 = kind == .video ? 90 : 48
            if let last = n.lastOutput {
                // At least 120 ms on: an Opus packet lasts up to that (a later one is not "late").
                n.timelineBase = last.ticks + max((now - last.atMs) * ticksPerMs, 120 * ticksPerMs)
            }
            n.lostBefore += Int64(n.statistics.cumulativeLost)
            n.discardedBefore += n.assembler.counters.latePackets + n.opusDepayloader.counters.latePackets
            n.duplicatedBefore += n.assembler.counters.duplicatePackets + n.opusDepayloader.counters.duplicatePackets
            n.remoteSSRC = nil
            n.statistics = ReceiverStatistics()
            n.nacks = NackGenerator()
            n.assembler = VP8FrameAssembler(reorderWindow: 256, reorderDelay: 27_000)
            n.opusDepayloader = OpusDepayloader(reorderWindow: 5)
            n.lastSenderReport = nil
            n.clockSamples = []
            n.senderSync = nil
            n.awaitingKeyframe = true
            n.timestamps = TimestampUnwrapper()
            n.firstTimestamp = nil
            n.frameArrivals = []
            n.sourcePackets = 0
            n.reportFirstFrame = true
            toSink(.sourceRestarted, &e)
            return e
        }
        _ = act(effects)
    }
}
