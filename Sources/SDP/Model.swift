/// A session description (RFC 8866) with the WebRTC attributes of JSEP (RFC 8829),
/// ICE (RFC 8839), DTLS (RFC 8842, RFC 8122), BUNDLE (RFC 8843), RTP header
/// extensions (RFC 8285), source attributes (RFC 5576), msid (RFC 8830), SCTP
/// (RFC 8841) and rid/simulcast (RFC 8851/8853). Attributes the model does not
/// know are kept in ``otherAttributes``, in their order, and written back.
///
/// Parse with ``init(parsing:)``, write with ``serialized()``; for every
/// description `x`, `SessionDescription(parsing: x.serialized()) == x`.
public struct SessionDescription: Equatable, Sendable, Codable {
    /// `v=`: protocol version, always 0.
    public var version: Int = 0
    /// `o=`: originator and session identifier.
    public var origin: Origin
    /// `s=`: session name; WebRTC stacks write "-".
    public var sessionName: String = "-"
    /// `i=`, `u=`, `e=`, `p=`: optional informational lines, kept as text.
    public var information: String?
    public var uri: String?
    public var emails: [String] = []
    public var phones: [String] = []
    /// `c=` at session level.
    public var connection: Connection?
    /// `b=` lines at session level.
    public var bandwidths: [Bandwidth] = []
    /// `t=` lines (WebRTC: one, "0 0") with their `r=` repeat lines.
    public var timings: [Timing] = [Timing()]
    /// `z=` and `k=` lines, kept as text.
    public var timeZones: String?
    public var encryptionKey: String?

    /// `a=group:` lines, e.g. BUNDLE (RFC 8843 §7).
    public var groups: [Group] = []
    /// `a=extmap-allow-mixed` (RFC 8285 §6).
    public var extmapAllowMixed = false
    /// `a=msid-semantic:` (e.g. "WMS" with stream ids or "*").
    public var msidSemantic: MsidSemantic?
    /// `a=ice-lite` (RFC 8839 §5.3).
    public var iceLite = false
    /// Session-level `a=ice-ufrag`, `a=ice-pwd`, `a=ice-options` (RFC 8839 §5.4, §5.6).
    public var iceUfrag: String?
    public var icePwd: String?
    public var iceOptions: [String] = []
    /// Session-level `a=fingerprint` lines (RFC 8122 §5).
    public var fingerprints: [Fingerprint] = []
    /// Session-level `a=setup` (RFC 4145 §4, RFC 8842).
    public var setup: Setup?
    /// Session-level `a=extmap` lines (RFC 8285 §5).
    public var extmaps: [Extmap] = []
    /// Session attributes the model does not know, in order.
    public var otherAttributes: [Attribute] = []
    /// The media descriptions (`m=` sections), in order.
    public var media: [MediaDescription] = []

    /// A description with the given origin and no media.
    public init(origin: Origin) { self.origin = origin }

    /// The `a=group:BUNDLE` group, if any.
    public var bundleGroup: Group? { groups.first { $0.semantics.uppercased() == "BUNDLE" } }
}

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 §5.2).
/// The id and version are kept as the decimal text sent (they may exceed 64 bits).
public struct Origin: Equatable, Sendable, Codable {
    public var username = "-"
    public var sessionId: String
    public var sessionVersion: String
    public var netType = "IN"
    public var addressType = "IP4"
    public var address = "127.0.0.1"

    /// An origin; `sessionId` and `sessionVersion` are decimal numbers as text.
    public init(username: String = "-", sessionId: String, sessionVersion: String,
                netType: String = "IN", addressType: String = "IP4", address: String = "127.0.0.1") {
        self.username = username; self.sessionId = sessionId; self.sessionVersion = sessionVersion
        self.netType = netType; self.addressType = addressType; self.address = address
    }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7); the address
/// keeps any `/ttl/count` suffix as sent.
public struct Connection: Equatable, Sendable, Codable {
    public var netType = "IN"
    public var addressType = "IP4"
    public var address = "0.0.0.0"
    public init(netType: String = "IN", addressType: String = "IP4", address: String = "0.0.0.0") {
        self.netType = netType; self.addressType = addressType; self.address = address
    }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 §5.8); `value` in kbit/s for AS/CT, bit/s for TIAS.
public struct Bandwidth: Equatable, Sendable, Codable {
    public var type: String
    public var value: UInt64
    public init(type: String, value: UInt64) { self.type = type; self.value = value }
}

/// `t=<start-time> <stop-time>` (NTP seconds; 0 0 = unbounded) and its `r=` lines.
public struct Timing: Equatable, Sendable, Codable {
    public var start: UInt64 = 0
    public var stop: UInt64 = 0
    public var repeats: [String] = []
    public init(start: UInt64 = 0, stop: UInt64 = 0, repeats: [String] = []) {
        self.start = start; self.stop = stop; self.repeats = repeats
    }
}

/// An attribute kept as sent: `a=name` or `a=name:value`.
public struct Attribute: Equatable, Sendable, Codable {
    public var name: String
    public var value: String?
    public init(name: String, value: String? = nil) { self.name = name; self.value = value }
}

/// `a=group:<semantics> <mid> …` (RFC 5888 §5), e.g. BUNDLE (RFC 8843).
public struct Group: Equatable, Sendable, Codable {
    public var semantics: String
    public var mids: [String]
    public init(semantics: String, mids: [String]) { self.semantics = semantics; self.mids = mids }
}

/// `a=msid-semantic:<semantic> <token>…` (Chromium writes "WMS" with "*" or stream ids).
public struct MsidSemantic: Equatable, Sendable, Codable {
    public var semantic: String
    public var identifiers: [String]
    public init(semantic: String, identifiers: [String]) { self.semantic = semantic; self.identifiers = identifiers }
}

/// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 §5): the hash function in
/// lower case (`sha-256`), the value as colon-separated upper-case hex bytes.
public struct Fingerprint: Equatable, Sendable, Codable {
    public var algorithm: String
    public var value: String
    public init(algorithm: String, value: String) { self.algorithm = algorithm.lowercased(); self.value = value.uppercased() }

    /// The fingerprint's bytes (32 for sha-256).
    public var bytes: [UInt8] { value.fields(UInt8(ascii: ":")).compactMap { UInt8($0, radix: 16) } }
}

/// `a=setup` role (RFC 4145 §4): who starts the DTLS handshake.
public enum Setup: String, Equatable, Sendable, Codable, CaseIterable {
    case actpass, active, passive, holdconn
}

/// Media direction attribute (RFC 8866 §6.7, RFC 3264 §5.1).
public enum Direction: String, Equatable, Sendable, Codable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction seen from the other side (sendonly ⇄ recvonly).
    public var reversed: Direction {
        switch self {
        case .sendonly: return .recvonly
        case .recvonly: return .sendonly
        default: return self
        }
    }
    /// True for sendrecv and sendonly.
    public var sends: Bool { self == .sendrecv || self == .sendonly }
    /// True for sendrecv and recvonly.
    public var receives: Bool { self == .sendrecv || self == .recvonly }
    /// The direction that sends when both `sends` and receives when `receives`.
    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }
}

/// `a=extmap:<id>[/<direction>] <uri> [<attributes>]` (RFC 8285 §5); id 1–14
/// (one-byte) or 1–255 (two-byte).
public struct Extmap: Equatable, Sendable, Codable {
    public var id: Int
    public var direction: Direction?
    public var uri: String
    public var attributes: String?
    public init(id: Int, direction: Direction? = nil, uri: String, attributes: String? = nil) {
        self.id = id; self.direction = direction; self.uri = uri; self.attributes = attributes
    }
}

/// `a=ssrc:<ssrc-id> <attribute>[:<value>]` (RFC 5576 §4.1), e.g. `cname`.
public struct SsrcAttribute: Equatable, Sendable, Codable {
    public var ssrc: UInt32
    public var name: String
    public var value: String?
    public init(ssrc: UInt32, name: String, value: String? = nil) { self.ssrc = ssrc; self.name = name; self.value = value }
}

/// `a=ssrc-group:<semantics> <ssrc-id> …` (RFC 5576 §4.2), e.g. FID (RTX), SIM.
public struct SsrcGroup: Equatable, Sendable, Codable {
    public var semantics: String
    public var ssrcs: [UInt32]
    public init(semantics: String, ssrcs: [UInt32]) { self.semantics = semantics; self.ssrcs = ssrcs }
}

/// `a=msid:<stream-id> [<track-id>]` (RFC 8830 §2).
public struct Msid: Equatable, Sendable, Codable {
    public var streamId: String
    public var trackId: String?
    public init(streamId: String, trackId: String? = nil) { self.streamId = streamId; self.trackId = trackId }
}

/// `a=rid:<id> <send|recv> [<params>]` (RFC 8851 §4), parameters kept as text.
public struct Rid: Equatable, Sendable, Codable {
    public var id: String
    public var direction: String
    public var parameters: String?
    public init(id: String, direction: String, parameters: String? = nil) { self.id = id; self.direction = direction; self.parameters = parameters }
}

/// One payload type of an RTP m-line gathered from `a=rtpmap`, `a=fmtp` and
/// `a=rtcp-fb` (RFC 8866 §6.6, §6.15; RFC 4585 §4.2).
public struct PayloadFormat: Equatable, Sendable, Codable {
    /// The RTP payload type, 0–127.
    public var payloadType: Int
    /// Encoding name as sent (`opus`, `VP8`); compare with ``matches(name:clockRate:channels:)``.
    public var name: String?
    /// RTP clock rate in Hz (48000 for Opus, 90000 for video).
    public var clockRate: Int?
    /// Audio channel count from the rtpmap's third part, if given.
    public var channels: Int?
    /// The `a=fmtp` parameter text, e.g. "minptime=10;useinbandfec=1".
    public var fmtp: String?
    /// `a=rtcp-fb` values for this payload type, e.g. ["nack", "nack pli", "ccm fir"].
    public var rtcpFeedback: [String] = []

    public init(payloadType: Int, name: String? = nil, clockRate: Int? = nil, channels: Int? = nil,
                fmtp: String? = nil, rtcpFeedback: [String] = []) {
        self.payloadType = payloadType; self.name = name; self.clockRate = clockRate
        self.channels = channels; self.fmtp = fmtp; self.rtcpFeedback = rtcpFeedback
    }

    /// The fmtp parameters as key → value (`a=fmtp:111 minptime=10;useinbandfec=1`);
    /// a parameter without `=` maps to "".
    public var parameters: [String: String] {
        var result: [String: String] = [:]
        for part in (fmtp ?? "").fields(UInt8(ascii: ";")) {
            let kv = part.fields(UInt8(ascii: "="), maxSplits: 1)
            guard let key = kv.first?.trimmingSpaces, !key.isEmpty else { continue }
            result[key] = kv.count > 1 ? kv[1].trimmingSpaces : ""
        }
        return result
    }

    /// True when the encoding name matches case-insensitively and the clock rate
    /// and channel count agree (a missing channel count means 1, RFC 8866 §6.6).
    public func matches(name other: String, clockRate rate: Int, channels count: Int = 1) -> Bool {
        guard let name, name.lowercased() == other.lowercased(), clockRate == rate else { return false }
        return (channels ?? 1) == count
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// The media type of an `m=` line (RFC 8866 §5.14).
public enum MediaKind: Hashable, Sendable, Codable, CustomStringConvertible {
    case audio, video, application
    case other(String)

    /// The kind named by `text` ("audio", "video", "application", anything else).
    public init(_ text: String) {
        switch text {
        case "audio": self = .audio
        case "video": self = .video
        case "application": self = .application
        default: self = .other(text)
        }
    }
    public var description: String {
        switch self {
        case .audio: return "audio"
        case .video: return "video"
        case .application: return "application"
        case .other(let text): return text
        }
    }
    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// One `m=` section and its attributes.
public struct MediaDescription: Equatable, Sendable, Codable {
    /// `m=<media>`.
    public var kind: MediaKind
    /// `m=… <port>` (0 = rejected, RFC 3264 §6) and an optional `/<count>`.
    public var port: Int
    public var portCount: Int?
    /// `m=… <proto>`, e.g. "UDP/TLS/RTP/SAVPF" or "UDP/DTLS/SCTP".
    public var proto: String
    /// `m=… <fmt>…`: payload types for RTP, "webrtc-datachannel" for SCTP.
    public var formats: [String]
    /// `i=`, `c=`, `b=`, `k=` of this section.
    public var information: String?
    public var connection: Connection?
    public var bandwidths: [Bandwidth] = []
    public var encryptionKey: String?

    /// `a=mid` (RFC 5888 §4).
    public var mid: String?
    /// `a=sendrecv` / `sendonly` / `recvonly` / `inactive`; nil when absent (means sendrecv).
    public var direction: Direction?
    /// `a=rtcp:<port> [<nettype> <addrtype> <address>]` (RFC 3605), kept as text.
    public var rtcp: String?
    /// `a=rtcp-mux` (RFC 5761), `a=rtcp-mux-only` (RFC 8858), `a=rtcp-rsize` (RFC 5506).
    public var rtcpMux = false
    public var rtcpMuxOnly = false
    public var rtcpRsize = false
    /// `a=ice-ufrag`, `a=ice-pwd`, `a=ice-options` (RFC 8839 §5.4, §5.6).
    public var iceUfrag: String?
    public var icePwd: String?
    public var iceOptions: [String] = []
    /// `a=fingerprint` lines (RFC 8122) and `a=setup` (RFC 4145).
    public var fingerprints: [Fingerprint] = []
    public var setup: Setup?
    /// `a=candidate` lines (RFC 8839 §5.1) and `a=end-of-candidates` (§5.2).
    public var candidates: [Candidate] = []
    public var endOfCandidates = false
    /// `a=extmap` lines (RFC 8285) and `a=extmap-allow-mixed`.
    public var extmaps: [Extmap] = []
    public var extmapAllowMixed = false
    /// The payload formats, in the order of ``formats`` (RTP sections only).
    public var payloads: [PayloadFormat] = []
    /// `a=rtcp-fb:* …` values that apply to every payload type (RFC 4585 §4.2).
    public var rtcpFeedbackAll: [String] = []
    /// `a=ssrc` (RFC 5576 §4.1) and `a=ssrc-group` (§4.2).
    public var ssrcs: [SsrcAttribute] = []
    public var ssrcGroups: [SsrcGroup] = []
    /// `a=msid` (RFC 8830).
    public var msids: [Msid] = []
    /// `a=sctp-port` and `a=max-message-size` (RFC 8841 §5, §6).
    public var sctpPort: Int?
    public var maxMessageSize: Int?
    /// `a=sctpmap` lines (the pre-RFC 8841 form, ``SctpMap``). One that does not parse is
    /// kept in ``otherAttributes`` and makes the section no usable data section
    /// (``JSEP/dataSectionProblem(_:)``).
    public var sctpmaps: [SctpMap] = []
    /// `a=rid` (RFC 8851) and `a=simulcast` (RFC 8853, kept as text).
    public var rids: [Rid] = []
    public var simulcast: String?
    /// Attributes of this section the model does not know, in order.
    public var otherAttributes: [Attribute] = []

    /// A section of `kind` with the given port, proto and formats.
    public init(kind: MediaKind, port: Int = 9, proto: String = "UDP/TLS/RTP/SAVPF", formats: [String] = []) {
        self.kind = kind; self.port = port; self.proto = proto; self.formats = formats
    }

    /// True for RTP profiles (`RTP/AVP`, `UDP/TLS/RTP/SAVPF` …): formats are payload types.
    public var isRTP: Bool {
        // ASCII protos (all real ones) without allocating: "RTP/" in any letter case.
        let p = proto.utf8
        if p.allSatisfy({ $0 < 0x80 }) {
            let pattern: [UInt8] = [0x52, 0x54, 0x50, 0x2F]  // "RTP/"
            var matched = 0
            for b in p {
                let upper = b >= 0x61 && b <= 0x7A ? b - 0x20 : b
                if upper == pattern[matched] {
                    matched += 1
                    if matched == pattern.count { return true }
                } else {
                    matched = upper == pattern[0] ? 1 : 0
                }
            }
            return false
        }
        return proto.uppercased().contains("RTP/")
    }

    /// True when the section was rejected (port 0) or is bundled-only with port 0 (RFC 8843 §7.1.3).
    public var isRejected: Bool { port == 0 && !otherAttributes.contains { $0.name == "bundle-only" } }

    /// The effective direction (an absent attribute means sendrecv, RFC 3264 §5.1).
    public var effectiveDirection: Direction { direction ?? .sendrecv }

    /// The payload format for `payloadType`, if listed.
    public func payload(_ payloadType: Int) -> PayloadFormat? { payloads.first { $0.payloadType == payloadType } }
}
