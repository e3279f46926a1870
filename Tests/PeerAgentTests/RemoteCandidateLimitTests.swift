// PeerConnection takes at most 100 remote candidates (descriptions and trickle together);
// the rest are dropped with one event or an error naming the limit.
import Foundation
import Synchronization
import SDP
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

@Suite struct RemoteCandidateLimitTests {
    /// A real offer from A given 1,000 extra host candidates (~70 KiB, within the SDP
    /// limits): B takes 100, says once that 900 were dropped, and refuses a trickled
    /// 101st with the limit in the reason.
    @Test func aThousandCandidatesAreCutToOneHundred() async throws {
        let events = Mutex<[PeerConnectionEvent]>([])
        var configuration = PeerConnectionConfiguration()
        configuration.localAddresses = ["127.0.0.1"]
        configuration.tcpCandidates = false
        let a = try PeerConnection(configuration: configuration) { _ in }
        let b = try PeerConnection(configuration: configuration) { event in events.withLock { $0.append(event) } }
        defer { a.close(); b.close() }
        a.addTransceiver(.audio, direction: .recvonly)
        b.addTransceiver(.audio, direction: .recvonly)
        let offer = try a.createOffer()
        try a.setLocalDescription(offer)
        var extra = ""
        for i in 0..<1_000 {
            extra += "a=candidate:\(i) 1 udp 2122260223 127.0.\(1 + i / 250).\(1 + i % 250) \(20_000 + i) typ host\r\n"
        }
        let sdp = offer.sdp.replacingOccurrences(of: "a=mid:0\r\n", with: "a=mid:0\r\n" + extra)
        try b.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: sdp))
        func dropped() -> [String] {
            events.withLock { $0 }.compactMap { event -> String? in
                if case let .remoteCandidateDropped(_, reason) = event { reason } else { nil }
            }
        }
        _ = await eventually(within: 2) { !dropped().isEmpty }  // events come on the loop thread
        let reasons = dropped()
        #expect(reasons == ["the description has 900 candidates beyond the 100 a connection takes: they are dropped"], "\(reasons)")
        let refused = #expect(throws: PeerConnectionError.self) {
            try b.addIceCandidate(IceCandidateInit(candidate: "candidate:9999 1 udp 2122260223 127.9.9.9 30000 typ host",
                                                   sdpMid: "0", sdpMLineIndex: 0, usernameFragment: nil))
        }
        #expect(refused.map { "\($0)" }?.contains("more than 100 remote candidates") == true, "\(String(describing: refused))")
    }
}
