// Connection set-up under real random UDP loss: `peer loopback` in a network namespace whose
// loopback drops datagrams with `iptables -m statistic --mode random` (scripts/lossnet).
import Foundation
import Testing
import TestSupport

@Suite struct SetupUnderLossTests {
    /// One call's set-up: ms from setting the offer until both sides are DTLS connected,
    /// and of that the DTLS part (from the later side's ICE connected).
    struct Setup { let total: Double, dtls: Double }

    /// Runs `peer loopback` `runs` times in a namespace dropping `loss` % of UDP datagrams;
    /// nil for a run that did not connect within `timeout` s (its stderr is printed).
    static func setups(loss: Double, runs: Int, timeout: Double) async throws -> [Setup?] {
        let ns = "peer-loss-\(getpid())-\(Int(loss))"
        let lossnet = TestServices.root.appendingPathComponent("scripts/lossnet").path
        let dir = TestServices.temporaryDirectory("loss\(Int(loss))")
        let created = try await TestServices.run(lossnet, ["create", ns, "--loss", String(loss)])
        try #require(created.status == 0, "\(created.stderr) (needs root: ip netns, iptables)")
        defer {
            _ = try? TestServices.runBlocking(lossnet, ["delete", ns])
            try? FileManager.default.removeItem(atPath: dir)
        }
        var result: [Setup?] = []
        for _ in 0..<runs {
            let r = try await TestServices.run("/usr/sbin/ip", ["netns", "exec", ns, CallHarness.peer, "loopback", "--duration", "0.3",
                                                                "--timeout", String(timeout), "--video", "pattern:320x240@30",
                                                                "--out-dir", dir, "--json"], timeout: timeout + 30)
            let sides = r.stdout.split(separator: "\n").compactMap { line -> (ice: Double, dtls: Double)? in
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let report = o["report"] as? [String: Any], let timings = report["timings"] as? [String: Any],
                      let ice = (timings["iceConnectedMs"] as? NSNumber)?.doubleValue,
                      let dtls = (timings["dtlsConnectedMs"] as? NSNumber)?.doubleValue else { return nil }
                return (ice, dtls)
            }
            guard sides.count == 2 else {
                print("set-up at \(loss) % loss: a call did not connect (exit \(r.status)): \(r.stderr.suffix(600)) \(r.stdout.suffix(600))")
                result.append(nil)
                continue
            }
            let dtlsDone = sides.map(\.dtls).max() ?? 0, iceDone = sides.map(\.ice).max() ?? 0
            result.append(Setup(total: dtlsDone, dtls: max(0, dtlsDone - iceDone)))
        }
        return result
    }

    static func describe(_ setups: [Setup?]) -> String {
        setups.map { $0.map { "\(Int($0.total))(\(Int($0.dtls)))" } ?? "failed" }.joined(separator: " ")
    }

    /// 15 % loss each way, 20 calls: a lost DTLS flight is resent after twice the round
    /// trip the ICE checks saw (here the 50 ms floor), not OpenSSL's 1 s, and in one
    /// datagram like its first sending; a lost ICE check is re-checked within a request
    /// interval (CheckTriggers, SelectedPairChecks), not after libnice's 500 ms. So all
    /// connect, the DTLS part stays short, and whole set-ups come within 1 s; make bench
    /// prints the figures over 20 calls per loss rate (every one within 1 s there, the
    /// target), this test leaves one call of room for a loaded machine.
    @Test func at15PercentLossTheHandshakeRecoversFast() async throws {
        let setups = try await Self.setups(loss: 15, runs: 20, timeout: 30)
        let ok = setups.compactMap { $0 }
        let dtls = ok.map(\.dtls).sorted()
        let slow = dtls.filter { $0 >= 1000 }.count
        let within = ok.filter { $0.total <= 1000 }.count
        let median = dtls.isEmpty ? .infinity : (dtls[(dtls.count - 1) / 2] + dtls[dtls.count / 2]) / 2
        print("set-up at 15 % loss, ms (DTLS part): \(Self.describe(setups)); DTLS median \(Int(median)) ms, "
              + "\(slow) DTLS ≥ 1 s, \(within)/20 whole set-ups within 1 s")
        #expect(ok.count == 20, "calls that connected: \(ok.count)/20")
        // About half the handshakes lose a datagram at this loss (four flights of one
        // datagram each: 0.85^4 ≈ 0.52 lose none), and a loss costs 50 ms, then 100: the
        // median stays well under 150 ms (with a 100 ms first wait it was ~100–300 ms,
        // with OpenSSL's 1 s over 1 s).
        #expect(median < 150, "DTLS median \(median) ms")
        #expect(slow <= 1, "\(slow)/20 handshakes took ≥ 1 s")
        // Before issue 34 about one call in ten took longer (README: 9/10 within 1 s).
        #expect(within >= 19, "\(within)/20 whole set-ups within 1 s")
    }

    /// 25 % loss each way, 20 calls, each within --timeout (30 s): all set up. Before, about
    /// 4 % failed, libnice having stopped checking on both sides: one side connected while
    /// the responses to the other's check were lost (now the connected side's Binding
    /// requests on the selected pair, SelectedPairChecks, make it check again), or the
    /// controlled side waited for a nomination whose three sends were all lost (now failed
    /// checks start over until --timeout, IceAgent.Configuration.restartsFailedChecks).
    /// With both: 0 failures in 660 runs (docs/BENCHMARKS.md).
    @Test func at25PercentLossEveryCallSetsUp() async throws {
        let setups = try await Self.setups(loss: 25, runs: 20, timeout: 30)
        let slowest = setups.compactMap { $0?.total }.max() ?? 0
        print("set-up at 25 % loss, ms (DTLS part): \(Self.describe(setups)); slowest \(Int(slowest)) ms")
        #expect(setups.compactMap { $0 }.count == 20, "\(Self.describe(setups))")
    }
}
