import Foundation
import Synchronization
import Testing
import TestSupport
import EventLoop
@testable import DTLS

/// Holds a transport that a send closure made earlier delivers to.
private final class TransportSlot: Sendable {
    let value = Mutex<DTLSTransport?>(nil)
    func set(_ transport: DTLSTransport) { value.withLock { $0 = transport } }
    func deliver(_ datagram: [UInt8]) { value.withLock { $0 }?.receive(datagram) }
}

/// Text collected from a child's pipe by a reader thread.
private final class TextSink: Sendable {
    let text = Mutex("")
    func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var value: String { text.withLock { $0 } }
}

/// The four parts of the keying material concatenated in RFC 5764 §4.2 order.
private func exported(_ m: SRTPKeyingMaterial) -> [UInt8] { m.clientKey + m.serverKey + m.clientSalt + m.serverSalt }

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { b in
        let h = String(b, radix: 16, uppercase: true)
        return h.count == 1 ? "0" + h : h
    }.joined()
}

/// Two transports in one process, each one's datagrams delivered to the other.
private func makePair(clientExpects: String? = nil, clientProfiles: [SRTPProfile], serverProfiles: [SRTPProfile])
    throws -> (client: DTLSTransport, server: DTLSTransport) {
    let loop = EventLoop.shared
    let clientCert = try Certificate(commonName: "client"), serverCert = try Certificate(commonName: "server")
    let toServer = TransportSlot(), toClient = TransportSlot()
    let client = try DTLSTransport(role: .client, certificate: clientCert,
                                   remoteFingerprints: [("sha-256", clientExpects ?? serverCert.fingerprint("sha-256"))],
                                   srtpProfiles: clientProfiles, send: { toServer.deliver($0) }, loop: loop)
    let server = try DTLSTransport(role: .server, certificate: serverCert,
                                   remoteFingerprints: [("sha-512", clientCert.fingerprint("sha-512"))],
                                   srtpProfiles: serverProfiles, send: { toClient.deliver($0) }, loop: loop)
    toServer.set(server)
    toClient.set(client)
    return (client, server)
}

/// A datagram pipe that drops the first datagram, then about one in five, and delays
/// the rest by 0–29 ms (so they reorder), decided by a seeded generator: the same run
/// every time.
private final class LossyWire: Sendable {
    let slot = TransportSlot()
    private let seed: Mutex<UInt64>
    let dropped = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    /// The largest datagram carried, bytes (DTLS must keep within its 1200-byte MTU).
    let largest = Mutex(0)
    init(seed: UInt64) { self.seed = Mutex(seed) }

    func carry(_ datagram: [UInt8], loop: EventLoop) {
        largest.withLock { $0 = max($0, datagram.count) }
        let r = seed.withLock { s -> UInt64 in
            s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return s >> 33
        }
        if r % 5 == 0 || delivered.load(ordering: .relaxed) + dropped.load(ordering: .relaxed) == 0 {
            dropped.add(1, ordering: .relaxed)
            return
        }
        delivered.add(1, ordering: .relaxed)
        let slot = self.slot
        loop.after(milliseconds: UInt32((r / 5) % 30)) { slot.deliver(datagram) }
    }
}

/// A datagram pipe that drops the first `drop` datagrams and notes when each was sent
/// (ms on the monotonic clock).
private final class FirstLossWire: Sendable {
    let slot = TransportSlot()
    let drop: Int
    let sentAt = Mutex<[Double]>([])
    init(drop: Int) { self.drop = drop }

    func carry(_ datagram: [UInt8]) {
        let n = sentAt.withLock { times -> Int in
            times.append(Double(DispatchTime.now().uptimeNanoseconds) / 1e6)
            return times.count
        }
        if n > drop { slot.deliver(datagram) }
    }
}

@Suite struct DTLSHandshakeTests {
    @Test func inProcessHandshakeExportsIdenticalKeysAndCarriesSRTP() async throws {
        for profile in SRTPProfile.allCases {
            let other = SRTPProfile.allCases.filter { $0 != profile }
            // The client prefers the other profile; the server's order decides.
            let (client, server) = try makePair(clientProfiles: other + [profile], serverProfiles: [profile] + other)
            #expect(client.state == .new)
            server.start()
            client.start()
            let both = await eventually(within: 10) { client.state == .connected && server.state == .connected }
            #expect(both, "client \(client.state) \(String(describing: client.error)), server \(server.state) \(String(describing: server.error))")
            // OpenSSL's server picks its own most preferred profile that the client offers.
            #expect(client.srtpProfile == profile)
            #expect(server.srtpProfile == profile)
            let c = try #require(client.keyingMaterial), s = try #require(server.keyingMaterial)
            #expect(c == s)
            #expect(exported(c).count == profile.keyingMaterialLength)
            #expect(Set(exported(c)).count > 8)  // not all zero

            // Client → server and server → client through SRTP with the split keys.
            let cl = c.local(isClient: true), sr = s.remote(isClient: false)
            let tx = try SRTPSession(profile: profile, key: cl.key, salt: cl.salt, direction: .outbound)
            let rx = try SRTPSession(profile: profile, key: sr.key, salt: sr.salt, direction: .inbound)
            let packet = rtpPacket(sequence: 1, timestamp: 3000, payload: payload(1, count: 160))
            let protected = try tx.protect(rtp: packet)
            #expect(protected != packet)
            #expect(try rx.unprotect(srtp: protected) == packet)

            let sl = s.local(isClient: false), cr = c.remote(isClient: true)
            let tx2 = try SRTPSession(profile: profile, key: sl.key, salt: sl.salt, direction: .outbound)
            let rx2 = try SRTPSession(profile: profile, key: cr.key, salt: cr.salt, direction: .inbound)
            let back = rtpPacket(sequence: 7, timestamp: 9000, ssrc: 0xCAFE_BABE, payload: payload(2, count: 160))
            #expect(try rx2.unprotect(srtp: try tx2.protect(rtp: back)) == back)
            // Keys of the wrong direction do not verify.
            #expect(throws: SRTPError.self) { try rx.unprotect(srtp: try tx2.protect(rtp: rtpPacket(sequence: 8, timestamp: 1, payload: [1, 2, 3]))) }

            // close_notify reaches the server.
            client.close()
            let closed = await eventually(within: 5) { client.state == .closed && server.state == .closed }
            #expect(closed, "client \(client.state), server \(server.state)")
        }
    }

    @Test func handshakeSurvivesLossAndReorderingThroughRetransmission() async throws {
        let loop = EventLoop.shared
        let clientCert = try Certificate(commonName: "client"), serverCert = try Certificate(commonName: "server")
        let toServer = LossyWire(seed: 42), toClient = LossyWire(seed: 7)
        let client = try DTLSTransport(role: .client, certificate: clientCert,
                                       remoteFingerprints: [("sha-384", serverCert.fingerprint("sha-384"))],
                                       srtpProfiles: [.aeadAes128Gcm, .aes128CmSha1_80],
                                       send: { toServer.carry($0, loop: loop) }, loop: loop)
        let server = try DTLSTransport(role: .server, certificate: serverCert,
                                       remoteFingerprints: [("sha-256", clientCert.fingerprint("sha-256"))],
                                       srtpProfiles: [.aeadAes128Gcm, .aes128CmSha1_80],
                                       send: { toClient.carry($0, loop: loop) }, loop: loop)
        toServer.slot.set(server)
        toClient.slot.set(client)
        client.start()  // the server starts on its first datagram
        let both = await eventually(within: 40) { client.state == .connected && server.state == .connected }
        #expect(both, "client \(client.state) \(String(describing: client.error)), server \(server.state) \(String(describing: server.error))")
        let dropped = toServer.dropped.load(ordering: .relaxed) + toClient.dropped.load(ordering: .relaxed)
        #expect(dropped > 0, "the wire dropped nothing: retransmission untested")
        for wire in [toServer, toClient] {
            let largest = wire.largest.withLock { $0 }
            #expect(largest > 0 && largest <= 1200, "a datagram of \(largest) bytes: over the 1200-byte MTU")
        }
        #expect(client.srtpProfile == .aeadAes128Gcm)
        let c = try #require(client.keyingMaterial)
        #expect(c == server.keyingMaterial)
        client.close()
        server.close()
    }

    /// A lost flight is sent again after 100 ms, then 200 and 400 ms (doubling, as
    /// browsers do; OpenSSL's own timer waits 1 s first): the client's first three
    /// ClientHellos are dropped, and the gaps between the four sends are measured.
    @Test func lostFlightsAreRetransmittedAfter100MsDoubling() async throws {
        // A loop of its own: the shared one also serves the other suites running in parallel.
        let loop = EventLoop(name: "dtls-retransmission-test")
        defer { loop.stop() }
        let clientCert = try Certificate(commonName: "client"), serverCert = try Certificate(commonName: "server")
        let toServer = FirstLossWire(drop: 3), toClient = FirstLossWire(drop: 0)
        let client = try DTLSTransport(role: .client, certificate: clientCert,
                                       remoteFingerprints: [("sha-256", serverCert.fingerprint("sha-256"))],
                                       send: { toServer.carry($0) }, loop: loop)
        let server = try DTLSTransport(role: .server, certificate: serverCert,
                                       remoteFingerprints: [("sha-256", clientCert.fingerprint("sha-256"))],
                                       send: { toClient.carry($0) }, loop: loop)
        toServer.slot.set(server)
        toClient.slot.set(client)
        defer { client.close(); server.close() }
        client.start()
        let both = await eventually(within: 10) { client.state == .connected && server.state == .connected }
        #expect(both, "client \(client.state), server \(server.state)")
        let times = toServer.sentAt.withLock { $0 }
        try #require(times.count >= 4)
        let gaps = (1...3).map { times[$0] - times[$0 - 1] }
        print("ClientHello retransmission gaps: \(gaps.map { Int($0) }) ms; datagrams client→server \(times.count), "
              + "server→client \(toClient.sentAt.withLock { $0.count })")
        for (gap, expected) in zip(gaps, [100.0, 200, 400]) {
            // Well under OpenSSL's default of 1 s for the first; room for a loaded machine.
            #expect(gap >= expected * 0.9 && gap < expected + 450, "gap \(gap) ms, expected about \(expected) ms")
        }
    }

    @Test func wrongFingerprintFailsWithTypedErrorAndNoKeys() async throws {
        let wrong = (0 ..< 32).map { _ in "AB" }.joined(separator: ":")
        let (client, server) = try makePair(clientExpects: wrong, clientProfiles: [.aes128CmSha1_80],
                                            serverProfiles: [.aes128CmSha1_80])
        server.start()
        client.start()
        let failed = await eventually(within: 10) { client.state == .failed }
        #expect(failed, "client is \(client.state)")
        guard case let .fingerprintMismatch(expected, actual)? = client.error else {
            Issue.record("expected fingerprintMismatch, got \(String(describing: client.error))")
            return
        }
        #expect(expected == ["sha-256 " + wrong.filter { $0 != ":" }])
        #expect(actual.count == 1 && actual[0].hasPrefix("sha-256 ") && actual[0] != expected[0])
        #expect(client.keyingMaterial == nil)
        #expect(client.srtpProfile == nil)
        // The check runs inside the handshake: the server gets bad_certificate and fails too.
        let serverFailed = await eventually(within: 10) { server.state == .failed }
        #expect(serverFailed, "server is \(server.state)")
        #expect(server.keyingMaterial == nil)
        // Once failed, the transport ignores further input and close().
        client.close()
        try await Task.sleep(for: .milliseconds(100))
        #expect(client.state == .failed)
        server.close()
    }

    @Test func serverAgainstOpenSSLClientExportsTheSameKeyingMaterial() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ours = try Certificate(commonName: "peer-server")
        try ours.pem.write(toFile: dir + "/ours.pem", atomically: true, encoding: .utf8)
        let fingerprint = try await TestServices.offload { try makeOpenSSLCertificate(in: dir, commonName: "openssl-client") }

        // Our UDP socket answers whoever sends first (s_client).
        let udp = try UDPSocket()
        let server = try DTLSTransport(role: .server, certificate: ours,
                                       remoteFingerprints: [("sha-256", fingerprint)],
                                       srtpProfiles: [.aeadAes128Gcm, .aes128CmSha1_80],
                                       send: { udp.send($0) }, loop: EventLoop.shared)
        let reader = Thread { udp.receiveLoop { server.receive($0) } }
        reader.start()
        defer { udp.stopReceiving() }
        server.start()

        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        client.arguments = ["-oL", "-eL", "/usr/bin/openssl", "s_client", "-dtls1_2", "-connect", "127.0.0.1:\(udp.port)",
                            "-use_srtp", "SRTP_AEAD_AES_128_GCM", "-keymatexport", "EXTRACTOR-dtls_srtp",
                            "-keymatexportlen", "56", "-cert", dir + "/cert.pem", "-key", dir + "/key.pem",
                            "-CAfile", dir + "/ours.pem", "-verify", "1"]
        let stdin = Pipe(), stdout = Pipe()
        client.standardInput = stdin  // kept open: s_client ends the session on stdin EOF
        client.standardOutput = stdout
        client.standardError = stdout
        let output = TextSink()
        stdout.fileHandleForReading.readabilityHandler = { handle in output.append(handle.availableData) }
        try client.run()
        let pid = client.processIdentifier
        defer {
            kill(pid, SIGKILL)  // SIGTERM is blocked in children of the test process (inherited signal mask)
            stdout.fileHandleForReading.readabilityHandler = nil
        }

        let connected = await eventually(within: 15) { server.state == .connected || server.state == .failed }
        #expect(connected && server.state == .connected,
                "server \(server.state) \(String(describing: server.error)); openssl: \(output.value)")
        #expect(server.srtpProfile == .aeadAes128Gcm)
        let printed = await eventually(within: 10) { output.value.contains("Keying material: ") }
        #expect(printed, "openssl printed: \(output.value)")
        let material = try #require(server.keyingMaterial)
        #expect(printedKeyingMaterial(output.value) == hex(exported(material)), "openssl: \(output.value)")
        #expect(hex(exported(material)).count == 112)
        // s_client verified our self-signed certificate against the PEM it was given.
        #expect(output.value.contains("Verify return code: 0"), "openssl: \(output.value)")

        // Our close_notify ends s_client's session.
        server.close()
        let ended = await eventually(within: 5) { !client.isRunning }
        #expect(ended || output.value.contains("closed"), "openssl: \(output.value)")
        kill(pid, SIGKILL)
        try await TestServices.offload { client.waitUntilExit() }
    }

    @Test func clientAgainstOpenSSLServerExportsTheSameKeyingMaterial() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ours = try Certificate(commonName: "peer-client")
        try ours.pem.write(toFile: dir + "/ours.pem", atomically: true, encoding: .utf8)

        // A key and self-signed certificate for openssl, and its SHA-256 fingerprint.
        let fingerprint = try await TestServices.offload { try makeOpenSSLCertificate(in: dir, commonName: "openssl-server") }

        // Our UDP socket (the client side), then a free port for openssl.
        let udp = try UDPSocket()
        defer { udp.stopReceiving() }
        let port = try freeUDPPort()
        try udp.connect(port: port)

        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        server.arguments = ["-oL", "-eL", "/usr/bin/openssl", "s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)",
                            "-use_srtp", "SRTP_AES128_CM_SHA1_80", "-keymatexport", "EXTRACTOR-dtls_srtp",
                            "-keymatexportlen", "60", "-cert", dir + "/cert.pem", "-key", dir + "/key.pem",
                            "-verify", "1", "-CAfile", dir + "/ours.pem"]
        let stdin = Pipe(), stdout = Pipe()
        server.standardInput = stdin  // kept open: s_server ends the session on stdin EOF
        server.standardOutput = stdout
        server.standardError = stdout
        let output = TextSink()
        stdout.fileHandleForReading.readabilityHandler = { handle in output.append(handle.availableData) }
        try server.run()
        let pid = server.processIdentifier
        defer {
            kill(pid, SIGKILL)  // SIGTERM is blocked in children of the test process (inherited signal mask)
            stdout.fileHandleForReading.readabilityHandler = nil
        }
        let accepting = await eventually(within: 10) { output.value.contains("ACCEPT") }
        try #require(accepting, "openssl s_server did not start: \(output.value)")

        let client = try DTLSTransport(role: .client, certificate: ours,
                                       remoteFingerprints: [("sha-256", fingerprint)],
                                       srtpProfiles: [.aes128CmSha1_80],
                                       send: { udp.send($0) }, loop: EventLoop.shared)
        let reader = Thread { udp.receiveLoop { client.receive($0) } }
        reader.start()
        client.start()

        let connected = await eventually(within: 15) { client.state == .connected || client.state == .failed }
        #expect(connected && client.state == .connected,
                "client \(client.state) \(String(describing: client.error)); openssl: \(output.value)")
        #expect(client.srtpProfile == .aes128CmSha1_80)
        let printed = await eventually(within: 10) { output.value.contains("Keying material: ") }
        #expect(printed, "openssl printed: \(output.value)")
        let material = try #require(client.keyingMaterial)
        #expect(printedKeyingMaterial(output.value) == hex(exported(material)), "openssl: \(output.value)")
        // openssl verified our self-signed certificate against the PEM we gave it.
        #expect(output.value.contains("CN = peer-client") || output.value.contains("CN=peer-client"), "openssl: \(output.value)")
        #expect(hex(exported(material)).count == 120)

        client.close()
        _ = await eventually(within: 2) { client.state == .closed }
        kill(pid, SIGKILL)  // SIGTERM is blocked in children of the test process (inherited signal mask)
        try await TestServices.offload { server.waitUntilExit() }
    }
}

// MARK: - Blocking helpers (run on threads of their own)

private enum ToolError: Error { case failed(String) }

/// Writes a P-256 key and self-signed certificate for openssl into `dir` (key.pem,
/// cert.pem), blocking; returns the certificate's SHA-256 fingerprint as openssl prints it.
private func makeOpenSSLCertificate(in dir: String, commonName: String) throws -> String {
    let gen = try runTool(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                           "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-subj", "/CN=" + commonName,
                           "-days", "1"])
    guard gen.status == 0 else { throw ToolError.failed("openssl req: \(gen.output)") }
    let fp = try runTool(["x509", "-in", dir + "/cert.pem", "-noout", "-fingerprint", "-sha256"])
    guard fp.status == 0, let value = fp.output.split(separator: "=").last else {
        throw ToolError.failed("openssl x509: \(fp.output)")
    }
    return value.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The hex after "Keying material: " in openssl's output, upper-case, or nil.
private func printedKeyingMaterial(_ output: String) -> String? {
    let line = output.split(separator: "\n").first { $0.contains("Keying material: ") }
    return line.map { String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces).uppercased() }
}

/// Runs `/usr/bin/openssl` with `arguments`, blocking; status and combined output.
private func runTool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

private func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A UDP port on 127.0.0.1 that was free a moment ago (bound to 0, read back, closed).
private func freeUDPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw ToolError.failed("socket: errno \(errno)") }
    defer { Glibc.close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard ok else { throw ToolError.failed("bind/getsockname: errno \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}

/// A UDP socket on 127.0.0.1 talking to one peer (the connected port, or the first
/// sender); `receiveLoop` runs on a thread of its own until `stopReceiving`.
private final class UDPSocket: Sendable {
    let fd: Int32
    private let running = Atomic<Bool>(true)
    private let peer = Mutex<sockaddr_in?>(nil)

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw ToolError.failed("socket: errno \(errno)") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard bound == 0 else { throw ToolError.failed("bind: errno \(errno)") }
    }

    func connect(port: UInt16) throws {
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw ToolError.failed("connect: errno \(errno)") }
        peer.withLock { $0 = address }
    }

    /// Sends to the connected peer, or else to the source of the first datagram received.
    func send(_ datagram: [UInt8]) {
        guard var address = peer.withLock({ $0 }) else { return }
        _ = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The port this socket is bound to.
    var port: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    func receiveLoop(_ deliver: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while running.load(ordering: .acquiring) {
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, bytes.baseAddress, bytes.count, 0, $0, &length)
                    }
                }
            }
            guard n > 0 else { continue }
            peer.withLock { if $0 == nil { $0 = from } }
            deliver(Array(buffer[0 ..< n]))
        }
    }

    func stopReceiving() { running.store(false, ordering: .releasing) }

    /// The descriptor closes when the last reference (the reader thread's) goes.
    deinit { Glibc.close(fd) }
}

@Suite struct DTLSRoleTests {
    @Test func roleFollowsOurNegotiatedSetup() {
        #expect(DTLSRole(localSetup: "active") == .client)
        #expect(DTLSRole(localSetup: "PASSIVE") == .server)
        #expect(DTLSRole(localSetup: "actpass") == nil)
        #expect(DTLSRole(localSetup: "holdconn") == nil)
    }
}

