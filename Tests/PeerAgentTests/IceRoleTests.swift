// ICE roles (RFC 8445 §6.1.1): the offerer controls, except that a full agent facing an
// ICE-lite peer (a=ice-lite) is controlling in both roles.
import Foundation
import SDP
import Testing
@testable import PeerAgent
@testable import PeerCall

/// `sdp` with a session-level `a=ice-lite` line after `t=`.
func markedIceLite(_ sdp: String) -> String {
    sdp.replacingOccurrences(of: "t=0 0\r\n", with: "t=0 0\r\na=ice-lite\r\n")
}

@Suite struct IceRoleTests {
    @Test func offererControlsAndAnswererIsControlled() throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        #expect(pair.a.iceRole == "unknown" && pair.b.iceRole == "unknown")
        try pair.negotiate()
        #expect(pair.a.iceRole == "controlling")
        #expect(pair.b.iceRole == "controlled")
    }

    /// Answering an ICE-lite offer, our full agent takes the controlling role (a lite
    /// agent never nominates): read right after the offer is set, before any check can
    /// start a role conflict; the offer parses with `iceLite` set.
    @Test func answeringAnIceLiteOfferMakesUsControlling() async throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        let offer = try pair.a.createOffer()
        try pair.a.setLocalDescription(offer)
        let lite = markedIceLite(offer.sdp)
        #expect(try SessionDescription(parsing: lite).iceLite)
        try pair.b.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: lite))
        #expect(pair.b.iceRole == "controlling")
        #expect(pair.a.iceRole == "controlling")
        let answer = try pair.b.createAnswer()
        try pair.b.setLocalDescription(answer)
        try pair.a.setRemoteDescription(answer)
        // A is really a full agent: libnice settles the role conflict (RFC 8445 §7.3.1.1)
        // check by check, and the call connects.
        #expect(await pair.connected())
    }

    /// Offering to an ICE-lite answerer we stay controlling.
    @Test func offeringToAnIceLiteAnswererStaysControlling() throws {
        let pair = try ConnectedPair()
        defer { pair.close() }
        try pair.negotiate(editAnswer: markedIceLite)
        #expect(pair.a.iceRole == "controlling")
        #expect(pair.b.iceRole == "controlled")
    }
}
