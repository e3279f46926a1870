// DtlsSrtpTransport across associations (RFC 8842 §5, RFC 8829 §5.11): a start it drops is reported, a replaced association's late `connected` leaves no keys and says which association it was, and a closed transport stays closed.
import Foundation
import Synchronization
import Testing
import TestSupport
import EventLoop
@testable import DTLS

/// Where each side's datagrams go, and the state changes each side reported with their
/// association's generation.
private final class Links: Sendable {
    let a = Mutex<DtlsSrtpTransport?>(nil), b = Mutex<DtlsSrtpTransport?>(nil)
    let statesA = Mutex<[(DTLSTransportState, Int)]>([]), statesB = Mutex<[(DTLSTransportState, Int)]>([])
}

/// Two DtlsSrtpTransports in one process, each one's datagrams delivered to the other.
private struct Pair {
    let links = Links()
    let certA: Certificate, certB: Certificate
    let a: DtlsSrtpTransport, b: DtlsSrtpTransport

    init() throws {
        certA = try Certificate(commonName: "a")
        certB = try Certificate(commonName: "b")
        let links = self.links
        a = DtlsSrtpTransport(send: { d in links.b.withLock { $0 }?.receive(d); return true }, certificate: certA, loop: .shared,
                              onState: { s, _, g in links.statesA.withLock { $0.append((s, g)) } },
                              onRTP: { _ in }, onRTCP: { _ in })
        b = DtlsSrtpTransport(send: { d in links.a.withLock { $0 }?.receive(d); return true }, certificate: certB, loop: .shared,
                              onState: { s, _, g in links.statesB.withLock { $0.append((s, g)) } },
                              onRTP: { _ in }, onRTCP: { _ in })
        let (a, b) = (a, b)
        links.a.withLock { $0 = a }
        links.b.withLock { $0 = b }
    }

    /// Starts both: A the client, B the server; true when both started.
    func start() throws -> Bool {
        let startedB = try b.start(role: .server, remoteFingerprints: [("sha-256", certA.fingerprint("sha-256"))])
        let startedA = try a.start(role: .client, remoteFingerprints: [("sha-256", certB.fingerprint("sha-256"))])
        return startedA && startedB
    }

    /// The generations of A's (B's) `connected` reports, in order.
    var connectedA: [Int] { links.statesA.withLock { $0.filter { $0.0 == .connected }.map { $0.1 } } }
    var connectedB: [Int] { links.statesB.withLock { $0.filter { $0.0 == .connected }.map { $0.1 } } }

    func close() {
        a.close()
        b.close()
        links.a.withLock { $0 = nil }
        links.b.withLock { $0 = nil }
    }
}

@Suite struct AssociationRenewalTests {
    /// A start is reported when it runs the handshake (true) and when it is dropped
    /// (false): a second start of the same association; after beginNewAssociation the new
    /// association starts (true) and connects, its `connected` carrying generation 1.
    @Test func aDroppedStartIsReported() async throws {
        let pair = try Pair()
        defer { pair.close() }
        #expect(try pair.start())
        #expect(try !pair.a.start(role: .client, remoteFingerprints: [("sha-256", pair.certB.fingerprint("sha-256"))]),
                "started already")
        #expect(await eventually(within: 10) { pair.connectedA == [0] && pair.connectedB == [0] })
        #expect(pair.a.beginNewAssociation() == 1 && pair.b.beginNewAssociation() == 1)
        #expect(!pair.a.sendRTP([0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0x12, 0x34, 1]), "no keys until the new one connects")
        #expect(try pair.start())
        #expect(await eventually(within: 10) { pair.connectedA == [0, 1] && pair.connectedB == [0, 1] })
        #expect(pair.a.sendRTP([0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0x12, 0x34, 1]))
    }

    /// The association connects and, between its SRTP sessions being made and installed,
    /// is replaced (a test hook begins the new association there, as a renewal on another
    /// thread may): its sessions are not installed — nothing is sent with its keys — and
    /// its `connected` carries generation 0, no longer the current one (1), for the owner
    /// to ignore; the new association starts and connects as generation 1.
    @Test func aReplacedAssociationThatConnectsLeavesNoKeysAndSaysWhichItWas() async throws {
        let pair = try Pair()
        defer { pair.close() }
        let a = pair.a
        let renewed = Atomic<Int>(-1)
        a.beforeSessionsInstalled.withLock { hook in
            hook = { [weak a] in
                guard let a, renewed.load(ordering: .relaxed) < 0 else { return }
                renewed.store(a.beginNewAssociation(), ordering: .relaxed)
            }
        }
        #expect(try pair.start())
        #expect(await eventually(within: 10) { renewed.load(ordering: .relaxed) == 1 && pair.connectedB == [0] })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(pair.connectedA.allSatisfy { $0 == 0 }, "a late connected says it was association 0")
        #expect(!a.sendRTP([0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0x12, 0x34, 1]), "association 0's keys were not installed")
        #expect(a.state == .new)
        // The new association: B renews too, both start, A's connected is generation 1.
        #expect(pair.b.beginNewAssociation() == 1)
        #expect(try pair.start())
        #expect(await eventually(within: 10) { pair.connectedA.last == 1 })
        #expect(a.sendRTP([0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0x12, 0x34, 1]))
    }

    /// Once closed, a transport stays closed: beginNewAssociation does nothing (its state
    /// stays `closed`, the generation stays 0) and a start is dropped (false).
    @Test func aClosedTransportStaysClosed() async throws {
        let pair = try Pair()
        #expect(try pair.start())
        #expect(await eventually(within: 10) { pair.connectedA == [0] })
        let a = pair.a
        a.close()
        #expect(await eventually(within: 5) { a.state == .closed })
        #expect(a.beginNewAssociation() == 0)
        #expect(a.state == .closed)
        #expect(try !a.start(role: .client, remoteFingerprints: [("sha-256", pair.certB.fingerprint("sha-256"))]))
        #expect(a.state == .closed)
        pair.b.close()
    }

    /// Before our handshake starts only the peer's ClientHello is kept for it (RFC 6347
    /// §4.1, §4.2.2): a record header of type 22, epoch 0, then handshake type 1. A replaced
    /// association's last flight sent again (NewSessionTicket type 4, then ChangeCipherSpec
    /// type 20, then an epoch-1 Finished) is not: fed to a new handshake it made OpenSSL
    /// fail with decrypt_error (the test above, once the server resent its last flight).
    @Test func onlyAClientHelloWaitsForTheHandshake() {
        let header: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12]
        #expect(DtlsSrtpTransport.opensHandshake(header + [1] + Array(repeating: 0, count: 11)), "ClientHello")
        #expect(!DtlsSrtpTransport.opensHandshake(header + [4] + Array(repeating: 0, count: 11)), "NewSessionTicket")
        #expect(!DtlsSrtpTransport.opensHandshake([20, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 1]), "ChangeCipherSpec")
        #expect(!DtlsSrtpTransport.opensHandshake([22, 0xFE, 0xFD, 0, 1] + Array(header[5...]) + [20]), "epoch 1")
        #expect(!DtlsSrtpTransport.opensHandshake(header), "a header alone")
    }
}
