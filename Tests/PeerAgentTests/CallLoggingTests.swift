// The log of a real call through the router: --log-level debug shows WAMP messages, libnice's connectivity checks and the DTLS handshake in order, each line timed and named; --progress draws the status line; the default output has none of it.
import Foundation
import Testing
import TestSupport

@Suite struct CallLoggingTests {
    /// The offerer runs with `--log-level debug --progress`, the answerer with the
    /// defaults. The offerer's stderr: timed lines (`S.mmm component: …`, times never
    /// going back) with `wamp: → HELLO` and `← WELCOME`, `ice:` connectivity checks, the
    /// DTLS handshake from `read client hello` (it is the DTLS server) through `write
    /// server hello` to `handshake done`, in that order; the status line (`\r`, erase,
    /// `kbit/s in`). The answerer's stderr: only `peer:` lines.
    @Test func debugShowsTheStepsInOrderAndTheDefaultStaysQuiet() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("logging")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 2.5)
            async let answerer = h.run("answerer", "answer", common)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + ["--log-level", "debug", "--progress"])
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            let lines = o.stderr.components(separatedBy: "\n").flatMap { $0.components(separatedBy: "\r") }
            let timed: [(t: Double, component: String, text: String)] = lines.compactMap { line in
                guard line.range(of: #"^[0-9]+\.[0-9]{3} [a-z]+: "#, options: .regularExpression) != nil,
                      let space = line.firstIndex(of: " "), let t = Double(line[..<space]) else { return nil }
                let rest = line[line.index(after: space)...]
                guard let colon = rest.firstIndex(of: ":") else { return nil }
                return (t, String(rest[..<colon]), String(rest[rest.index(colon, offsetBy: 2)...]))
            }
            print("logging: offerer \(timed.count) timed lines; by component \(Dictionary(grouping: timed, by: \.component).mapValues(\.count))")
            #expect(zip(timed, timed.dropFirst()).allSatisfy { $0.t <= $1.t + 0.002 }, "times never go back (to the ms, across threads)")
            func first(_ component: String, _ text: String) -> Int? { timed.firstIndex { $0.component == component && $0.text.contains(text) } }
            let hello = first("wamp", "→ HELLO"), welcome = first("wamp", "← WELCOME")
            let check = first("ice", "conncheck")
            // The answerer chose a=setup:active: the offerer is the DTLS server.
            let clientHello = first("dtls", "server: SSLv3/TLS read client hello"), serverHello = first("dtls", "server: SSLv3/TLS write server hello")
            let done = first("dtls", "handshake done")
            #expect(hello != nil && welcome != nil && check != nil && clientHello != nil && serverHello != nil && done != nil,
                    "\(timed.filter { $0.component != "ice" }.prefix(40).map { "\($0.t) \($0.component): \($0.text)" })")
            if let hello, let welcome, let check, let clientHello, let serverHello, let done {
                #expect(hello < welcome && welcome < check && check < clientHello && clientHello < serverHello && serverHello < done)
            }
            #expect(o.stderr.contains("\r\u{1B}[K") && o.stderr.contains("kbit/s in"), "the status line")
            let answererLines = a.stderr.split(separator: "\n")
            #expect(!answererLines.isEmpty && answererLines.allSatisfy { $0.hasPrefix("peer: ") }, "\(a.stderr)")
        }
    }
}
