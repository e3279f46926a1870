// End-to-end quality from the frame markers checked against the test's own reading: latency against a packet capture and an ffmpeg decode, +100 ms through a delaying relay, missing frames under real loss against the marker gaps of the recorded file; and the 30 s call's --report opened in headless Chromium offline.
import Foundation
import Testing
import TestSupport

@Suite struct MarkerQualityTests {
    static let support = TestServices.root.appendingPathComponent("Tests/PeerAgentTests/Support").path
    static let markerTool = support + "/marker_tool.py"

    /// JSON objects of a JSON-lines file.
    static func lines(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The stats object of `type` (and `kind`) in a timeline's last line.
    static func last(_ timeline: String, _ type: String, kind: String? = nil) -> [String: Any]? {
        guard let stats = (lines(timeline).last?["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] else { return nil }
        return stats.values.first { $0["type"] as? String == type && (kind == nil || $0["kind"] as? String == kind) }
    }

    /// Runs the tool and returns its last stdout line as JSON.
    static func tool(_ arguments: [String], timeout: Double = 120) async throws -> [String: Any] {
        let r = try await TestServices.run("/usr/bin/python3", arguments, timeout: timeout)
        try #require(r.status == 0, "\(arguments.first ?? ""): \(r.stderr.suffix(800))")
        let line = try #require(r.stdout.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// A 30 s peer ↔ peer call on one host (320x240@30): the offerer's `peer-e2e` latency
    /// p50 is within 5 ms of the test's own figure — each frame's last packet as the
    /// kernel received it (an AF_PACKET capture on `lo`), minus the capture time in its
    /// marker (the recorded IVF decoded by ffmpeg, the marker read by the test). Then the
    /// call's `--report` opens in headless Chromium with no network: every plot has drawn
    /// and coloured pixels in its area of the screenshot and its axis labels; the
    /// `--format webrtc-internals` export of the same timeline is JSON of that shape.
    @Test func latencyMatchesAPacketCaptureAndTheReportOpensOffline() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("e2e-latency")
            defer { h.remove() }
            let sniffer = try JSONLineProcess("sniffer", "/usr/bin/python3", [MarkerQualityTests.markerTool, "sniff", "--iface", "lo",
                                                                             "--out", h.path("packets.jsonl"), "--seconds", "80"])
            defer { sniffer.kill() }
            _ = try await sniffer.next(timeout: 10, "ready") { $0["ready"] as? Bool == true }
            let common = try CallHarness.common(services, duration: 30, timeout: 20).map { $0 == "pattern:160x120@15" ? "pattern:320x240@30" : $0 }
            async let answerer = h.run("answerer", "answer", common, timeout: 80)
            #expect(await h.waitForState("answerer", "ringing"))
            let offerer = try await h.run("offerer", "offer", common + ["--stats-timeline", h.path("timeline.jsonl"),
                                                                       "--report", h.path("report.html")], timeout: 80)
            let a = try await answerer
            sniffer.kill()
            #expect(offerer.status == 0, "\(offerer.log)")
            #expect(a.status == 0, "\(a.log)")

            let e2e = try #require(Self.last(h.path("timeline.jsonl"), "peer-e2e"), "no peer-e2e in the timeline")
            let inbound = try #require(Self.last(h.path("timeline.jsonl"), "inbound-rtp", kind: "video"))
            let ssrc = try #require(inbound["ssrc"] as? Int)
            let reported = try #require(e2e["latencyP50Ms"] as? Double)
            #expect(e2e["clock"] as? String == "same-host")
            let own = try await Self.tool([MarkerQualityTests.markerTool, "latency", "--ivf", h.path("offerer.ivf"),
                                           "--packets", h.path("packets.jsonl"), "--ssrc", String(ssrc)])
            let independent = try #require(own["p50"] as? Double, "\(own)")
            let matched = own["matched"] as? Int ?? 0, frames = own["frames"] as? Int ?? 0
            print("e2e same host: peer p50 \(reported) ms, capture p50 \(independent) ms over \(matched) of \(frames) frames; \(e2e)")
            #expect(frames >= 800 && matched >= frames * 95 / 100, "\(own)")
            #expect(abs(reported - independent) <= 5, "peer \(reported) ms, independent \(independent) ms")
            #expect(e2e["framesMissing"] as? Int == 0)

            // The report of this 30 s call, in Chromium, offline.
            let check = try await Self.tool([MarkerQualityTests.support + "/report_check.py", h.path("report.html"), "--out", h.path("report.png")])
            let plots = try #require(check["plots"] as? [[String: Any]])
            #expect(plots.count == 6, "\(check)")
            #expect((check["requests"] as? [Any])?.isEmpty == true, "the page fetched \(check["requests"] ?? "?")")
            for plot in plots {
                let title = plot["title"] as? String ?? "?"
                let texts = plot["texts"] as? [String] ?? []
                let area = (plot["width"] as? Double ?? 0) * (plot["height"] as? Double ?? 0)
                #expect(plot["svg"] as? Bool == true && area > 100_000, "\(title): \(plot)")
                #expect(texts.contains("time (s)") && texts.contains { ["kbit/s", "frames/s", "ms", "packets"].contains($0) }, "\(title): \(texts)")
                #expect((plot["drawnPixels"] as? Int ?? 0) > 2_000 && (plot["colouredPixels"] as? Int ?? 0) > 100, "\(title): \(plot)")
            }
            let export = try await TestServices.run(CallHarness.peer, ["report", h.path("timeline.jsonl"), "--format", "webrtc-internals",
                                                                       "-o", h.path("internals.json")], timeout: 30)
            #expect(export.status == 0, "\(export.stderr)")
            let dump = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: h.path("internals.json")))) as? [String: Any]
            let connection = (dump?["PeerConnections"] as? [String: [String: Any]])?.values.first
            let stats = connection?["stats"] as? [String: [String: Any]] ?? [:]
            let fps = stats.first { $0.key.hasSuffix("-framesPerSecond") && $0.value["statsType"] as? String == "inbound-rtp" }?.value
            let values = (fps?["values"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Double] }
            #expect((values?.count ?? 0) >= 28, "one framesPerSecond value a second: \(fps ?? [:])")
        }
    }

    /// Across hosts the latency is offset-corrected from RTCP sender reports: on one host
    /// (where the truth is known: one clock, offset 0) the offerer with `--e2e-clock
    /// rtcp-sr` labels its figure `rtcp-sr-estimate`, estimates the offset within 3 ms of
    /// 0, and its p50 is within 5 ms of the answerer's exact `same-host` one.
    @Test func senderReportEstimateFindsTheSharedClock() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("e2e-sr")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 6, timeout: 20).map { $0 == "pattern:160x120@15" ? "pattern:320x240@30" : $0 }
            async let answerer = h.run("answerer", "answer", common + ["--stats-timeline", h.path("answerer-timeline.jsonl")], timeout: 60)
            #expect(await h.waitForState("answerer", "ringing"))
            let offerer = try await h.run("offerer", "offer", common + ["--stats-timeline", h.path("offerer-timeline.jsonl"), "--e2e-clock", "rtcp-sr"], timeout: 60)
            let a = try await answerer
            #expect(offerer.status == 0 && a.status == 0, "\(offerer.log)\n\(a.log)")
            let estimated = try #require(MarkerQualityTests.last(h.path("offerer-timeline.jsonl"), "peer-e2e"))
            let exact = try #require(MarkerQualityTests.last(h.path("answerer-timeline.jsonl"), "peer-e2e"))
            print("e2e clocks: estimated \(estimated), exact \(exact)")
            #expect(estimated["clock"] as? String == "rtcp-sr-estimate")
            #expect(exact["clock"] as? String == "same-host")
            #expect(abs(estimated["clockOffsetMs"] as? Double ?? 99) <= 3, "offset \(estimated["clockOffsetMs"] ?? "-")")
            let p50 = try #require(estimated["latencyP50Ms"] as? Double), truth = try #require(exact["latencyP50Ms"] as? Double)
            #expect(abs(p50 - truth) <= 5, "estimated p50 \(p50) ms, exact \(truth) ms")
        }
    }

    /// The answerer reaches the offerer only through TURN (`--ice-policy relay`), and its
    /// way to the TURN server passes a relay that holds each datagram 0 ms, then 100 ms:
    /// the offerer's latency p50 rises by 100 ± 10 ms (and the RTT by about as much).
    /// Without `--e2e-clock shared` the relay candidate would make it an RTCP SR estimate
    /// (the TURN server is on this host, the peer need not be).
    @Test func oneWayDelayOf100msRaisesLatencyBy100ms() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let turnPort = try #require(services.turn_port), user = try #require(services.turn_user),
                password = try #require(services.turn_password)
            var p50: [Double] = []
            for delay in [0, 100] {
                let h = CallHarness("e2e-delay\(delay)")
                defer { h.remove() }
                let relay = try JSONLineProcess("relay", "/usr/bin/python3", [MarkerQualityTests.support + "/udp_delay.py", "--to", "127.0.0.1:\(turnPort)",
                                                                              "--delay-ms", String(delay), "--seconds", "60"])
                defer { relay.kill() }
                let port = try #require(try await relay.next(timeout: 10, "port") { $0["port"] != nil }["port"] as? Int)
                let common = try CallHarness.common(services, duration: 6, timeout: 20, stun: false)
                    .map { $0 == "pattern:160x120@15" ? "pattern:320x240@30" : $0 }
                async let answerer = h.run("answerer", "answer", common + ["--ice-policy", "relay", "--turn", "turn:127.0.0.1:\(port)",
                                                                           "--turn-user", user, "--turn-password", password], timeout: 60)
                #expect(await h.waitForState("answerer", "ringing"))
                // The offerer sees the answerer's relay candidate: not "same host" by its
                // addresses, but the two processes share this host's clock.
                let offerer = try await h.run("offerer", "offer", common + ["--stats-timeline", h.path("timeline.jsonl"),
                                                                           "--e2e-clock", "shared"], timeout: 60)
                let a = try await answerer
                #expect(offerer.status == 0 && a.status == 0, "\(offerer.log)\n\(a.log)")
                let e2e = Self.last(h.path("timeline.jsonl"), "peer-e2e")
                let rtt = Self.last(h.path("timeline.jsonl"), "candidate-pair")?["currentRoundTripTime"] as? Double
                print("e2e via relay +\(delay) ms: \(e2e ?? [:]); rtt \(rtt ?? -1) s")
                p50.append(try #require(e2e?["latencyP50Ms"] as? Double))
            }
            let rise = p50[1] - p50[0]
            #expect(abs(rise - 100) <= 10, "p50 \(p50[0]) → \(p50[1]) ms: +\(rise)")
        }
    }

    /// `peer loopback` in a network namespace whose UDP drops 5 % at random (iptables
    /// statistic), with 1.5 s of total loss in the middle so that some frames are really
    /// lost (NACK recovers the random 5 % on its own): each side's `framesMissing` equals
    /// the frame numbers missing from the markers of its recorded file decoded by ffmpeg,
    /// and is not 0.
    @Test func missingFramesUnderLossEqualTheMarkerGapsOfTheFile() async throws {
        let ns = try await LossNamespace.create("peer-e2eloss-\(getpid())", loss: 5)
        let dir = TestServices.temporaryDirectory("e2eloss")
        defer {
            ns.delete()
            try? FileManager.default.removeItem(atPath: dir)
        }
        async let run = TestServices.run("/usr/sbin/ip", ["netns", "exec", ns.name, CallHarness.peer, "loopback", "--duration", "10",
                                                          "--video", "pattern:320x240@30", "--timeout", "20", "--out-dir", dir, "--json"], timeout: 60)
        try await Task.sleep(for: .seconds(4))
        #expect(try await ns.set(loss: 99.9))
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await ns.set(loss: 5))
        let r = try await run
        #expect(r.status == 0 || r.status == 7, "\(r.stderr.suffix(800))")  // 7: under 95 % of the frames, as lost
        let stats = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "stats" }
        for side in ["a", "b"] {
            let report = stats.first { $0["side"] as? String == side }.flatMap { ($0["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] }
            let e2e = report?.values.first { $0["type"] as? String == "peer-e2e" }
            let missing = try #require(e2e?["framesMissing"] as? Int, "side \(side): \(report ?? [:])")
            let file = try await Self.tool([MarkerQualityTests.markerTool, "markers", "\(dir)/loopback-\(side).ivf"])
            let gaps = try #require(file["gaps"] as? Int)
            print("e2e under loss, side \(side): framesMissing \(missing), file gaps \(gaps), frames \(file["frames"] ?? 0)")
            #expect(missing == gaps && missing > 0, "side \(side): peer says \(missing) missing, the file's markers \(gaps)")
        }
    }
}
