// Parser: SDP text parsed into SessionDescription (RFC 8866; ICE RFC 8839, DTLS RFC 8122/4145, RTP RFC 8866 §6, BUNDLE RFC 8843), with limits on outside input.
extension SDPLine {
    /// The line as it was written, `type=value`, for error messages.
    var text: String { "\(type)=\(value)" }

    /// An error naming this line and what was expected in it.
    func error(_ expected: String) -> SDPError { .malformedLine(number: number, line: text, expected: expected) }
}

extension SessionDescription {
    /// Parses a session description (RFC 8866 §5 grammar, WebRTC attributes).
    ///
    /// Forgiving where the standards allow: CRLF or LF line ends, trailing white
    /// space, attributes in any order, `a=fmtp`/`a=rtcp-fb` before their `a=rtpmap`,
    /// codec names in any case, missing `s=`/`t=` lines (defaulted to "-" and "0 0").
    /// - Throws: ``SDPError/malformedLine(number:line:expected:)`` naming the line
    ///   number, the line and what was expected: a missing or wrong `v=`, a missing
    ///   `o=`, a bad port, a duplicate `a=mid`, a fingerprint without hash function,
    ///   an `a=rtpmap`/`a=fmtp` for a payload type the `m=` line does not list, a
    ///   malformed candidate, and so on; ``SDPError/limitExceeded(what:limit:actual:)``
    ///   for a text over ``SDPLimits/maximumBytes`` or more ``SDPLimits/maximumMediaSections``
    ///   m-sections.
    public init(parsing text: String) throws(SDPError) {
        guard text.utf8.count <= SDPLimits.maximumBytes else {
            throw .limitExceeded(what: "bytes", limit: SDPLimits.maximumBytes, actual: text.utf8.count)
        }
        let lines = try SDPLine.split(text)
        guard let first = lines.first else {
            throw .malformedLine(number: 1, line: "", expected: "v=0 as the first line (the text is empty)")
        }
        guard first.type == "v" else { throw first.error("v=0 as the first line") }
        guard first.value == "0" else { throw first.error("protocol version 0") }
        guard lines.count > 1, lines[1].type == "o" else {
            throw (lines.count > 1 ? lines[1] : first).error("o=<username> <sess-id> <sess-version> <nettype> <addrtype> <address> after v=")
        }
        self.init(origin: try Origin(lines[1]))
        timings = []
        var sections: [MediaDescription] = []
        var tables: [PayloadTable] = []
        var seenMids: Set<String> = []

        for line in lines.dropFirst(2) {
            if line.type == "m" {
                guard sections.count < SDPLimits.maximumMediaSections else {
                    throw .limitExceeded(what: "m-sections", limit: SDPLimits.maximumMediaSections,
                                         actual: lines.count { $0.type == "m" })
                }
                let section = try MediaDescription(mLine: line)
                sections.append(section)
                tables.append(PayloadTable(isRTP: section.isRTP))
                continue
            }
            if let last = sections.indices.last {
                try sections[last].apply(line, payloads: &tables[last], seenMids: &seenMids)
            } else {
                try applySession(line)
            }
        }
        if timings.isEmpty { timings = [Timing()] }
        for i in sections.indices { tables[i].build(into: &sections[i]) }
        media = sections
    }

    private mutating func applySession(_ line: SDPLine) throws(SDPError) {
        switch line.type {
        case "v": throw line.error("only one v= line, first")
        case "o": throw line.error("only one o= line, second")
        case "s": sessionName = line.value
        case "i": information = line.value
        case "u": uri = line.value
        case "e": emails.append(line.value)
        case "p": phones.append(line.value)
        case "c": connection = try Connection(line)
        case "b": bandwidths.append(try Bandwidth(line))
        case "t":
            let f = line.value.fields(UInt8(ascii: " "))
            guard f.count == 2, let start = UInt64(f[0]), let stop = UInt64(f[1]) else {
                throw line.error("t=<start-time> <stop-time> (two decimal numbers)")
            }
            timings.append(Timing(start: start, stop: stop))
        case "r":
            guard !timings.isEmpty else { throw line.error("r= only after a t= line") }
            timings[timings.count - 1].repeats.append(line.value)
        case "z": timeZones = line.value
        case "k": encryptionKey = line.value
        case "a": try applySessionAttribute(line)
        default: throw line.error("a session-level line type (s i u e p c b t r z k a m)")
        }
    }

    private mutating func applySessionAttribute(_ line: SDPLine) throws(SDPError) {
        let (name, value) = line.attribute
        switch name {
        case "group": groups.append(try Group(line, value))
        case "extmap-allow-mixed": extmapAllowMixed = true
        case "msid-semantic":
            let f = (value ?? "").fields(UInt8(ascii: " "))
            guard let semantic = f.first else { throw line.error("a=msid-semantic:<semantic> [<id>…]") }
            msidSemantic = MsidSemantic(semantic: semantic, identifiers: Array(f.dropFirst()))
        case "ice-lite": iceLite = true
        case "ice-ufrag", "ice-pwd", "ice-options", "fingerprint", "setup":
            try transport.apply(name, value, line)
        case "extmap": extmaps.append(try Extmap(line, value))
        default: otherAttributes.append(Attribute(name: name, value: value))
        }
    }
}

/// The attributes that may stand at session or media level alike (RFC 8839 §5.4,
/// §5.6; RFC 8122 §5; RFC 4145 §4): one parser for both.
struct TransportAttributes {
    var iceUfrag: String?
    var icePwd: String?
    var iceOptions: [String]
    var fingerprints: [Fingerprint]
    var setup: Setup?

    mutating func apply(_ name: String, _ value: String?, _ line: SDPLine) throws(SDPError) {
        switch name {
        case "ice-ufrag": iceUfrag = try nonEmpty(value, line, "a=ice-ufrag:<ufrag>")
        case "ice-pwd": icePwd = try nonEmpty(value, line, "a=ice-pwd:<pwd>")
        case "ice-options": iceOptions = (value ?? "").fields(UInt8(ascii: " "))
        case "fingerprint": fingerprints.append(try Fingerprint(line, value))
        case "setup": setup = try Setup(line, value)
        default: break
        }
    }
}

extension SessionDescription {
    /// Session-level ICE and DTLS attributes, read and written as one.
    var transport: TransportAttributes {
        get { TransportAttributes(iceUfrag: iceUfrag, icePwd: icePwd, iceOptions: iceOptions, fingerprints: fingerprints, setup: setup) }
        set { (iceUfrag, icePwd, iceOptions, fingerprints, setup) = (newValue.iceUfrag, newValue.icePwd, newValue.iceOptions, newValue.fingerprints, newValue.setup) }
    }
}

extension MediaDescription {
    /// Media-level ICE and DTLS attributes, read and written as one.
    var transport: TransportAttributes {
        get { TransportAttributes(iceUfrag: iceUfrag, icePwd: icePwd, iceOptions: iceOptions, fingerprints: fingerprints, setup: setup) }
        set { (iceUfrag, icePwd, iceOptions, fingerprints, setup) = (newValue.iceUfrag, newValue.icePwd, newValue.iceOptions, newValue.fingerprints, newValue.setup) }
    }
}

func nonEmpty(_ value: String?, _ line: SDPLine, _ expected: String) throws(SDPError) -> String {
    guard let value, !value.isEmpty else { throw line.error(expected) }
    return value
}

extension Origin {
    init(_ line: SDPLine) throws(SDPError) {
        let f = line.value.fields(UInt8(ascii: " "))
        guard f.count == 6 else {
            throw line.error("o=<username> <sess-id> <sess-version> <nettype> <addrtype> <address> (6 fields)")
        }
        guard f[1].allSatisfy(\.isASCIIDigit), !f[1].isEmpty else { throw line.error("a decimal sess-id, not \"\(f[1])\"") }
        guard f[2].allSatisfy(\.isASCIIDigit), !f[2].isEmpty else { throw line.error("a decimal sess-version, not \"\(f[2])\"") }
        self.init(username: f[0], sessionId: f[1], sessionVersion: f[2], netType: f[3], addressType: f[4], address: f[5])
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Connection {
    init(_ line: SDPLine) throws(SDPError) {
        let f = line.value.fields(UInt8(ascii: " "))
        guard f.count == 3 else { throw line.error("c=<nettype> <addrtype> <connection-address>") }
        self.init(netType: f[0], addressType: f[1], address: f[2])
    }
}

extension Bandwidth {
    init(_ line: SDPLine) throws(SDPError) {
        let f = line.value.fields(UInt8(ascii: ":"), maxSplits: 1)
        guard f.count == 2, let v = UInt64(f[1]) else { throw line.error("b=<bwtype>:<bandwidth>") }
        self.init(type: String(f[0]), value: v)
    }
}

extension Group {
    init(_ line: SDPLine, _ value: String?) throws(SDPError) {
        let f = (value ?? "").fields(UInt8(ascii: " "))
        guard let semantics = f.first else { throw line.error("a=group:<semantics> <mid>…") }
        self.init(semantics: semantics, mids: Array(f.dropFirst()))
    }
}

extension Fingerprint {
    init(_ line: SDPLine, _ value: String?) throws(SDPError) {
        let f = (value ?? "").fields(UInt8(ascii: " "))
        guard f.count == 2 else { throw line.error("a=fingerprint:<hash-function> <hex bytes separated by colons>") }
        let algorithm = f[0].lowercased()
        let known = ["sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64, "md5": 16, "md2": 16]
        guard algorithm.contains(where: \.isLetter), !algorithm.contains(":") else {
            throw line.error("a hash function name (sha-256 …) before the fingerprint value")
        }
        let bytes = f[1].fields(UInt8(ascii: ":"), omittingEmpty: false)
        guard bytes.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw line.error("the fingerprint as hex bytes separated by colons")
        }
        if let length = known[algorithm], bytes.count != length {
            throw line.error("\(length) bytes for \(algorithm), not \(bytes.count)")
        }
        self.init(algorithm: algorithm, value: f[1])
    }
}

extension Setup {
    init(_ line: SDPLine, _ value: String?) throws(SDPError) {
        guard let v = value, let s = Setup(rawValue: v) else {
            throw line.error("a=setup:actpass|active|passive|holdconn")
        }
        self = s
    }
}

extension Extmap {
    init(_ line: SDPLine, _ value: String?) throws(SDPError) {
        let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 2)
        guard f.count >= 2 else { throw line.error("a=extmap:<id>[/<direction>] <uri> [<attributes>]") }
        let idDir = f[0].fields(UInt8(ascii: "/"), maxSplits: 1)
        guard let first = idDir.first, let id = Int(first), (1...255).contains(id) else {
            throw line.error("an extmap id 1-255, not \"\(f[0])\"")
        }
        var direction: Direction?
        if idDir.count == 2 {
            guard let d = Direction(rawValue: String(idDir[1])) else { throw line.error("an extmap direction, not \"\(idDir[1])\"") }
            direction = d
        }
        self.init(id: id, direction: direction, uri: f[1], attributes: f.count > 2 ? f[2] : nil)
    }
}

/// rtpmap/fmtp/rtcp-fb values of one m-section, gathered in any order and turned
/// into ``MediaDescription/payloads`` when the section ends.
struct PayloadTable {
    /// The section's ``MediaDescription/isRTP`` (its proto does not change while it is read).
    let isRTP: Bool
    var rtpmaps: [Int: (name: String, clock: Int, channels: Int?)] = [:]
    var fmtps: [Int: String] = [:]
    var feedback: [Int: [String]] = [:]
    var wildcardFeedback: [String] = []

    func build(into media: inout MediaDescription) {
        media.rtcpFeedbackAll = wildcardFeedback
        guard isRTP else { return }
        media.payloads = media.formats.compactMap { Int($0) }.map { pt in
            PayloadFormat(payloadType: pt, name: rtpmaps[pt]?.name, clockRate: rtpmaps[pt]?.clock,
                          channels: rtpmaps[pt]?.channels, fmtp: fmtps[pt], rtcpFeedback: feedback[pt] ?? [])
        }
    }
}

extension MediaDescription {
    /// Parses `m=<media> <port>[/<count>] <proto> <fmt> …` (RFC 8866 §5.14).
    init(mLine line: SDPLine) throws(SDPError) {
        let f = line.value.fields(UInt8(ascii: " "))
        guard f.count >= 3 else { throw line.error("m=<media> <port> <proto> <fmt>…") }
        let portParts = f[1].fields(UInt8(ascii: "/"), maxSplits: 1)
        guard let portText = portParts.first, let port = Int(portText), (0...65535).contains(port) else {
            throw line.error("a port 0-65535, not \"\(f[1])\"")
        }
        self.init(kind: MediaKind(f[0]), port: port, proto: f[2], formats: Array(f.dropFirst(3)))
        if portParts.count == 2 {
            guard let count = Int(portParts[1]), count >= 1 else { throw line.error("a port count ≥ 1 after \"/\"") }
            portCount = count
        }
        if isRTP {
            // Plain decimal only: "00" or "+0" would name payload type 0 a second way.
            for fmt in formats where Int(fmt).map({ !(0...127).contains($0) || String($0) != fmt }) ?? true {
                throw line.error("RTP payload types 0-127 as formats, not \"\(fmt)\"")
            }
            var seen: Set<String> = []
            for fmt in formats where !seen.insert(fmt).inserted {
                throw line.error("each payload type once on the m= line (\(fmt) is repeated)")
            }
        }
    }

    /// Applies one line that follows this section's `m=` line.
    mutating func apply(_ line: SDPLine, payloads table: inout PayloadTable, seenMids: inout Set<String>) throws(SDPError) {
        switch line.type {
        case "i": information = line.value
        case "c": connection = try Connection(line)
        case "b": bandwidths.append(try Bandwidth(line))
        case "k": encryptionKey = line.value
        case "a": try applyAttribute(line, &table, &seenMids)
        default: throw line.error("a media-level line type (i c b k a) or the next m=")
        }
    }

    /// RFC 8866 §9 `token-char`: visible ASCII except space and `"(),/:;<=>?@[\]`.
    static func isTokenChar(_ c: Unicode.Scalar) -> Bool {
        guard c.value > 0x20, c.value < 0x7F else { return false }
        return !"\"(),/:;<=>?@[\\]".unicodeScalars.contains(c)
    }

    private func payloadType(_ text: String?, _ line: SDPLine, _ what: String) throws(SDPError) -> Int {
        guard let text, let pt = Int(text), (0...127).contains(pt) else {
            throw line.error("a payload type 0-127 in \(what), not \"\(text ?? "")\"")
        }
        guard formats.contains(String(pt)) else {
            throw line.error("\(what) for a payload type listed on the m= line (\(formats.joined(separator: " "))), not \(pt)")
        }
        return pt
    }

    private mutating func applyAttribute(_ line: SDPLine, _ table: inout PayloadTable, _ seenMids: inout Set<String>) throws(SDPError) {
        let (name, value) = line.attribute
        switch name {
        case "mid":
            let m = try nonEmpty(value, line, "a=mid:<identification-tag>")
            // RFC 5888 §4: identification-tag = token (RFC 8866 §9 token-char), so a mid
            // never holds the space that separates mids in a=group.
            guard m.unicodeScalars.allSatisfy(Self.isTokenChar) else {
                throw line.error("a=mid:<identification-tag> made of token characters (RFC 5888 §4), not \"\(m)\"")
            }
            guard !seenMids.contains(m) else { throw line.error("a mid not used by an earlier m= section (\"\(m)\" is)") }
            seenMids.insert(m)
            mid = m
        case "sendrecv", "sendonly", "recvonly", "inactive": direction = Direction(rawValue: name)
        case "rtcp": rtcp = value
        case "rtcp-mux": rtcpMux = true
        case "rtcp-mux-only": rtcpMuxOnly = true
        case "rtcp-rsize": rtcpRsize = true
        case "ice-ufrag", "ice-pwd", "ice-options", "fingerprint", "setup":
            try transport.apply(name, value, line)
        case "candidate":
            do { candidates.append(try Candidate(parsing: line.value)) } catch { throw line.error(error.description) }
        case "end-of-candidates": endOfCandidates = true
        case "extmap": extmaps.append(try Extmap(line, value))
        case "extmap-allow-mixed": extmapAllowMixed = true
        case "rtpmap" where table.isRTP:
            let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 1)
            let pt = try payloadType(f.first, line, "a=rtpmap")
            let enc = f.count > 1 ? f[1].fields(UInt8(ascii: "/")) : []
            guard enc.count >= 2, let clock = Int(enc[1]), clock > 0 else {
                throw line.error("a=rtpmap:<payload type> <encoding name>/<clock rate>[/<channels>]")
            }
            var channels: Int?
            if enc.count > 2 {
                guard let c = Int(enc[2]), c > 0 else { throw line.error("a channel count ≥ 1, not \"\(enc[2])\"") }
                channels = c
            }
            table.rtpmaps[pt] = (String(enc[0]), clock, channels)
        case "fmtp" where table.isRTP:
            let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 1)
            let pt = try payloadType(f.first, line, "a=fmtp")
            table.fmtps[pt] = f.count > 1 ? String(f[1]) : ""
        case "rtcp-fb" where table.isRTP:
            let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 1)
            guard f.count == 2 else { throw line.error("a=rtcp-fb:<payload type|*> <feedback> [<param>]") }
            if f[0] == "*" {
                table.wildcardFeedback.append(String(f[1]))
            } else {
                let pt = try payloadType(f.first, line, "a=rtcp-fb")
                table.feedback[pt, default: []].append(String(f[1]))
            }
        case "ssrc":
            let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 1)
            guard f.count == 2, let ssrc = UInt32(f[0]) else { throw line.error("a=ssrc:<ssrc-id 0-4294967295> <attribute>[:<value>]") }
            let attr = f[1].fields(UInt8(ascii: ":"), maxSplits: 1, omittingEmpty: false)
            guard let attrName = attr.first, !attrName.isEmpty else { throw line.error("an attribute name after the ssrc id") }
            ssrcs.append(SsrcAttribute(ssrc: ssrc, name: String(attrName), value: attr.count > 1 ? String(attr[1]) : nil))
        case "ssrc-group":
            let f = (value ?? "").fields(UInt8(ascii: " "))
            guard f.count >= 2 else { throw line.error("a=ssrc-group:<semantics> <ssrc-id>…") }
            var ids: [UInt32] = []
            for t in f.dropFirst() {
                guard let id = UInt32(t) else { throw line.error("ssrc ids 0-4294967295 in a=ssrc-group, not \"\(t)\"") }
                ids.append(id)
            }
            ssrcGroups.append(SsrcGroup(semantics: String(f[0]), ssrcs: ids))
        case "msid":
            let f = (value ?? "").fields(UInt8(ascii: " "))
            guard f.count == 1 || f.count == 2 else { throw line.error("a=msid:<stream-id> [<track-id>]") }
            msids.append(Msid(streamId: f[0], trackId: f.count > 1 ? f[1] : nil))
        case "sctp-port":
            guard let v = value, let p = Int(v), (0...65535).contains(p) else { throw line.error("a=sctp-port:<port 0-65535>") }
            sctpPort = p
        case "sctpmap":
            // One that does not parse leaves this data section unusable, not the description:
            // kept as written (JSEP.dataSectionProblem), the section is rejected in an answer.
            if let map = try? SctpMap(line, value) { sctpmaps.append(map) } else { otherAttributes.append(Attribute(name: name, value: value)) }
        case "max-message-size":
            guard let v = value, let n = Int(v), n >= 0 else { throw line.error("a=max-message-size:<bytes>") }
            maxMessageSize = n
        case "rid":
            let f = (value ?? "").fields(UInt8(ascii: " "), maxSplits: 2)
            guard f.count >= 2, f[1] == "send" || f[1] == "recv" else { throw line.error("a=rid:<id> send|recv [<params>]") }
            rids.append(Rid(id: f[0], direction: f[1], parameters: f.count > 2 ? f[2] : nil))
        case "simulcast": simulcast = value
        default: otherAttributes.append(Attribute(name: name, value: value))
        }
    }
}
