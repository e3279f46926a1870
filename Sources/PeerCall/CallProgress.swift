// CallProgress: a call's per-second figures — each established link's stats snapshot to the `--stats-timeline` file, and the `frames` and `progress` events (fps, kbit/s each way, RTT, loss, latency).
import EventLoop
import Foundation
import PeerAgent

extension CallRun {
    /// Opens `--stats-timeline`. Its directory was checked before the call (Preflight): a
    /// failure now (a disk gone) leaves the call without a timeline, not ended, and says so.
    func openTimeline() {
        guard let path = options.statsTimelinePath else { return }
        do { timeline = try StatsTimelineWriter(path: path) } catch {
            Log.write(.error, "call", "--stats-timeline \(path): cannot be written (\(error)); the call goes on without it")
        }
    }

    /// Once every `progressIntervalSeconds` (1 s): each established link's `getStats`
    /// appended to the timeline, and its `frames` and `progress` events.
    func progressTick(_ now: Date) {
        guard now.timeIntervalSince(lastProgress) >= options.progressIntervalSeconds else { return }
        lastProgress = now
        for link in links.values.sorted(by: { $0.peer < $1.peer }) where link.established {
            let s = link.pc.getStats()
            timeline?.append(peer: link.peer, timestamp: now.timeIntervalSince1970 * 1000, report: s)
            let figures = progress(s, of: link, at: now)
            onEvent(.frames(peer: link.peer, video: s.inbound("video")?.framesWritten ?? 0,
                            audio: s.inbound("audio")?.framesWritten ?? 0, figures: figures))
            onEvent(.progress(peer: link.peer, figures))
        }
    }

    /// The status-line figures of `link` from its stats `s` at `now` (kbit/s since the
    /// last report).
    private func progress(_ s: StatsReport, of link: CallLink, at now: Date) -> LinkProgress {
        var p = LinkProgress()
        p.framesIn = s.inbound("video")?.framesWritten ?? 0
        p.framesOut = s.outbound("video")?.framesSent ?? 0
        let received = s.transports.first?.bytesReceived ?? 0, sent = s.transports.first?.bytesSent ?? 0
        if let last = link.lastBytes, now > last.at {
            let seconds = now.timeIntervalSince(last.at)
            p.kbpsIn = Double(received - last.received) * 8 / 1000 / seconds
            p.kbpsOut = Double(sent - last.sent) * 8 / 1000 / seconds
        }
        link.lastBytes = (received, sent, now)
        p.rttMs = s.candidatePairs.first?.currentRoundTripTime.map { $0 * 1000 }
        let lost = s.inboundRTP.reduce(0) { $0 + max(0, $1.packetsLost) }, got = s.inboundRTP.reduce(0) { $0 + $1.packetsReceived }
        p.lossPercent = lost + got > 0 ? Double(lost) * 100 / Double(lost + got) : 0
        p.fpsIn = s.inbound("video")?.framesPerSecond
        p.fpsOut = s.outbound("video")?.framesPerSecond
        p.latencyMs = s.endToEnd.first?.latencyRecentP50Ms
        p.jitterMs = s.inboundRTP.filter { $0.packetsReceived > 0 }.map { $0.jitter * 1000 }.max()
        p.freezeCount = s.inbound("video")?.freezeCount ?? 0
        p.framesReceived = s.inbound("video")?.framesReceived ?? 0
        p.packetsSent = s.outboundRTP.reduce(0) { $0 + $1.packetsSent }
        p.packetsReceived = got
        p.packetsLost = lost
        return p
    }
}
