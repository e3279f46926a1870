// The transport of a peer connection: a relay-only connection through TURN (RFC 8656) and
// what close() releases after a failure (sockets, files).
import Foundation
import ICE
import Media
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

/// TURN relay and the release of transport resources over a ``ConnectedPair``.
@Suite struct PeerConnectionTransportTests {
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
        let boundBefore = boundLoopbackUDPPorts(ports)
        let openBefore = PeerConnectionTests.openFiles().filter { $0.hasPrefix(dir) }
        let filesBefore = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        pair.close()
        // Sockets and files are released on the loop and media threads (within the 0.3 s this always allowed).
        _ = await eventually(within: 0.3) {
            boundLoopbackUDPPorts(ports).isEmpty && PeerConnectionTests.openFiles().allSatisfy { !$0.hasPrefix(dir) }
        }
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
