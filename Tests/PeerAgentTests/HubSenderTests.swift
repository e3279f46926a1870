// HubSenderTests: senders in hub mode — two connections send one shared pattern source from one MediaHub and both receivers decode it; one receiver's PLI brings a key frame to both; NACKs answered from the sender's own history.
import EventLoop
import Foundation
import Hub
import Media
import Testing
import TestSupport
@testable import PeerAgent
import PeerCall

@Suite struct HubSenderTests {
    /// Two pairs in this process: each offerer sends `pattern:320x240@30` at 300 kbit/s from
    /// one hub (hub mode: no source or encoder of its own), each answerer receives and
    /// decodes. Both decode 60 frames and more; the hub encoded each frame once for both
    /// (one encoder, two subscribers); a PLI from one receiver brings one key frame, which
    /// both receivers decode within 500 ms.
    @Test func twoConnectionsReceiveOneSharedPatternAndDecodeIt() async throws {
        let hub = MediaHub()
        let spec = HubSourceSpec.pattern(width: 320, height: 240, frameRate: 30, encoding: HubVideoEncoding(bitrateKbps: 300))
        let pairs = try (0..<2).map { _ in
            try ConnectedPair(configure: { $0.mediaHub = hub },
                              tracksA: { pc in try pc.addTransceiver(.video, direction: .sendonly, shared: spec) },
                              tracksB: { pc in pc.addTransceiver(.video, direction: .recvonly, receive: ReceiveOptions(decode: true)) })
        }
        defer { pairs.forEach { $0.close() } }
        for pair in pairs { try pair.negotiate() }
        for pair in pairs { #expect(await pair.connected()) }
        let receivers = try pairs.map { try #require($0.video?.b) }
        func decoded(_ i: Int) -> Int { receivers[i].receiver.snapshot().framesDecoded ?? 0 }
        func keyframes(_ i: Int) -> Int { receivers[i].receiver.snapshot().keyFramesDecoded ?? 0 }
        #expect(await eventually(within: 10) { decoded(0) >= 60 && decoded(1) >= 60 })
        let stats = try #require(hub.stats(of: spec))
        print("hub senders: decoded \(decoded(0)) and \(decoded(1)) frames; hub encoded \(stats.framesEncoded) frames "
            + "for \(stats.subscribers) senders, \(hub.made.encoders) encoder")
        #expect(hub.made.encoders == 1 && stats.subscribers == 2)
        #expect(stats.framesEncoded == stats.framesProduced)
        for pair in pairs {
            let out = try #require(pair.a.getStats().outbound("video"))
            #expect(out.packetsSent > 0 && out.frameWidth == 320 && out.frameHeight == 240 && (out.framesSent ?? 0) >= 60)
            let inbound = try #require(pair.b.getStats().inbound("video"))
            #expect(inbound.frameWidth == 320 && (inbound.keyFramesDecoded ?? 0) >= 1)
        }

        // One receiver's PLI: one forced key frame for the group, decoded by both.
        try await Task.sleep(for: .milliseconds(600))  // past the 500 ms since the last forced key frame
        let before = (keyframes(0), keyframes(1))
        let forcedBefore = hub.stats(of: spec)?.keyframeRequests.forced ?? 0
        let asked = ContinuousClock.now
        #expect(pairs[0].b.requestKeyframe(receivers[0]))
        #expect(await eventually(within: 2) { keyframes(0) > before.0 && keyframes(1) > before.1 })
        let waited = ContinuousClock.now - asked
        print("hub senders: PLI from receiver 0 → key frame decoded by both after \(waited)")
        #expect(waited < .milliseconds(500))
        #expect((hub.stats(of: spec)?.keyframeRequests.forced ?? 0) == forcedBefore + 1)
        #expect((pairs[0].a.getStats().outbound("video")?.pliCount ?? 0) >= 1)
    }

    /// Every 10th RTP packet dropped at the receiver: the sender in hub mode answers the
    /// NACKs from its own history of shared payloads, and the receiver still gets and
    /// decodes the frames.
    @Test func nacksAreAnsweredFromTheSendersHistory() async throws {
        let hub = MediaHub()
        let spec = HubSourceSpec.pattern(width: 320, height: 240, frameRate: 30, encoding: HubVideoEncoding(bitrateKbps: 600))
        final class Counter: @unchecked Sendable { let lock = NSLock(); var rtp = 0 }
        let counter = Counter()
        let pair = try ConnectedPair(configure: { $0.mediaHub = hub }, configureB: { config in
            config.inboundDropFilter = { datagram in
                // SRTP (RFC 7983: first byte 128–191) with an RTP payload type (not RTCP 200–206).
                guard let first = datagram.first, (128...191).contains(first), datagram.count > 1,
                      !(200...206).contains(datagram[1]) else { return false }
                return counter.lock.withLock { counter.rtp += 1; return counter.rtp % 10 == 0 }
            }
        }, tracksA: { pc in try pc.addTransceiver(.video, direction: .sendonly, shared: spec) },
           tracksB: { pc in pc.addTransceiver(.video, direction: .recvonly, receive: ReceiveOptions(decode: true)) })
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let vb = try #require(pair.video?.b)
        #expect(await eventually(within: 10) { (vb.receiver.snapshot().framesDecoded ?? 0) >= 90 })
        let out = try #require(pair.a.getStats().outbound("video"))
        let inbound = try #require(pair.b.getStats().inbound("video"))
        print("hub sender under 10 % loss: nackCount \(out.nackCount), retransmitted \(out.retransmittedPacketsSent) of "
            + "\(out.packetsSent) packets; received frames decoded \(inbound.framesDecoded ?? 0), dropped \(inbound.framesDropped ?? 0)")
        #expect(out.nackCount > 0 && out.retransmittedPacketsSent > 0)
        #expect(inbound.nackCount > 0)
        #expect((inbound.framesDropped ?? 0) <= (inbound.framesDecoded ?? 0) / 20, "NACK recovers nearly every frame")
    }

    /// Without a hub in the configuration, or with a spec of the other kind, the shared
    /// transceiver is refused naming why.
    @Test func sharedSourceNeedsAHubAndItsKind() throws {
        let pc = try PeerConnection { _ in }
        defer { pc.close() }
        let spec = HubSourceSpec.pattern(width: 320, height: 240, frameRate: 30, encoding: HubVideoEncoding())
        let noHub = #expect(throws: PeerConnectionError.self) { try pc.addTransceiver(.video, shared: spec) }
        #expect(noHub.map { "\($0)".contains("mediaHub") } == true)
        var config = PeerConnectionConfiguration()
        config.mediaHub = MediaHub(pacing: .manual)
        let withHub = try PeerConnection(configuration: config) { _ in }
        defer { withHub.close() }
        let wrongKind = #expect(throws: PeerConnectionError.self) { try withHub.addTransceiver(.audio, shared: spec) }
        #expect(wrongKind.map { "\($0)".contains("audio") } == true)
        #expect(withHub.allTransceivers.isEmpty)
    }
}

/// The command line's media specs as the hub's sources, with the sender's settings.
@Suite struct HubSourceMappingTests {
    @Test func videoAndAudioSpecsMapToHubSources() throws {
        var encoding = SendEncoding()
        encoding.videoBitrateKbps = 1_500
        encoding.audioBitrate = 24_000
        let pattern = try VideoSpec(parsing: "pattern:640x480@30").hubSource(encoding: encoding)
        #expect(pattern == .pattern(width: 640, height: 480, frameRate: 30,
                                    encoding: HubVideoEncoding(bitrateKbps: 1_500, cpuUsed: -6, keyframeInterval: 3_000)))
        #expect(pattern?.description == "pattern:640x480@30 1500 kbit/s")
        #expect(try VideoSpec(parsing: "ivf:/tmp/a.ivf").hubSource(encoding: encoding) == .ivf(path: "/tmp/a.ivf"))
        #expect(try VideoSpec(parsing: "none").hubSource(encoding: encoding) == nil)
        #expect(try AudioSpec(parsing: "tone:550").hubSource(encoding: encoding)
            == .tone(frequency: 550, encoding: HubAudioEncoding(bitrate: 24_000, frameDurationMs: 20, inbandFEC: true)))
        #expect(try AudioSpec(parsing: "ogg:/tmp/a.opus").hubSource(encoding: encoding) == .ogg(path: "/tmp/a.opus"))
        // Another bitrate is another source (its own encoder).
        encoding.videoBitrateKbps = 1_000
        #expect(try VideoSpec(parsing: "pattern:640x480@30").hubSource(encoding: encoding) != pattern)
    }
}
