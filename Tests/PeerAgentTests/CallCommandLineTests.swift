import Foundation
import Testing
import TestSupport
import WampClient
@testable import PeerAgent
@testable import PeerCall

/// The signaling payload forms of PROTOCOL.md: descriptions as object or JSON string,
/// candidates as JSON strings, and clear reasons for what cannot be used.
@Suite struct SignalingPayloadTests {
    let sdp = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

    @Test func aDescriptionIsAcceptedAsObjectAndAsJSONString() throws {
        let object = JSONValue.object(["type": "offer", "sdp": .string(sdp), "extra": 1])
        #expect(try Signaling.description(from: object) == SessionDescriptionInit(type: .offer, sdp: sdp))
        let string = JSONValue.string(object.serialized)
        #expect(try Signaling.description(from: string) == SessionDescriptionInit(type: .offer, sdp: sdp))
        // What we publish parses back to the same value, in both forms.
        let d = SessionDescriptionInit(type: .answer, sdp: sdp)
        #expect(try Signaling.description(from: Signaling.value(d, asString: false)) == d)
        #expect(try Signaling.description(from: Signaling.value(d, asString: true)) == d)
        if case .string = Signaling.value(d, asString: true) {} else { Issue.record("room form must be a JSON string") }
    }

    @Test func unusableDescriptionsNameTheProblem() {
        let cases: [(JSONValue, String)] = [
            (.string("not json {"), "is a string but not JSON"),
            (.int(5), "is a number, expected a JSON object or a JSON string"),
            (.string("[1,2]"), "string holds an array"),
            (.object(["sdp": .string(sdp)]), "without a \"type\" string"),
            (.object(["type": "pranswer", "sdp": .string(sdp)]), "type \"pranswer\", expected \"offer\" or \"answer\""),
            (.object(["type": "offer"]), "without an \"sdp\" string"),
        ]
        for (value, expected) in cases {
            #expect(throws: Signaling.PayloadError.self) { try Signaling.description(from: value) }
            do { _ = try Signaling.description(from: value) } catch {
                #expect(error.reason.contains(expected), "\(value): \(error.reason)")
            }
        }
    }

    @Test func candidatesTravelAsJSONStringsAndEmptyMeansEndOfCandidates() throws {
        let c = IceCandidateInit(candidate: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host", sdpMid: "0",
                                 sdpMLineIndex: 0, usernameFragment: "abcd")
        let wire = Signaling.value(c)
        guard case let .string(text) = wire else { Issue.record("candidate must be a JSON string"); return }
        #expect(text.contains("\"sdpMid\":\"0\"") && text.contains("\"sdpMLineIndex\":0"))
        #expect(try Signaling.candidate(from: wire) == c)
        let end = try Signaling.candidate(from: .string(#"{"candidate":"","sdpMid":"0","sdpMLineIndex":0}"#))
        #expect(end.isEndOfCandidates)
        // The object form (some clients) is accepted too; a non-string candidate is not.
        #expect(try Signaling.candidate(from: .object(["candidate": .string(c.candidate), "sdpMid": "0"])).sdpMid == "0")
        #expect(throws: Signaling.PayloadError.self) { try Signaling.candidate(from: .object(["candidate": 7])) }
        #expect(throws: Signaling.PayloadError.self) { try Signaling.candidate(from: .object(["sdpMid": "0"])) }
    }

    @Test func theOfferIdentityIsTheOriginSessionIdAndVersion() {
        #expect(Call.identity(sdp) == "1 2")
        #expect(Call.identity("v=0\r\ns=-\r\n") == nil)
    }
}

/// `--video`/`--audio` values and the other option values a user types.
@Suite struct MediaSpecTests {
    @Test func videoSpecs() throws {
        #expect(try VideoSpec(parsing: "pattern") == .pattern(width: 640, height: 480, frameRate: 30))
        #expect(try VideoSpec(parsing: "pattern:320x240@15") == .pattern(width: 320, height: 240, frameRate: 15))
        #expect(try VideoSpec(parsing: "pattern:160x120") == .pattern(width: 160, height: 120, frameRate: 30))
        #expect(try VideoSpec(parsing: "y4m:/tmp/a.y4m") == .y4m(path: "/tmp/a.y4m"))
        #expect(try VideoSpec(parsing: "ivf:x.ivf") == .ivf(path: "x.ivf"))
        #expect(try VideoSpec(parsing: "none") == VideoSpec.none)
        for bad in ["pattern:0x0", "pattern:640x480@0", "pattern:640x", "camera", "pattern:1x1@30", "y4m:"] {
            #expect(throws: CallOptionError.self) { try VideoSpec(parsing: bad) }
        }
        #expect(try VideoSpec(parsing: "pattern:320x240@15").description == "pattern:320x240@15")
    }

    @Test func audioSpecs() throws {
        #expect(try AudioSpec(parsing: "tone") == .tone(frequency: 440))
        #expect(try AudioSpec(parsing: "tone:1000") == .tone(frequency: 1000))
        #expect(try AudioSpec(parsing: "wav:a.wav") == .wav(path: "a.wav"))
        #expect(try AudioSpec(parsing: "none") == AudioSpec.none)
        for bad in ["tone:5", "tone:x", "mic", "wav:"] {
            #expect(throws: CallOptionError.self) { try AudioSpec(parsing: bad) }
        }
    }

    @Test func recordingPathsPerPeer() {
        var o = CallOptions(role: .room, router: "ws://x/ws")
        #expect(o.videoPath(peer: "bob", several: true) == "remote-bob.ivf")
        o.videoOut = "/tmp/rec/alice.ivf"
        #expect(o.videoPath(peer: "bob", several: true) == "/tmp/rec/alice-bob.ivf")
        #expect(o.videoPath(peer: "bob", several: false) == "/tmp/rec/alice.ivf")
        #expect(o.audioPath(peer: "../x", several: false) == "remote-___x.ogg")
    }
}

/// The `peer offer|answer|room` command line as a user runs it.
@Suite struct CallCommandLineTests {
    static var peer: String { SDPCommandTests.peer }

    @Test func helpShowsEveryOptionWithAnExampleAndTheExitCodes() async throws {
        let run = try await TestServices.run(Self.peer, ["--help"])
        #expect(run.status == 0)
        for option in ["--router", "--realm", "--auth", "--profile", "--prefix", "--room", "--user", "--stun", "--turn",
                       "--turn-user", "--turn-password", "--ice-policy", "--trickle", "--vanilla", "--video", "--audio",
                       "--video-out", "--audio-out", "--bitrate", "--duration", "--timeout", "--min-frames", "--json", "--repeat",
                       "--stats", "PEER_ROUTER", "PEER_REALM", "PEER_STUN", "peer offer", "peer answer", "peer room",
                       "peer loopback", "peer sdp"] {
            #expect(run.stdout.contains(option), "--help does not mention \(option)")
        }
        for code in ["0 call done", "2 bad arguments", "3 router unreachable", "4 no offer/answer", "5 ICE failed",
                     "6 DTLS failed", "7 fewer frames", "8 busy", "130 interrupted"] {
            #expect(run.stdout.contains(code), "--help does not explain exit \(code)")
        }
        #expect(run.stdout.contains("examples:"))
    }

    @Test func badArgumentsExitTwoNamingTheOptionAndValue() async throws {
        let cases: [([String], String)] = [
            (["offer", "--router", "ws://127.0.0.1:1/ws", "--video", "camera"], "--video \"camera\""),
            (["answer", "--router", "http://x"], "--router \"http://x\""),
            (["offer"], "--router URL is required"),
            (["room", "--router", "ws://x/ws", "--auth", "basic:u"], "--auth \"basic:u\""),
            (["offer", "--router", "ws://x/ws", "--duration", "-1"], "--duration \"-1\""),
            (["offer", "--router", "ws://x/ws", "--ice-policy", "host"], "--ice-policy \"host\""),
            (["offer", "--router", "ws://x/ws", "--turn", "turn:127.0.0.1:3478"], "needs --turn-user and --turn-password"),
            (["offer", "--router", "ws://x/ws", "--bogus"], "unknown option \"--bogus\""),
            (["answer", "--router", "ws://x/ws", "--repeat", "0"], "--repeat \"0\": expected a number of calls"),
            (["answer", "--router", "ws://x/ws", "--repeat", "always"], "--repeat \"always\""),
            (["room", "--router", "ws://x/ws", "--repeat", "3"], "--repeat is for offer and answer"),
        ]
        for (args, message) in cases {
            let run = try await TestServices.run(Self.peer, args, environment: ["PEER_ROUTER": ""])
            #expect(run.status == 2, "\(args): exit \(run.status)")
            #expect(run.stderr.contains(message), "\(args): \(run.stderr)")
        }
    }

    @Test func anUnreachableRouterExitsThreeAndSaysWhere() async throws {
        let port = try TakenPort.unused()
        let run = try await TestServices.run(Self.peer, ["answer", "--router", "ws://127.0.0.1:\(port)/ws", "--timeout", "5", "--json"])
        #expect(run.status == 3, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("127.0.0.1:\(port)"))
        // Timed by the process itself (the exit event's t, ms since it started): a refused
        // connection fails at once, not after --timeout.
        let exit = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "exit" }
        #expect(exit?["code"] as? Int == 3)
        let t = try #require(exit?["t"] as? Double)
        #expect(t < 2_000, "exit after \(t) ms")
    }

    @Test func theEnvironmentGivesTheRouterDefault() async throws {
        let port = try TakenPort.unused()
        let run = try await TestServices.run(Self.peer, ["offer", "--timeout", "3"],
                                             environment: ["PEER_ROUTER": "ws://127.0.0.1:\(port)/ws"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("ws://127.0.0.1:\(port)/ws"))
    }
}
