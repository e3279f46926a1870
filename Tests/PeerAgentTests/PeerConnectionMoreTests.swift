import Foundation
import ICE
import Media
import SDP
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

@Suite struct PeerConnectionMoreTests {
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
        try pair.negotiate()
        #expect(await pair.connected())
        let (va, vb) = try #require(pair.video)
        #expect(await eventually(within: 5) { (vb.receiver.snapshot().framesReceived ?? 0) > 10 })
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
        try pair.negotiate()
        #expect(await pair.connected())
        let (va, vb) = try #require(pair.video)
        #expect(await eventually(within: 5) { (vb.receiver.snapshot().framesReceived ?? 0) > 10 })
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
        try await Task.sleep(nanoseconds: 500_000_000)
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

    /// Relay-only through the test coturn (RFC 8656): connects relay/relay, video flows both
    /// ways, and after close() coturn's log shows the allocations released.
    @Test func relayOnlyThroughTurnConnectsRelayToRelay() async throws {
        let s = try await TestServices.shared()
        let turn = try #require(s.turn_url), log = try #require(s.turn_log)
        func count(_ text: String) -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8))?.components(separatedBy: text).count ?? 1) - 1
        }
        let allocationsBefore = count("ALLOCATE processed, success")
        let deletedBefore = count("lifetime=0")
        let server = try IceServer(turn, username: s.turn_user, password: s.turn_password)
        let pair = try ConnectedPair(configure: { $0.iceServers = [server]; $0.iceTransportPolicy = .relay })
        try pair.negotiate()
        let connected = await pair.connected(within: 15)
        #expect(connected, "a \(pair.a.connectionState) \(pair.a.failureReason ?? ""), b \(pair.b.connectionState) \(pair.b.failureReason ?? "")")
        #expect(await eventually(within: 8) { [pair.a, pair.b].allSatisfy { ($0.getStats().inbound("video")?.framesDecoded ?? 0) > 20 } })
        for (name, pc) in [("a", pair.a), ("b", pair.b)] {
            let stats = pc.getStats()
            let selected = try #require(stats.candidatePairs.first { $0.id == stats.transports.first?.selectedCandidatePairId })
            let local = try #require(stats.candidates.first { $0.id == selected.localCandidateId })
            let remote = try #require(stats.candidates.first { $0.id == selected.remoteCandidateId })
            let decoded: Int = stats.inbound("video")?.framesDecoded ?? 0
            let l = "\(local.candidateType) \(local.address):\(local.port)", r = "\(remote.candidateType) \(remote.address):\(remote.port)"
            print("relay \(name): selected \(l) ↔ \(r); video \(decoded) frames decoded")
            #expect(local.candidateType == "relay" && remote.candidateType == "relay")
            #expect(stats.candidates.filter { $0.type == "local-candidate" }.allSatisfy { $0.candidateType == "relay" })
        }
        #expect(count("ALLOCATE processed, success") - allocationsBefore >= 2)
        pair.close()
        // A released allocation: a Refresh with lifetime 0 (RFC 8656 §8), which coturn logs.
        let released = await eventually(within: 5) { count("lifetime=0") - deletedBefore >= 2 }
        print("coturn: \(count("ALLOCATE processed, success") - allocationsBefore) allocations, \(count("lifetime=0") - deletedBefore) refreshes with lifetime 0 after close")
        #expect(released, "coturn's log shows no release of the two allocations")
    }

    /// close() after DTLS failed (wrong fingerprint) leaves no UDP socket bound and no file
    /// of the recording directory open.
    @Test func closeAfterAFailedConnectionFreesSocketsAndFiles() async throws {
        let dir = TestServices.temporaryDirectory("close-failed")
        let tracks: (String) -> (PeerConnection) throws -> Void = { side in
            { pc in
                pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(oggPath: "\(dir)/\(side).ogg", decode: false))
                pc.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 30),
                                  receive: ReceiveOptions(ivfPath: "\(dir)/\(side).ivf", decode: true))
            }
        }
        let pair = try ConnectedPair(tracksA: tracks("a"), tracksB: tracks("b"))
        try pair.negotiate(editAnswer: { sdp in
            sdp.components(separatedBy: "\r\n").map { line in
                line.hasPrefix("a=fingerprint:sha-256 ") ? "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":") : line
            }.joined(separator: "\r\n")
        })
        #expect(await eventually(within: 8) { pair.a.connectionState == .failed && pair.b.connectionState == .failed })
        var ports: [Int] = []
        for pc in [pair.a, pair.b] {
            ports += pc.getStats().candidates.filter { $0.type == "local-candidate" }.map(\.port)
        }
        let udpBefore = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        let boundBefore = ports.filter { udpBefore.contains("0100007F" + String(format: ":%04X ", $0)) }
        let openBefore = PeerConnectionTests.openFiles().filter { $0.hasPrefix(dir) }
        let filesBefore = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        pair.close()
        try await Task.sleep(nanoseconds: 300_000_000)
        let udp = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        let open = PeerConnectionTests.openFiles().filter { $0.hasPrefix(dir) }
        print("failed connection: local ports \(ports), bound before close \(boundBefore), files in the directory \(filesBefore.sorted()), open before close \(openBefore); after: \(open)")
        #expect(!ports.isEmpty)
        #expect(boundBefore.count == ports.count, "the check sees the sockets while open")
        for port in ports {
            #expect(!udp.contains("0100007F" + String(format: ":%04X ", port)), "UDP 127.0.0.1:\(port) still bound")
        }
        #expect(open.isEmpty, "still open: \(open)")
    }
}
