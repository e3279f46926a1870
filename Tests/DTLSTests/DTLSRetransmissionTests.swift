// The DTLS handshake's retransmission timer (RFC 6347 §4.2.4.1): its values from a round trip, and OpenSSL resending lost flights on it, packed into one datagram, over an in-memory wire that drops chosen datagrams.
import Foundation
import Synchronization
import Testing
import TestSupport
import EventLoop
@testable import DTLS

/// Carries one direction's datagrams to a transport on the loop, dropping the ones whose
/// number (1-based, in sending order) is in `drop` and, with `dropCopiesOf`, every later
/// datagram with the same bytes as that one; notes each datagram and when it was sent (ms
/// on the monotonic clock).
private final class DroppingWire: Sendable {
    let drop: Set<Int>
    let dropCopiesOf: Int?
    private let target = Mutex<DTLSTransport?>(nil)
    let sent = Mutex<[(ms: Double, bytes: [UInt8])]>([])
    init(drop: Set<Int>, dropCopiesOf: Int? = nil) {
        self.drop = drop
        self.dropCopiesOf = dropCopiesOf
    }

    func connect(_ transport: DTLSTransport) { target.withLock { $0 = transport } }

    func carry(_ datagram: [UInt8]) {
        let (n, copy) = sent.withLock { list -> (Int, Bool) in
            list.append((Double(DispatchTime.now().uptimeNanoseconds) / 1e6, datagram))
            let copy = dropCopiesOf.map { $0 < list.count && list[$0 - 1].bytes == datagram } ?? false
            return (list.count, copy)
        }
        if !drop.contains(n), !copy { target.withLock { $0 }?.receive(datagram) }
    }
}

/// The DTLS records in one datagram (RFC 6347 §4.1): content type and length of each;
/// nil when the datagram does not split into whole records.
private func records(_ datagram: [UInt8]) -> [(type: UInt8, length: Int)]? {
    var out: [(type: UInt8, length: Int)] = [], i = 0
    while i < datagram.count {
        guard i + 13 <= datagram.count else { return nil }
        let length = Int(datagram[i + 11]) << 8 | Int(datagram[i + 12])
        guard i + 13 + length <= datagram.count else { return nil }
        out.append((datagram[i], length))
        i += 13 + length
    }
    return out
}

/// A client and a server joined by two dropping wires, on a loop of their own (the shared
/// one also serves the suites running in parallel, which would delay the timers).
private struct Handshake {
    let loop = EventLoop(name: "dtls-retransmission-test")
    let client: DTLSTransport, server: DTLSTransport
    let toServer: DroppingWire, toClient: DroppingWire

    /// - Parameter clientSendsOnConnect: the client writes these bytes as application data
    ///   as soon as it is connected (from its state callback, as a call starts SCTP).
    init(dropToServer: Set<Int>, dropToClient: Set<Int> = [], dropCopiesToClientOf: Int? = nil,
         clientSendsOnConnect: [UInt8]? = nil) throws {
        let clientCert = try Certificate(commonName: "client"), serverCert = try Certificate(commonName: "server")
        let toServer = DroppingWire(drop: dropToServer), toClient = DroppingWire(drop: dropToClient, dropCopiesOf: dropCopiesToClientOf)
        let me = Mutex<DTLSTransport?>(nil)
        client = try DTLSTransport(role: .client, certificate: clientCert,
                                   remoteFingerprints: [("sha-256", serverCert.fingerprint("sha-256"))],
                                   send: { toServer.carry($0) }, loop: loop,
                                   onStateChange: { state in
                                       if state == .connected, let data = clientSendsOnConnect { me.withLock { $0 }?.write(data) }
                                   })
        me.withLock { [client] in $0 = client }
        server = try DTLSTransport(role: .server, certificate: serverCert,
                                   remoteFingerprints: [("sha-256", clientCert.fingerprint("sha-256"))],
                                   send: { toClient.carry($0) }, loop: loop)
        toServer.connect(server)
        toClient.connect(client)
        self.toServer = toServer
        self.toClient = toClient
    }

    func finish() {
        client.close()
        server.close()
        loop.stop()
    }
}

@Suite struct DTLSRetransmissionTests {
    /// Twice the round trip, within 50 ms … 3 s; 100 ms when none is known.
    @Test(arguments: [(nil, 100), (0, 50), (10, 50), (24.6, 50), (25.2, 51), (30, 60), (120, 240), (1_499.6, 3_000),
                      (40_000, 3_000), (.nan, 100), (-5, 100), (.infinity, 100)] as [(Double?, UInt32)])
    func theFirstWaitIsTwiceTheRoundTrip(roundTripMs: Double?, expectedMs: UInt32) {
        #expect(DTLSRetransmissionTimer(roundTripMs: roundTripMs).initialMs == expectedMs)
    }

    /// RFC 6347 §4.2.4.1: each wait of a flight doubles the last, here up to 3 s; a new
    /// flight (OpenSSL passes 0) starts from the first wait again.
    @Test func waitsDoubleUpToTheCap() {
        let timer = DTLSRetransmissionTimer(roundTripMs: 30)
        var waits: [UInt32] = [timer.nextTimeoutUs(afterUs: 0)]
        for _ in 0..<7 { waits.append(timer.nextTimeoutUs(afterUs: waits[waits.count - 1])) }
        #expect(waits == [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_000_000, 3_000_000])
        #expect(timer.nextTimeoutUs(afterUs: 0) == 60_000)
        #expect(DTLSRetransmissionTimer(initialMs: 10).initialMs == 50)
        #expect(DTLSRetransmissionTimer(initialMs: 10_000).nextTimeoutUs(afterUs: 0) == 3_000_000)
    }

    /// OpenSSL calls the timer back as the transport was started: the client's first
    /// three ClientHellos are dropped, and the gaps between its four sends are the first
    /// wait, twice it and four times it, for no known round trip (100 ms), one of 10 ms
    /// (the 50 ms floor) and one of 150 ms (300 ms).
    @Test(arguments: [nil, 10, 150] as [Double?])
    func lostClientHellosAreResentOnTheRoundTripsTimer(roundTripMs: Double?) async throws {
        let h = try Handshake(dropToServer: [1, 2, 3])
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: roundTripMs)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        let both = await eventually(within: 10) { h.client.state == .connected && h.server.state == .connected }
        #expect(both, "client \(h.client.state), server \(h.server.state)")
        let times = h.toServer.sent.withLock { $0.map(\.ms) }
        try #require(times.count >= 4)
        let gaps = (1...3).map { times[$0] - times[$0 - 1] }
        let first = Double(timer.initialMs)
        print("round trip \(roundTripMs.map { "\($0) ms" } ?? "unknown"): ClientHello resent after \(gaps.map { Int($0) }) ms "
              + "(expected \(Int(first)), \(Int(first * 2)), \(Int(first * 4)))")
        for (gap, expected) in zip(gaps, [first, first * 2, first * 4]) {
            // Never early; late by less than would pass for the next value (a loaded
            // machine's scheduling delay; the suite runs in make test's serial phase).
            #expect(gap >= expected * 0.95 - 1 && gap < expected + max(40, expected / 2), "gap \(gap) ms, expected about \(expected) ms")
        }
    }

    /// The server's last flight (NewSessionTicket, ChangeCipherSpec, Finished) is lost, and
    /// so are the server's own copies of it: the client resends its second flight, packed,
    /// after 50 ms, and the server answers it with its last flight again in new records
    /// (RFC 6347 §4.2.4, the FINISHED state; OpenSSL does it on the resent Finished, which
    /// comes after three epoch-0 records and a ChangeCipherSpec in the same datagram).
    @Test func aLostLastFlightIsResentOnTheClientsResend() async throws {
        let h = try Handshake(dropToServer: [], dropToClient: [2], dropCopiesToClientOf: 2)
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: 0)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        let both = await eventually(within: 10) { h.client.state == .connected && h.server.state == .connected }
        #expect(both, "client \(h.client.state), server \(h.server.state)")
        let toServer = h.toServer.sent.withLock { $0 }, toClient = h.toClient.sent.withLock { $0 }
        print("client → server: \(toServer.map { "\($0.bytes.count) B at \(Int($0.ms - toServer[0].ms)) ms" }); "
              + "server → client: \(toClient.map { "\($0.bytes.count) B at \(Int($0.ms - toServer[0].ms)) ms" })")
        try #require(toServer.count >= 3 && toClient.count >= 3)
        #expect(toServer[2].ms - toServer[1].ms >= 45, "the client's resend after its first wait")
        // OpenSSL's answer: as long as the last flight, other bytes (new record numbers),
        // after the client's resend.
        let answer = toClient.dropFirst(2).first { $0.bytes != toClient[1].bytes }
        #expect(answer?.bytes.count == toClient[1].bytes.count && (answer?.ms ?? 0) >= toServer[2].ms,
                "the last flight answered whole after the resend: \(toClient.map(\.bytes.count))")
    }

    /// The server's last flight is lost, and so is everything the client sends after
    /// its second flight (so its resends prompt nothing): the server sends the last flight
    /// again by itself, the same datagram, after 50 ms, 100 and 200 ms more
    /// (``DTLSTransport/lastFlightResends``), and the client connects on the first.
    @Test func theLastFlightGoesAgainWhileThePeerShowsNothing() async throws {
        let h = try Handshake(dropToServer: Set(3...100), dropToClient: [2])
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: 0)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        let both = await eventually(within: 5) { h.client.state == .connected && h.server.state == .connected }
        #expect(both, "client \(h.client.state), server \(h.server.state)")
        try await Task.sleep(for: .milliseconds(600))
        let toClient = h.toClient.sent.withLock { $0 }
        print("server → client: \(toClient.map { "\($0.bytes.count) B at \(Int($0.ms - toClient[0].ms)) ms" })")
        try #require(toClient.count == 5, "flight, last flight and 3 resends: \(toClient.count) datagrams")
        #expect(toClient[2].bytes == toClient[1].bytes && toClient[3].bytes == toClient[1].bytes && toClient[4].bytes == toClient[1].bytes)
        let gaps = (2...4).map { toClient[$0].ms - toClient[$0 - 1].ms }
        for (gap, expected) in zip(gaps, [50.0, 100, 200]) {
            #expect(gap >= expected * 0.95 - 1 && gap < expected + max(40, expected / 2), "gap \(gap) ms, expected \(expected)")
        }
    }

    /// No loss: the client's first application data record, written when it connects,
    /// shows it is done, and the server's last flight does not go again.
    @Test func theLastFlightStaysWhenThePeerSendsData() async throws {
        let h = try Handshake(dropToServer: [], clientSendsOnConnect: Array("SCTP".utf8))
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: 0)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        #expect(await eventually(within: 5) { h.client.state == .connected })
        try await Task.sleep(for: .milliseconds(500))
        let toClient = h.toClient.sent.withLock { $0 }, toServer = h.toServer.sent.withLock { $0 }
        print("no loss: client → server \(toServer.map { "\($0.bytes.count) B at \(Int($0.ms - toClient[0].ms)) ms" }); "
              + "server → client \(toClient.map { "\($0.bytes.count) B at \(Int($0.ms - toClient[0].ms)) ms" })")
        #expect(h.server.state == .connected)
        #expect(toClient.count == 2, "server → client datagrams: \(toClient.count) (its two flights only)")
    }

    /// The handshake's own round trip lowers the timer of the flights after it (Karn's
    /// rule: the answer to a flight sent once): both sides start with a 300 ms first wait
    /// (a round trip of 150 ms given), the client's ClientHello is answered within a few
    /// ms here, and its second flight, dropped, comes again after 50 ms, not 300.
    @Test func theHandshakesRoundTripLowersTheNextFlightsWait() async throws {
        let h = try Handshake(dropToServer: [2])
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: 150)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        let both = await eventually(within: 10) { h.client.state == .connected && h.server.state == .connected }
        #expect(both, "client \(h.client.state), server \(h.server.state)")
        let sent = h.toServer.sent.withLock { $0.map(\.ms) }
        try #require(sent.count >= 3)
        let answered = h.toClient.sent.withLock { $0.first?.ms } ?? 0
        print("ClientHello answered after \(String(format: "%.1f", answered - sent[0])) ms; the second flight resent after "
              + "\(Int(sent[2] - sent[1])) ms (first wait 300 ms at the start)")
        #expect(sent[2] - sent[1] >= 45 && sent[2] - sent[1] < 150, "resent after \(sent[2] - sent[1]) ms")
    }

    /// A server started on records that came before its start (DtlsSrtpTransport feeds
    /// them right after ``DTLSTransport/start(retransmission:)``, on the loop thread)
    /// runs on the timer it was given: its first flight, lost, comes again after 50 ms,
    /// not the 100 ms default.
    @Test func aServerStartedOnEarlyRecordsUsesItsTimer() async throws {
        let h = try Handshake(dropToServer: Set(1...100), dropToClient: [1])
        defer { h.finish() }
        h.client.start(retransmission: DTLSRetransmissionTimer(initialMs: 1_000))
        let hello = try #require(await eventuallyValue(within: 5) { h.toServer.sent.withLock { $0.first?.bytes } })
        h.loop.sync {
            h.server.start(retransmission: DTLSRetransmissionTimer(roundTripMs: 0))
            h.server.receive(hello)
        }
        #expect(await eventually(within: 5) { h.toClient.sent.withLock { $0.count } >= 2 })
        let times = h.toClient.sent.withLock { $0.map(\.ms) }
        print("server's first flight resent after \(Int(times[1] - times[0])) ms")
        #expect(times[1] - times[0] >= 45 && times[1] - times[0] < 90, "resent after \(times[1] - times[0]) ms")
    }

    /// A lost flight of several messages comes again as one datagram: the client's second
    /// flight (Certificate, ClientKeyExchange, CertificateVerify, ChangeCipherSpec,
    /// Finished) is dropped; OpenSSL resends it one message per write, and the transport
    /// packs them into one datagram of at most 1200 bytes, the first wait (50 ms) later.
    @Test func aResentFlightIsOneDatagram() async throws {
        let h = try Handshake(dropToServer: [2])
        defer { h.finish() }
        let timer = DTLSRetransmissionTimer(roundTripMs: 0)
        h.server.start(retransmission: timer)
        h.client.start(retransmission: timer)
        let both = await eventually(within: 10) { h.client.state == .connected && h.server.state == .connected }
        #expect(both, "client \(h.client.state), server \(h.server.state)")
        let sent = h.toServer.sent.withLock { $0 }
        try #require(sent.count >= 3)
        let original = try #require(records(sent[1].bytes)), resent = try #require(records(sent[2].bytes))
        print("client's second flight: \(sent[1].bytes.count) bytes in \(original.count) records; resent after "
              + "\(Int(sent[2].ms - sent[1].ms)) ms as \(sent[2].bytes.count) bytes in \(resent.count) records")
        #expect(resent.count >= 5, "records in the resent datagram: \(resent.map(\.type))")
        #expect(resent.contains { $0.type == 20 }, "the ChangeCipherSpec is in it")
        #expect(sent[2].bytes.count <= DTLSTransport.mtu)
        // The client's own timer, or the server's resent flight that reaches it a moment
        // before (the server's timer started just ahead of the client's).
        #expect(sent[2].ms - sent[1].ms >= 40 && sent[2].ms - sent[1].ms < 200)
    }
}

