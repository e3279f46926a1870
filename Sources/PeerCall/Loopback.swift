// Loopback: `peer loopback` — two PeerConnections in one process, offer and answer handed across, media both ways, each side recording.
import PeerAgent
import Dispatch
import EventLoop
import Foundation
import ICE
import Media
import SDP
import Synchronization

/// Settings of a ``Loopback`` call.
public struct LoopbackOptions: Sendable {
    /// How long both sides may take to reach `connected`, seconds.
    public var connectTimeoutSeconds = 10.0
    /// How long media flows, seconds.
    public var durationSeconds: Double = 5
    /// Test-pattern size and rate each side sends.
    public var width = 640, height = 480, frameRate = 30
    /// Video bitrate, kbit/s.
    public var videoBitrateKbps = 1_000
    /// Where the four files go (`loopback-a.ivf`, `loopback-a.ogg`, `loopback-b.…`):
    /// side A's files hold what A received from B.
    public var outputDirectory = "."
    /// Trickle candidates as they are found (true) or wait for complete gathering (vanilla).
    public var trickle = true
    /// Decode received media (frame markers, framesDecoded).
    public var decode = true
    /// Probability (0…1) that side B drops an incoming RTP datagram (loss injection; NACK recovers).
    public var inboundLossAtB = 0.0
    /// Audio and video both ways (false: a data-only call).
    public var media = true
    /// Data channels side A creates, and the numbered messages each side sends on them.
    public var dataChannels: [DataChannelSpec] = []
    public var dataBursts: [DataBurst] = []

    /// The defaults above.
    public init() {}
}

/// What one side of a ``Loopback`` call sent and received.
public struct LoopbackSide: Sendable {
    /// "a" (offerer) or "b" (answerer).
    public var name: String
    /// The side's final statistics.
    public var stats: StatsReport
    /// Recorded remote video (IVF).
    public var videoPath: String
    /// Recorded remote audio (Ogg Opus).
    public var audioPath: String
    /// Test-pattern frames this side's video sender produced.
    public var framesSent: Int
    /// Frame numbers read from the markers of the video this side received and decoded.
    public var receivedMarkers: [Int]
    /// Distinct frame numbers received.
    public var distinctFramesReceived: Int { Set(receivedMarkers).count }
    /// The failure reason, if the connection failed.
    public var failure: String?
    /// The numbered messages this side received, by channel label.
    public var data: [String: NumberedCount] = [:]
}

/// `peer loopback`: two ``PeerConnection``s in one process, offer and answer passed
/// directly, host candidates on 127.0.0.1, the test pattern and a tone both ways for
/// a set duration, each side recording what it receives. No router, no STUN server.
public enum Loopback {
    /// Runs the call and returns both sides' results (A = offerer, B = answerer).
    /// - Throws: ``PeerConnectionError`` when negotiation fails, or
    ///   ``PeerConnectionError/setup(_:)`` when a side does not connect within 10 s
    ///   (the reason names the state it reached).
    public static func run(_ options: LoopbackOptions,
                           progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> (a: LoopbackSide, b: LoopbackSide) {
        let dir = options.outputDirectory
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        /// The two connections, for each other's trickled candidates (set once both exist).
        final class Relay: Sendable {
            let pair = Mutex<(a: PeerConnection?, b: PeerConnection?)>((nil, nil))
        }
        let relay = Relay()
        let changes = ChangeSignal()
        let data = LoopbackData(bursts: options.dataBursts)
        let trickle = options.trickle
        func config(dropping loss: Double) -> PeerConnectionConfiguration {
            var c = PeerConnectionConfiguration()
            c.localAddresses = ["127.0.0.1"]
            c.tcpCandidates = false
            if loss > 0 {
                c.inboundDropFilter = { datagram in
                    // Only RTP (first byte 128–191, second byte not an RTCP type) is dropped.
                    guard datagram.count > 1, (128...191).contains(datagram[0]), !(192...223).contains(datagram[1]) else { return false }
                    return Double.random(in: 0..<1) < loss
                }
            }
            return c
        }
        let a = try PeerConnection(configuration: config(dropping: 0)) { event in
            if trickle, case let .localCandidate(c) = event { try? relay.pair.withLock { $0.b }?.addIceCandidate(c) }
            if case let .connectionState(s, reason) = event { progress("a: \(s.rawValue)\(reason.map { " (\($0))" } ?? "")") }
            if case let .dataChannel(e) = event { data.event(e, side: "a") }
            changes.signal()
        }
        let b = try PeerConnection(configuration: config(dropping: options.inboundLossAtB)) { event in
            if trickle, case let .localCandidate(c) = event { try? relay.pair.withLock { $0.a }?.addIceCandidate(c) }
            if case let .connectionState(s, reason) = event { progress("b: \(s.rawValue)\(reason.map { " (\($0))" } ?? "")") }
            if case let .dataChannel(e) = event { data.event(e, side: "b") }
            changes.signal()
        }
        relay.pair.withLock { $0 = (a, b) }
        defer { a.close(); b.close() }

        var encoding = SendEncoding()
        encoding.videoBitrateKbps = options.videoBitrateKbps
        var sources: [String: PatternSource] = [:]
        for spec in options.dataChannels { try a.createDataChannel(spec.label, options: spec.options) }
        for (name, pc, tone) in [("a", a, 440.0), ("b", b, 660.0)] where options.media {
            let pattern = try PatternSource(width: options.width, height: options.height, frameRate: options.frameRate)
            sources[name] = pattern
            let receive = ReceiveOptions(ivfPath: "\(dir)/loopback-\(name).ivf", oggPath: "\(dir)/loopback-\(name).ogg",
                                         decode: options.decode)
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: tone, channels: 1), encoding: encoding, receive: receive)
            pc.addTransceiver(.video, video: pattern, encoding: encoding, receive: receive)
        }

        let offer = try a.createOffer()
        try a.setLocalDescription(offer)
        if !trickle { _ = await changes.wait(within: 10) { a.iceGatheringState == .complete } }
        try b.setRemoteDescription(trickle ? offer : a.localDescription ?? offer)
        let answer = try b.createAnswer()
        try b.setLocalDescription(answer)
        if !trickle { _ = await changes.wait(within: 10) { b.iceGatheringState == .complete } }
        try a.setRemoteDescription(trickle ? answer : b.localDescription ?? answer)

        let connected = await changes.wait(within: options.connectTimeoutSeconds) {
            (a.connectionState == .connected && b.connectionState == .connected)
                || a.connectionState == .failed || b.connectionState == .failed
        }
        guard connected, a.connectionState == .connected, b.connectionState == .connected else {
            throw PeerConnectionError.setup("loopback did not connect: a \(a.connectionState.rawValue)"
                + "\(a.failureReason.map { " (\($0))" } ?? ""), b \(b.connectionState.rawValue)\(b.failureReason.map { " (\($0))" } ?? "")")
        }
        progress("media flowing for \(options.durationSeconds) s")
        let end = Date().addingTimeInterval(options.durationSeconds)
        if !options.dataBursts.isEmpty {
            // The channels open a round trip or two after DTLS, or seconds later under loss
            // (a DCEP open resent after backed-off timeouts): each burst starts when its
            // channel opens on its side.
            await data.sendBursts(on: { a.sctp.channels + b.sctp.channels }, expected: 2 * options.dataChannels.count, until: end)
        }
        let left = end.timeIntervalSinceNow
        if left > 0 { try await Task.sleep(nanoseconds: UInt64(left * 1e9)) }

        // Stop both senders, let the last packets land, then hang up: the counts compare.
        for pc in [a, b] { for t in pc.allTransceivers { t.stopSending() } }
        try await Task.sleep(nanoseconds: 300_000_000)
        var sides: [LoopbackSide] = []
        for (name, pc) in [("a", a), ("b", b)] {
            let framesSent = pc.getStats().outbound("video")?.framesSent ?? 0
            pc.close()
            let video = pc.allTransceivers.first { $0.kind == .video }
            sides.append(LoopbackSide(name: name, stats: pc.getStats(), videoPath: "\(dir)/loopback-\(name).ivf",
                                      audioPath: "\(dir)/loopback-\(name).ogg", framesSent: framesSent,
                                      receivedMarkers: video?.receivedFrameMarkers() ?? [], failure: pc.failureReason,
                                      data: data.received(name)))
        }
        return (sides[0], sides[1])
    }
}
