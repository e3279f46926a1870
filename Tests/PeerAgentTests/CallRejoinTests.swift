// Issue 34 acceptance: a `peer` killed mid-call and started again — a new process, so a new DTLS certificate — rejoins its room under the same user id; the survivor's connection goes through an ICE restart and a new DTLS association (RFC 8829 §5.11, RFC 8842 §5): media and a data channel back within 3 s, its recordings decodable across the change, and its events saying why.
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct CallRejoinTests {
    /// Which of the two is killed: the one that answered (joined second: the survivor heard
    /// its `callme` and offered) or the one that offered first (the survivor answered).
    enum Killed: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case answerer, offerer
        var testDescription: String { "the \(rawValue) is killed" }
    }

    /// The `t` (ms since its process started) of the first event of `p` after `after` that matches.
    static func time(_ p: JSONLineProcess, after: Double, _ match: ([String: Any]) -> Bool) -> Double? {
        p.events().first { ($0["t"] as? Double ?? -1) > after && match($0) }?["t"] as? Double
    }

    static func isEvent(_ name: String, _ fields: [String: String] = [:]) -> @Sendable ([String: Any]) -> Bool {
        { e in e["event"] as? String == name && fields.allSatisfy { e[$0.key] as? String == $0.value } }
    }

    /// Two `peer room` processes (fixed user ids `surv` and `back`, video and audio both
    /// ways, a data channel `chat`, recordings on) through the real router; `back` is
    /// SIGKILLed once the call runs and started again with the same user id. The survivor
    /// keeps its connection: it restarts ICE (it hears `callme` again), `back`'s new process
    /// answers with its new certificate, and a new DTLS association begins — the survivor's
    /// `dtlsRestart` event names the new fingerprint and the old one. Within 3 s of the
    /// survivor hearing the new process join: DTLS connected again, the first frame of the
    /// new video source, and a message through the re-made `chat` and back. The survivor's
    /// recording of `back` is one IVF that vpxdec decodes whole across the change, with
    /// frames of both processes (its final count well above the count at the kill), and
    /// its Ogg too.
    @Test(arguments: Killed.allCases)
    func aKilledPeerRestartedWithANewCertificateRejoinsTheSameConnection(_ killed: Killed) async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let dir = TestServices.temporaryDirectory("rejoin-\(killed.rawValue)")
            defer { if ProcessInfo.processInfo.environment["PEER_KEEP_CALL_FILES"] == nil { try? FileManager.default.removeItem(atPath: dir) } }
            let prefix = "test.rejoin.\(UUID().uuidString.prefix(8).lowercased())"
            let room = "r\(UUID().uuidString.prefix(6).lowercased())"
            let common = try CallHarness.common(services, duration: 60, timeout: 20)
                + ["--prefix", prefix, "--room", room, "--data-channel", "chat"]
            func start(_ name: String, _ user: String, _ extra: [String]) throws -> JSONLineProcess {
                try JSONLineProcess(name, CallHarness.peer, ["room"] + common + extra
                    + ["--user", user, "--video-out", "\(dir)/\(name).ivf", "--audio-out", "\(dir)/\(name).ogg"], stdin: true)
            }
            let ringing: ([String: Any]) -> Bool = { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }
            // The first to join offers to the second (it hears the second's callme).
            var survivor: JSONLineProcess
            var back: JSONLineProcess
            if killed == .answerer {
                survivor = try start("surv", "surv", ["--control", "stdin"])
                _ = try await survivor.next(timeout: 15, "ringing", ringing)
                back = try start("back1", "back", ["--data-echo"])
            } else {
                back = try start("back1", "back", ["--data-echo"])
                _ = try await back.next(timeout: 15, "ringing", ringing)
                survivor = try start("surv", "surv", ["--control", "stdin"])
            }
            defer { survivor.kill(); back.kill() }
            let established = Self.isEvent("state", ["state": "established", "peer": "back"])
            _ = try await survivor.next(timeout: 20, "established", established)
            let chatOpen = Self.isEvent("datachannel", ["label": "chat", "state": "open", "peer": "back"])
            _ = try await survivor.next(timeout: 10, "chat open", chatOpen)
            try survivor.send(["action": "send", "label": "chat", "text": "before"])
            _ = try await survivor.next(timeout: 5, "echo before", Self.isEvent("message", ["text": "before", "peer": "back"]))
            // Some seconds of media from the first process.
            _ = try await survivor.next(timeout: 10, "frames") { e in e["event"] as? String == "frames" && (e["video"] as? Int ?? 0) >= 30 }

            back.kill()
            #expect(try await back.exitStatus(timeout: 10) == -SIGKILL)
            let framesAtKill = survivor.events().last { $0["event"] as? String == "frames" }?["video"] as? Int ?? 0
            let killedAt = survivor.events().last?["t"] as? Double ?? 0
            try await Task.sleep(nanoseconds: 1_000_000_000)
            back = try start("back2", "back", ["--data-echo", "--duration", "6"])

            // The survivor hears the new process join, restarts ICE, and a new DTLS association begins.
            let joined = try await survivor.next(timeout: 20, "peerJoined again", Self.isEvent("peerJoined", ["user": "back"]))
            let joinedAt = try #require(joined["t"] as? Double)
            let restart = try await survivor.next(timeout: 10, "dtlsRestart", Self.isEvent("dtlsRestart", ["peer": "back"]))
            let newPrint = try #require(restart["fingerprint"] as? String), oldPrint = try #require(restart["previousFingerprint"] as? String)
            #expect(newPrint.hasPrefix("sha-256 ") && oldPrint.hasPrefix("sha-256 ") && newPrint != oldPrint, "\(restart)")
            #expect(restart["offerer"] as? String == "local" && restart["association"] as? Int == 1, "\(restart)")
            #expect((restart["reason"] as? String ?? "").contains("new DTLS fingerprint"))
            // The re-made channel opens; a message goes through it and back.
            _ = try await survivor.next(timeout: 5, "chat open again", chatOpen)
            try survivor.send(["action": "send", "label": "chat", "text": "after"])
            let echo = try await survivor.next(timeout: 5, "echo after", Self.isEvent("message", ["text": "after", "peer": "back"]))
            let echoedAt = try #require(echo["t"] as? Double)
            let dtlsAt = try #require(Self.time(survivor, after: joinedAt, Self.isEvent("milestone", ["name": "dtlsConnected", "peer": "back"])))
            let frameAt = try #require(Self.time(survivor, after: joinedAt, Self.isEvent("milestone", ["name": "firstRemoteFrame", "peer": "back"])))
            print("rejoin (\(killed.rawValue) killed): after the survivor heard the new process join: DTLS connected +\(Int(dtlsAt - joinedAt)) ms, "
                + "first video frame +\(Int(frameAt - joinedAt)) ms, message through the re-made channel and back +\(Int(echoedAt - joinedAt)) ms "
                + "(killed \(Int(joinedAt - killedAt)) ms before the join)")
            #expect(dtlsAt - joinedAt <= 3000 && frameAt - joinedAt <= 3000 && echoedAt - joinedAt <= 3000)
            // The same on the new process's own clock, from its router join (WELCOME): the
            // survivor's video reaches it and the message arrives there (and is echoed).
            let backJoined = try #require(Self.time(back, after: -1, Self.isEvent("milestone", ["name": "joined"])))
            let frameEvent = try await back.next(timeout: 5, "first frame", Self.isEvent("milestone", ["name": "firstRemoteFrame", "peer": "surv"]))
            let backFrame = try #require(frameEvent["t"] as? Double)
            let backMessage = try #require(Self.time(back, after: -1, Self.isEvent("message", ["text": "after", "peer": "surv"])))
            print("rejoin (\(killed.rawValue) killed): the new process, from its join: first video frame +\(Int(backFrame - backJoined)) ms, "
                + "the message +\(Int(backMessage - backJoined)) ms")
            #expect(backFrame - backJoined <= 3000 && backMessage - backJoined <= 3000)
            // The old channel was reported closed, between the kill and the new one's open.
            let closed = survivor.events().filter(Self.isEvent("datachannel", ["label": "chat", "state": "closed", "peer": "back"]))
            #expect(closed.count == 1, "\(closed)")

            // The new process ends (--duration 6): the survivor closes the link, writes its stats.
            #expect(try await back.exitStatus(timeout: 30) == 0, "\(back.stderr)")
            let stats = try await survivor.next(timeout: 10, "stats about back", Self.isEvent("stats", ["peer": "back"]))
            survivor.kill()
            let ivf = try #require(stats["video"] as? String)
            let report = try #require(stats["report"] as? [String: Any])
            let inbound = try #require((report["stats"] as? [String: [String: Any]])?.values.first {
                $0["type"] as? String == "inbound-rtp" && $0["kind"] as? String == "video"
            })
            let written = try #require(inbound["framesWritten"] as? Int)
            let decoded = try await CallChecks.decodedFrames(ivf)
            print("rejoin (\(killed.rawValue) killed): \(ivf): \(decoded) frames decode, \(framesAtKill) written before the kill")
            #expect(decoded == written, "the IVF holds every frame written, decodable across the change")
            #expect(decoded >= framesAtKill + 45, "about 5 s of the new process's 15 fps: \(decoded) vs \(framesAtKill) at the kill")
            #expect(ivf.hasSuffix("/surv-back.ivf"))
            let ogg = try await CallChecks.oggSeconds(dir + "/surv-back.ogg")
            #expect(ogg > 5, "\(ogg) s of audio")
            // Events say why: ICE restart for the rejoin, the renegotiation, the channel reopened.
            #expect(survivor.events().contains { $0["event"] as? String == "iceRestart" && ($0["reason"] as? String ?? "").contains("again") })
        }
    }

    /// `legacy` (one call per prefix): a peer killed and started again in the same role is
    /// taken back once the survivor's connection is down (PROTOCOL.md: another
    /// certificate while connected is another caller). A new answerer answers the
    /// offerer's automatic ICE restart (after 5 s `disconnected`); a new offerer's offer
    /// (new session, fingerprint and credentials) is applied by the answerer to its call's
    /// connection. Either way the survivor's `dtlsRestart` event says why, the data channel
    /// (re-made by the side whose offer began the new association) carries a message and
    /// its echo, and the survivor's recording decodes across the change.
    @Test(arguments: Killed.allCases)
    func aKilledLegacyPeerStartedAgainIsTakenBackOnceTheConnectionIsDown(_ killed: Killed) async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let dir = TestServices.temporaryDirectory("rejoin-legacy-\(killed.rawValue)")
            defer { if ProcessInfo.processInfo.environment["PEER_KEEP_CALL_FILES"] == nil { try? FileManager.default.removeItem(atPath: dir) } }
            let prefix = "test.rejoinlegacy.\(UUID().uuidString.prefix(8).lowercased())"
            let common = try CallHarness.common(services, duration: 60, timeout: 20) + ["--prefix", prefix, "--data-channel", "chat"]
            func start(_ name: String, _ role: String, _ extra: [String]) throws -> JSONLineProcess {
                try JSONLineProcess(name, CallHarness.peer, [role] + common + extra
                    + ["--video-out", "\(dir)/\(name).ivf", "--audio-out", "\(dir)/\(name).ogg"], stdin: true)
            }
            let ringing: ([String: Any]) -> Bool = { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }
            let survivorRole = killed == .answerer ? "offer" : "answer", backRole = killed == .answerer ? "answer" : "offer"
            var back: JSONLineProcess
            let survivor: JSONLineProcess
            if killed == .answerer {
                back = try start("back1", backRole, ["--data-echo"])
                _ = try await back.next(timeout: 15, "ringing", ringing)
                survivor = try start("surv", survivorRole, ["--control", "stdin"])
            } else {
                survivor = try start("surv", survivorRole, ["--control", "stdin"])
                _ = try await survivor.next(timeout: 15, "ringing", ringing)
                back = try start("back1", backRole, ["--data-echo"])
            }
            defer { survivor.kill(); back.kill() }
            let peerName = killed == .answerer ? "answerer" : "offerer"
            _ = try await survivor.next(timeout: 20, "established") { $0["event"] as? String == "state" && $0["state"] as? String == "established" }
            let chatOpen = Self.isEvent("datachannel", ["label": "chat", "state": "open", "peer": peerName])
            _ = try await survivor.next(timeout: 10, "chat open", chatOpen)
            try survivor.send(["action": "send", "label": "chat", "text": "before"])
            _ = try await survivor.next(timeout: 5, "echo before", Self.isEvent("message", ["text": "before"]))
            _ = try await survivor.next(timeout: 10, "frames") { e in e["event"] as? String == "frames" && (e["video"] as? Int ?? 0) >= 30 }

            back.kill()
            #expect(try await back.exitStatus(timeout: 10) == -SIGKILL)
            let framesAtKill = survivor.events().last { $0["event"] as? String == "frames" }?["video"] as? Int ?? 0
            // The survivor's connection goes down (no packet for 2.5 s); then the new process starts.
            _ = try await survivor.next(timeout: 10, "disconnected", Self.isEvent("connectionState", ["state": "disconnected"]))
            back = try start("back2", backRole, ["--data-echo", "--duration", "6"])
            let restart = try await survivor.next(timeout: 20, "dtlsRestart", Self.isEvent("dtlsRestart", ["peer": peerName]))
            #expect(restart["fingerprint"] as? String != restart["previousFingerprint"] as? String)
            #expect(restart["offerer"] as? String == (killed == .answerer ? "local" : "remote"), "\(restart)")
            let chatBack = killed == .answerer ? chatOpen : Self.isEvent("datachannel", ["label": "chat", "state": "opened", "peer": peerName])
            _ = try await survivor.next(timeout: 5, "chat again", chatBack)
            if killed == .offerer { _ = try await survivor.next(timeout: 5, "chat open again", chatOpen) }
            try survivor.send(["action": "send", "label": "chat", "text": "after"])
            _ = try await survivor.next(timeout: 5, "echo after", Self.isEvent("message", ["text": "after"]))
            #expect(!survivor.events().contains { $0["event"] as? String == "busy" })

            #expect(try await back.exitStatus(timeout: 30) == 0, "\(back.stderr)")
            let end = try await survivor.next(timeout: 10, "stats", Self.isEvent("stats", ["peer": peerName]))
            let ivf = try #require(end["video"] as? String)
            let decoded = try await CallChecks.decodedFrames(ivf)
            print("rejoin legacy (\(killed.rawValue) killed): \(ivf): \(decoded) frames decode, \(framesAtKill) written before the kill")
            #expect(decoded >= framesAtKill + 45)
            #expect(try await survivor.exitStatus(timeout: 10) == 0, "the survivor's call ends with its peer's close: \(survivor.stderr)")
        }
    }
}
