import Foundation
import Testing
import TestSupport

/// ICE restart under a real path failure: a network namespace of its own (scripts/lossnet)
/// holds a Crossbar.io router (scripts/services, inside it) and two `peer` processes
/// calling through it on the namespace's loopback; mid-call iptables drops every UDP
/// datagram and every TCP segment but the router's (so ICE-TCP cannot stand in) for 8 s.
/// ICE goes `disconnected` (after 2.5 s of silence), the first offerer restarts it 5 s
/// later (new credentials over the still-working signaling, 7.5–7.8 s into the outage),
/// the restarted checks fail until the path is back and connect then; media resumes and
/// both IVFs decode.
@Suite struct CallPathFailureTests {
    static let lossnet = TestServices.root.appendingPathComponent("scripts/lossnet").path
    static let services = TestServices.root.appendingPathComponent("scripts/services").path

    static func sh(_ argv: [String]) async throws -> TestServices.Run {
        try await TestServices.run(argv[0], Array(argv.dropFirst()), timeout: 60)
    }

    @Test func theAutomaticIceRestartReconnectsAfterTheUDPPathFailed() async throws {
        try await CallSlots.with(peers: 2) {
            let ns = "pathfail\(getpid())"
            let created = try await Self.sh([Self.lossnet, "create", ns, "--loss", "0"])
            try #require(created.status == 0, "\(created.stderr) (needs root: ip netns, iptables)")
            let dir = TestServices.temporaryDirectory("pathfail-router")
            defer {
                _ = try? TestServices.runBlocking(Self.services, ["stop", "--dir", dir])
                _ = try? TestServices.runBlocking(Self.lossnet, ["delete", ns])
                try? FileManager.default.removeItem(atPath: dir)
            }
            let started = try await Self.sh(["/usr/sbin/ip", "netns", "exec", ns, Self.services, "start", "--dir", dir, "--only", "router"])
            try #require(started.status == 0, "router in \(ns): \(started.stderr)")
            let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/services.json"))) as? [String: Any]
            let router = try #require(info?["router_url"] as? String)
            let routerPort = try #require(info?["router_port"] as? Int)

            let h = CallHarness("pathfail")
            let duration = 22.0, drop = 8.0
            let args = ["--router", router, "--local-address", "127.0.0.1", "--video", "pattern:160x120@15",
                        "--duration", String(duration), "--timeout", "10", "--json"]
            async let answerer = h.run("answerer", "answer", args, netns: ns, timeout: 90)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args, netns: ns, timeout: 90)
            #expect(await h.waitForState("offerer", "established"))
            try await Task.sleep(nanoseconds: 3_000_000_000)
            let rules = [["-p", "udp", "-j", "DROP"],
                         ["-p", "tcp", "!", "--dport", "\(routerPort)", "-m", "tcp", "!", "--sport", "\(routerPort)", "-j", "DROP"]]
            for rule in rules {
                let r = try await Self.sh(["/usr/sbin/ip", "netns", "exec", ns, "iptables", "-I", "INPUT", "-i", "lo"] + rule)
                #expect(r.status == 0, "iptables: \(r.stderr)")
            }
            try await Task.sleep(nanoseconds: UInt64(drop * 1e9))
            for rule in rules {
                _ = try await Self.sh(["/usr/sbin/ip", "netns", "exec", ns, "iptables", "-D", "INPUT", "-i", "lo"] + rule)
            }
            let runs = try await [answerer, offerer]
            CallChecks.exitedZero(runs)
            let o = runs[1], a = runs[0]
            let restart = o.events("iceRestart")
            let recovered = o.events("iceRecovered")
            let disconnected = o.events("connectionState").filter { $0["state"] as? String == "disconnected" }
            let restartAfter = ((restart.first?["t"] as? Double) ?? 0) - ((disconnected.first?["t"] as? Double) ?? 0)
            print("path failure: offerer disconnected at \(disconnected.first?["t"] ?? "-") ms, restarted \(String(format: "%.0f", restartAfter)) ms later "
                + "(\(restart.first?["reason"] ?? "-")), recovered \(recovered.first ?? [:]); answerer renegotiated \(a.events("renegotiated").map { $0["reason"] ?? "-" })")
            #expect(disconnected.count >= 1, "ICE went disconnected: \(o.log)")
            print("path failure: offerer restarts \(restart), connection states \(o.events("connectionState").map { "\($0["t"] ?? "-") \($0["state"] ?? "-")" })")
            #expect(restart.count == 1 && restartAfter >= 4900 && restartAfter < 6500, "restart \(restartAfter) ms after disconnected")
            #expect(recovered.first?["restarted"] as? Bool == true, "our restart reconnected: \(recovered)")
            #expect((recovered.first?["ms"] as? Double ?? 0) >= (drop - 2.8) * 1000, "not before the path was back")
            #expect(o.events("renegotiated").contains { $0["reason"] as? String == "ice-restart" && $0["offerer"] as? String == "local" })
            #expect(a.events("renegotiated").contains { $0["reason"] as? String == "ice-restart" && $0["offerer"] as? String == "remote" })
            for run in runs {
                let ivf = h.path("\(run.name).ivf")
                let times = try CallRenegotiationTests.frameTimes(ivf)
                let after = times.filter { $0 > (times.first ?? 0) + 3 + drop + 2 }
                print("path failure: \(run.name) recorded \(times.count) frames, \(after.count) after the path came back")
                #expect(after.count >= 15 * 5, "\(run.name): media resumed: \(after.count) frames")
                #expect(try await CallChecks.decodedFrames(ivf) == times.count)
            }
            h.remove()
        }
    }
}
