// Test support: two UDP-only ICE agents on 127.0.0.1, and an iptables rule that drops one
// STUN message type (RFC 5389 §6: the first two bytes) arriving at one agent's port.
import Foundation
import Testing
import TestSupport
@testable import ICE

extension IceAgent.Configuration {
    /// Vanilla, UDP only, on 127.0.0.1, with `adjust` applied.
    static func udpLoopback(controlling: Bool, _ adjust: (inout IceAgent.Configuration) -> Void = { _ in }) -> IceAgent.Configuration {
        var c = IceAgent.Configuration(controlling: controlling)
        c.localAddresses = ["127.0.0.1"]
        c.trickle = false
        c.tcp = false
        adjust(&c)
        return c
    }
}

/// Drops every STUN message of one type (0x0001 Binding request, 0x0101 success response)
/// arriving at a UDP port: `iptables -m u32` on the first two bytes of the UDP payload.
/// ``remove()`` takes it out; deinit does if the test did not (it ended early).
final class StunDropRule {
    private let rule: [String]
    private var isIn = false

    /// Adds the rule; records an issue if iptables refuses (needs root and xt_u32).
    init(port: Int, messageType: UInt16) async {
        rule = ["INPUT", "-p", "udp", "-d", "127.0.0.1", "--dport", String(port), "-m", "u32",
                "--u32", "0>>22&0x3C@8>>16=0x" + String(format: "%04x", messageType), "-j", "DROP"]
        isIn = await CheckRetransmissionTests.iptables(["-I"] + rule)
        #expect(isIn, "iptables could not add the rule (needs root, xt_u32)")
    }

    /// Takes the rule out.
    func remove() async {
        guard isIn else { return }
        isIn = false
        #expect(await CheckRetransmissionTests.iptables(["-D"] + rule))
    }

    deinit {
        if isIn { _ = try? TestServices.runBlocking("/usr/sbin/iptables", ["-D"] + rule, timeout: 10) }
    }
}
