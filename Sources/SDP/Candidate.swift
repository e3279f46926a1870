/// An ICE candidate as written in SDP (RFC 8839 §5.1):
/// `candidate:<foundation> <component-id> <transport> <priority> <address> <port>
///  typ <host|srflx|prflx|relay> [raddr <address>] [rport <port>] *(<name> <value>)`.
///
/// The extension attributes (`tcptype`, `generation`, `ufrag`, `network-id`,
/// `network-cost`, and any other) are kept in order.
public struct Candidate: Equatable, Sendable, Codable {
    /// Candidate type (RFC 8445 §5.1.1).
    public enum Kind: String, Equatable, Sendable, Codable {
        case host, srflx, prflx, relay
    }

    /// What the connection address is: a literal IPv4 or IPv6 address, an mDNS
    /// name ending in `.local` (draft-ietf-mmusic-mdns-ice-candidates), or another name.
    public enum AddressKind: String, Equatable, Sendable, Codable {
        case ipv4, ipv6, mdns, fqdn
    }

    /// An extension attribute after the mandatory fields, e.g. `generation 0`.
    public struct Extension: Equatable, Sendable, Codable {
        public var name: String
        public var value: String
        public init(name: String, value: String) { self.name = name; self.value = value }
    }

    /// 1–32 ice-chars.
    public var foundation: String
    /// 1 = RTP, 2 = RTCP (1–256).
    public var component: Int
    /// "UDP" or "TCP" as sent; compare with ``isTCP``.
    public var transport: String
    /// 1–(2^31−1).
    public var priority: UInt32
    /// IPv4/IPv6 literal, or an FQDN / `.local` name.
    public var address: String
    /// 0–65535 (TCP active candidates use 9 or 0).
    public var port: Int
    public var type: Kind
    /// `raddr` and `rport`, for srflx, prflx and relay candidates.
    public var relatedAddress: String?
    public var relatedPort: Int?
    /// Extension attributes, including `tcptype`, in order.
    public var extensions: [Extension] = []

    /// A candidate with the mandatory fields.
    public init(foundation: String, component: Int, transport: String, priority: UInt32,
                address: String, port: Int, type: Kind, relatedAddress: String? = nil,
                relatedPort: Int? = nil, extensions: [Extension] = []) {
        self.foundation = foundation; self.component = component; self.transport = transport
        self.priority = priority; self.address = address; self.port = port; self.type = type
        self.relatedAddress = relatedAddress; self.relatedPort = relatedPort; self.extensions = extensions
    }

    /// True for TCP candidates (RFC 6544).
    public var isTCP: Bool { transport.uppercased() == "TCP" }

    /// The value of extension attribute `name`, if present.
    public func extensionValue(_ name: String) -> String? { extensions.first { $0.name == name }?.value }

    /// `tcptype` (active, passive, so) of a TCP candidate (RFC 6544 §4.5).
    public var tcpType: String? { extensionValue("tcptype") }
    /// `generation` (Chromium extension).
    public var generation: Int? { extensionValue("generation").flatMap { Int($0) } }
    /// `ufrag` extension: the username fragment the candidate belongs to.
    public var ufrag: String? { extensionValue("ufrag") }

    /// Classifies ``address``.
    public var addressKind: AddressKind { Candidate.classify(address) }

    static func classify(_ address: String) -> AddressKind {
        if address.contains(":") { return .ipv6 }
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) { return .ipv4 }
        if address.lowercased().hasSuffix(".local") { return .mdns }
        return .fqdn
    }

    /// Parses a candidate from `candidate:…`, `a=candidate:…` or the bare value.
    /// - Throws: ``CandidateError`` naming the field that is wrong and its text.
    public init(parsing text: String) throws(CandidateError) {
        let f = Candidate.fields(text)
        // No line break inside (RFC 4566 byte-string): one in a field that ``sdpValue`` moves
        // to the end would be trimmed off there.
        if let broken = f.first(where: { $0.unicodeScalars.contains { $0 == "\r" || $0 == "\n" } }) {
            throw CandidateError(field: "candidate", value: broken, expected: "no CR or LF inside the line")
        }
        guard f.count >= 8 else { throw CandidateError(field: "candidate", value: text, expected: "at least 8 fields: foundation component transport priority address port typ type") }
        guard !f[0].isEmpty, f[0].count <= 32 else { throw CandidateError(field: "foundation", value: f[0], expected: "1-32 ice-chars") }
        // RFC 8839 §5.1: foundation is 1*32ice-char; longer ones (seen from no stack) are refused.
        guard let component = Int(f[1]), (1...256).contains(component) else {
            throw CandidateError(field: "component", value: f[1], expected: "a number 1-256")
        }
        guard !f[2].isEmpty, f[2].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw CandidateError(field: "transport", value: f[2], expected: "UDP or TCP")
        }
        guard let priority = UInt32(f[3]), priority >= 1 else {
            throw CandidateError(field: "priority", value: f[3], expected: "a number 1-4294967295")
        }
        guard !f[4].isEmpty else { throw CandidateError(field: "address", value: f[4], expected: "an IP address or name") }
        guard let port = Int(f[5]), (0...65535).contains(port) else {
            throw CandidateError(field: "port", value: f[5], expected: "a number 0-65535")
        }
        guard f[6] == "typ" else { throw CandidateError(field: "typ", value: f[6], expected: "\"typ\"") }
        guard let type = Kind(rawValue: f[7]) else {
            throw CandidateError(field: "type", value: f[7], expected: "host, srflx, prflx or relay")
        }
        self.init(foundation: f[0], component: component, transport: f[2], priority: priority,
                  address: f[4], port: port, type: type)
        var i = 8
        while i < f.count {
            let name = f[i]
            guard i + 1 < f.count else {
                throw CandidateError(field: name, value: "", expected: "a value after \"\(name)\"")
            }
            let value = f[i + 1]
            switch name {
            case "raddr": relatedAddress = value
            case "rport":
                guard let p = Int(value), (0...65535).contains(p) else {
                    throw CandidateError(field: "rport", value: value, expected: "a number 0-65535")
                }
                relatedPort = p
            case "tcptype":
                guard ["active", "passive", "so"].contains(value) else {
                    throw CandidateError(field: "tcptype", value: value, expected: "active, passive or so")
                }
                extensions.append(Extension(name: name, value: value))
            default: extensions.append(Extension(name: name, value: value))
            }
            i += 2
        }
    }

    /// The fields of a candidate line: trailing CR, LF and spaces trimmed, then `a=` and
    /// `candidate:` if they start it, cut at spaces (empty fields dropped).
    ///
    /// Cut by Unicode scalars, not Characters: "\r\n" is one Character (so a trailing CR LF
    /// was not trimmed), and a field ending in a prepended mark would join the next field
    /// once ``sdpValue`` reorders them. Done on the UTF-8, where each ASCII byte is that
    /// scalar: the same fields as `unicodeScalars` trimming and `split(separator: " ")`.
    static func fields(_ text: String) -> [String] {
        var text = text
        return text.withUTF8 { bytes in
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x20 { end -= 1 }
            var start = 0
            for prefix in ["a=", "candidate:"] where end - start >= prefix.utf8.count
                && prefix.utf8.elementsEqual(bytes[start..<start + prefix.utf8.count]) {
                start += prefix.utf8.count
            }
            var fields: [String] = []
            while start < end {
                let space = min(firstOffset(of: 0x20, in: bytes, from: start), end)
                if space > start { fields.append(utf8String(bytes, start, space)) }
                start = space + 1
            }
            return fields
        }
    }

    /// The attribute value, `candidate:…` without `a=` (the form signaling carries).
    public var sdpValue: String {
        var s = "candidate:\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(type.rawValue)"
        if let relatedAddress { s += " raddr \(relatedAddress)" }
        if let relatedPort { s += " rport \(relatedPort)" }
        for e in extensions { s += " \(e.name) \(e.value)" }
        return s
    }
}

/// A malformed candidate: which field, the text found there, and what was expected.
public struct CandidateError: Error, Equatable, CustomStringConvertible {
    public var field: String
    public var value: String
    public var expected: String
    public init(field: String, value: String, expected: String) { self.field = field; self.value = value; self.expected = expected }
    public var description: String { "candidate \(field) \"\(value)\": expected \(expected)" }
}
