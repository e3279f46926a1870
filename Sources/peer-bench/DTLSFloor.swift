// DTLSFloor: OpenSSL's share of a data channel transfer — two DTLS transports in this process (RFC 6347, as RFC 8261 carries SCTP), handshaken in memory, then the same records each way as a transfer's datagrams held; the loop thread's CPU time.
import DTLS
import EventLoop
import Foundation
import Synchronization

/// The floor DTLS sets under `peer-bench data`: a client and a server ``DTLSTransport``
/// joined by a ``MemoryWire``, then as many application data records each way as the
/// transfer's datagrams, each the datagram's mean size less the record overhead of the
/// suite the two negotiate (AES-GCM: 13-byte header, 8-byte nonce, 16-byte tag).
enum DTLSFloor {
    /// What went wrong.
    struct Failure: Error, CustomStringConvertible {
        /// The step that failed.
        var description: String
    }

    /// Bytes a DTLS 1.2 AES-GCM record adds to its plaintext.
    static let recordOverhead = 37

    /// - Returns: the event-loop thread's CPU seconds for writing, encrypting, decrypting
    ///   and reading every record (the handshake before it not counted).
    /// - Throws: ``Failure`` when a certificate or transport cannot be made, the handshake
    ///   does not finish within 10 s, or a record goes missing.
    static func measure(_ counts: DatagramCounts) async throws -> Double {
        let loop = EventLoop.shared
        let wire = MemoryWire(loop: loop)
        let arrived = Mutex((records: 0, bytes: 0))
        let signal = ChangeSignal()
        let clientCert = try Certificate(commonName: "floor-client"), serverCert = try Certificate(commonName: "floor-server")
        let client = try DTLSTransport(role: .client, certificate: clientCert, remoteFingerprints: [("sha-256", try serverCert.fingerprint())],
                                       send: { wire.carry($0, to: 1) }, loop: loop, onStateChange: { _ in signal.signal() },
                                       onApplicationData: { r in arrived.withLock { $0 = ($0.records + 1, $0.bytes + r.count) } })
        let server = try DTLSTransport(role: .server, certificate: serverCert, remoteFingerprints: [("sha-256", try clientCert.fingerprint())],
                                       send: { wire.carry($0, to: 0) }, loop: loop, onStateChange: { _ in signal.signal() },
                                       onApplicationData: { r in arrived.withLock { $0 = ($0.records + 1, $0.bytes + r.count) } })
        wire.connect({ client.receive($0) }, { server.receive($0) })
        defer { client.close(); server.close() }
        client.start()
        let connected = await signal.wait(within: 10) { client.state == .connected && server.state == .connected }
        guard connected else { throw Failure(description: "DTLS floor: the handshake did not finish (client \(client.state), server \(server.state))") }
        let forward = [UInt8](repeating: 0x5A, count: max(1, counts.sentBytes / max(counts.sent, 1) - recordOverhead))
        let backward = [UInt8](repeating: 0x5A, count: max(1, counts.receivedBytes / max(counts.received, 1) - recordOverhead))
        let cpu = loop.sync { () -> Double in
            let start = threadCPUSeconds()
            var answered = 0
            for i in 0..<counts.sent {
                client.write(forward)
                wire.drain()
                let due = counts.received * (i + 1) / counts.sent
                while answered < due {
                    server.write(backward)
                    wire.drain()
                    answered += 1
                }
            }
            return threadCPUSeconds() - start
        }
        let got = arrived.withLock { $0.records }
        guard got == counts.sent + counts.received else {
            throw Failure(description: "DTLS floor: \(got) of \(counts.sent + counts.received) records arrived")
        }
        return cpu
    }
}
