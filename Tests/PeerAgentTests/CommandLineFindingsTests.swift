// The command-line findings of issue 17, each as a user meets it: help per subcommand, checks before connecting (files, directories, addresses, router URL, PEER_ROUTER, PEER_STUN), --opt=value, stray words, the --json exit event on argument errors with t to 0.1 ms, hostile text escaped and cut, one message for --duration everywhere, a loopback's closed state said once, the log level (SIGTERM 143 and SIGINT 130: CallRobustnessTests, mid-call).
import Foundation
import Testing
import TestSupport

@Suite struct CommandLineFindingsTests {
    static var peer: String { SDPCommandTests.peer }

    static func run(_ args: [String], environment: [String: String] = ["PEER_ROUTER": "", "PEER_STUN": ""]) async throws -> TestServices.Run {
        try await TestServices.run(Self.peer, args, environment: environment, timeout: 30)
    }

    /// `peer SUB --help`, `-h` and `peer help SUB` print that subcommand's help and exit
    /// 0: its usage line and options, not another subcommand's.
    @Test func eachSubcommandHasItsOwnHelp() async throws {
        let offer = try await Self.run(["offer", "--help"])
        #expect(offer.status == 0, "\(offer.stderr)")
        #expect(offer.stdout.contains("peer offer  [options]") && offer.stdout.contains("--router URL") && offer.stdout.contains("exit codes:"))
        #expect(!offer.stdout.contains("peer answer [options]") && !offer.stdout.contains("--out-dir"), "offer's help shows only offer")
        let helpOffer = try await Self.run(["help", "offer"])
        #expect(helpOffer.status == 0 && helpOffer.stdout == offer.stdout)
        let answer = try await Self.run(["answer", "-h"])
        #expect(answer.status == 0 && answer.stdout.contains("peer answer [options]") && !answer.stdout.contains("peer offer  [options]"))
        let loopback = try await Self.run(["loopback", "--help"])
        #expect(loopback.status == 0 && loopback.stdout.contains("--out-dir") && !loopback.stdout.contains("--router"))
        let sdp = try await Self.run(["sdp", "-h"])
        #expect(sdp.status == 0 && sdp.stdout.contains("--answer") && sdp.stdout.contains("peer sdp offer.sdp"))
        let bogus = try await Self.run(["help", "dance"])
        #expect(bogus.status == 2 && bogus.stderr.contains("help: no command \"dance\""))
    }

    /// What can be checked is checked before connecting: exit 2 at once, naming the option
    /// (or environment variable) and the value.
    @Test func inputsAreCheckedBeforeConnecting() async throws {
        let dir = TestServices.temporaryDirectory("cli-findings")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage = dir + "/garbage.ivf"
        try Data((0..<64).map { UInt8($0 &* 37 & 0xFF) }).write(to: URL(fileURLWithPath: garbage))
        let router = ["--router", "ws://127.0.0.1:9/ws"]
        let cases: [([String], [String: String], String)] = [
            (["offer"] + router + ["--video", "ivf:/nonexistent.ivf"], [:], "--video \"ivf:/nonexistent.ivf\": expected a readable video file"),
            (["offer"] + router + ["--video", "y4m:/nonexistent.y4m"], [:], "--video \"y4m:/nonexistent.y4m\": expected a readable video file"),
            (["offer"] + router + ["--audio", "wav:/nonexistent.wav"], [:], "--audio \"wav:/nonexistent.wav\": expected a readable audio file"),
            (["offer"] + router + ["--video", "ivf:" + garbage], [:], "--video \"ivf:\(garbage)\": expected a readable video file"),
            (["offer"] + router + ["--video-out", "/nonexistent/dir/x.ivf"], [:],
             "--video-out \"/nonexistent/dir/x.ivf\": expected a file that can be written: no directory \"/nonexistent/dir\""),
            (["offer"] + router + ["--local-address", "notanip"], [:], "--local-address \"notanip\": expected an address of this host: not an IPv4 or IPv6 address"),
            (["offer"] + router + ["--local-address", "192.0.2.55"], [:], "--local-address \"192.0.2.55\": expected an address of this host: not an address of this host"),
            (["offer", "--router", "ws://"], [:], "--router \"ws://\": expected a ws:// or wss:// URL with a host"),
            (["offer", "--router", "ws://127.0.0.1:99999/ws"], [:], "--router \"ws://127.0.0.1:99999/ws\": expected a port in 1…65535"),
            (["offer"], ["PEER_ROUTER": "notaurl"], "PEER_ROUTER \"notaurl\": expected a ws:// or wss:// URL"),
            (["offer"] + router, ["PEER_STUN": "stun:127.0.0.1:3478, bogus"], "PEER_STUN \"bogus\""),
        ]
        for (args, env, message) in cases {
            let run = try await Self.run(args, environment: ["PEER_ROUTER": "", "PEER_STUN": ""].merging(env) { $1 })
            #expect(run.status == 2 && run.stderr.contains(message), "\(args) \(env): exit \(run.status), \(run.stderr)")
        }
        // Several STUN servers in PEER_STUN, by comma or space, are all taken: the run gets
        // as far as the (unreachable) router, exit 3.
        let port = try TakenPort.unused()
        let several = try await Self.run(["offer", "--router", "ws://127.0.0.1:\(port)/ws", "--timeout", "3"],
                                         environment: ["PEER_STUN": "stun:127.0.0.1:3478,stun:127.0.0.2:3478 stun:127.0.0.3:3478"])
        #expect(several.status == 3, "exit \(several.status): \(several.stderr)")
    }

    /// `--opt=value` works like `--opt value`; `=value` on a flag, and a stray word, are
    /// refused by name; `--json` gives an exit event for argument errors too, with `t` in
    /// ms to 0.1 ms.
    @Test func optionValuesStrayWordsAndTheJSONExitEvent() async throws {
        let port = try TakenPort.unused()
        let equals = try await Self.run(["answer", "--router=ws://127.0.0.1:\(port)/ws", "--timeout=3", "--video=pattern:160x120@15", "--json"])
        #expect(equals.status == 3, "--opt=value parsed, the router unreachable: exit \(equals.status) \(equals.stderr)")
        let flag = try await Self.run(["offer", "--router", "ws://x:1/ws", "--json=yes"])
        #expect(flag.status == 2 && flag.stderr.contains("--json takes no value, got \"--json=yes\""), "\(flag.stderr)")
        let stray = try await Self.run(["offer", "--router", "ws://x:1/ws", "extra"])
        #expect(stray.status == 2 && stray.stderr.contains("unexpected argument \"extra\": offer takes options only"), "\(stray.stderr)")
        let bad = try await Self.run(["offer", "--json", "--bitrate", "5"])
        #expect(bad.status == 2)
        let line = try #require(bad.stdout.split(separator: "\n").first { $0.contains("\"event\":\"exit\"") }, "no exit event: \(bad.stdout)")
        let exit = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(exit["code"] as? Int == 2 && (exit["reason"] as? String)?.contains("--bitrate \"5\"") == true, "\(exit)")
        #expect(line.range(of: #""t":[0-9]+(\.[0-9])?[,}]"#, options: .regularExpression) != nil, "t to 0.1 ms: \(line)")
    }

    /// Text from outside in a message: control characters as \u00XX, cut to 200
    /// characters with the whole length given.
    @Test func hostileTextIsEscapedAndCut() async throws {
        let dir = TestServices.temporaryDirectory("cli-hostile")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let escape = dir + "/escape.sdp", long = dir + "/long.sdp"
        try "v=0\r\nx\u{1B}[2J\u{07}\r\n".write(toFile: escape, atomically: true, encoding: .utf8)
        try ("v=0\r\n" + String(repeating: "A", count: 200_000) + "\r\n").write(toFile: long, atomically: true, encoding: .utf8)
        let a = try await Self.run(["sdp", escape])
        #expect(a.status == 2 && a.stderr.contains("x\\u001B[2J\\u0007") && !a.stderr.contains("\u{1B}"), "\(a.stderr.debugDescription)")
        let b = try await Self.run(["sdp", long])
        #expect(b.status == 2 && b.stderr.contains("… (200000 bytes)") && b.stderr.utf8.count < 1_000, "\(b.stderr.prefix(400))")
        let c = try await Self.run(["offer", "--router", "ws://x:1/ws", "--bogus\u{1B}[31m"])
        #expect(c.status == 2 && c.stderr.contains("unknown option \"--bogus\\u001B[31m\"") && !c.stderr.contains("\u{1B}"), "\(c.stderr.debugDescription)")
    }

    /// `--duration` has one range and one message in every command.
    @Test func loopbackAndOfferWordDurationAlike() async throws {
        let loopback = try await Self.run(["loopback", "--duration", "0"])
        let offer = try await Self.run(["offer", "--router", "ws://x:1/ws", "--duration", "0"])
        for run in [loopback, offer] {
            #expect(run.status == 2 && run.stderr.contains("--duration \"0\": expected a number in 0.1…86400"), "\(run.stderr)")
        }
    }

    /// A loopback says each side's `closed` once (data only: the check is of the states,
    /// and the parallel phase leaves too little CPU for media at full rate).
    @Test func aLoopbackSaysClosedOnce() async throws {
        let run = try await Self.run(["loopback", "--duration", "1", "--no-media", "--data-channel", "chat"])
        #expect(run.status == 0, "\(run.stderr)")
        for side in ["a", "b"] {
            let n = run.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("peer loopback: \(side): closed") }.count
            #expect(n == 1, "side \(side): closed said \(n) times\n\(run.stderr)")
        }
    }

    /// The log level: PEER_LOG=debug makes a loopback print libnice's checks and the DTLS
    /// handshake as timed, named lines (`0.123 ice: …`); `-q` leaves stderr empty; a level
    /// that is none is exit 2 naming where it came from.
    @Test func theLogLevelComesFromPEER_LOGOrTheOptions() async throws {
        let loopback = ["loopback", "--duration", "1", "--no-media", "--data-channel", "chat"]
        let debug = try await Self.run(loopback, environment: ["PEER_LOG": "debug"])
        #expect(debug.status == 0, "\(debug.stderr.suffix(2000))")
        let timed = debug.stderr.split(separator: "\n").filter { $0.range(of: #"^[0-9]+\.[0-9]{3} [a-z]+: "#, options: .regularExpression) != nil }
        #expect(timed.contains { $0.contains(" ice: ") && $0.contains("conncheck") }, "libnice's checks: \(timed.prefix(5))")
        #expect(timed.contains { $0.contains(" dtls: client: SSLv3/TLS write client hello") } && timed.contains { $0.contains(" dtls: handshake done") })
        let quiet = try await Self.run(loopback + ["-q"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "-q: \(quiet.stderr)")
        let loud = try await Self.run(loopback, environment: ["PEER_LOG": "loud"])
        #expect(loud.status == 2 && loud.stderr.contains("PEER_LOG \"loud\": expected error, warn, info, debug or trace"), "\(loud.stderr)")
        let option = try await Self.run(loopback + ["--log-level", "chatty"])
        #expect(option.status == 2 && option.stderr.contains("--log-level \"chatty\": expected error, warn, info, debug or trace"), "\(option.stderr)")
    }
}
