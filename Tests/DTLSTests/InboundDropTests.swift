// DtlsSrtpTransport's received datagrams dropped by reason: SRTP/SRTCP authentication failures, replays, malformed packets, SRTP before the keys or after close, and datagrams no RFC 7983 range claims (RFC 3711 §3.3, RFC 7983 §7).
import Foundation
import Synchronization
import Testing
import TestSupport
import EventLoop
@testable import DTLS

/// Two DtlsSrtpTransports in one process: A's datagrams go to B (or are held back while
/// `holding`, for the test to deliver as it likes), B's to A.
private final class Wire: Sendable {
    let a = Mutex<DtlsSrtpTransport?>(nil), b = Mutex<DtlsSrtpTransport?>(nil)
    let holding = Mutex(false), held = Mutex<[[UInt8]]>([])
    let rtpAtB = Atomic<Int>(0), rtcpAtB = Atomic<Int>(0)
    let connected = Atomic<Int>(0)

    func fromA(_ d: [UInt8]) -> Bool {
        if holding.withLock({ $0 }) { held.withLock { $0.append(d) } } else { b.withLock { $0 }?.receive(d) }
        return true
    }
    func fromB(_ d: [UInt8]) -> Bool {
        a.withLock { $0 }?.receive(d)
        return true
    }
}

@Suite struct InboundDropTests {
    /// An RTP packet (PT 96, SSRC 0x1234) with sequence number `seq` and a short payload.
    static func rtp(_ seq: UInt16) -> [UInt8] {
        [0x80, 96, UInt8(seq >> 8), UInt8(seq & 0xFF), 0, 0, 0, 1, 0, 0, 0x12, 0x34, 1, 2, 3, 4]
    }

    /// B counts each drop under its reason: an SRTP packet before its handshake gave keys
    /// (early), a datagram whose first byte is none of RFC 7983's (unknown), then with keys
    /// a packet whose tag has its last byte flipped (auth), the genuine packet and the same
    /// packet again (replay), an SRTCP compound delivered twice (replay), a 5-byte
    /// "RTP" datagram (malformed), and after close an SRTP packet (early): the genuine
    /// packets are delivered, each bad one counted once and nothing else.
    @Test func eachDropIsCountedUnderItsReason() async throws {
        let loop = EventLoop.shared
        let wire = Wire()
        let certA = try Certificate(commonName: "a"), certB = try Certificate(commonName: "b")
        let a = DtlsSrtpTransport(send: { wire.fromA($0) }, certificate: certA, loop: loop,
                                  onState: { s, _, _ in if s == .connected { wire.connected.add(1, ordering: .relaxed) } },
                                  onRTP: { _ in }, onRTCP: { _ in })
        let b = DtlsSrtpTransport(send: { wire.fromB($0) }, certificate: certB, loop: loop,
                                  onState: { s, _, _ in if s == .connected { wire.connected.add(1, ordering: .relaxed) } },
                                  onRTP: { _ in wire.rtpAtB.add(1, ordering: .relaxed) },
                                  onRTCP: { _ in wire.rtcpAtB.add(1, ordering: .relaxed) })
        wire.a.withLock { $0 = a }
        wire.b.withLock { $0 = b }
        loop.sync {
            b.receive(Self.rtp(1) + [UInt8](repeating: 0, count: 16))  // no keys yet
            b.receive([0xFF, 0, 1, 2])
        }
        try b.start(role: .server, remoteFingerprints: [("sha-256", certA.fingerprint("sha-256"))])
        try a.start(role: .client, remoteFingerprints: [("sha-256", certB.fingerprint("sha-256"))])
        try #require(await eventually(within: 10) { wire.connected.load(ordering: .relaxed) == 2 }, "DTLS connected")

        wire.holding.withLock { $0 = true }
        #expect(a.sendRTP(Self.rtp(2)))
        #expect(a.sendRTCP([0x80, 0xC9, 0x00, 0x01, 0, 0, 0x12, 0x34]))
        try #require(await eventually(within: 5) { wire.held.withLock { $0.count } == 2 })
        let (srtp, srtcp) = wire.held.withLock { ($0[0], $0[1]) }
        var forged = srtp
        forged[forged.count - 1] ^= 0xFF
        loop.sync {
            b.receive(forged)
            b.receive(srtp)
            b.receive(srtp)
            b.receive(srtcp)
            b.receive(srtcp)
            b.receive([0x80, 96, 0, 9, 0])
        }
        b.close()
        loop.sync { b.receive(srtp) }
        a.close()
        let c = b.snapshot
        var expected = DtlsSrtpTransport.InboundDrops()
        (expected.authFailures, expected.replays, expected.malformed, expected.early) = (1, 2, 1, 2)
        #expect(c.inboundDrops == expected, "\(c.inboundDrops)")
        #expect(c.unknownDropped == 1 && c.srtpFailures == 4)
        #expect(wire.rtpAtB.load(ordering: .relaxed) == 1 && wire.rtcpAtB.load(ordering: .relaxed) == 1)
    }
}
