import Foundation
import Media
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

#if canImport(Glibc)
import Glibc
#endif

/// Interop of ``PeerConnection`` with aiortc (issue 8 acceptance), in both roles.
///
/// aiortc runs as a Python process (`Support/aiortc_peer.py`, the aiortc venv that
/// `scripts/bootstrap` installs), SDP goes through its stdin/stdout as JSON lines,
/// vanilla ICE on 127.0.0.1, no router and no STUN server. Each side sends a test
/// pattern (ours 320x240, aiortc's 352x288, 30 fps) and a tone (ours 440 Hz, aiortc's
/// 660 Hz, both -12 dBFS peak, so -15 dBFS RMS) for 5 s and decodes what it receives;
/// then aiortc hangs up.
///
/// Counting window: each side's sender starts when its own DTLS handshake completes
/// (the two ends complete within one loopback round trip) and both stop at the same
/// instant (the test stops our senders right after writing "stop" to aiortc, which
/// stops its tracks at once); both then let the last packets land for 0.5 s before
/// counting. So whole-call totals compare like with like: frames sent by one side
/// against frames decoded by the other over the same window.
@Suite(.serialized) struct AiortcInteropTests {
    /// The aiortc venv's python: `${PEER_TOOLS:-$HOME/.cache/peer/venv}-peers/bin/python`.
    static var python: String {
        let env = ProcessInfo.processInfo.environment
        let tools = env["PEER_TOOLS"] ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.cache/peer/venv")
        return tools + "-peers/bin/python"
    }

    /// The Python peer.
    static let script = TestServices.root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_peer.py").path

    /// Seconds of media after both sides are connected.
    static let mediaSeconds = 5.0

    @Test func peerOffersAiortcAnswers() async throws {
        try await call(peerOffers: true)
    }

    @Test func aiortcOffersPeerAnswers() async throws {
        try await call(peerOffers: false)
    }

    // MARK: The call

    func call(peerOffers: Bool) async throws {
        let role = peerOffers ? "peer offers" : "aiortc offers"
        #expect(FileManager.default.isExecutableFile(atPath: Self.python),
                "no aiortc venv at \(Self.python): run scripts/bootstrap")
        let dir = TestServices.temporaryDirectory("aiortc")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let aiortc = try AiortcProcess(python: Self.python, script: Self.script,
                                       arguments: [peerOffers ? "answer" : "offer", "--width", "352", "--height", "288",
                                                   "--tone", "660", "--drain", "0.5", "--timeout", "30"])
        defer { aiortc.kill() }

        let events = EventLog()
        var configuration = PeerConnectionConfiguration()
        configuration.localAddresses = ["127.0.0.1"]
        configuration.tcpCandidates = false
        let pc = try PeerConnection(configuration: configuration) { events.append($0) }
        defer { pc.close() }
        let wavPath = dir + "/from-aiortc.wav"
        let receive = ReceiveOptions(wavPath: wavPath, decode: true)
        pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440, channels: 1), receive: receive)
        pc.addTransceiver(.video, video: try PatternSource(width: 320, height: 240, frameRate: 30), receive: receive)

        // Signalling, vanilla ICE: our localDescription once gathering is complete.
        let aiortcSDP: String
        if peerOffers {
            try pc.setLocalDescription(try pc.createOffer())
            try #require(await eventually(within: 5) { pc.iceGatheringState == .complete }, "our ICE gathering did not complete")
            let offer = try #require(pc.localDescription)
            try aiortc.send(["type": "offer", "sdp": offer.sdp])
            let answer = try await aiortc.next(timeout: 15) { $0["type"] as? String == "answer" }
            aiortcSDP = try #require(answer["sdp"] as? String)
            try pc.setRemoteDescription(SessionDescriptionInit(type: .answer, sdp: aiortcSDP))
        } else {
            let offer = try await aiortc.next(timeout: 15) { $0["type"] as? String == "offer" }
            aiortcSDP = try #require(offer["sdp"] as? String)
            try pc.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: aiortcSDP))
            try pc.setLocalDescription(try pc.createAnswer())
            try #require(await eventually(within: 5) { pc.iceGatheringState == .complete }, "our ICE gathering did not complete")
            let answer = try #require(pc.localDescription)
            try aiortc.send(["type": "answer", "sdp": answer.sdp])
        }

        // Both connected.
        _ = try await aiortc.next(timeout: 10) {
            $0["event"] as? String == "connectionState" && $0["state"] as? String == "connected"
        }
        try #require(await eventually(within: 10) { pc.connectionState == .connected || pc.connectionState == .failed })
        try #require(pc.connectionState == .connected, "\(role): \(pc.failureReason ?? pc.connectionState.rawValue)")

        // Media for 5 s, then both stop at once and let the last packets land.
        try await Task.sleep(nanoseconds: UInt64(Self.mediaSeconds * 1e9))
        try aiortc.send(["command": "stop"])
        let stats = try await TestServices.offload { () -> StatsReport in
            for t in pc.allTransceivers { t.sender.stop() }
            Thread.sleep(forTimeInterval: 0.6)
            return pc.getStats()
        }
        let result = try await aiortc.next(timeout: 10) { $0["event"] as? String == "result" }
        // aiortc hangs up (DTLS close_notify): we see the call end, closed by the peer.
        try aiortc.send(["command": "close"])
        let hungUp = await eventually(within: 5) { pc.connectionState == .closed }
        let closedByPeer = pc.closedByPeer
        try await TestServices.offload { pc.close() }  // completes the WAV file

        // What aiortc reported.
        let theirVideoSent = try #require(result["videoFramesSent"] as? Int)
        let theirVideoReceived = try #require(result["videoFramesReceived"] as? Int)
        let theirAudioSent = try #require(result["audioFramesSent"] as? Int)
        let theirAudioReceived = try #require(result["audioFramesReceived"] as? Int)
        let theirSizes = result["videoSizesReceived"] as? [String] ?? []
        let theirLevel = result["audioLevelDBFS"] as? Double ?? -120
        let theirFrequency = result["audioFrequencyHz"] as? Double ?? 0
        let theirCodecs = result["codecs"] as? [String: [String: Any]] ?? [:]
        let theirStats = result["stats"] as? [String: [[String: Any]]] ?? [:]
        let theirOutbound = theirStats["outbound-rtp"] ?? []
        // From our RTCP: SRs (remote-outbound-rtp) and report blocks (remote-inbound-rtp).
        let theirRemoteOutVideo = theirStats["remote-outbound-rtp"]?.first { $0["kind"] as? String == "video" }
        let theirRemoteInVideo = theirStats["remote-inbound-rtp"]?.first { $0["kind"] as? String == "video" }

        // What we measured.
        let outVideo = try #require(stats.outbound("video"))
        let outAudio = try #require(stats.outbound("audio"))
        let inVideo = try #require(stats.inbound("video"))
        let inAudio = try #require(stats.inbound("audio"))
        let ourVideoSent = outVideo.framesSent ?? 0
        let ourDecoded = inVideo.framesDecoded ?? 0
        let tone = try Self.measureTone(wavPath)
        let transport = stats.transports.first
        let ourRemoteInVideo = stats.remoteInboundRTP.first { $0.kind == "video" }

        print("""
            aiortc interop (\(role), aiortc \(result["aiortc"] as? String ?? "?"), \(Self.mediaSeconds) s):
              video aiortc→peer: aiortc sent \(theirVideoSent) frames, peer decoded \(ourDecoded) \
            (\(Self.percent(ourDecoded, of: theirVideoSent))), keyFramesDecoded \(inVideo.keyFramesDecoded ?? 0), \
            \(inVideo.frameWidth ?? 0)x\(inVideo.frameHeight ?? 0), packets \(inVideo.packetsReceived), lost \(inVideo.packetsLost), \
            nack \(inVideo.nackCount), pli \(inVideo.pliCount ?? 0), dropped \(inVideo.framesDropped ?? 0)
              video peer→aiortc: peer sent \(ourVideoSent) frames, aiortc decoded \(theirVideoReceived) \
            (\(Self.percent(theirVideoReceived, of: ourVideoSent))) at \(theirSizes), peer packets \(outVideo.packetsSent), \
            nack \(outVideo.nackCount), pli \(outVideo.pliCount), retransmitted \(outVideo.retransmittedPacketsSent)
              audio aiortc→peer: aiortc sent \(theirAudioSent) frames, peer packets \(inAudio.packetsReceived), \
            samples \(inAudio.totalSamplesReceived ?? 0), tone \(String(format: "%.1f", tone.frequency)) Hz \
            at \(String(format: "%.1f", tone.levelDBFS)) dBFS
              audio peer→aiortc: peer packets \(outAudio.packetsSent), aiortc frames \(theirAudioReceived), \
            tone \(theirFrequency) Hz at \(theirLevel) dBFS
              RTCP: our report block on aiortc's video, as aiortc read it: lost \(theirRemoteInVideo?["packetsLost"] ?? "-"), \
            RTT \(theirRemoteInVideo?["roundTripTime"] ?? "-") s; our SR as aiortc saw it: \
            packetsSent \(theirRemoteOutVideo?["packetsSent"] ?? "-"); our RTT from aiortc's RR: \
            \(ourRemoteInVideo?.roundTripTime.map { String(format: "%.4f", $0) } ?? "-") s \
            (\(ourRemoteInVideo?.roundTripTimeMeasurements ?? 0) measurements)
              codecs: peer out video \(outVideo.codecId ?? "-"), audio \(outAudio.codecId ?? "-"); \
            aiortc \(theirCodecs.mapValues { "\($0["mimeType"] ?? "?")/\($0["payloadType"] ?? "?")" }); \
            DTLS \(transport?.dtlsRole ?? "-") \(transport?.srtpCipher ?? "-"), timings \(stats.timings)
            """)

        // The connection: connected, DTLS role from the answer's a=setup (aiortc answers
        // active, so we are the server when we offer; we answer active), SRTP keyed.
        let states = events.connectionStates()
        #expect(states.contains(.connected), "\(states)")
        #expect(!states.contains(.failed), "\(states)")
        #expect(transport?.dtlsState == "connected")
        #expect(transport?.dtlsRole == (peerOffers ? "server" : "client"))
        #expect(transport?.srtpCipher != nil)
        #expect(transport?.srtpFailures == 0)
        #expect(hungUp && closedByPeer, "after aiortc closed: \(pc.connectionState), \(events.connectionStates())")

        // Codecs: both sides use the same VP8 and Opus payload types.
        let videoPT = try #require(theirCodecs["video"]?["payloadType"] as? Int)
        let audioPT = try #require(theirCodecs["audio"]?["payloadType"] as? Int)
        #expect(theirCodecs["video"]?["mimeType"] as? String == "video/VP8")
        #expect(theirCodecs["audio"]?["mimeType"] as? String == "audio/opus")
        #expect(outVideo.codecId == "CO-\(videoPT)")
        #expect(outAudio.codecId == "CO-\(audioPT)")
        #expect(inVideo.codecId == "CO-\(videoPT)")
        #expect(inAudio.codecId == "CO-\(audioPT)")
        #expect(aiortcSDP.contains("a=rtpmap:\(videoPT) VP8/90000"))
        #expect(aiortcSDP.contains("a=rtpmap:\(audioPT) opus/48000/2"))
        let tracks = events.tracks()
        #expect(tracks.first { $0.kind == "video" }.map { "\($0.codec)/\($0.payloadType)" } == "VP8/\(videoPT)")
        #expect(tracks.first { $0.kind == "audio" }.map { "\($0.codec)/\($0.payloadType)" } == "opus/\(audioPT)")
        // We receive aiortc's SSRCs.
        let theirVideoSSRC = theirOutbound.first { $0["kind"] as? String == "video" }?["ssrc"] as? Int
        #expect(theirVideoSSRC.map(UInt32.init) == inVideo.ssrc)

        // RTCP both ways: aiortc read our SR (our SSRC, a packet count no higher than what
        // we sent) and our report block about its video (LSR/DLSR give it a loopback RTT);
        // we read its report block about ours and took an RTT from it.
        #expect((theirRemoteOutVideo?["ssrc"] as? Int).map(UInt32.init) == outVideo.ssrc)
        let srPackets = theirRemoteOutVideo?["packetsSent"] as? Int ?? 0
        #expect(srPackets > 0 && srPackets <= outVideo.packetsSent, "SR packet count \(srPackets)")
        // aiortc keeps a remote-inbound-rtp only for a report block naming its own SSRC,
        // and labels it with the SSRC of the RTCP packet's sender: one of ours.
        let reporter = (theirRemoteInVideo?["ssrc"] as? Int).map(UInt32.init)
        #expect(reporter == outAudio.ssrc || reporter == outVideo.ssrc, "reporter \(reporter.map { "\($0)" } ?? "none")")
        let theirRTT = theirRemoteInVideo?["roundTripTime"] as? Double ?? -1
        #expect(theirRTT >= 0 && theirRTT < 0.5, "aiortc's RTT from our report block: \(theirRTT) s")
        #expect((ourRemoteInVideo?.roundTripTimeMeasurements ?? 0) > 0)
        #expect(ourRemoteInVideo.flatMap(\.roundTripTime).map { $0 >= 0 && $0 < 0.5 } == true)

        // Video both ways: ≥ 90 % of the frames sent are decoded, at the size sent.
        #expect(theirVideoSent >= Int(Self.mediaSeconds * 30 * 0.8), "aiortc sent only \(theirVideoSent) frames")
        #expect(ourVideoSent >= Int(Self.mediaSeconds * 30 * 0.8), "peer sent only \(ourVideoSent) frames")
        #expect(Double(ourDecoded) >= 0.9 * Double(theirVideoSent))
        #expect(ourDecoded <= theirVideoSent)
        #expect(Double(theirVideoReceived) >= 0.9 * Double(ourVideoSent))
        #expect(theirVideoReceived <= ourVideoSent)
        #expect(inVideo.frameWidth == 352 && inVideo.frameHeight == 288)
        #expect(theirSizes == ["320x240"])

        // Audio both ways: packets flow, and each side hears the other's tone.
        #expect(inAudio.packetsReceived > 0 && Double(inAudio.packetsReceived) >= 0.9 * Double(theirAudioSent))
        #expect(theirAudioReceived > 0 && Double(theirAudioReceived) >= 0.9 * Double(outAudio.packetsSent))
        #expect(abs(tone.frequency - 660) < 10, "peer heard \(tone.frequency) Hz")
        #expect(abs(tone.levelDBFS - -15) < 1.5, "peer heard \(tone.levelDBFS) dBFS")
        #expect(abs(theirFrequency - 440) < 10, "aiortc heard \(theirFrequency) Hz")
        #expect(abs(theirLevel - -15) < 1.5, "aiortc heard \(theirLevel) dBFS")
    }

    // MARK: Helpers

    static func percent(_ part: Int, of whole: Int) -> String {
        whole == 0 ? "-" : String(format: "%.1f %%", 100 * Double(part) / Double(whole))
    }

    /// The tone in a WAV file after its first 0.5 s: frequency from zero crossings (Hz)
    /// and RMS level (dBFS) of the first channel.
    static func measureTone(_ path: String) throws -> (frequency: Double, levelDBFS: Double) {
        let reader = try WAVReader(path: path)
        var samples: [Int16] = []
        while let frame = try reader.read(samplesPerChannel: 4_800) {
            samples += stride(from: 0, to: frame.samples.count, by: frame.channels).map { frame.samples[$0] }
        }
        let measured = samples.dropFirst(AudioFrame.sampleRate / 2)
        guard measured.count > 1 else { return (0, -120) }
        var squares = 0.0
        var crossings = 0
        var previous = measured.first.map { $0 >= 0 } ?? true
        for s in measured {
            squares += Double(s) * Double(s)
            let sign = s >= 0
            if sign != previous { crossings += 1 }
            previous = sign
        }
        let rms = (squares / Double(measured.count)).squareRoot()
        let seconds = Double(measured.count) / Double(AudioFrame.sampleRate)
        return (Double(crossings) / 2 / seconds, rms > 0 ? 20 * log10(rms / 32_768) : -120)
    }
}

/// The events a ``PeerConnection`` reported, collected from the event-loop thread.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [PeerConnectionEvent] = []

    func append(_ event: PeerConnectionEvent) { lock.withLock { events.append(event) } }

    func connectionStates() -> [PeerConnectionState] {
        lock.withLock {
            events.compactMap { if case let .connectionState(s, _) = $0 { return s } else { return nil } }
        }
    }

    func tracks() -> [RemoteTrackInfo] {
        lock.withLock { events.compactMap { if case let .track(t) = $0 { return t } else { return nil } } }
    }
}

/// `aiortc_peer.py` running as a child process: JSON lines in on stdin, out on stdout
/// (a ``JSONLineProcess`` whose `{"event": "error"}` lines fail every wait).
final class AiortcProcess: @unchecked Sendable {
    private let child: JSONLineProcess

    /// Starts `python script arguments…`.
    init(python: String, script: String, arguments: [String]) throws {
        child = try JSONLineProcess("aiortc", python, [script] + arguments, stdin: true)
    }

    /// The process's error output so far.
    var stderr: String { child.stderr }

    /// Writes one JSON line to its stdin.
    func send(_ message: [String: String]) throws { try child.send(message) }

    /// The next message for which `match` holds; throws on an error line, an early exit or after `timeout` s.
    func next(timeout: Double, _ match: ([String: Any]) -> Bool) async throws -> [String: Any] {
        try await child.next(timeout: timeout, failOnErrorEvent: true, match)
    }

    /// SIGKILL (processes started from the test binary ignore SIGTERM).
    func kill() { child.kill() }
}
