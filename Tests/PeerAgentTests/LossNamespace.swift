// LossNamespace: a network namespace whose loopback drops UDP at random (scripts/lossnet, iptables statistic), for the tests under real loss.
import Foundation
import Testing
import TestSupport

/// A namespace made by `scripts/lossnet` for one test; ``delete()`` it when done (needs
/// root: ip netns, iptables).
struct LossNamespace {
    static let script = TestServices.root.appendingPathComponent("scripts/lossnet").path
    /// The namespace's name (`ip netns exec NAME …`).
    let name: String

    /// Makes `name` with `loss` % of its UDP dropped; the test stops (requirement failed)
    /// when it cannot.
    static func create(_ name: String, loss: Double) async throws -> LossNamespace {
        let created = try await TestServices.run(script, ["create", name, "--loss", String(loss)])
        try #require(created.status == 0, "\(created.stderr) (needs root: ip netns, iptables)")
        return LossNamespace(name: name)
    }

    /// Changes the drop rate to `loss` %; true when lossnet did.
    func set(loss: Double) async throws -> Bool {
        try await TestServices.run(Self.script, ["set", name, "--loss", String(loss)]).status == 0
    }

    /// Removes the namespace (idempotent; from a `defer`).
    func delete() {
        _ = try? TestServices.runBlocking(Self.script, ["delete", name])
    }
}
