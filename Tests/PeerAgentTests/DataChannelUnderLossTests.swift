// Data channels under real random UDP loss: `peer loopback --no-media` in a network namespace whose loopback drops 10 % of datagrams with `iptables -m statistic --mode random` (scripts/lossnet).
import Foundation
import Testing
import TestSupport

@Suite struct DataChannelUnderLossTests {
    /// 10 % loss: 2,000 numbered 1 KiB messages each way on a reliable ordered channel all
    /// arrive, in order, none repeated (SCTP retransmits); of 3,000 100-byte messages each
    /// way on an unordered `maxRetransmits=0` channel at least 80 % arrive (each is sent
    /// once: about 90 % get through).
    @Test func reliableLosesNothingAndUnreliableDeliversMostAt10PercentLoss() async throws {
        let ns = try await LossNamespace.create("peer-dcloss-\(getpid())", loss: 10)
        let dir = TestServices.temporaryDirectory("dcloss")
        defer {
            ns.delete()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let r = try await TestServices.run("/usr/sbin/ip", ["netns", "exec", ns.name, CallHarness.peer, "loopback", "--no-media",
                                                            "--data-channel", "chat", "--data-channel", "fast,unordered,retransmits=0",
                                                            "--data-burst", "chat:2000:1024", "--data-burst", "fast:3000:100",
                                                            "--duration", "20", "--timeout", "30", "--out-dir", dir, "--json"], timeout: 80)
        #expect(r.status == 0, "\(r.stderr.suffix(1000))")
        let summaries = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "dataSummary" }
        func numbered(_ side: String, _ label: String) -> [String: Any] {
            summaries.first { $0["side"] as? String == side && $0["label"] as? String == label }?["numbered"] as? [String: Any] ?? [:]
        }
        let stats = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "stats" }.compactMap { ($0["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] }
        let sctp = stats.compactMap { $0["SCTP"] }
        print("data under 10 % loss: chat \(numbered("a", "chat")) / \(numbered("b", "chat")); fast \(numbered("a", "fast")) / \(numbered("b", "fast")); sctp \(sctp)")
        for side in ["a", "b"] {
            let chat = numbered(side, "chat"), fast = numbered(side, "fast")
            #expect(chat["received"] as? Int == 2_000 && chat["missing"] as? Int == 0 && chat["duplicates"] as? Int == 0
                    && chat["outOfOrder"] as? Int == 0, "side \(side), reliable: \(chat)")
            let delivered = Double(fast["received"] as? Int ?? 0) / 3_000
            #expect(delivered >= 0.8 && delivered < 1, "side \(side), maxRetransmits=0: \(Int(delivered * 100)) % of 3,000 (each sent once)")
        }
    }
}
