import Testing
@testable import ICE

/// STUN/TURN URLs on which the FuzzICE harness's round trip (parse → `description` → parse)
/// broke.
@Suite struct IceServerRoundTripTests {
    /// "[[x]" named host "[x", whose canonical form "stun:[x:3478" does not parse.
    @Test func bracketInsideTheHostIsRefused() {
        #expect(throws: IceServerError(url: "stun:[[x]", expected: "a host name or address")) { try IceServer("stun:[[x]") }
        #expect(throws: IceServerError(url: "turn:a]b", expected: "a host name or address")) { try IceServer("turn:a]b") }
    }

    @Test func bracketedAddressStillParses() throws {
        let s = try IceServer("stun:[2001:db8::1]:3479")
        #expect(s.host == "2001:db8::1")
        #expect(try IceServer(s.description) == s)
    }
}
