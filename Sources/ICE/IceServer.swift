// IceServer: STUN and TURN server URLs (RFC 7064 §3.1, RFC 7065 §3.1) with their credentials, parsed and resolved.
#if canImport(Glibc)
import Glibc
#endif

/// A STUN or TURN server URL: `stun:host[:port]`, `stuns:…` (RFC 7064 §3.1) and
/// `turn:host[:port][?transport=udp|tcp]`, `turns:…` (RFC 7065 §3.1), with the
/// long-term credentials a TURN server needs (RFC 8489 §9.2).
public struct IceServer: Equatable, Sendable, CustomStringConvertible {
    /// `stun`, `stuns`, `turn` or `turns`.
    public enum Scheme: String, Sendable { case stun, stuns, turn, turns }
    /// The transport to the server.
    public enum Transport: String, Sendable { case udp, tcp }

    /// The URL scheme.
    public var scheme: Scheme
    /// Host name or IP literal (an IPv6 literal without brackets).
    public var host: String
    /// Port; defaults 3478 (stun, turn) and 5349 (stuns, turns).
    public var port: UInt16
    /// Transport: from `?transport=`, else UDP for stun/turn and TCP for stuns/turns.
    public var transport: Transport
    /// TURN long-term credentials.
    public var username: String?
    /// TURN long-term password.
    public var password: String?

    /// True for `turn:` and `turns:`.
    public var isTURN: Bool { scheme == .turn || scheme == .turns }

    /// Parses `text` as a STUN or TURN URL.
    /// - Throws: ``IceServerError`` naming the URL and what is wrong: unknown scheme,
    ///   missing host, bad port, `?transport=` on a STUN URL or with another value.
    public init(_ text: String, username: String? = nil, password: String? = nil) throws(IceServerError) {
        guard let colon = text.firstIndex(of: ":"), let scheme = Scheme(rawValue: text[..<colon].lowercased()) else {
            throw IceServerError(url: text, expected: "a stun:, stuns:, turn: or turns: URL")
        }
        self.scheme = scheme
        var rest = text[text.index(after: colon)...]
        if rest.hasPrefix("//") { throw IceServerError(url: text, expected: "no \"//\" after the scheme (RFC 7064: stun:host:port)") }
        var transport: Transport?
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...]
            rest = rest[..<q]
            guard scheme == .turn || scheme == .turns else { throw IceServerError(url: text, expected: "no query on a STUN URL") }
            guard query.hasPrefix("transport="), let t = Transport(rawValue: String(query.dropFirst("transport=".count)).lowercased()) else {
                throw IceServerError(url: text, expected: "?transport=udp or ?transport=tcp")
            }
            transport = t
        }
        var host = Substring(rest)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw IceServerError(url: text, expected: "a closing ] after the IPv6 address") }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw IceServerError(url: text, expected: ":port after the IPv6 address")
            }
        } else if let c = host.firstIndex(of: ":") {
            guard host[host.index(after: c)...].allSatisfy(\.isNumber) else {
                throw IceServerError(url: text, expected: "an IPv6 address in brackets: [2001:db8::1]:3478")
            }
            portText = host[host.index(after: c)...]
            host = host[..<c]
        }
        // Brackets only delimit an IPv6 literal: "[[x]" would name host "[x", written "stun:[x:3478".
        guard !host.isEmpty, !host.contains(" "), !host.contains("/"), !host.contains("["), !host.contains("]") else {
            throw IceServerError(url: text, expected: "a host name or address")
        }
        self.host = String(host)
        if let portText {
            guard let p = UInt16(portText), p > 0 else { throw IceServerError(url: text, expected: "a port 1-65535, not \"\(portText)\"") }
            port = p
        } else {
            port = scheme == .stuns || scheme == .turns ? 5349 : 3478
        }
        self.transport = transport ?? (scheme == .stuns || scheme == .turns ? .tcp : .udp)
        self.username = username
        self.password = password
    }

    /// The URL in canonical form, e.g. "turn:[::1]:3478?transport=tcp".
    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue):\(h):\(port)" + (isTURN ? "?transport=\(transport.rawValue)" : "")
    }

    /// The server's IPv4 or IPv6 address as text, resolved with the system resolver
    /// (getaddrinfo) when ``host`` is a name. libnice needs a literal address.
    /// - Throws: ``IceServerError`` when the name does not resolve.
    public func resolvedAddress() throws(IceServerError) -> String {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        guard status == 0, let first = result else {
            throw IceServerError(url: description, expected: "a host that resolves (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(result) }
        // Prefer an IPv4 address (gathering is usually on IPv4), else the first one.
        var chosen = first
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            if entry.pointee.ai_family == AF_INET { chosen = entry; break }
            next = entry.pointee.ai_next
        }
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(chosen.pointee.ai_addr, chosen.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            throw IceServerError(url: description, expected: "a numeric address for \(host)")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A STUN/TURN URL that cannot be used: the URL and what was expected.
public struct IceServerError: Error, Equatable, CustomStringConvertible {
    /// The URL as given.
    public var url: String
    /// What was expected in it.
    public var expected: String
    public var description: String { "ICE server URL \"\(url)\": expected \(expected)" }
}
