// LoadCallRecord: what `peer load` knows of one of its calls — when it started, its set-up steps, its latest per-second figures, its final figures from getStats and its verdict.
import Foundation
import PeerAgent

/// One connection's figures at a call's end, from its final `getStats` report.
public struct LoadLinkFigures: Sendable, Equatable {
    /// RTP packets sent to the peer, received from it, and lost on the way from it
    /// (RFC 3550 A.3, cumulative, never below 0), every stream.
    public var packetsSent = 0, packetsReceived = 0, packetsLost = 0
    /// The largest interarrival jitter of the inbound streams (RFC 3550 A.8), ms.
    public var jitterMs: Double?
    /// The round trip: the selected pair's last STUN round trip, else the RTCP one, ms.
    public var rttMs: Double?
    /// Inbound video frames complete (W3C `framesReceived`).
    public var framesReceived = 0
    /// Video frames per second received over the call's media time (frames received ÷
    /// seconds from the first frame to the end); nil without video.
    public var framesPerSecond: Double?
    /// Video freezes (W3C `freezeCount`) and their total length, s.
    public var freezeCount = 0, freezeSeconds = 0.0

    /// The figures of `report`, the media time from `firstFrameAt` to `endAt`
    /// (`systemUptime`, s) for the frame rate.
    public init(report s: StatsReport, firstFrameAt: TimeInterval?, endAt: TimeInterval) {
        packetsSent = s.outboundRTP.reduce(0) { $0 + $1.packetsSent }
        packetsReceived = s.inboundRTP.reduce(0) { $0 + $1.packetsReceived }
        packetsLost = s.inboundRTP.reduce(0) { $0 + max(0, $1.packetsLost) }
        jitterMs = s.inboundRTP.filter { $0.packetsReceived > 0 }.map { $0.jitter * 1000 }.max()
        rttMs = (s.candidatePairs.first?.currentRoundTripTime ?? s.remoteInboundRTP.compactMap(\.roundTripTime).max()).map { $0 * 1000 }
        let video = s.inbound("video")
        framesReceived = video?.framesReceived ?? 0
        if let first = firstFrameAt, endAt > first + 0.5, framesReceived > 0 { framesPerSecond = Double(framesReceived) / (endAt - first) }
        freezeCount = video?.freezeCount ?? 0
        freezeSeconds = video?.totalFreezesDuration ?? 0
    }

    /// Nothing yet.
    public init() {}

    /// Share of the packets expected from the peer that were lost, % (0 before any).
    public var lossPercent: Double {
        packetsLost + packetsReceived > 0 ? Double(packetsLost) * 100 / Double(packetsLost + packetsReceived) : 0
    }
}

/// What `peer load` knows of one call (``LoadPlan`` call *i*). Times are
/// `ProcessInfo.systemUptime` seconds, as the events' milestones.
public struct LoadCallRecord: Sendable {
    /// The call's number, 1…N.
    public let index: Int
    /// Its topic prefix (legacy) or room name.
    public let signalingName: String
    /// When the call was started (nil: not started, the run ended first).
    public var startedAt: TimeInterval?
    /// The set-up's start: our offer first published (offerer, room member that calls) or
    /// the peer's first received (answerer).
    public var offerAt: TimeInterval?
    /// The first connection's DTLS connected (W3C `connected`: ICE and DTLS up).
    public var connectedAt: TimeInterval?
    /// The first complete video frame from the peer, and its first audio packet.
    public var firstVideoAt: TimeInterval?, firstAudioAt: TimeInterval?
    /// The first frame: video's, or audio's when no video came.
    public var firstFrameAt: TimeInterval? { firstVideoAt ?? firstAudioAt }
    /// The call's state (nil before its first).
    public var state: CallState?
    /// The call reached `established`.
    public var established = false
    /// The latest per-second figures of each connection, by peer.
    public var links: [String: LinkProgress] = [:]
    /// Each connection's final figures, by peer (from its final `getStats`).
    public var final: [String: LoadLinkFigures] = [:]
    /// When the call ended, its exit code (``ExitCode``), final state and reason.
    public var endedAt: TimeInterval?
    public var exitCode: Int32?
    public var endState: CallState?
    public var reason: String?

    /// Call `index`, signaling on `signalingName`, not started.
    public init(index: Int, signalingName: String) {
        self.index = index
        self.signalingName = signalingName
    }

    /// Its name, `load.<i>`.
    public var tag: String { LoadPlan.tag(index) }
    /// True once ended with exit code 0.
    public var passed: Bool { exitCode == ExitCode.ok }
    /// True while started and not ended.
    public var running: Bool { startedAt != nil && endedAt == nil }

    /// Set-up times, ms: the set-up's start (``offerAt``) to connected and to the first frame.
    public var connectMs: Double? { connectedAt.flatMap { c in offerAt.map { (c - $0) * 1000 } } }
    public var firstFrameMs: Double? { firstFrameAt.flatMap { f in offerAt.map { (f - $0) * 1000 } } }

    /// Every connection's final figures added up (packets) or the worst (jitter, RTT).
    public var totals: LoadLinkFigures {
        var t = LoadLinkFigures()
        for f in final.values {
            t.packetsSent += f.packetsSent
            t.packetsReceived += f.packetsReceived
            t.packetsLost += f.packetsLost
            t.jitterMs = [t.jitterMs, f.jitterMs].compactMap { $0 }.max()
            t.rttMs = [t.rttMs, f.rttMs].compactMap { $0 }.max()
            t.framesReceived += f.framesReceived
            t.framesPerSecond = [t.framesPerSecond, f.framesPerSecond].compactMap { $0 }.min()
            t.freezeCount += f.freezeCount
            t.freezeSeconds += f.freezeSeconds
        }
        return t
    }

    /// Takes one of the call's events (from its run task).
    mutating func take(_ event: CallEvent, now: TimeInterval) {
        switch event {
        case let .milestone(name, _, at):
            switch name {
            case "offerPublished", "offerReceived": if offerAt == nil { offerAt = at }
            case "dtlsConnected": if connectedAt == nil { connectedAt = at }
            case "firstRemoteFrame": if firstVideoAt == nil { firstVideoAt = at }
            case "firstRemoteAudio": if firstAudioAt == nil { firstAudioAt = at }
            default: break
            }
        case let .state(s, peer, _):
            if peer == nil { state = s }
            // A room member's states are per peer: in the call from its first connection.
            if s == .established || s == .hold { established = true }
        case let .progress(peer, figures):
            links[peer] = figures
        case let .stats(peer, report, _, _):
            final[peer] = LoadLinkFigures(report: report, firstFrameAt: firstFrameAt, endAt: now)
            links[peer] = nil
        default:
            break
        }
    }

    /// Takes the call's end.
    mutating func ended(_ result: CallResult, at now: TimeInterval) {
        endedAt = now
        exitCode = result.exitCode
        endState = result.state
        reason = result.reason
        links = [:]
    }
}
