import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A socket bound to a free port on 127.0.0.1 (and listening, for TCP) for the life
/// of the value: the port is "taken". Drop it to free the port again.
public final class TakenPort {
    public let fd: Int32
    /// The port, host byte order.
    public let port: UInt16

    /// Binds a `SOCK_STREAM` or `SOCK_DGRAM` socket to 127.0.0.1:0.
    public init(type: __socket_type) throws {
        let fd = socket(AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { close(fd); throw POSIXError(.EADDRINUSE) }
        if type == SOCK_STREAM { listen(fd, 1) }
        self.fd = fd
        port = UInt16(bigEndian: addr.sin_port)
    }

    deinit { close(fd) }

    /// A port on 127.0.0.1 where nothing listens (bound, read and released at once).
    public static func unused(type: __socket_type = SOCK_STREAM) throws -> UInt16 {
        try TakenPort(type: type).port
    }
}

/// The ports of `ports` that a UDP socket on 127.0.0.1 still holds, as /proc/net/udp lists
/// them: what a test of close() waits on before it checks each port.
public func boundLoopbackUDPPorts(_ ports: [Int]) -> [Int] {
    let udp = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
    return ports.filter { udp.contains(String(format: "0100007F:%04X ", $0)) }
}
