// CallEnding: how a call run ends — each link closed (files complete, final stats), the router left, the verdict.
import Foundation
import PeerAgent

extension CallRun {
    // MARK: Ending

    func closeLink(_ link: CallLink) {
        earlyCandidates.forget(link.peer)
        if let failure = link.failed { failedLinks.append(failure) }
        link.pc.close()
        summarizeData(link)
        let s = link.pc.getStats()
        let receivesVideo = link.pc.allTransceivers.contains { $0.kind == .video && $0.currentDirection?.receives == true }
        let result = PeerResult(peer: link.peer, videoPath: link.videoPath, audioPath: link.audioPath, stats: s,
                                videoFramesWritten: (options.recordsMedia ? s.inbound("video")?.framesWritten : s.inbound("video")?.framesReceived) ?? 0,
                                audioPacketsWritten: (options.recordsMedia ? s.inbound("audio")?.framesWritten : s.inbound("audio")?.packetsReceived) ?? 0,
                                receivesVideo: receivesVideo, messagesReceived: s.dataChannels.reduce(0) { $0 + $1.messagesReceived })
        if link.inCall {
            ended.append(result)
            timeline?.append(peer: link.peer, timestamp: Date().timeIntervalSince1970 * 1000, report: s)  // the final figures too
        }
        links[link.peer] = nil
        if link.inCall {
            onEvent(.stats(peer: link.peer, report: s, videoPath: link.videoPath, audioPath: link.audioPath))
            if let r = link.recorder {
                r.close()  // the sinks closed it already; this only makes sure
                onEvent(.recorded(peer: link.peer, path: r.path, bySenderReports: r.usesSenderReports, problems: r.errors))
            }
        }
    }

    /// Ends the call: publishes close, closes every connection (files complete), leaves
    /// the router, and returns the outcome (``CallVerdict``).
    func end(code: Int32?, state final: CallState, reason: String?, announce: Bool = true) async -> CallResult {
        finishing = true
        for task in scheduled { task.cancel() }
        // Vanilla ICE: a description still waiting for gathering goes out with what there is.
        for link in links.values.sorted(by: { $0.peer < $1.peer }) where link.awaitingGathering != nil {
            await publishGathered(link)
        }
        if announce, let close = profile.close(inCall: links.values.contains { $0.inCall }) { await publish(close) }
        // Before the connections close: how far the furthest one got, for a call that
        // never reached `established`.
        let reached = establishedAt == nil ? CallVerdict.furthestStep(of: Array(links.values), role: options.role) : nil
        for link in links.values.sorted(by: { $0.peer < $1.peer }) { closeLink(link) }
        await leaveRouter()
        let verdict = CallVerdict(code: code, state: final, reason: reason, reached: reached,
                                  failure: establishedAt == nil ? failedLinks.first : nil, ended: ended, minFrames: options.minFrames,
                                  minMessages: options.minMessages)
        return finish(code: verdict.exitCode, state: verdict.state, reason: verdict.reason)
    }

    func finish(code: Int32, state final: CallState, reason: String?) -> CallResult {
        timeline?.close()
        timeline = nil
        report(final, nil, reason)
        feed.finish()
        return CallResult(exitCode: code, state: final, reason: reason, peers: ended)
    }
}
