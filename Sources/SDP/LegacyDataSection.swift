// LegacyDataSection: the data channel section as written before RFC 8841 — `m=application … DTLS/SCTP 5000` with `a=sctpmap:5000 webrtc-datachannel 1024` (draft-ietf-mmusic-sctp-sdp-05), read, answered in its own form (RFC 8829 §5.1.2), its 64 KiB message limit.

/// `a=sctpmap:<number> <app> [<parameters>]` (draft-ietf-mmusic-sctp-sdp-05 §4.3): the SCTP
/// port given as a format of the `m=` line, the application on it, and what follows — the
/// stream count in every stack seen ("1024" Chromium, "256" Firefox, "16" Janus, "65535"
/// aiortc).
public struct SctpMap: Equatable, Sendable, Codable {
    /// The SCTP port (0–65535), one of the section's formats.
    public var number: Int
    /// The application protocol, "webrtc-datachannel" for data channels (any case read).
    public var app: String
    /// The rest of the line, its fields joined by single spaces; nil when there is none.
    public var parameters: String?

    /// A map from its fields.
    public init(number: Int, app: String, parameters: String? = nil) {
        self.number = number; self.app = app; self.parameters = parameters
    }

    /// The stream count: the first parameter when it is a number (draft-05), or the value
    /// of a `streams=N` parameter; nil when neither is there.
    public var streams: Int? {
        let fields = (parameters ?? "").fields(UInt8(ascii: " "))
        if let first = fields.first, let n = Int(first), n >= 0 { return n }
        for field in fields where field.hasPrefix("streams=") { return Int(field.dropFirst(8)) }
        return nil
    }

    /// True when it maps WebRTC data channels.
    public var isDataChannel: Bool { app.lowercased() == JSEP.dataFormat }

    /// The attribute line, `a=sctpmap:5000 webrtc-datachannel 1024`.
    var line: String { "a=sctpmap:\(number) \(app)" + (parameters.map { " \($0)" } ?? "") }

    /// What an `a=sctpmap` line must be.
    static let expected = "a=sctpmap:<SCTP port 0-65535> <application> [<streams>]"

    /// Reads the value of `line` (after `a=sctpmap:`).
    /// - Throws: ``SDPError/malformedLine(number:line:expected:)`` for a missing or
    ///   out-of-range port or a missing application.
    init(_ line: SDPLine, _ value: String?) throws(SDPError) {
        let f = (value ?? "").fields(UInt8(ascii: " "))
        guard f.count >= 2, let number = Int(f[0]), (0...65535).contains(number) else {
            throw line.error(Self.expected)
        }
        self.init(number: number, app: f[1], parameters: f.count > 2 ? f[2...].joined(separator: " ") : nil)
    }
}

/// How the peer wrote a data section that uses the pre-RFC 8841 form (`a=sctpmap`): kept so
/// that our answer, and our later offers, are written the same way (RFC 8829 §5.1.2).
public struct LegacyDataForm: Equatable, Sendable {
    /// The `m=` line's proto as the peer wrote it: `DTLS/SCTP` (draft-05, Chromium before
    /// M77, Firefox before 63, Janus, aiortc's legacy mode) or `UDP/DTLS/SCTP`.
    public var proto: String
    /// The peer's section carried `a=max-message-size` (Firefox did alongside `a=sctpmap`):
    /// ours does then too.
    public var advertisesMaxMessageSize: Bool

    /// A form from its fields.
    public init(proto: String, advertisesMaxMessageSize: Bool) {
        self.proto = proto; self.advertisesMaxMessageSize = advertisesMaxMessageSize
    }
}

extension JSEP {
    /// The largest message either side sends or takes on a data section negotiated in the
    /// legacy form, bytes: the drafts had no `a=max-message-size` and their stacks 64 KiB.
    public static let legacyMaxMessageSize = 65_536
    /// The stream count our `a=sctpmap` names (the streams our association asks for each
    /// way, `SCTPAssociation.streams`).
    public static let dataStreams = 1024

    /// The legacy form of `m` when it is a data section written with `a=sctpmap`: proto
    /// ending in `DTLS/SCTP`, and an `a=sctpmap` for `webrtc-datachannel` whose port is one
    /// of the `m=` line's formats (draft-05 allowed several: `5000 5001 5002`, other
    /// applications mapped to the others); nil for the RFC 8841 form or anything else.
    public static func legacyForm(of m: MediaDescription) -> LegacyDataForm? {
        guard m.kind == .application, m.proto.uppercased().hasSuffix("DTLS/SCTP"), legacyMap(of: m) != nil else { return nil }
        return LegacyDataForm(proto: m.proto, advertisesMaxMessageSize: m.maxMessageSize != nil)
    }

    /// Why the application section `m` cannot be a data section though its description
    /// parsed: an `a=sctpmap` line that does not parse (kept in
    /// ``MediaDescription/otherAttributes``), named with what it should be; nil when there is
    /// none. Such a section is no data section (``isDataSection(_:)``): an answer rejects it
    /// (port 0) and takes the rest of the description — a bad data-section line never costs
    /// the audio and video.
    public static func dataSectionProblem(_ m: MediaDescription) -> String? {
        guard m.kind == .application, let bad = m.otherAttributes.first(where: { $0.name == "sctpmap" }) else { return nil }
        return "\(bad.line) is malformed (expected \(SctpMap.expected))"
    }

    /// The `a=sctpmap` of `m` for data channels whose port is one of its formats.
    static func legacyMap(of m: MediaDescription) -> SctpMap? {
        m.sctpmaps.first { $0.isDataChannel && m.formats.contains(String($0.number)) }
    }

    /// The peer's SCTP port in its data section `m`: its `a=sctp-port`, the port of its
    /// legacy `a=sctpmap`, else 5000 (RFC 8841 §5.2).
    public static func sctpPort(of m: MediaDescription) -> Int {
        if let port = m.sctpPort { return port }
        if legacyForm(of: m) != nil, let map = legacyMap(of: m) { return map.number }
        return sctpPort
    }

    /// The largest message we may send to the peer of data section `m`, bytes: its
    /// `a=max-message-size` (0: any size, RFC 8841 §6.1), 65,536 when absent; in the legacy
    /// form 65,536 at most whatever it says.
    public static func peerMaxMessageSize(of m: MediaDescription) -> Int {
        let said = m.maxMessageSize ?? defaultMaxMessageSize
        guard legacyForm(of: m) != nil else { return said == 0 ? Int.max : said }
        return said == 0 ? legacyMaxMessageSize : min(said, legacyMaxMessageSize)
    }

    /// Our data section with `mid` in the legacy form (draft-05): `m=application 9 <proto>
    /// 5000`, `a=sctpmap:5000 webrtc-datachannel 1024`, no `a=sctp-port`, and
    /// `a=max-message-size:65536` only when the peer wrote one.
    static func legacyDataSection(mid: String, options: LocalDescriptionOptions, setup: Setup, form: LegacyDataForm) -> MediaDescription {
        var m = dataSection(mid: mid, options: options, setup: setup)
        m.proto = form.proto
        m.formats = [String(sctpPort)]
        m.sctpPort = nil
        m.sctpmaps = [SctpMap(number: sctpPort, app: dataFormat, parameters: String(dataStreams))]
        m.maxMessageSize = form.advertisesMaxMessageSize ? legacyMaxMessageSize : nil
        return m
    }
}
