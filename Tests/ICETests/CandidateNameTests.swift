// Remote candidates given by name (mDNS `.local`): resolved off the caller's thread with a
// timeout, dropped with a reason when the resolver stalls, in a network namespace whose
// resolver sends every name to a DNS server that never answers.
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct CandidateNameTests {
    /// Two ice-probe agents in a namespace whose `/etc/netns/NS/resolv.conf` names a DNS
    /// "server" on 127.0.0.1:53 that reads queries and never answers (a resolver sending
    /// `.local` to unicast DNS stalls 5 s × attempts). A is given B's candidates plus one
    /// with a `.local` name, and end-of-candidates: the call that adds the named one
    /// returns at once, A and B connect on the others, and A reports the named one
    /// dropped about 2 s later ("did not resolve within 2000 ms").
    @Test(.timeLimit(.minutes(1)))
    func aStalledLookupNeverBlocksAndTheCandidateIsDroppedAfterTheTimeout() async throws {
        signal(SIGPIPE, SIG_IGN)
        let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ice-probe").path
        try #require(FileManager.default.isExecutableFile(atPath: probe), "\(probe) not built")
        let ns = "peer-mdns-\(getpid())"
        let etc = "/etc/netns/\(ns)"
        var processes: [LineProcess] = []
        defer {
            for p in processes { p.kill() }
            _ = try? runCommand(["ip", "netns", "del", ns])
            try? FileManager.default.removeItem(atPath: etc)
        }
        try await TestServices.offload {
            do {
                _ = try runCommand(["ip", "netns", "add", ns])
            } catch {
                throw NamespacesUnavailable(cause: error)
            }
            _ = try runCommand(["ip", "-n", ns, "link", "set", "lo", "up"])
            try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
            try "nameserver 127.0.0.1\noptions timeout:5 attempts:2\n".write(toFile: "\(etc)/resolv.conf", atomically: true, encoding: .utf8)
        }
        let blackHole = try LineProcess(name: "dns", ["ip", "netns", "exec", ns, "python3", "-u", "-c", """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 53))
            print("listening", flush=True)
            while True:
                data, peer = s.recvfrom(2048)
                print("query", len(data), flush=True)
            """])
        processes.append(blackHole)
        #expect(await eventually(within: 5) { blackHole.lines.contains("listening") }, "\(blackHole.transcript)")
        let a = try LineProcess(name: "A", ["ip", "netns", "exec", ns, probe, "controlling", "stun:127.0.0.1:9", "--local-address", "127.0.0.1"])
        let b = try LineProcess(name: "B", ["ip", "netns", "exec", ns, probe, "controlled", "stun:127.0.0.1:9", "--local-address", "127.0.0.1"])
        processes += [a, b]
        func credentials(_ p: LineProcess) -> String? { p.lines.first { $0.contains("\"ufrag\"") } }
        #expect(await eventually(within: 10) { credentials(a) != nil && credentials(b) != nil && b.lines.contains { $0.contains("\"gathering\":\"complete\"") } },
                "\(a.transcript)\n\(b.transcript)")
        a.send(try #require(credentials(b)))
        b.send(try #require(credentials(a)))
        for line in a.lines where line.contains("\"candidate\"") { b.send(line) }
        b.send(#"{"gathering":"complete"}"#)

        let named = "candidate:9 1 udp 2122260223 1f2e3d4c-0000-4000-8000-123456789abc.local 40000 typ host"
        let sentAt = Date()
        a.send(#"{"candidate":"\#(named)"}"#)
        #expect(await eventually(within: 1) { a.lines.contains { $0.contains("\"added\"") && $0.contains(".local") } },
                "adding a named candidate blocked: \(a.transcript)")
        let returnedAfter = Date().timeIntervalSince(sentAt)
        for line in b.lines where line.contains("\"candidate\"") { a.send(line) }
        a.send(#"{"gathering":"complete"}"#)
        #expect(await eventually(within: 10) { a.lines.contains { $0.contains("\"dropped\"") } }, "\(a.transcript)")
        let droppedAfter = Date().timeIntervalSince(sentAt)
        let dropped = a.objects.first { $0["dropped"] != nil }
        print("named candidate: added after \(Int(returnedAfter * 1000)) ms, dropped after \(Int(droppedAfter * 1000)) ms: \(dropped?["reason"] ?? "-")")
        #expect(returnedAfter < 0.5)
        #expect(droppedAfter >= 1.9 && droppedAfter < 4, "dropped after \(droppedAfter) s")
        #expect((dropped?["reason"] as? String)?.contains("did not resolve within 2000 ms") == true)
        #expect(blackHole.lines.contains { $0.hasPrefix("query") }, "the lookup never reached the stalled DNS server: \(blackHole.transcript)")
        // The other candidates connect; end-of-candidates waited for the name and did not fail the agent.
        #expect(await eventually(within: 10) { a.lines.contains { $0.contains("\"state\":\"connected\"") || $0.contains("\"state\":\"completed\"") } },
                "\(a.transcript)")
        #expect(!a.lines.contains { $0.contains("\"state\":\"failed\"") })
    }
}
