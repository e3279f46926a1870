import Foundation
import Testing
import TestSupport
@testable import ICE

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LibNiceTests {
    @Test func libniceVersionAndAgent() {
        let parts = LibNice.version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect(parts[0] == 0 && parts[1] == 1 && parts[2] >= 16)
        #expect(LibNice.probeAgent() == 0)  // NICE_COMPATIBILITY_RFC5245
    }
}

/// A STUN Binding transaction (RFC 5389 §6, §15.2) over a plain UDP socket,
/// independent of libnice, to prove the coturn of the test services answers.
enum RawStun {
    struct Mapped: Equatable { let address: String; let port: UInt16 }

    /// Sends one Binding Request from 127.0.0.1:ephemeral to `port` and returns
    /// the XOR-MAPPED-ADDRESS of the success response and the local port used.
    static func binding(port: UInt16) throws -> (mapped: Mapped, localPort: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var tv = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var remote = local
        remote.sin_port = port.bigEndian
        let txid = (0..<12).map { _ in UInt8.random(in: 0...255) }
        let request: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + txid
        let sent = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, request, request.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == request.count else { throw POSIXError(.EIO) }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        var buf = [UInt8](repeating: 0, count: 1500)
        let n = recv(fd, &buf, buf.count, 0)
        guard n >= 20 else { throw POSIXError(.ETIMEDOUT) }
        let reply = Array(buf[0..<n])
        guard reply[0] == 0x01, reply[1] == 0x01, Array(reply[8..<20]) == txid else { throw POSIXError(.EBADMSG) }
        var i = 20
        while i + 4 <= reply.count {
            let type = UInt16(reply[i]) << 8 | UInt16(reply[i + 1])
            let length = Int(UInt16(reply[i + 2]) << 8 | UInt16(reply[i + 3]))
            if type == 0x0020, length >= 8, reply[i + 5] == 0x01 {
                let xport = (UInt16(reply[i + 6]) << 8 | UInt16(reply[i + 7])) ^ 0x2112
                let cookie: [UInt8] = [0x21, 0x12, 0xA4, 0x42]
                let addr = (0..<4).map { String(reply[i + 8 + $0] ^ cookie[$0]) }.joined(separator: ".")
                return (Mapped(address: addr, port: xport), UInt16(bigEndian: bound.sin_port))
            }
            i += 4 + (length + 3) / 4 * 4
        }
        throw POSIXError(.ENOMSG)
    }
}

@Suite struct CoturnTests {
    @Test func coturnAnswersABindingRequestWithOurLoopbackAddress() async throws {
        let services = try await TestServices.shared()
        let port = try #require(services.turn_port)
        #expect(services.stun_url == "stun:127.0.0.1:\(port)")
        let (mapped, localPort) = try RawStun.binding(port: UInt16(port))
        #expect(mapped == .init(address: "127.0.0.1", port: localPort))
    }
}
