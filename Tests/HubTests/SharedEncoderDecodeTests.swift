// SharedEncoderDecodeTests: frames of one shared VP8 encoder, sent by three streams (own SSRC, sequence numbers, timestamp offset, SRTP keys), reassembled and decoded with libvpx for each.
import DTLS
import EventLoop
import Hub
import Media
import RTP
import Synchronization
import Testing
import TestSupport

/// One subscriber's whole path: its stream writes each packet, SRTP protects it in place,
/// the receiving side unprotects, parses, reassembles (RFC 7741) and decodes (libvpx).
private final class DecodingSubscriber: Sendable {
    private struct State {
        var stream: SharedFrameStream
        var assembler = VP8FrameAssembler(reorderWindow: 64, reorderDelay: 9_000)
        var markers: [Int] = []
        var failures: [String] = []
    }
    private let state: Mutex<State>
    private let protect: SRTPSession, unprotect: SRTPSession
    let decoder: VP8Decoder

    init(ssrc: UInt32, key: UInt8) throws {
        let k = [UInt8](repeating: key, count: 16), salt = [UInt8](repeating: key &+ 1, count: 14)
        protect = try SRTPSession(profile: .aes128CmSha1_80, key: k, salt: salt, direction: .outbound)
        unprotect = try SRTPSession(profile: .aes128CmSha1_80, key: k, salt: salt, direction: .inbound)
        decoder = try VP8Decoder()
        let header = RTPStreamHeader(ssrc: ssrc, payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: ssrc),
                                     timestampOffset: ssrc &* 2_654_435_761,
                                     headerExtension: .oneByte([RTPExtensionElement(id: 4, data: Array("v\(ssrc)".utf8))]))
        state = Mutex(State(stream: SharedFrameStream(header: header, trailer: SRTPProfile.maxTrailerLength)))
    }

    /// The subscriber's `deliver` (on its loop).
    func deliver(_ frame: PacketizedFrame) {
        state.withLock { s in
            var wire: [[UInt8]] = []
            s.stream.send(frame, nowMs: 0) { [protect] packet in
                guard (try? protect.protect(rtpInPlace: &packet)) != nil else { return false }
                wire.append(packet)
                return true
            }
            for datagram in wire {
                do {
                    let packet = try RTPPacket(parsing: try unprotect.unprotect(srtp: datagram))
                    for event in s.assembler.push(packet) {
                        guard case let .delivered(f) = event else { continue }
                        for d in try decoder.decode(f.data) { s.markers.append(FrameMarker.read(from: d.frame)?.frameNumber ?? -1) }
                    }
                } catch {
                    s.failures.append("\(error)")
                }
            }
        }
    }

    var markers: [Int] { state.withLock { $0.markers } }
    var failures: [String] { state.withLock { $0.failures } }
}

extension MediaHubTests {
    /// Sixty frames of one shared encoder decode with libvpx for each of three subscribers
    /// on two loops — two from the start, one joining at frame 20 — each through its own
    /// header, SRTP keys and reassembly: every frame from a subscriber's first key frame on
    /// decodes, with the pattern's frame numbers in order.
    @Test func sharedEncoderFramesDecodeForEverySubscriber() async throws {
        let clock = TestClock()
        let hub = MediaHub(pacing: .manual, clock: clock.closure)
        let loops = [EventLoop(name: "hub-test-a"), EventLoop(name: "hub-test-b")]
        defer { loops.forEach { $0.stop() } }
        let spec = patternSpec()
        let subscribers = try (1...3).map { try DecodingSubscriber(ssrc: UInt32($0) * 1_000_003, key: UInt8($0)) }
        var subscriptions = try (0..<2).map { i in
            try hub.subscribe(spec, loop: loops[i], deliver: { [s = subscribers[i]] in s.deliver($0) })
        }
        for i in 0..<60 {
            if i == 20 {
                subscriptions.append(try hub.subscribe(spec, loop: loops[1], deliver: { [s = subscribers[2]] in s.deliver($0) }))
            }
            _ = try await TestServices.offload { try hub.pump(spec, frames: 1) }
            clock.advance(33)
        }
        loops.forEach { $0.drain() }
        let late = subscriptions[2]
        for (i, s) in subscribers.enumerated() {
            print("hub: subscriber \(i) decoded \(s.decoder.framesDecoded) frames, markers \(s.markers.first ?? -1)…\(s.markers.last ?? -1)")
            #expect(s.failures.isEmpty, "\(s.failures.prefix(3))")
            #expect(s.decoder.corruptFrames == 0)
        }
        #expect(subscribers[0].markers == Array(0..<60) && subscribers[1].markers == Array(0..<60))
        let start = 20 + late.framesSkipped
        #expect(start <= 20 + 16, "a key frame within 500 ms of the join")
        #expect(subscribers[2].markers == Array(start..<60))
        #expect(hub.stats(of: spec)?.framesEncoded == 60)
        subscriptions.forEach { $0.cancel() }
    }
}
