// Serializer: SessionDescription written back as SDP text (RFC 8866 §5 field order, CRLF line ends).
extension SessionDescription {
    /// Writes the description as SDP text: RFC 8866 §5 line order, CRLF line ends.
    /// Known attributes come first in a fixed order (the order Chromium uses), then
    /// the unknown ones in the order they were read.
    public func serialized() -> String {
        var out: [String] = []
        out.append("v=\(version)")
        out.append("o=\(origin.username) \(origin.sessionId) \(origin.sessionVersion) \(origin.netType) \(origin.addressType) \(origin.address)")
        out.append("s=\(sessionName)")
        if let information { out.append("i=\(information)") }
        if let uri { out.append("u=\(uri)") }
        out += emails.map { "e=\($0)" }
        out += phones.map { "p=\($0)" }
        if let connection { out.append(connection.line) }
        out += bandwidths.map(\.line)
        for t in timings {
            out.append("t=\(t.start) \(t.stop)")
            out += t.repeats.map { "r=\($0)" }
        }
        if let timeZones { out.append("z=\(timeZones)") }
        if let encryptionKey { out.append("k=\(encryptionKey)") }
        out += groups.map { "a=group:" + ([$0.semantics] + $0.mids).joined(separator: " ") }
        if extmapAllowMixed { out.append("a=extmap-allow-mixed") }
        if let s = msidSemantic { out.append("a=msid-semantic:" + ([" " + s.semantic] + s.identifiers).joined(separator: " ")) }
        if iceLite { out.append("a=ice-lite") }
        out += iceLines(ufrag: iceUfrag, pwd: icePwd, options: iceOptions)
        out += fingerprints.map(\.line)
        if let setup { out.append("a=setup:\(setup.rawValue)") }
        out += extmaps.map(\.line)
        out += otherAttributes.map(\.line)
        for m in media { out += m.lines }
        return out.joined(separator: "\r\n") + "\r\n"
    }
}

func iceLines(ufrag: String?, pwd: String?, options: [String]) -> [String] {
    var out: [String] = []
    if let ufrag { out.append("a=ice-ufrag:\(ufrag)") }
    if let pwd { out.append("a=ice-pwd:\(pwd)") }
    if !options.isEmpty { out.append("a=ice-options:" + options.joined(separator: " ")) }
    return out
}

extension Connection { var line: String { "c=\(netType) \(addressType) \(address)" } }
extension Bandwidth { var line: String { "b=\(type):\(value)" } }
extension Fingerprint { var line: String { "a=fingerprint:\(algorithm) \(value)" } }
extension Attribute { var line: String { value.map { "a=\(name):\($0)" } ?? "a=\(name)" } }
extension Extmap {
    var line: String {
        var s = "a=extmap:\(id)"
        if let direction { s += "/\(direction.rawValue)" }
        s += " \(uri)"
        if let attributes { s += " \(attributes)" }
        return s
    }
}

extension MediaDescription {
    /// This section's lines, `m=` first.
    var lines: [String] {
        var out: [String] = []
        let port = portCount.map { "\(self.port)/\($0)" } ?? "\(self.port)"
        out.append((["m=\(kind) \(port) \(proto)"] + formats).joined(separator: " "))
        if let information { out.append("i=\(information)") }
        if let connection { out.append(connection.line) }
        out += bandwidths.map(\.line)
        if let encryptionKey { out.append("k=\(encryptionKey)") }
        if let rtcp { out.append("a=rtcp:\(rtcp)") }
        out += iceLines(ufrag: iceUfrag, pwd: icePwd, options: iceOptions)
        out += fingerprints.map(\.line)
        if let setup { out.append("a=setup:\(setup.rawValue)") }
        if let mid { out.append("a=mid:\(mid)") }
        out += extmaps.map(\.line)
        if extmapAllowMixed { out.append("a=extmap-allow-mixed") }
        if let direction { out.append("a=\(direction.rawValue)") }
        out += msids.map { "a=msid:\($0.streamId)" + ($0.trackId.map { " \($0)" } ?? "") }
        if rtcpMux { out.append("a=rtcp-mux") }
        if rtcpMuxOnly { out.append("a=rtcp-mux-only") }
        if rtcpRsize { out.append("a=rtcp-rsize") }
        out += rtcpFeedbackAll.map { "a=rtcp-fb:* \($0)" }
        for p in payloads {
            if let name = p.name, let clock = p.clockRate {
                out.append("a=rtpmap:\(p.payloadType) \(name)/\(clock)" + (p.channels.map { "/\($0)" } ?? ""))
            }
            out += p.rtcpFeedback.map { "a=rtcp-fb:\(p.payloadType) \($0)" }
            if let fmtp = p.fmtp { out.append("a=fmtp:\(p.payloadType) \(fmtp)") }
        }
        out += ssrcGroups.map { "a=ssrc-group:" + ([$0.semantics] + $0.ssrcs.map(String.init)).joined(separator: " ") }
        out += ssrcs.map { "a=ssrc:\($0.ssrc) \($0.name)" + ($0.value.map { ":\($0)" } ?? "") }
        out += sctpmaps.map(\.line)
        if let sctpPort { out.append("a=sctp-port:\(sctpPort)") }
        if let maxMessageSize { out.append("a=max-message-size:\(maxMessageSize)") }
        out += rids.map { "a=rid:\($0.id) \($0.direction)" + ($0.parameters.map { " \($0)" } ?? "") }
        if let simulcast { out.append("a=simulcast:\(simulcast)") }
        out += otherAttributes.map(\.line)
        out += candidates.map { "a=" + $0.sdpValue }
        if endOfCandidates { out.append("a=end-of-candidates") }
        return out
    }
}
