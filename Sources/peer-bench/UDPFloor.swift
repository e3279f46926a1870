// UDPFloor: the kernel's share of a data channel transfer on loopback — the same datagrams (count and mean size each way) sent and received over 127.0.0.1 by one thread that does nothing else, its CPU time.
import Foundation
import Glibc

/// The datagrams one end's candidate pair carried during a transfer (its `candidate-pair`
/// `packetsSent`/`bytesSent`/`packetsReceived`/`bytesReceived` differences).
struct DatagramCounts: Sendable {
    /// Datagrams and UDP payload bytes this end sent.
    var sent = 0, sentBytes = 0
    /// Datagrams and UDP payload bytes this end received.
    var received = 0, receivedBytes = 0

    /// The counts between two snapshots of the same pair.
    static func - (after: DatagramCounts, before: DatagramCounts) -> DatagramCounts {
        DatagramCounts(sent: after.sent - before.sent, sentBytes: after.sentBytes - before.sentBytes,
                       received: after.received - before.received, receivedBytes: after.receivedBytes - before.receivedBytes)
    }
}

/// The floor under `peer-bench data`: what the kernel alone costs to carry the datagrams
/// a transfer used, with nothing of SCTP, DTLS, ICE or the event loop around it.
enum UDPFloor {
    /// What went wrong setting the sockets up.
    struct Failure: Error, CustomStringConvertible {
        /// The call that failed and its errno text.
        var description: String
    }

    /// Sends `counts.sent` datagrams of their mean size from one UDP socket to another on
    /// 127.0.0.1 and `counts.received` datagrams of theirs back, interleaved in the same
    /// proportion (as SACKs follow data), each received by a blocking `recv` as soon as it
    /// was sent: all on the calling thread, with no poll.
    /// - Returns: the calling thread's CPU seconds (user + system) for all of it.
    /// - Throws: ``Failure`` when a socket cannot be made, bound or used.
    /// - Parameter segments: forward datagrams handed to the kernel per `sendmsg`: 1, or
    ///   more as one UDP GSO send (`UDP_SEGMENT`, Linux 4.18), which the kernel cuts into
    ///   datagrams of the same size (libnice sends one datagram per call; this shows what
    ///   batching could save).
    static func measure(_ counts: DatagramCounts, segments: Int = 1) throws(Failure) -> Double {
        let a = try socketOnLoopback(), b = try socketOnLoopback()
        defer { close(a.fd); close(b.fd) }
        let forward = counts.sent > 0 ? max(1, counts.sentBytes / counts.sent) : 0
        let backward = counts.received > 0 ? max(1, counts.receivedBytes / counts.received) : 0
        var buffer = [UInt8](repeating: 0x5A, count: 65_536)
        let batch = max(1, min(segments, buffer.count / max(forward, 1)))
        let start = threadCPUSeconds()
        var answered = 0, i = 0
        while i < counts.sent {
            let n = min(batch, counts.sent - i)
            if n == 1 {
                try carry(from: a.fd, to: b, bytes: forward, buffer: &buffer)
            } else {
                try carrySegmented(from: a.fd, to: b, segment: forward, count: n, buffer: &buffer)
            }
            i += n
            // The answers due after i datagrams, spread as the transfer spread them.
            let due = counts.received * i / counts.sent
            while answered < due {
                try carry(from: b.fd, to: a, bytes: backward, buffer: &buffer)
                answered += 1
            }
        }
        return threadCPUSeconds() - start
    }

    /// `count` datagrams of `segment` bytes from `fd` to `to` in one GSO `sendmsg`, and
    /// their `recv`s at the other socket, one each.
    private static func carrySegmented(from fd: Int32, to: (fd: Int32, address: sockaddr_in), segment: Int, count: Int,
                                       buffer: inout [UInt8]) throws(Failure) {
        var address = to.address
        let cmsgSpace = MemoryLayout<cmsghdr>.stride + 8  // CMSG_SPACE(sizeof(uint16_t)) on 64-bit Linux
        var control = [UInt8](repeating: 0, count: cmsgSpace)
        let ok = buffer.withUnsafeMutableBytes { raw -> Bool in
            let sent = withUnsafeMutablePointer(to: &address) { addr in
                control.withUnsafeMutableBytes { ctl -> Int in
                    // struct cmsghdr: cmsg_len (size_t), cmsg_level, cmsg_type (int); then the data.
                    ctl.storeBytes(of: MemoryLayout<cmsghdr>.size + 2, toByteOffset: 0, as: Int.self)
                    ctl.storeBytes(of: Int32(17), toByteOffset: 8, as: Int32.self)  // SOL_UDP
                    ctl.storeBytes(of: Int32(103), toByteOffset: 12, as: Int32.self)  // UDP_SEGMENT
                    ctl.storeBytes(of: UInt16(segment), toByteOffset: MemoryLayout<cmsghdr>.size, as: UInt16.self)
                    var iov = iovec(iov_base: raw.baseAddress, iov_len: segment * count)
                    return withUnsafeMutablePointer(to: &iov) { iovp in
                        var m = msghdr(msg_name: UnsafeMutableRawPointer(addr), msg_namelen: socklen_t(MemoryLayout<sockaddr_in>.size),
                                       msg_iov: iovp, msg_iovlen: 1, msg_control: ctl.baseAddress, msg_controllen: ctl.count, msg_flags: 0)
                        return sendmsg(fd, &m, 0)
                    }
                }
            }
            guard sent == segment * count else { return false }
            for _ in 0..<count where recv(to.fd, raw.baseAddress, raw.count, 0) != segment { return false }
            return true
        }
        guard ok else { throw Failure(description: "UDP GSO send of \(count) × \(segment) bytes on 127.0.0.1: \(String(cString: strerror(errno)))") }
    }

    /// A bound UDP socket on 127.0.0.1 (an ephemeral port) and its address.
    private static func socketOnLoopback() throws(Failure) -> (fd: Int32, address: sockaddr_in) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw Failure(description: "bind 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        return (fd, address)
    }

    /// One datagram of `bytes` from `fd` to `to`, and its `recv` at the other socket.
    private static func carry(from fd: Int32, to: (fd: Int32, address: sockaddr_in), bytes: Int,
                              buffer: inout [UInt8]) throws(Failure) {
        var address = to.address
        let ok = buffer.withUnsafeMutableBytes { raw -> Bool in
            let sent = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, bytes, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            return sent == bytes && recv(to.fd, raw.baseAddress, raw.count, 0) == bytes
        }
        guard ok else { throw Failure(description: "sendto/recv of \(bytes) bytes on 127.0.0.1: \(String(cString: strerror(errno)))") }
    }
}
