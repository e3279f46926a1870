// HostAddresses: the IP addresses of this host's interfaces (getifaddrs), in inet_ntop's form.
#if canImport(Glibc)
import Glibc
#endif

/// The addresses of this host's interfaces, to tell a local address from another host's.
public enum HostAddresses {
    /// Every interface address (IPv4 and IPv6, numeric, inet_ntop's form); nil when
    /// `getifaddrs` fails.
    public static func all() -> [String]? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var here: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let sa = entry.pointee.ifa_addr else { continue }
            if let a = numeric(sa) { here.append(a) }
        }
        return here
    }

    /// True when `address` (an IP literal) is one of this host's (loopback included).
    public static func contains(_ address: String) -> Bool {
        guard let wanted = canonical(address) else { return false }
        if wanted.hasPrefix("127.") || wanted == "::1" { return true }
        return all()?.contains(wanted) ?? false
    }

    /// `text` as inet_ntop writes it (brackets of an IPv6 literal dropped), or nil when it
    /// is no IP literal.
    public static func canonical(_ text: String) -> String? {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return ntop(AF_INET, &v4) }
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        if inet_pton(AF_INET6, bare, &v6) == 1 { return ntop(AF_INET6, &v6) }
        return nil
    }

    /// The numeric address of an interface's `sockaddr` (IPv4 or IPv6), else nil.
    private static func numeric(_ sa: UnsafeMutablePointer<sockaddr>) -> String? {
        switch Int32(sa.pointee.sa_family) {
        case AF_INET:
            return sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                var a = p.pointee.sin_addr
                return ntop(AF_INET, &a)
            }
        case AF_INET6:
            return sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                var a = p.pointee.sin6_addr
                return ntop(AF_INET6, &a)
            }
        default:
            return nil
        }
    }

    private static func ntop(_ family: Int32, _ address: UnsafeRawPointer) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
