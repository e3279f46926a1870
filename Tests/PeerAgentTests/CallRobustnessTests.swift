import Foundation
import Testing
import TestSupport
import WampClient

#if canImport(Glibc)
import Glibc
#endif

/// Issue 9 acceptance beyond the happy path: start order, busy, timeouts, a router
/// killed mid-call, malformed signaling, SIGINT. Separate `peer` processes against the
/// real services (see CallTests.swift for the harness).
@Suite struct CallRobustnessTests {
    static let duration = 4.0

    /// The answerer starts first and waits (subscribed: its "ringing" state, then 0.5 s
    /// more); the offerer's first offer is answered, well before the 3 s republish.
    @Test func answererStartedBeforeTheOfferer() async throws {
        // A call holds slots for its peer processes (see CallSlots).
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("answererfirst")
            let args = try CallHarness.common(services, duration: Self.duration)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            try await Task.sleep(nanoseconds: 500_000_000)
            async let offerer = h.run("offerer", "offer", args)
            let runs = try await [answerer, offerer]
            CallChecks.exitedZero(runs)
            let published = try #require(runs[1].time(of: "milestone", "name", "offerPublished"), "\(runs[1].log)")
            let answered = try #require(runs[1].time(of: "milestone", "name", "answerReceived"), "\(runs[1].log)")
            print("call answererFirst: offer published at \(Int(published)) ms, answer received at \(Int(answered)) ms")
            #expect(answered - published < 2500, "the first offer should have been answered")
            for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] {
                try await CallChecks.media(from: s, to: r, label: "answererFirst")
            }
            h.remove()
        }
    }

    /// The answerer starts after the offerer published its first offer, which nobody
    /// hears; the republished offer (every 3 s) reaches it and the call completes.
    @Test func offererStartedBeforeTheAnswerer() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("offererfirst")
            let args = try CallHarness.common(services, duration: Self.duration)
            async let offerer = h.run("offerer", "offer", args)
            let published = await h.waitFor("offerer") { $0["event"] as? String == "milestone" && $0["name"] as? String == "offerPublished" }
            #expect(published, "\(h.liveEvents("offerer"))")
            try await Task.sleep(nanoseconds: 300_000_000)
            async let answerer = h.run("answerer", "answer", args)
            let runs = try await [answerer, offerer]
            CallChecks.exitedZero(runs)
            let first = try #require(runs[1].time(of: "milestone", "name", "offerPublished"))
            let answered = try #require(runs[1].time(of: "milestone", "name", "answerReceived"), "\(runs[1].log)")
            let answererJoined = runs[0].time(of: "milestone", "name", "joined") ?? -1
            let offerReceived = runs[0].time(of: "milestone", "name", "offerReceived") ?? -1
            print("call offererFirst: offer published at \(Int(first)) ms, answer received at \(Int(answered)) ms; "
                  + "answerer (spawn delay \(Int(runs[0].spawnDelay * 1000)) ms) joined at \(Int(answererJoined)) ms, "
                  + "offer received at \(Int(offerReceived)) ms")
            // Only a republished offer (3 s after the first) can have been answered.
            #expect(answered - first >= 2900, "answered \(answered - first) ms after the first offer")
            #expect(offerReceived > 0)
            for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] {
                try await CallChecks.media(from: s, to: r, label: "offererFirst")
            }
            h.remove()
        }
    }

    /// A second offerer on the same prefix during a call exits 8 (busy); the answerer
    /// reports the declined offer and the first call completes with all its media.
    @Test func secondOffererGetsBusyAndTheCallGoesOn() async throws {
        try await CallSlots.with(peers: 3) {
            let services = try await TestServices.shared()
            let h = CallHarness("busy")
            let duration = 5.0
            let args = try CallHarness.common(services, duration: duration)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args)
            #expect(await h.waitForState("answerer", "established"), "\(h.liveEvents("answerer"))")
            #expect(await h.waitForState("offerer", "established"), "\(h.liveEvents("offerer"))")
            let intruder = try await h.run("intruder", "offer", try CallHarness.common(services, duration: duration, timeout: 10))
            let runs = try await [answerer, offerer]
            print("call busy: second offerer exited \(intruder.status) after \(String(format: "%.2f", intruder.wallSeconds)) s")
            #expect(intruder.status == 8, "\(intruder.log)")
            #expect(intruder.exitEventCode == 8)
            #expect(intruder.events("exit").first?["state"] as? String == "busy")
            #expect(intruder.wallSeconds < 8, "busy must come back long before its --timeout 10, took \(intruder.wallSeconds) s")
            #expect(runs[0].events("busy").count >= 1, "the answerer reports the declined offer: \(runs[0].log)")
            CallChecks.exitedZero(runs)
            for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] {
                try await CallChecks.media(from: s, to: r, label: "busy")
            }
            h.remove()
        }
    }

    /// `--timeout 2` and nobody to talk to: `peer answer` (no offer) and `peer offer`
    /// (no answer) each exit 4 within a second after the timeout.
    ///
    /// The wall time of each process (from /proc, spawn to exit) is printed and must be
    /// at least 2 s. The one-second bound is checked against the moment the process had
    /// joined the router (its "joined" milestone), because `Call` starts counting --timeout
    /// right after that (once subscribed); joining took up to ~1 s with every suite running
    /// on 2 cores, which pushed the whole wall time to 3.07 s once. ("ringing" is no
    /// reference: the offerer reports it only after creating and publishing its offer.)
    @Test func timeoutWithNoPeerExitsFour() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("timeout")
            let h2 = CallHarness("timeout")  // another prefix: the two must not find each other
            let args = try CallHarness.common(services, timeout: 2)
            async let answerer = h.run("answerer", "answer", args)
            async let offerer = h2.run("offerer", "offer", args)
            let runs = try await [answerer, offerer]
            for r in runs {
                let exitT = try #require(r.events("exit").first?["t"] as? Double, "\(r.log)")
                let waiting = try #require(r.time(of: "milestone", "name", "joined"), "\(r.log)")
                print("call timeout: \(r.name) exited \(r.status) after \(String(format: "%.3f", r.wallSeconds)) s wall "
                      + "(joined at \(Int(waiting)) ms, exit event at \(Int(exitT)) ms)")
                #expect(r.status == 4, "\(r.log)")
                #expect(r.exitEventCode == 4)
                #expect(r.wallSeconds >= 2.0, "\(r.name): \(r.wallSeconds) s")
                // On the process's own clock (10 ms ticks of /proc start time cancel out):
                // it gave up 2 s after it joined and began to wait, and was gone within 1 s after that.
                let gaveUp = (exitT - waiting) / 1000
                #expect(gaveUp >= 2.0 && gaveUp <= 3.0, "\(r.name): gave up \(gaveUp) s after it began to wait")
                let gone = r.wallSeconds - waiting / 1000
                #expect(gone <= 3.0, "\(r.name): exited \(gone) s after it began to wait")
                #expect(exitT / 1000 <= r.wallSeconds + 0.05, "the exit event comes before the exit")
                let reason = r.events("exit").first?["reason"] as? String ?? ""
                #expect(reason.contains("within --timeout 2 s"), "\(reason)")
            }
            h.remove()
            h2.remove()
        }
    }

    /// SIGKILL of the router once both sides are established: media goes on peer to peer,
    /// both report the router "disconnected" and end normally at --duration with ≥ 90 %
    /// of the frames.
    @Test func killingTheRouterMidCallDoesNotStopTheMedia() async throws {
        try await CallSlots.with(peers: 3) {
            let h = CallHarness("routerkill")
            let servicesDir = h.path("services")
            // scripts/services start, its output through files (not TestServices.start's pipes,
            // see CallChecks.quiet): it runs for seconds.
            let started = try await CallChecks.quiet(TestServices.script, ["start", "--dir", servicesDir, "--only", "router"])
            #expect(started.status == 0, "\(started.stderr)")
            let services = try JSONDecoder().decode(ServiceInfo.self, from: Data(started.stdout.utf8))
            let duration = 5.0
            do {
                let routerPid = try #require(services.router_pid)
                let args = try CallHarness.common(services, duration: duration, stun: false)
                async let answerer = h.run("answerer", "answer", args)
                #expect(await h.waitForState("answerer", "ringing"))
                async let offerer = h.run("offerer", "offer", args)
                // Kill from the polling thread the moment both are established.
                let killed = try await TestServices.offload { () -> Bool in
                    guard h.waitForBlocking("answerer", CallHarness.isState("established")),
                          h.waitForBlocking("offerer", CallHarness.isState("established")) else { return false }
                    return kill(routerPid, SIGKILL) == 0
                }
                #expect(killed, "both established, then the router killed")
                let runs = try await [answerer, offerer]
                CallChecks.exitedZero(runs)
                for r in runs {
                    let established = try #require(r.time(of: "state", "state", "established"), "\(r.log)")
                    let lost = try #require(r.events("router").first { ($0["status"] as? String ?? "").hasPrefix("disconnected") },
                                            "no router disconnected event: \(r.log)")
                    let lostAt = try #require(lost["t"] as? Double)
                    let end = try #require(r.events("exit").first?["t"] as? Double)
                    print("call routerKill: \(r.name) established at \(Int(established)) ms, router lost at \(Int(lostAt)) ms, exit at \(Int(end)) ms")
                    #expect(lostAt > established)
                    // The call ends at --duration after "established" (ticks every 250 ms, plus closing;
                    // the side that established a little later may end first on the other's close_notify).
                    #expect(end - established >= duration * 1000 - 500 && end - established <= duration * 1000 + 1500,
                            "\(r.name): \(end - established) ms of call")
                }
                for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] {
                    try await CallChecks.media(from: s, to: r, label: "routerKill")
                }
            } catch {
                _ = try? await CallChecks.quiet(TestServices.script, ["stop", "--dir", servicesDir])
                throw error
            }
            let stopped = try await CallChecks.quiet(TestServices.script, ["stop", "--dir", servicesDir])
            #expect(stopped.status == 0, "\(stopped.stderr)")
            h.remove()
        }
    }

    /// Malformed signaling on the call's topics, published by the test's own WAMP client:
    /// while the answerer waits (a non-JSON offer, an offer whose SDP does not parse) and
    /// during the call (those two again, plus a candidate for an unknown mid). Each is
    /// reported as a `signalingError` event naming the problem; the call goes on and
    /// both processes exit 0 with all their media.
    @Test func malformedSignalingIsReportedAndTheCallGoesOn() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("malformed")
            // 6 s: the payloads must land while the call is on, even if this test's task
            // is scheduled late on a busy pool.
            let args = try CallHarness.common(services, duration: 6)
            let wamp = try await WampSession.join(WampConfiguration(url: try #require(services.router_url)))
            let notJSON = JSONValue.string("{this is not JSON")
            let badSDP = JSONValue.object(["type": .string("offer"), "sdp": .string("v=0\r\nbogus")])
            let badCandidate = JSONValue.string(#"{"candidate":"candidate:1 1 udp 2130706431 127.0.0.1 9 typ host","sdpMid":"zz","sdpMLineIndex":7}"#)
            func errors(_ name: String) -> [String] {
                h.liveEvents(name).filter { $0["event"] as? String == "signalingError" }.compactMap { $0["reason"] as? String }
            }

            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            _ = try await wamp.publish(h.prefix + ".offer", args: [notJSON], acknowledge: true)
            _ = try await wamp.publish(h.prefix + ".offer", args: [badSDP], acknowledge: true)
            // Published in order on one session: the second (bad SDP) is reported last.
            let reported = await h.waitFor("answerer", timeout: 10) {
                $0["event"] as? String == "signalingError" && ($0["reason"] as? String ?? "").contains("bogus")
            }
            #expect(reported, "\(errors("answerer"))")
            let beforeCall = errors("answerer")

            async let offerer = h.run("offerer", "offer", args)
            #expect(await h.waitForState("answerer", "established"))
            #expect(await h.waitForState("offerer", "established"))
            _ = try await wamp.publish(h.prefix + ".offer", args: [notJSON], acknowledge: true)
            _ = try await wamp.publish(h.prefix + ".offer", args: [badSDP], acknowledge: true)
            _ = try await wamp.publish(h.prefix + ".candidate", args: [badCandidate], acknowledge: true)
            await wamp.leave()
            let runs = try await [answerer, offerer]
            let answererErrors = runs[0].events("signalingError").compactMap { $0["reason"] as? String }
            let offererErrors = runs[1].events("signalingError").compactMap { $0["reason"] as? String }
            print("call malformed: answerer reported \(answererErrors)")
            print("call malformed: offerer reported \(offererErrors)")
            print("call malformed: answerer busy events \(runs[0].events("busy").map { "\($0["from"] ?? "-"): \($0["reason"] ?? "-")" })")

            // While waiting: both offers dropped with their reason.
            #expect(beforeCall.count == 2, "\(beforeCall)")
            #expect(beforeCall.first?.contains("not JSON") == true, "\(beforeCall)")
            #expect(beforeCall.last?.contains("bogus") == true, "the SDP error names the bad line: \(beforeCall)")
            // During the call: the answerer reports each of the three once, the offerer (which
            // ignores offers) the candidate, which is published to it too. (Counted by reason:
            // on a loaded machine a side has also reported a real trickled candidate that
            // libnice refused as a duplicate of one in the description; see the report.)
            let during = Array(answererErrors.dropFirst(2))
            #expect(during.filter { $0.contains("not JSON") }.count == 1, "\(during)")
            #expect(during.filter { $0.contains("bogus") }.count == 1, "\(during)")
            #expect(during.filter { $0.contains("unknown mid \"zz\"") }.count == 1, "\(during)")
            #expect(offererErrors.filter { $0.contains("unknown mid \"zz\"") }.count == 1, "\(offererErrors)")
            #expect(runs[0].events("busy").isEmpty, "garbage is no offer to decline as busy")
            #expect(runs[0].events("signalingError").allSatisfy { ($0["topic"] as? String ?? "").hasPrefix(h.prefix + ".") })

            CallChecks.exitedZero(runs)
            for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] {
                try await CallChecks.media(from: s, to: r, label: "malformed")
            }
            h.remove()
        }
    }

    /// SIGINT or SIGTERM to `peer answer` mid-call: it hangs up and exits 130 or 143 (128 +
    /// the signal, as shells report it) with files
    /// that are complete (vpxdec and opusinfo exit 0); the offerer hears the close and ends with 0.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalHangsUpWithValidFiles(signal: Int32) async throws {
        let name = signal == SIGINT ? "sigint" : "sigterm"
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness(name)
            let args = try CallHarness.common(services, duration: 20)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args)
            // Interrupt once the answerer has recorded at least a second of both media.
            let recording = await h.waitFor("answerer") {
                $0["event"] as? String == "frames" && ($0["video"] as? Int ?? 0) >= 15 && ($0["audio"] as? Int ?? 0) >= 50
            }
            #expect(recording, "\(h.liveEvents("answerer"))")
            let pid = try h.pid("answerer")
            let blocked = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
                .split(separator: "\n").filter { $0.hasPrefix("SigBlk") || $0.hasPrefix("SigIgn") } ?? []
            // The test process's threads block SIGINT/SIGTERM and the shell that starts `peer`
            // inherits that mask, but `peer` itself runs with SigBlk 0 (printed here), so the
            // signal arrives without any unblocking trick.
            print("call \(name): answerer \(pid) \(blocked)")
            #expect(kill(pid, signal) == 0)
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            print("call \(name): answerer exited \(a.status) after \(String(format: "%.2f", a.wallSeconds)) s, offerer \(o.status)")
            #expect(a.status == 128 + signal, "\(a.log)")
            #expect(a.exitEventCode == Int(128 + signal))
            #expect(a.wallSeconds < 10, "ended by the signal, not by --duration 20")
            #expect(o.status == 0, "\(o.log)")
            let offererEnd = o.events("exit").first?["reason"] as? String ?? ""
            #expect(offererEnd.contains("hung up"), "\(o.log)")
            let stats = try #require(a.stats(about: "offerer"), "\(a.log)")
            let ivf = try #require(stats["video"] as? String)
            let ogg = try #require(stats["audio"] as? String)
            let frames = try await CallChecks.decodedFrames(ivf)
            let info = try await CallChecks.tool("opusinfo", [ogg])
            #expect(info.status == 0, "opusinfo \(ogg): \(info.stdout) \(info.stderr)")
            let seconds = try await CallChecks.oggSeconds(ogg)
            print("call \(name): answerer recorded \(frames) frames, \(seconds) s of audio")
            #expect(frames >= 15, "at least the second of 15 fps video it reported before the signal")
            #expect(seconds >= 0.95, "at least the 50 packets of 20 ms it reported before the signal")
            h.remove()
        }
    }
}
