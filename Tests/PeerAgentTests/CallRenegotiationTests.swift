import Foundation
import Media
import Testing
import TestSupport
import WampClient

/// Renegotiation in `peer offer|answer|room` calls between `peer` processes through the
/// real router and STUN server (`shared/PROTOCOL.md` "Renegotiation"; harness in
/// CallTests.swift): hold and unhold from either side in both profiles, ICE restart on a
/// healthy call, `--control stdin`.
@Suite struct CallRenegotiationTests {
    /// Who holds, in which profile.
    enum Holder: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case legacyOfferer, legacyAnswerer, roomLowerId, roomHigherId
        var testDescription: String { rawValue }
        var isRoom: Bool { self == .roomLowerId || self == .roomHigherId }
    }

    static let duration = 12.0
    static let fps = 15.0

    /// Frame times of an IVF file, seconds from its first frame (from the RTP timestamps
    /// the sender's clock gave them, 90 kHz).
    static func frameTimes(_ path: String) throws -> [Double] {
        let reader = try IVFReader(path: path)
        var times: [Int64] = []
        while let frame = try reader.next() { times.append(frame.timestamp) }
        guard let first = times.first else { return [] }
        return times.map { Double($0 - first) / 90_000 }
    }

    /// The call states a run reported, in order (repeats folded).
    static func states(_ run: PeerRun) -> [String] {
        var out: [String] = []
        for e in run.events("state") where e["peer"] is NSNull || e["peer"] == nil {
            if let s = e["state"] as? String, out.last != s { out.append(s) }
        }
        for e in run.events("state") where !(e["peer"] is NSNull) && e["peer"] != nil {
            if let s = e["state"] as? String, out.last != s { out.append(s) }
        }
        return out
    }

    /// 12 s calls, `--at 3:hold --at 7:unhold` on the holder: the held side's video reaches
    /// the holder with no frame between 3.5 s and 7 s and ≥ 90 % of the frames outside
    /// that window; the holder's video flows all along; both IVFs decode; both sides report
    /// `hold` then `established`; both Ogg files last the call within 5 %.
    @Test(arguments: Holder.allCases)
    func holdAndUnhold(_ holder: Holder) async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("hold-\(holder.rawValue)")
            let args = try CallHarness.common(services, duration: Self.duration)
            let hold = ["--at", "3:hold", "--at", "7:unhold"]
            let holdRun: PeerRun, heldRun: PeerRun
            if holder.isRoom {
                let room = "room-\(UUID().uuidString.prefix(6).lowercased())"
                let common = args + ["--room", room]
                let (holderName, heldName) = holder == .roomLowerId ? ("ua", "ub") : ("ub", "ua")
                async let x = h.run(holderName, "room", common + ["--user", holderName] + hold)
                async let y = h.run(heldName, "room", common + ["--user", heldName])
                (holdRun, heldRun) = try await (x, y)
            } else {
                let answerHolds = holder == .legacyAnswerer
                async let answerer = h.run("answerer", "answer", args + (answerHolds ? hold : []))
                #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
                async let offerer = h.run("offerer", "offer", args + (answerHolds ? [] : hold))
                let runs = try await [answerer, offerer]
                (holdRun, heldRun) = answerHolds ? (runs[0], runs[1]) : (runs[1], runs[0])
            }
            CallChecks.exitedZero([holdRun, heldRun])
            let atHolder = h.path(holder.isRoom ? "\(holdRun.name)-\(heldRun.name).ivf" : "\(holdRun.name).ivf")
            let atHeld = h.path(holder.isRoom ? "\(heldRun.name)-\(holdRun.name).ivf" : "\(heldRun.name).ivf")
            let held = try Self.frameTimes(atHolder), holding = try Self.frameTimes(atHeld)
            let inWindow = held.filter { $0 > 3.5 && $0 < 7.0 }
            let outside = held.count - inWindow.count
            let expectedOutside = Self.fps * (Self.duration - 4)
            let longestGap = zip(held.dropFirst(), held).map { $0 - $1 }.max() ?? 0
            print("hold \(holder.rawValue): held side's video at the holder \(held.count) frames, \(inWindow.count) in 3.5–7 s, "
                + "longest gap \(String(format: "%.2f", longestGap)) s; holder's video at the held side \(holding.count) frames")
            #expect(inWindow.isEmpty, "frames during the hold at \(inWindow.prefix(5))")
            #expect(Double(outside) >= 0.9 * expectedOutside, "\(outside) frames outside the hold, expected ≥ 90 % of \(expectedOutside)")
            #expect(Double(holding.count) >= 0.9 * Self.fps * Self.duration, "the holder keeps sending: \(holding.count) frames")
            #expect(try await CallChecks.decodedFrames(atHolder) == held.count)
            #expect(try await CallChecks.decodedFrames(atHeld) == holding.count)
            for run in [holdRun, heldRun] {
                let states = Self.states(run)
                #expect(states.contains("hold"), "\(run.name): \(states)")
                if let hold = states.firstIndex(of: "hold") {
                    #expect(states[hold...].contains("established"), "\(run.name) back to established: \(states)")
                }
                let renegotiations = run.events("renegotiated")
                #expect(renegotiations.count == 2, "\(run.name): \(renegotiations)")
                let offerer = run.name == holdRun.name ? "local" : "remote"
                #expect(renegotiations.allSatisfy { $0["offerer"] as? String == offerer })
                #expect(renegotiations.compactMap { $0["reason"] as? String } == ["hold", "unhold"], "\(renegotiations)")
                let ogg = h.path(holder.isRoom ? "\(run.name)-\(run.name == holdRun.name ? heldRun.name : holdRun.name).ogg" : "\(run.name).ogg")
                let seconds = try await CallChecks.oggSeconds(ogg)
                #expect(abs(seconds - Self.duration) <= 0.05 * Self.duration, "\(run.name): Ogg \(seconds) s for a \(Self.duration) s call")
            }
            if let first = holdRun.events("renegotiated").first {
                #expect(first["before"] as? [String: String] == ["audio": "sendrecv", "video": "sendrecv"])
                #expect(first["after"] as? [String: String] == ["audio": "sendonly", "video": "sendonly"])
                #expect((first["ms"] as? Double ?? 1e9) < 1000)
            }
            h.remove()
        }
    }

    /// `--at 5:ice-restart` on a healthy call: new credentials both ways, ICE connects
    /// again, and video keeps flowing with no gap over 0.5 s; the call ends normally.
    @Test func iceRestartOnAHealthyCallKeepsMediaFlowing() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("icerestart")
            let args = try CallHarness.common(services, duration: 9)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args + ["--at", "5:ice-restart"])
            let runs = try await [answerer, offerer]
            CallChecks.exitedZero(runs)
            for run in runs {
                let times = try Self.frameTimes(h.path("\(run.name).ivf"))
                let gap = zip(times.dropFirst(), times).map { $0 - $1 }.max() ?? 99
                let r = run.events("renegotiated")
                print("ice-restart: \(run.name) \(times.count) frames, longest gap \(String(format: "%.3f", gap)) s, \(r)")
                #expect(gap <= 0.5, "\(run.name): longest gap \(gap) s")
                #expect(r.count == 1 && r.first?["reason"] as? String == "ice-restart", "\(run.log)")
                // Candidates went out again after the restart, with the new ufrag.
                let local = run.events("candidate").filter { $0["direction"] as? String == "local" }
                #expect(local.count >= 2, "\(run.name): \(local.count) local candidates")
            }
        }
    }

    /// `--control stdin`: commands on standard input are carried out and each answered by
    /// an `action` event with its id; a line that is not a command gets `ok: false` and
    /// changes nothing.
    @Test func controlCommandsOnStandardInput() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("control")
            let args = try CallHarness.common(services, duration: 7)
            // Lines arrive once the call is up, through a fifo: 1 s after established, and 2 s later.
            let fifo = h.path("control.fifo")
            #expect(mkfifo(fifo, 0o600) == 0)
            let writer = Task.detached {
                _ = await h.waitForState("offerer", "established")
                try? await Task.sleep(nanoseconds: 1_000_000_000)
                let out = FileHandle(forWritingAtPath: fifo)
                out?.write(Data("not json\n{\"action\":\"hold\",\"id\":1}\n".utf8))
                try? await Task.sleep(nanoseconds: 2_000_000_000)
                out?.write(Data("{\"action\":\"fly\"}\n{\"action\":\"unhold\",\"id\":\"two\"}\n".utf8))
                try? out?.close()
            }
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.runWithInput("offerer", "offer", args + ["--control", "stdin"], input: fifo)
            let runs = try await [answerer, offerer]
            await writer.value
            CallChecks.exitedZero(runs)
            let actions = runs[1].events("action")
            print("control: \(actions)")
            #expect(actions.count == 4, "\(runs[1].log)")
            #expect(actions.map { $0["ok"] as? Bool } == [false, true, false, true])
            #expect(actions[1]["id"] as? String == "1" && actions[1]["action"] as? String == "hold")
            #expect(actions[3]["id"] as? String == "two" && actions[3]["action"] as? String == "unhold")
            #expect((actions[0]["detail"] as? String ?? "").contains("not JSON"))
            #expect((actions[2]["detail"] as? String ?? "").contains("unknown action \"fly\""))
            #expect(runs[1].events("renegotiated").compactMap { $0["reason"] as? String } == ["hold", "unhold"])
            #expect(Self.states(runs[0]).contains("hold"))
            h.remove()
        }
    }

    /// Glare, 20 times in one call: both sides are told `hold` (then `unhold`) at the same
    /// instant on `--control stdin`, so both re-offer at once. Each time one offer wins —
    /// the polite side (legacy: the answerer) rolls its own back and answers, the impolite
    /// one ignores the colliding offer — and both end each round in the same state (`hold`
    /// after a hold round, `established` after an unhold round) with nothing left pending
    /// (no re-offer rolled back for want of an answer); media flows after the last round.
    @Test func glareTwentyTimesEachResolvedByPerfectNegotiation() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let dir = TestServices.temporaryDirectory("glare")
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let prefix = "test.glare.\(UUID().uuidString.prefix(8).lowercased())"
            let rounds = 20
            var args = try CallHarness.common(services, duration: 30, timeout: 5) + ["--prefix", prefix, "--control", "stdin"]
            args += ["--video", "pattern:160x120@15"]
            let answerer = try JSONLineProcess("answerer", CallHarness.peer, ["answer"] + args + ["--video-out", dir + "/a.ivf", "--audio-out", dir + "/a.ogg"], stdin: true)
            defer { answerer.kill() }
            _ = try await answerer.next(timeout: 15, "ringing") { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }
            let offerer = try JSONLineProcess("offerer", CallHarness.peer, ["offer"] + args + ["--video-out", dir + "/o.ivf", "--audio-out", dir + "/o.ogg"], stdin: true)
            defer { offerer.kill() }
            for side in [answerer, offerer] {
                _ = try await side.next(timeout: 15, "established") { $0["event"] as? String == "state" && $0["state"] as? String == "established" }
            }
            func lastState(_ p: JSONLineProcess) -> String? {
                p.events().last { $0["event"] as? String == "state" }?["state"] as? String
            }
            var agreed = 0
            for round in 0..<rounds {
                let action = round % 2 == 0 ? "hold" : "unhold"
                try answerer.send(["action": action])
                try offerer.send(["action": action])
                let want = action == "hold" ? "hold" : "established"
                var settled = false
                for _ in 0..<100 where !settled {
                    try await Task.sleep(nanoseconds: 20_000_000)
                    settled = lastState(answerer) == want && lastState(offerer) == want
                }
                if settled { agreed += 1 }
                #expect(settled, "round \(round) (\(action)): answerer \(lastState(answerer) ?? "-"), offerer \(lastState(offerer) ?? "-")")
                try await Task.sleep(nanoseconds: 200_000_000)
            }
            try answerer.send(["action": "hangup"])
            let statuses = (try await answerer.exitStatus(timeout: 20), try await offerer.exitStatus(timeout: 20))
            let a = answerer.events(), o = offerer.events()
            func failures(_ events: [[String: Any]], _ text: String) -> Int {
                events.filter { $0["event"] as? String == "renegotiationFailed" && ($0["reason"] as? String ?? "").contains(text) }.count
            }
            let politeRollbacks = failures(a, "rolled back for"), impoliteIgnores = failures(o, "impolite side and ignore")
            let wrongRoles = failures(o, "rolled back for") + failures(a, "impolite side and ignore")
            let timeouts = failures(a, "no answer within") + failures(o, "no answer within")
            let exchanges = (a.filter { $0["event"] as? String == "renegotiated" }.count, o.filter { $0["event"] as? String == "renegotiated" }.count)
            print("glare: \(agreed)/\(rounds) rounds agreed; the polite answerer rolled back \(politeRollbacks) times, the impolite "
                + "offerer ignored \(impoliteIgnores) colliding offers; exchanges answerer \(exchanges.0), offerer \(exchanges.1); "
                + "exits \(statuses)")
            #expect(agreed == rounds)
            #expect(politeRollbacks >= rounds / 2, "most rounds really collided: \(politeRollbacks)")
            #expect(politeRollbacks == impoliteIgnores, "each collision seen from both sides")
            #expect(wrongRoles == 0 && timeouts == 0)
            #expect(statuses.0 == 0 && statuses.1 == 0, "exits \(statuses); answerer: \(answerer.stderr)\nofferer: \(offerer.stderr)")
            #expect(try await CallChecks.decodedFrames(dir + "/o.ivf") > 0)
            #expect(try await CallChecks.decodedFrames(dir + "/a.ivf") > 0)
        }
    }

    /// Bad re-offers in a real call: a WAMP client of the test takes the offerer's offer off
    /// the router, and mid-call publishes it again as a re-offer (same `o=` id, a higher
    /// version) with its m-sections swapped, with one removed, without BUNDLE and with
    /// another fingerprint. The answerer refuses each with a `signalingError` naming the
    /// offending line and a `renegotiationFailed`, never renegotiates, and the call goes on
    /// to a normal end with its media.
    @Test func badReoffersAreRefusedNamingTheLineAndTheCallGoesOn() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("badreoffer")
            let args = try CallHarness.common(services, duration: 6)
            let wamp = try await WampSession.join(WampConfiguration(url: try #require(services.router_url)))
            let offers = try await wamp.subscribe(h.prefix + ".offer")
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args)
            var original: String?
            for await event in offers {
                if let sdp = event.args.first?["sdp"]?.stringValue { original = sdp; break }
            }
            let sdp = try #require(original)
            #expect(await h.waitForState("answerer", "established"))
            let lines = sdp.components(separatedBy: "\r\n")
            func version(_ text: String, _ v: Int) -> String {
                text.components(separatedBy: "\r\n").map { line in
                    guard line.hasPrefix("o=") else { return line }
                    var f = line.split(separator: " ").map(String.init)
                    f[2] = String(v)
                    return f.joined(separator: " ")
                }.joined(separator: "\r\n")
            }
            let firstM = try #require(lines.firstIndex { $0.hasPrefix("m=") })
            let secondM = try #require(lines.indices.first { $0 > firstM && lines[$0].hasPrefix("m=") })
            let session = Array(lines[..<firstM]), audio = Array(lines[firstM..<secondM]), video = Array(lines[secondM...].filter { !$0.isEmpty })
            let swapped = (session + video + audio).joined(separator: "\r\n") + "\r\n"
            let removed = (session + audio).joined(separator: "\r\n") + "\r\n"
            let noBundle = sdp.components(separatedBy: "\r\n").filter { !$0.hasPrefix("a=group:BUNDLE") }.joined(separator: "\r\n")
            let otherPrint = sdp.components(separatedBy: "\r\n").map {
                $0.hasPrefix("a=fingerprint:sha-256 ") ? "a=fingerprint:sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":") : $0
            }.joined(separator: "\r\n")
            let bad: [(String, String)] = [(swapped, "m-section 0 (m=video"), (removed, "removes m-section 1"),
                                           (noBundle, "drops the BUNDLE group"), (otherPrint, "a=fingerprint:sha-256 AB:AB")]
            for (i, (text, _)) in bad.enumerated() {
                let offer = JSONValue.object(["type": .string("offer"), "sdp": .string(version(text, 1000 + i))])
                _ = try await wamp.publish(h.prefix + ".offer", args: [offer], acknowledge: true)
            }
            await wamp.leave()
            let runs = try await [answerer, offerer]
            CallChecks.exitedZero(runs)
            let errors = runs[0].events("signalingError").compactMap { $0["reason"] as? String }
            let failed = runs[0].events("renegotiationFailed")
            print("bad re-offers: answerer reported \(errors)")
            for (_, expected) in bad {
                #expect(errors.filter { $0.contains("re-offer from offerer refused") && $0.contains(expected) }.count == 1, "\(expected) in \(errors)")
            }
            #expect(failed.count == bad.count)
            #expect(runs[0].events("renegotiated").isEmpty && runs[1].events("renegotiated").isEmpty)
            #expect(!Self.states(runs[0]).contains("hold"))
            for (s, r) in [(runs[0], runs[1]), (runs[1], runs[0])] { try await CallChecks.media(from: s, to: r, label: "badreoffer") }
            h.remove()
        }
    }
}
