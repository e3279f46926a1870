// Which media flows where: negotiated directions (RFC 3264 §6.1: recvonly, inactive)
// and BUNDLE demultiplexing without the mid extension or a=ssrc lines (RFC 8843 §9.2).
import Foundation
import Media
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

/// The lines of the m-section of `kind` ("audio"/"video") in `sdp`.
func mediaSection(_ kind: String, in sdp: String) -> [String] {
    var out: [String] = []
    var inside = false
    for line in sdp.components(separatedBy: "\r\n") {
        if line.hasPrefix("m=") { inside = line.hasPrefix("m=\(kind) ") }
        if inside { out.append(line) }
    }
    return out
}

/// Directions and BUNDLE routing over a ``ConnectedPair``.
@Suite struct PeerConnectionRoutingTests {
    /// B's video `recvonly` against A's sendrecv: the answer says a=recvonly, A sends video
    /// and B decodes it, B sends no video, A receives none.
    @Test func recvonlyVideoFlowsOneWay() async throws {
        let pair = try ConnectedPair(tracksA: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, video: try PatternSource(width: 320, height: 240, frameRate: 30), receive: ReceiveOptions(decode: true))
        }, tracksB: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, direction: .recvonly, receive: ReceiveOptions(decode: true))
        })
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let answer = try #require(pair.b.localDescription).sdp
        let video = mediaSection("video", in: answer)
        #expect(video.contains("a=recvonly"), "answer video section: \(video.filter { $0.hasPrefix("a=s") || $0.hasPrefix("a=r") })")
        #expect(await eventually(within: 5) { (pair.b.getStats().inbound("video")?.framesDecoded ?? 0) > 20 })
        try await Task.sleep(nanoseconds: 500_000_000)
        let sa = pair.a.getStats(), sb = pair.b.getStats()
        print("recvonly: B inbound video \(sb.inbound("video")?.framesDecoded ?? -1) frames decoded; B outbound video \(sb.outbound("video").map { "\($0.packetsSent) packets" } ?? "none"); "
            + "A inbound video \(sa.inbound("video").map { "\($0.packetsReceived) packets" } ?? "none"); A outbound video \(sa.outbound("video")?.packetsSent ?? -1) packets")
        #expect((sb.outbound("video")?.packetsSent ?? 0) == 0)
        #expect(sb.outbound("video") == nil, "B has an outbound-rtp video object though it does not send")
        #expect((sa.inbound("video")?.packetsReceived ?? 0) == 0)
        #expect((sa.outbound("video")?.packetsSent ?? 0) > 0)
        #expect((sa.inbound("audio")?.packetsReceived ?? 0) > 0 && (sb.inbound("audio")?.packetsReceived ?? 0) > 0)
        #expect(pair.b.allTransceivers.first { $0.kind == .video }?.currentDirection == .recvonly)
        #expect(pair.a.allTransceivers.first { $0.kind == .video }?.currentDirection == .sendonly)
    }

    /// Every section `inactive` on both sides: the connection still connects (ICE and DTLS),
    /// and no RTP flows either way.
    @Test func inactiveBothWaysConnectsAndCarriesNothing() async throws {
        let tracks: (PeerConnection) throws -> Void = { pc in
            pc.addTransceiver(.audio, direction: .inactive, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, direction: .inactive, video: try PatternSource(width: 320, height: 240, frameRate: 30),
                              receive: ReceiveOptions(decode: true))
        }
        let pair = try ConnectedPair(tracksA: tracks, tracksB: tracks)
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        #expect(mediaSection("video", in: try #require(pair.b.localDescription).sdp).contains("a=inactive"))
        #expect(mediaSection("audio", in: try #require(pair.b.localDescription).sdp).contains("a=inactive"))
        try await Task.sleep(nanoseconds: 2_000_000_000)
        for (name, pc) in [("a", pair.a), ("b", pair.b)] {
            let s = pc.getStats()
            let sent = s.outboundRTP.map(\.packetsSent).reduce(0, +), received = s.inboundRTP.map(\.packetsReceived).reduce(0, +)
            print("inactive \(name): \(s.outboundRTP.count) outbound objects, \(sent) RTP packets sent; \(s.inboundRTP.count) inbound, \(received) received; state \(pc.connectionState)")
            #expect(sent == 0 && received == 0)
            #expect(pc.connectionState == .connected)
        }
    }

    /// Without the mid header extension (RFC 8843 §15) negotiated, media still reaches the
    /// right receivers, routed by the SSRCs of the a=ssrc lines.
    @Test func mediaIsRoutedWithoutTheMidHeaderExtension() async throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        let strip: (String) -> String = { sdp in
            sdp.components(separatedBy: "\r\n").filter { !($0.hasPrefix("a=extmap:") && $0.contains("urn:ietf:params:rtp-hdrext:sdes:mid")) }
                .joined(separator: "\r\n")
        }
        let offer = try pair.a.createOffer()
        #expect(offer.sdp.contains("urn:ietf:params:rtp-hdrext:sdes:mid"), "the offer has the extension to strip")
        try pair.negotiate(editOffer: strip, editAnswer: strip)
        #expect(try #require(pair.b.localDescription).sdp.contains("sdes:mid") == false, "B's answer does not offer it back")
        #expect(await pair.connected())
        #expect(await eventually(within: 5) {
            [pair.a, pair.b].allSatisfy { ($0.getStats().inbound("video")?.framesDecoded ?? 0) > 20 && ($0.getStats().inbound("audio")?.packetsReceived ?? 0) > 20 }
        })
        let (va, vb) = try #require(pair.video)
        for (name, pc, t) in [("a", pair.a, va), ("b", pair.b, vb)] {
            let s = pc.getStats()
            let video = s.inbound("video"), audio = s.inbound("audio")
            print("no mid extension, \(name): video \(video?.framesDecoded ?? 0) frames decoded \(video?.frameWidth ?? 0)×\(video?.frameHeight ?? 0), "
                + "\(video?.packetsDiscarded ?? 0) discarded; audio \(audio?.packetsReceived ?? 0) packets; markers \(t.receivedFrameMarkers().count)")
            #expect(video?.frameWidth == 320 && video?.frameHeight == 240)
            #expect(video?.packetsDiscarded == 0 && audio?.packetsDiscarded == 0)
            #expect(t.receivedFrameMarkers().count > 20)
        }
    }

    /// Neither the mid header extension nor a=ssrc lines (RFC 8843 §9.2: then the payload
    /// type routes, 96 VP8 and 111 Opus being unique): media still reaches the right receivers.
    @Test func mediaIsRoutedByPayloadTypeWithoutMidExtensionOrSSRCLines() async throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        let strip: (String) -> String = { sdp in
            sdp.components(separatedBy: "\r\n").filter {
                !($0.hasPrefix("a=extmap:") && $0.contains("urn:ietf:params:rtp-hdrext:sdes:mid")) && !$0.hasPrefix("a=ssrc")
            }.joined(separator: "\r\n")
        }
        try pair.negotiate(editOffer: strip, editAnswer: strip)
        #expect(try #require(pair.b.remoteDescription).sdp.contains("a=ssrc") == false)
        #expect(await pair.connected())
        let flowed = await eventually(within: 5) {
            [pair.a, pair.b].allSatisfy { ($0.getStats().inbound("video")?.framesDecoded ?? 0) > 20 && ($0.getStats().inbound("audio")?.packetsReceived ?? 0) > 20 }
        }
        for (name, pc) in [("a", pair.a), ("b", pair.b)] {
            let s = pc.getStats()
            let video = s.inbound("video"), audio = s.inbound("audio")
            print("no mid extension, no a=ssrc, \(name): video \(video?.framesDecoded ?? 0) frames decoded, \(video?.packetsReceived ?? 0) packets; "
                + "audio \(audio?.packetsReceived ?? 0) packets")
        }
        #expect(flowed, "media not routed by payload type")
    }
}
