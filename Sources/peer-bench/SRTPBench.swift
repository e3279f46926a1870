// peer-bench srtp: packets per second through serialize → SRTP protect → unprotect → parse, next to raw libsrtp.
import CSRTP
import DTLS
import Dispatch
import Foundation
import RTP

/// `peer-bench srtp [PACKETS]`: packets per second for RTP packet → serialize → SRTP
/// protect → unprotect → parse (1200-byte payloads, SRTP_AES128_CM_SHA1_80), next to
/// libsrtp's own `srtp_protect` rate measured in the same run on the same packets.
enum SRTPBench {
    static let key = [UInt8](repeating: 0x2B, count: 16)
    static let salt = [UInt8](repeating: 0x5A, count: 14)

    static func packet(_ i: Int) -> RTPPacket {
        RTPPacket(payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: i), timestamp: UInt32(truncatingIfNeeded: i * 3000),
                  ssrc: 0x1234_5678, payload: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1200))
    }

    static func seconds(_ start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    static func run(count: Int) throws {
        // Ours: the whole path a sent and received packet takes.
        let sender = try SRTPSession(profile: .aes128CmSha1_80, key: key, salt: salt, direction: .outbound)
        let receiver = try SRTPSession(profile: .aes128CmSha1_80, key: key, salt: salt, direction: .inbound)
        var start = DispatchTime.now().uptimeNanoseconds
        var checksum = 0
        for i in 0..<count {
            let protected = try sender.protect(rtp: packet(i).serialized())
            let parsed = try RTPPacket(parsing: try receiver.unprotect(srtp: protected))
            checksum &+= Int(parsed.sequenceNumber)
        }
        let ours = Double(count) / seconds(start)

        // Floor: libsrtp's srtp_protect alone, in place, same key and packet size.
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_rtp_default(&policy.rtp)
        srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        policy.ssrc.type = ssrc_any_outbound
        policy.window_size = 128
        var keyAndSalt = key + salt
        var session: srtp_t?
        let created = keyAndSalt.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            policy.key = buffer.baseAddress
            return srtp_create(&session, &policy)
        }
        guard created == srtp_err_status_ok else { throw BenchError.libsrtp("srtp_create", Int(created.rawValue)) }
        defer { srtp_dealloc(session) }
        let packets = (0..<count).map { packet($0).serialized() }
        var buffer = [UInt8](repeating: 0, count: 1212 + Int(SRTP_MAX_TRAILER_LEN))
        start = DispatchTime.now().uptimeNanoseconds
        for bytes in packets {
            var length = Int32(bytes.count)
            let status = buffer.withUnsafeMutableBytes { raw -> srtp_err_status_t in
                bytes.withUnsafeBytes { raw.copyMemory(from: $0) }
                return srtp_protect(session, raw.baseAddress, &length)
            }
            guard status == srtp_err_status_ok else { throw BenchError.libsrtp("srtp_protect", Int(status.rawValue)) }
        }
        let floor = Double(count) / seconds(start)
        print(String(format: "srtp path (serialize → protect → unprotect → parse, 1200 B): %.0f packets/s", ours))
        print(String(format: "libsrtp srtp_protect alone (same run, same packets):        %.0f packets/s", floor))
        print(String(format: "ratio ours / libsrtp protect: %.2f (ours does protect + unprotect + parse)  [checksum %ld]",
                     ours / floor, checksum))
    }
}

enum BenchError: Error, CustomStringConvertible {
    case libsrtp(String, Int)
    case file(String)
    case tool(String, Int32)
    var description: String {
        switch self {
        case let .libsrtp(call, code): return "\(call) failed with libsrtp status \(code)"
        case let .file(path): return "cannot write \(path)"
        case let .tool(path, status): return "\(path) exited with status \(status)"
        }
    }
}
