// BundleRouter: RTP packets on the one BUNDLE transport go to their m-section's receiver (RFC 8843 §9.2).
import Media
import RTP
import SDP
import Testing
@testable import PeerAgent
@testable import PeerCall

@Suite struct BundleRouterTests {
    /// An audio (mid "0", PT 111) and a video (mid "1", PT 96) transceiver, both receiving.
    static func transceivers() -> [RtpTransceiver] {
        [(MediaKind.audio, "0", 111), (MediaKind.video, "1", 96)].map { kind, mid, pt in
            let t = RtpTransceiver(kind: kind, direction: .sendrecv,
                                   sender: RtpSender(kind: kind, ssrc: 1, cname: "c", encoding: SendEncoding(), video: nil, audio: nil),
                                   receiver: RtpReceiver(kind: kind, options: ReceiveOptions(decode: false), localSSRC: 1))
            t.mid = mid
            t.currentDirection = .sendrecv
            t.receiver.configure(mid: mid, payloadTypes: [pt], remoteSSRC: nil)
            return t
        }
    }

    /// An RTP packet from `ssrc` with `payloadType`, carrying `mid` in the extension `extensionID`.
    static func packet(ssrc: UInt32, payloadType: UInt8, mid: String? = nil, extensionID: UInt8 = 4) -> RTPPacket {
        RTPPacket(payloadType: payloadType, sequenceNumber: 1, timestamp: 0, ssrc: ssrc,
                  headerExtension: mid.map { .oneByte([RTPExtensionElement(id: extensionID, data: Array($0.utf8))]) },
                  payload: [0x10, 0, 0])
    }

    /// The mid extension wins over the payload type, and its route is kept for the SSRC:
    /// a later packet of that SSRC without the extension goes the same way. A payload type
    /// the mid's section did not negotiate is dropped (RFC 3550 §5.1), the route kept.
    @Test func theMidExtensionRoutesAndTheRouteIsKeptForTheSSRC() {
        let list = Self.transceivers()
        var router = BundleRouter()
        router.midExtensionID = 4
        #expect(router.route(Self.packet(ssrc: 0xAAAA, payloadType: 96, mid: "1"), among: list) === list[1].receiver)
        #expect(router.route(Self.packet(ssrc: 0xAAAA, payloadType: 96), among: list) === list[1].receiver)
        // Payload type 111 is audio's, but the mid (and then the SSRC) says video: dropped.
        #expect(router.route(Self.packet(ssrc: 0xAAAA, payloadType: 111, mid: "1"), among: list) == nil)
        #expect(router.route(Self.packet(ssrc: 0xAAAA, payloadType: 111), among: list) == nil)
        #expect(router.ssrcRoutes[0xAAAA] === list[1].receiver)
    }

    /// Without a negotiated extension id the mid element is ignored; an announced SSRC
    /// (a=ssrc) routes, and an unknown one falls back to the payload type; the route of an
    /// SSRC is kept, and takes only its section's payload types.
    @Test func announcedSSRCThenPayloadType() {
        let list = Self.transceivers()
        var router = BundleRouter()
        router.announce(ssrc: 0xBBBB, to: list[0].receiver)
        #expect(router.route(Self.packet(ssrc: 0xBBBB, payloadType: 111, mid: "1"), among: list) === list[0].receiver)
        #expect(router.route(Self.packet(ssrc: 0xBBBB, payloadType: 96), among: list) == nil, "video's payload type on audio's SSRC")
        #expect(router.route(Self.packet(ssrc: 0xCCCC, payloadType: 96), among: list) === list[1].receiver)
        #expect(router.route(Self.packet(ssrc: 0xCCCC, payloadType: 96, mid: "0"), among: list) === list[1].receiver)  // kept
        #expect(router.ssrcRoutes[0xCCCC] === list[1].receiver)
    }

    /// A packet no transceiver takes (unknown mid, SSRC and payload type; or a transceiver
    /// that does not receive) is dropped.
    @Test func aPacketNobodyTakesIsDropped() {
        let list = Self.transceivers()
        var router = BundleRouter()
        router.midExtensionID = 4
        #expect(router.route(Self.packet(ssrc: 0xDDDD, payloadType: 100, mid: "7"), among: list) == nil)
        list[1].currentDirection = .sendonly
        #expect(router.route(Self.packet(ssrc: 0xEEEE, payloadType: 96), among: list) == nil)
        #expect(router.ssrcRoutes.isEmpty)
    }

    /// The video stream 0xAAAA flows (its receiver knows its SSRC); then 1,000 packets from
    /// as many other SSRCs come with video's payload type, half of them with video's mid:
    /// its receiver drops them (unknown SSRC), so no route is learned for them — the table
    /// holds the real stream's alone, which still routes. Audio's payload type on a new
    /// SSRC that audio's receiver takes (it has none yet) is learned.
    @Test func packetsAReceiverDropsLeaveNoRoute() {
        let list = Self.transceivers()
        var router = BundleRouter()
        router.midExtensionID = 4
        let real = Self.packet(ssrc: 0xAAAA, payloadType: 96, mid: "1")
        #expect(router.route(real, among: list) === list[1].receiver)
        _ = list[1].receiver.handle(real, payloadBytes: 3, headerBytes: 12)
        for i in UInt32(0)..<1_000 {
            _ = router.route(Self.packet(ssrc: 0x10_0000 + i, payloadType: 96, mid: i % 2 == 0 ? "1" : nil), among: list)
        }
        #expect(router.ssrcRoutes.count == 1 && router.ssrcRoutes[0xAAAA] === list[1].receiver)
        #expect(router.route(Self.packet(ssrc: 0xAAAA, payloadType: 96), among: list) === list[1].receiver)
        #expect(router.route(Self.packet(ssrc: 0xBBBB, payloadType: 111), among: list) === list[0].receiver)
        #expect(router.ssrcRoutes.count == 2 && router.ssrcRoutes[0xBBBB] === list[0].receiver)
        for t in list { t.receiver.close() }
    }

    /// A receiver that has no SSRC yet takes any: then at most
    /// ``BundleRouter/learnedRoutesPerReceiver`` (16) learned routes are kept for it, the
    /// oldest forgotten first; an announced SSRC is never forgotten and still routes.
    @Test func learnedRoutesAreCappedPerReceiver() {
        let list = Self.transceivers()
        var router = BundleRouter()
        router.midExtensionID = 4
        router.announce(ssrc: 0xA0, to: list[0].receiver)
        for i in UInt32(0)..<1_000 {
            _ = router.route(Self.packet(ssrc: 0x10_0000 + i, payloadType: 96, mid: i % 2 == 0 ? "1" : nil), among: list)
            _ = router.route(Self.packet(ssrc: 0x20_0000 + i, payloadType: 111), among: list)
        }
        let limit = BundleRouter.learnedRoutesPerReceiver
        #expect(limit == 16)
        #expect(router.ssrcRoutes.count == 2 * limit + 1, "\(router.ssrcRoutes.count)")
        #expect(router.ssrcRoutes[0xA0] === list[0].receiver, "the announced one is kept")
        #expect(router.ssrcRoutes[0x10_0000 + 999] === list[1].receiver && router.ssrcRoutes[0x10_0000 + 999 - UInt32(limit)] == nil)
        #expect(router.ssrcRoutes[0x20_0000 + 999] === list[0].receiver && router.ssrcRoutes[0x20_0000] == nil)
        #expect(router.route(Self.packet(ssrc: 0xA0, payloadType: 111), among: list) === list[0].receiver)
        for t in list { t.receiver.close() }
    }
}
