import Foundation
import Testing
@testable import ICE

/// One candidate line and the fields it must parse to (nil: it must be refused with `error`).
struct CandidateCase: Sendable, CustomTestStringConvertible {
    let source: String
    let line: String
    var type: Candidate.Kind? = nil
    var transport: String? = nil
    var address: String? = nil
    var port: Int? = nil
    var kind: Candidate.AddressKind? = nil
    var tcpType: String? = nil
    var related: String? = nil
    var extensions: [String] = []
    var error: String? = nil
    var testDescription: String { "\(source): \(line)" }
}

@Suite struct CandidateLineTests {
    static let cases: [CandidateCase] = [
        // Chromium 156 (Tests/SDPTests/Fixtures/chromium-offer-av.sdp)
        .init(source: "chromium", line: "a=candidate:166335674 1 udp 2122194687 127.0.0.1 49986 typ host generation 0 network-id 3 network-cost 50",
              type: .host, transport: "udp", address: "127.0.0.1", port: 49986, kind: .ipv4, extensions: ["generation", "network-id", "network-cost"]),
        .init(source: "chromium", line: "a=candidate:3632722778 1 tcp 1518154495 fd00::2 9 typ host tcptype active generation 0 network-id 2",
              type: .host, transport: "tcp", address: "fd00::2", port: 9, kind: .ipv6, tcpType: "active", extensions: ["tcptype", "generation", "network-id"]),
        .init(source: "chromium", line: "a=candidate:3865891494 1 tcp 1518288127 ::1 9 typ host tcptype active generation 0 network-id 4 network-cost 50",
              type: .host, address: "::1", kind: .ipv6, tcpType: "active"),
        // Chromium with mDNS hiding on (browsers' default), and a browser srflx with ufrag
        .init(source: "chromium-mdns", line: "candidate:2437072876 1 udp 2122260223 9c8d53b5-0ba4-4b94-b3b9-3c7a5b6bbf2c.local 56130 typ host generation 0 ufrag Xc2p network-id 1",
              type: .host, address: "9c8d53b5-0ba4-4b94-b3b9-3c7a5b6bbf2c.local", kind: .mdns, extensions: ["generation", "ufrag", "network-id"]),
        .init(source: "firefox", line: "candidate:1 1 UDP 1686052607 203.0.113.4 61665 typ srflx raddr 192.168.1.2 rport 61665",
              type: .srflx, transport: "UDP", address: "203.0.113.4", port: 61665, related: "192.168.1.2"),
        .init(source: "browser-relay", line: "candidate:3 1 udp 41819903 198.51.100.9 52100 typ relay raddr 203.0.113.4 rport 61665 generation 0",
              type: .relay, related: "203.0.113.4", extensions: ["generation"]),
        // aiortc 1.16 (fixtures)
        .init(source: "aiortc", line: "a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 37728 typ host",
              type: .host, transport: "udp", address: "127.0.0.1", port: 37728, kind: .ipv4),
        .init(source: "aiortc", line: "a=candidate:d0bcf3d9c29a2bc887618212a1623bfa 1 udp 2130706431 fd00::2 35613 typ host",
              type: .host, address: "fd00::2", kind: .ipv6),
        // GStreamer webrtcbin / libnice 0.1.21 (fixtures)
        .init(source: "libnice", line: "a=candidate:1 1 UDP 2015364095 127.0.0.1 41936 typ host", type: .host, transport: "UDP", port: 41936),
        .init(source: "libnice", line: "a=candidate:3 1 TCP 1010828287 127.0.0.1 41973 typ host tcptype passive",
              type: .host, transport: "TCP", port: 41973, tcpType: "passive"),
        .init(source: "libnice", line: "a=candidate:2 1 TCP 1015022591 127.0.0.1 9 typ host tcptype active", transport: "TCP", tcpType: "active"),
        .init(source: "prflx", line: "candidate:4 1 udp 1853824767 198.18.0.2 40000 typ prflx raddr 0.0.0.0 rport 0", type: .prflx),
        // Malformed
        .init(source: "malformed", line: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ", error: "at least 8 fields"),
        .init(source: "malformed", line: "candidate:1 0 udp 2130706431 127.0.0.1 5000 typ host", error: "component \"0\""),
        .init(source: "malformed", line: "candidate:1 1 udp 0 127.0.0.1 5000 typ host", error: "priority \"0\""),
        .init(source: "malformed", line: "candidate:1 1 udp 2130706431 127.0.0.1 70000 typ host", error: "port \"70000\""),
        .init(source: "malformed", line: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ srflx raddr 1.2.3.4 rport x", error: "rport \"x\""),
        .init(source: "malformed", line: "candidate:1 1 tcp 2130706431 127.0.0.1 5000 typ host tcptype both", error: "tcptype \"both\""),
        .init(source: "malformed", line: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host generation", error: "a value after \"generation\""),
        .init(source: "malformed", line: "candidate:0123456789012345678901234567890123 1 udp 1 127.0.0.1 5000 typ host", error: "foundation"),
    ]

    @Test(arguments: cases)
    func lineParsesToItsFieldsOrTheSpecificError(_ c: CandidateCase) {
        do {
            let candidate = try Candidate(parsing: c.line)
            #expect(c.error == nil, "parsed although it should be refused")
            if let v = c.type { #expect(candidate.type == v) }
            if let v = c.transport { #expect(candidate.transport == v) }
            if let v = c.address { #expect(candidate.address == v) }
            if let v = c.port { #expect(candidate.port == v) }
            if let v = c.kind { #expect(candidate.addressKind == v) }
            if let v = c.tcpType { #expect(candidate.tcpType == v) }
            if let v = c.related { #expect(candidate.relatedAddress == v) }
            if !c.extensions.isEmpty { #expect(candidate.extensions.map(\.name) == c.extensions) }
            // Writing it back gives the same line (without "a=").
            let expected = c.line.hasPrefix("a=") ? String(c.line.dropFirst(2)) : c.line
            #expect(candidate.sdpValue == expected)
        } catch {
            guard let expected = c.error else { Issue.record("refused: \(error)"); return }
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    /// libnice's own candidate lines (what our agent announces) parse back through our parser.
    @Test func libniceGeneratedLinesParse() async throws {
        let a = try Peer.loopback(controlling: true)
        defer { a.agent.close() }
        try a.agent.gather()
        #expect(await a.waitGathered())
        let candidates = a.candidates
        #expect(candidates.contains { $0.transport.uppercased() == "UDP" })
        #expect(candidates.contains { $0.isTCP && $0.tcpType == "passive" })
        for c in candidates {
            #expect(try Candidate(parsing: c.sdpValue) == c)
            #expect(c.component == 1 && c.priority > 0 && !c.foundation.isEmpty)
        }
    }
}
