import Testing
import TestSupport
@testable import DTLS

/// A hand-built RTP packet (RFC 3550 §5.1): V=2, no padding/extension/CSRC,
/// marker 0, PT 96, then `payload`.
func rtpPacket(sequence: UInt16, timestamp: UInt32, ssrc: UInt32 = 0x1234_5678, payload: [UInt8]) -> [UInt8] {
    var p: [UInt8] = [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
    p += [UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xFF), UInt8((timestamp >> 8) & 0xFF), UInt8(timestamp & 0xFF)]
    p += [UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)]
    return p + payload
}

/// A 1200-byte payload whose bytes depend on `seed`.
func payload(_ seed: Int, count: Int = 1200) -> [UInt8] {
    (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7) }
}

/// A master key and salt for `profile` with distinct bytes starting at `base`.
func keyAndSalt(_ profile: SRTPProfile, base: UInt8 = 1) -> (key: [UInt8], salt: [UInt8]) {
    let key = (0 ..< profile.keyLength).map { base &+ UInt8($0) }
    let salt = (0 ..< profile.saltLength).map { base &+ 0x40 &+ UInt8($0) }
    return (key, salt)
}

/// An outbound/inbound session pair sharing one key.
func sessionPair(_ profile: SRTPProfile) throws -> (tx: SRTPSession, rx: SRTPSession) {
    let (key, salt) = keyAndSalt(profile)
    return (try SRTPSession(profile: profile, key: key, salt: salt, direction: .outbound),
            try SRTPSession(profile: profile, key: key, salt: salt, direction: .inbound))
}

/// Tag length in bytes appended to SRTP packets: 10 (HMAC-SHA1-80) or 16 (GCM).
func tagLength(_ profile: SRTPProfile) -> Int { profile == .aes128CmSha1_80 ? 10 : 16 }

@Suite struct SRTPProfileTests {
    @Test func lengthsAndNames() {
        #expect(SRTPProfile.aes128CmSha1_80.keyLength == 16)
        #expect(SRTPProfile.aes128CmSha1_80.saltLength == 14)
        #expect(SRTPProfile.aes128CmSha1_80.keyingMaterialLength == 60)
        #expect(SRTPProfile.aes128CmSha1_80.openSSLName == "SRTP_AES128_CM_SHA1_80")
        #expect(SRTPProfile.aes128CmSha1_80.protectionProfileID == 0x0001)
        #expect(SRTPProfile.aeadAes128Gcm.keyLength == 16)
        #expect(SRTPProfile.aeadAes128Gcm.saltLength == 12)
        #expect(SRTPProfile.aeadAes128Gcm.keyingMaterialLength == 56)
        #expect(SRTPProfile.aeadAes128Gcm.openSSLName == "SRTP_AEAD_AES_128_GCM")
        #expect(SRTPProfile.aeadAes128Gcm.protectionProfileID == 0x0007)
        #expect(SRTPProfile(openSSLName: "SRTP_AEAD_AES_128_GCM") == .aeadAes128Gcm)
        #expect(SRTPProfile(openSSLName: "SRTP_AES128_CM_SHA1_80") == .aes128CmSha1_80)
        #expect(SRTPProfile(openSSLName: "SRTP_NULL_SHA1_80") == nil)
        #expect(SRTPProfile.maxTrailerLength == 144)
    }

    @Test func statusNames() {
        #expect(SRTPStatus.authFail.name == "srtp_err_status_auth_fail")
        #expect(SRTPStatus.replayFail.name == "srtp_err_status_replay_fail")
        #expect(SRTPStatus.replayOld.name == "srtp_err_status_replay_old")
        #expect(SRTPStatus(code: 27).name == "srtp_err_status_pkt_idx_adv")
        #expect(SRTPStatus(code: 99).name == "srtp_err_status_99")
    }
}

@Suite struct SRTPKeyingMaterialTests {
    @Test func splitsSixtyBytesForAESCM() throws {
        let material = (0 ..< 60).map { UInt8($0) }
        let km = try SRTPKeyingMaterial(profile: .aes128CmSha1_80, material: material)
        #expect(km.clientKey == Array(0 ..< 16))
        #expect(km.serverKey == Array(16 ..< 32))
        #expect(km.clientSalt == Array(32 ..< 46))
        #expect(km.serverSalt == Array(46 ..< 60))
        #expect(km.local(isClient: true).key == Array(0 ..< 16))
        #expect(km.local(isClient: true).salt == Array(32 ..< 46))
        #expect(km.remote(isClient: true).key == Array(16 ..< 32))
        #expect(km.remote(isClient: true).salt == Array(46 ..< 60))
        #expect(km.local(isClient: false).key == Array(16 ..< 32))
    }

    @Test func splitsFiftySixBytesForGCM() throws {
        let material = (0 ..< 56).map { UInt8($0) }
        let km = try SRTPKeyingMaterial(profile: .aeadAes128Gcm, material: material)
        #expect(km.clientKey == Array(0 ..< 16))
        #expect(km.serverKey == Array(16 ..< 32))
        #expect(km.clientSalt == Array(32 ..< 44))
        #expect(km.serverSalt == Array(44 ..< 56))
    }

    @Test func wrongLengthIsTyped() {
        #expect(throws: SRTPError.invalidKeyingMaterialLength(profile: .aeadAes128Gcm, expected: 56, actual: 60)) {
            try SRTPKeyingMaterial(profile: .aeadAes128Gcm, material: Array(repeating: 0, count: 60))
        }
        #expect(throws: SRTPError.invalidKeyingMaterialLength(profile: .aes128CmSha1_80, expected: 60, actual: 0)) {
            try SRTPKeyingMaterial(profile: .aes128CmSha1_80, material: [])
        }
    }

    /// Client's outbound session interoperates with server's inbound session built from the same split.
    @Test(arguments: SRTPProfile.allCases)
    func splitKeysInteroperate(profile: SRTPProfile) throws {
        let material = (0 ..< profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: $0 * 13 + 5) }
        let km = try SRTPKeyingMaterial(profile: profile, material: material)
        let clientTx = km.local(isClient: true), serverRx = km.remote(isClient: false)
        let tx = try SRTPSession(profile: profile, key: clientTx.key, salt: clientTx.salt, direction: .outbound)
        let rx = try SRTPSession(profile: profile, key: serverRx.key, salt: serverRx.salt, direction: .inbound)
        let packet = rtpPacket(sequence: 1, timestamp: 0, payload: payload(1))
        #expect(try rx.unprotect(srtp: tx.protect(rtp: packet)) == packet)
    }
}

@Suite struct SRTPSessionTests {
    /// 10 000 packets with sequence numbers crossing 65535 → 0, so the rollover counter
    /// must advance on both sides for decryption to succeed.
    @Test(arguments: SRTPProfile.allCases)
    func roundTripTenThousandPacketsAcrossWrap(profile: SRTPProfile) async throws {
        let (tx, rx) = try sessionPair(profile)
        // Seconds of crypto in a debug build: on a thread of its own, not the cooperative pool.
        let (wrapped, mismatches, first, firstPacket) = try await TestServices.offload { () -> (Bool, Int, [UInt8], [UInt8]) in
            let start: UInt16 = 65535 - 4999
            var wrapped = false
            var mismatches = 0
            var first: [UInt8] = [], firstPacket: [UInt8] = []
            for i in 0 ..< 10_000 {
                let seq = start &+ UInt16(truncatingIfNeeded: i)
                if seq == 0 { wrapped = true }
                let body = payload(i)
                let packet = rtpPacket(sequence: seq, timestamp: UInt32(i) &* 3000, payload: body)
                let protected = try tx.protect(rtp: packet)
                if i == 0 { (first, firstPacket) = (protected, packet) }
                let plain = try rx.unprotect(srtp: protected)
                if plain.count != 1212 || Array(plain[12...]) != body || Array(plain[0 ..< 12]) != Array(packet[0 ..< 12]) {
                    mismatches += 1
                }
            }
            return (wrapped, mismatches, first, firstPacket)
        }
        #expect(first.count == 12 + 1200 + tagLength(profile))
        #expect(Array(first.prefix(12)) == Array(firstPacket.prefix(12)))
        #expect(Array(first.dropFirst(12).prefix(1200)) != Array(firstPacket.dropFirst(12)))
        #expect(wrapped)
        #expect(mismatches == 0)
        #expect(tx.counters.protected == 10_000)
        #expect(rx.counters.unprotected == 10_000)
        #expect(rx.counters.totalFailures == 0)
    }

    @Test(arguments: SRTPProfile.allCases)
    func replayIsRejectedAndCounted(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        let first = try tx.protect(rtp: rtpPacket(sequence: 10, timestamp: 0, payload: payload(0)))
        _ = try rx.unprotect(srtp: first)
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: .replayFail)) {
            try rx.unprotect(srtp: first)
        }
        #expect(rx.counters.replayFailures == 1)
        // A packet a window and 100 packets ahead (the window slides with it): packet 10 is
        // now older than the window.
        let last = UInt16(10 + SRTPSession.replayWindowPackets + 100)
        _ = try rx.unprotect(srtp: tx.protect(rtp: rtpPacket(sequence: last, timestamp: 0, payload: payload(Int(last)))))
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: .replayOld)) {
            try rx.unprotect(srtp: first)
        }
        let c = rx.counters
        #expect(c.replayFailures == 1)
        #expect(c.replayOld == 1)
        #expect(c.authFailures == 0)
        #expect(c.unprotected == 2)
    }

    /// A packet that never arrived, resent after a NACK 1,500 packets later (over 1 s of
    /// 1 Mbit/s video; libsrtp's default window of 128 refuses it as `replay_old`), is
    /// accepted once, then refused as a replay (RFC 3711 §3.3.2).
    @Test(arguments: SRTPProfile.allCases)
    func aRetransmissionFarBehindIsAcceptedOnce(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        #expect(SRTPSession.replayWindowPackets >= 1024)
        let lost = try tx.protect(rtp: rtpPacket(sequence: 100, timestamp: 0, payload: payload(100)))
        for seq in [UInt16(99), 101, 800, 1600] {  // the packets around it arrive; the window moves to 1600
            _ = try rx.unprotect(srtp: tx.protect(rtp: rtpPacket(sequence: seq, timestamp: 0, payload: payload(Int(seq)))))
        }
        let resent = try tx.protect(rtp: rtpPacket(sequence: 100, timestamp: 0, payload: payload(100)))
        #expect(resent == lost)
        #expect(try rx.unprotect(srtp: resent) == rtpPacket(sequence: 100, timestamp: 0, payload: payload(100)))
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: .replayFail)) { try rx.unprotect(srtp: resent) }
        #expect(rx.counters.replayOld == 0 && rx.counters.unprotected == 5)
    }

    /// A NACKed packet is protected again (RFC 4588 plain retransmission): the outbound
    /// session allows the repeat and yields the same bytes, which the receiver takes when
    /// the original never arrived.
    @Test(arguments: SRTPProfile.allCases)
    func aRetransmissionIsProtectedAgainToTheSameBytes(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        let packets = (UInt16(1)...3).map { rtpPacket(sequence: $0, timestamp: 0, payload: payload(Int($0))) }
        let first = try packets.map { try tx.protect(rtp: $0) }
        let again = try tx.protect(rtp: packets[1])
        #expect(again == first[1])
        _ = try rx.unprotect(srtp: first[0])
        _ = try rx.unprotect(srtp: first[2])          // packet 2 "lost"
        #expect(try rx.unprotect(srtp: again) == packets[1])  // its retransmission arrives
        #expect(tx.counters.protected == 4)
    }

    @Test(arguments: SRTPProfile.allCases)
    func flippedBitFailsAuthentication(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        let packet = rtpPacket(sequence: 500, timestamp: 90_000, payload: payload(3))
        var protected = try tx.protect(rtp: packet)
        protected[600] ^= 0x04
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: .authFail)) {
            try rx.unprotect(srtp: protected)
        }
        #expect(rx.counters.authFailures == 1)
        #expect(rx.counters.totalFailures == 1)
        // The untouched packet still decrypts: a forgery did not poison the replay window.
        protected[600] ^= 0x04
        #expect(try rx.unprotect(srtp: protected) == packet)
    }

    /// What a flood of forged packets looks like: RTP headers with SSRCs never seen and
    /// random bytes for payload and tag. Each fails authentication (counted as such), and
    /// the real stream goes on.
    @Test(arguments: SRTPProfile.allCases)
    func forgedPacketsFromUnknownSSRCsFailAuthentication(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        #expect(try rx.unprotect(srtp: tx.protect(rtp: rtpPacket(sequence: 10, timestamp: 0, payload: payload(1)))).count == 1212)
        var generator = SystemRandomNumberGenerator()
        for i in 0..<200 {
            let forged = rtpPacket(sequence: UInt16(truncatingIfNeeded: 1000 + i), timestamp: UInt32(i) * 3000,
                                   ssrc: generator.next(), payload: (0..<1188).map { _ in generator.next() })
            do {
                _ = try rx.unprotect(srtp: forged)
                Issue.record("a forged packet was accepted")
            } catch {
                #expect(error == .libsrtp(operation: "srtp_unprotect", status: .authFail), "\(error)")
            }
        }
        #expect(rx.counters.authFailures == 200)
        #expect(try rx.unprotect(srtp: tx.protect(rtp: rtpPacket(sequence: 11, timestamp: 3000, payload: payload(2)))).count == 1212)
    }

    @Test(arguments: SRTPProfile.allCases)
    func wrongKeyFails(profile: SRTPProfile) throws {
        let (key, salt) = keyAndSalt(profile)
        let other = keyAndSalt(profile, base: 0x90)
        let tx = try SRTPSession(profile: profile, key: key, salt: salt, direction: .outbound)
        let rx = try SRTPSession(profile: profile, key: other.key, salt: salt, direction: .inbound)
        let protected = try tx.protect(rtp: rtpPacket(sequence: 1, timestamp: 0, payload: payload(0)))
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: .authFail)) {
            try rx.unprotect(srtp: protected)
        }
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect_rtcp", status: .authFail)) {
            try rx.unprotectRTCP(tx.protectRTCP(senderReport()))
        }
        #expect(rx.counters.authFailures == 2)
    }

    /// An RTCP sender report (RFC 3550 §6.4.1) with no report blocks: 28 bytes.
    func senderReport() -> [UInt8] {
        [0x80, 200, 0x00, 0x06, 0x12, 0x34, 0x56, 0x78,
         0xE7, 0x3A, 0x12, 0x34, 0x80, 0x00, 0x00, 0x00,
         0x00, 0x01, 0x5F, 0x90, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x2E, 0xE0]
    }

    @Test(arguments: SRTPProfile.allCases)
    func srtcpRoundTrip(profile: SRTPProfile) throws {
        let (tx, rx) = try sessionPair(profile)
        let sr = senderReport()
        for i in 0 ..< 50 {
            let protected = try tx.protectRTCP(sr)
            // header + encrypted body, E flag + 31-bit SRTCP index, tag.
            #expect(protected.count == 28 + 4 + tagLength(profile))
            #expect(Array(protected[0 ..< 8]) == Array(sr[0 ..< 8]))
            // RFC 3711 §3.4: E‖index before the tag; RFC 7714 §9.1 (AEAD): after the tag.
            let at = profile == .aes128CmSha1_80 ? 28 : 28 + 16
            let index = protected[at ..< at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // libsrtp numbers SRTCP packets from 1, E flag set (encrypted).
            #expect(index == 0x8000_0000 | UInt32(i + 1))
            #expect(try rx.unprotectRTCP(protected) == sr)
            if i == 49 {
                #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect_rtcp", status: .replayFail)) {
                    try rx.unprotectRTCP(protected)
                }
            }
        }
        #expect(rx.counters.unprotected == 50)
        #expect(rx.counters.replayFailures == 1)
    }

    @Test func badInputIsTypedAndCounted() throws {
        let (tx, rx) = try sessionPair(.aes128CmSha1_80)
        #expect(throws: SRTPError.invalidKeyLength(profile: .aeadAes128Gcm, expected: 16, actual: 15)) {
            try SRTPSession(profile: .aeadAes128Gcm, key: Array(repeating: 1, count: 15),
                            salt: Array(repeating: 1, count: 12), direction: .inbound)
        }
        #expect(throws: SRTPError.invalidSaltLength(profile: .aes128CmSha1_80, expected: 14, actual: 12)) {
            try SRTPSession(profile: .aes128CmSha1_80, key: Array(repeating: 1, count: 16),
                            salt: Array(repeating: 1, count: 12), direction: .outbound)
        }
        #expect(throws: SRTPError.malformedPacket(operation: "srtp_unprotect", length: 5,
                                                  reason: "RTP header needs 12 bytes, have 5")) {
            try rx.unprotect(srtp: [0x80, 96, 0, 1, 0])
        }
        // CSRC count 15 claims 72 header bytes.
        #expect(throws: SRTPError.malformedPacket(operation: "srtp_protect", length: 20,
                                                  reason: "CSRC count 15 needs 72 bytes, have 20")) {
            try tx.protect(rtp: [0x8F] + Array(repeating: 0, count: 19))
        }
        // Extension header claims 0xFFFF words.
        #expect(throws: SRTPError.malformedPacket(operation: "srtp_unprotect", length: 18,
                                                  reason: "header extension of 65535 words needs 262156 bytes, have 18")) {
            try rx.unprotect(srtp: [0x90, 96, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4, 0xBE, 0xDE, 0xFF, 0xFF, 0, 0])
        }
        #expect(throws: SRTPError.malformedPacket(operation: "srtp_unprotect_rtcp", length: 0,
                                                  reason: "RTCP header with sender SSRC needs 8 bytes, have 0")) {
            try rx.unprotectRTCP([])
        }
        // Random-looking bytes with a valid header but too short for a tag: libsrtp refuses, no crash.
        // libsrtp 2.5 answers a packet shorter than its tag with parse_err (21).
        #expect(throws: SRTPError.libsrtp(operation: "srtp_unprotect", status: SRTPStatus(code: 21))) {
            try rx.unprotect(srtp: rtpPacket(sequence: 1, timestamp: 0, payload: [1, 2]))
        }
        #expect(rx.counters.otherFailures == 4)
        #expect(rx.counters.authFailures == 0)
        #expect(tx.counters.otherFailures == 1)
    }

    @Test func sessionsWorkFromManyThreads() async throws {
        let (tx, rx) = try sessionPair(.aeadAes128Gcm)
        await withTaskGroup(of: Void.self) { group in
            for t in 0 ..< 4 {
                group.addTask {
                    for i in 0 ..< 100 {
                        let ssrc = UInt32(0xA000 + t)
                        let p = rtpPacket(sequence: UInt16(i), timestamp: 0, ssrc: ssrc, payload: payload(i, count: 100))
                        _ = try? rx.unprotect(srtp: tx.protect(rtp: p))
                    }
                }
            }
        }
        #expect(tx.counters.protected == 400)
        #expect(rx.counters.unprotected == 400)
    }
}
