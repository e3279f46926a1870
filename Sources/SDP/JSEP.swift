/// What one local track offers or accepts: its kind, direction and the source
/// description announced for what it sends (RFC 5576 ssrc/cname, RFC 8830 msid). A track
/// of kind `.application` stands for the connection's data channels (one SCTP
/// association, RFC 8841): its direction, SSRC and payload type are not used.
public struct LocalTrack: Equatable, Sendable {
    /// `.audio` or `.video`.
    public var kind: MediaKind
    /// The direction we want: sendrecv, sendonly, recvonly or inactive.
    public var direction: Direction
    /// The SSRC of what we send (RFC 3550 §8).
    public var ssrc: UInt32
    /// RTCP CNAME (RFC 7022) announced with the SSRC.
    public var cname: String
    /// `a=msid` stream and track ids.
    public var streamId: String
    public var trackId: String
    /// The mid negotiated for the track's m-section (nil before its first offer): a
    /// subsequent offer keeps it in its place, an answer takes the offered section with it.
    public var mid: String?
    /// The payload type negotiated for our codec (nil: ours, Opus 111 or VP8 96): a
    /// subsequent offer keeps it (RFC 8829 §5.2.2).
    public var payloadType: Int?
    /// The track was stopped (W3C `transceiver.stop()`): an offer stops its m-section
    /// (port 0) and an answer gives it none.
    public var stopped = false
    /// For `.application`: the data section was negotiated in the peer's pre-RFC 8841 form
    /// (``LegacyDataForm``), which our subsequent offers keep; nil: RFC 8841.
    public var legacyData: LegacyDataForm?

    public init(kind: MediaKind, direction: Direction = .sendrecv, ssrc: UInt32, cname: String,
                streamId: String, trackId: String, mid: String? = nil, payloadType: Int? = nil) {
        self.kind = kind; self.direction = direction; self.ssrc = ssrc; self.cname = cname
        self.streamId = streamId; self.trackId = trackId; self.mid = mid; self.payloadType = payloadType
    }
}

/// The local side of a negotiation: session ids, ICE credentials, DTLS
/// fingerprint and tracks. JSEP (RFC 8829) writes these into every m-section.
public struct LocalDescriptionOptions: Equatable, Sendable {
    /// `o=` session id and version, decimal (RFC 8829 §5.2.1: a random 62-bit number).
    public var sessionId: UInt64
    public var sessionVersion: UInt64 = 2
    /// ICE username fragment (4+ chars) and password (22+ chars), RFC 8839 §5.4.
    public var iceUfrag: String
    public var icePwd: String
    /// `a=ice-options` (e.g. ["trickle"]).
    public var iceOptions: [String] = ["trickle"]
    /// The certificate fingerprint(s) (RFC 8122), normally one sha-256.
    public var fingerprints: [Fingerprint]
    /// The tracks, one m-section each (in a first offer audio comes first).
    public var tracks: [LocalTrack]
    /// The id of the mid header extension (RFC 8843 §15.1) in our offers: 1, or the id
    /// negotiated, which a subsequent offer keeps (RFC 8829 §5.2.2).
    public var midExtensionID = 1
    /// Our `a=setup` in answers once a DTLS association exists: `active` for its client,
    /// `passive` for its server (RFC 8842 §5.5: the roles stay); nil before.
    public var establishedSetup: Setup?

    public init(sessionId: UInt64, sessionVersion: UInt64 = 2, iceUfrag: String, icePwd: String,
                iceOptions: [String] = ["trickle"], fingerprints: [Fingerprint], tracks: [LocalTrack]) {
        self.sessionId = sessionId; self.sessionVersion = sessionVersion; self.iceUfrag = iceUfrag
        self.icePwd = icePwd; self.iceOptions = iceOptions; self.fingerprints = fingerprints; self.tracks = tracks
    }
}

/// Offer/answer (RFC 3264, JSEP RFC 8829 §5.2–5.3) for the codecs `peer` serves:
/// Opus 48000/2 and VP8 90000, BUNDLE, rtcp-mux, DTLS-SRTP.
public enum JSEP {
    /// Our audio codec: Opus 48 kHz stereo-capable, payload type 111, RFC 7587.
    public static let opus = PayloadFormat(payloadType: 111, name: "opus", clockRate: 48000, channels: 2,
                                           fmtp: "minptime=10;useinbandfec=1", rtcpFeedback: [])
    /// Our video codec: VP8 90 kHz, payload type 96, RFC 7741, with NACK, PLI and FIR
    /// feedback (no `goog-remb`: we never send REMB, and offering it would leave a browser
    /// waiting for estimates at its start bitrate).
    public static let vp8 = PayloadFormat(payloadType: 96, name: "VP8", clockRate: 90000, channels: nil,
                                          fmtp: nil, rtcpFeedback: ["ccm fir", "nack", "nack pli"])
    /// RTCP feedback we honour (RFC 4585, RFC 5104).
    public static let supportedFeedback: Set<String> = ["nack", "nack pli", "ccm fir"]
    /// Header extensions we use: the mid extension (RFC 8843 §15.1) for routing.
    public static let midExtension = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// The RTP profile for DTLS-SRTP with feedback (RFC 5764 §8).
    public static let rtpProfile = "UDP/TLS/RTP/SAVPF"
    /// The data channel section's proto and format (RFC 8841 §4.1).
    public static let dataProfile = "UDP/DTLS/SCTP", dataFormat = "webrtc-datachannel"
    /// Our `a=sctp-port` (RFC 8841 §5; 5000 as browsers use).
    public static let sctpPort = 5000
    /// Our `a=max-message-size`, bytes (RFC 8841 §6): the largest message we take.
    public static let maxMessageSize = 262_144
    /// The peer's limit when its section has no `a=max-message-size` (RFC 8841 §6.1).
    public static let defaultMaxMessageSize = 65_536

    static func codec(for kind: MediaKind) -> PayloadFormat? {
        switch kind {
        case .audio: return opus
        case .video: return vp8
        default: return nil
        }
    }

    /// Builds an offer with one m-section per local track, all in one BUNDLE group,
    /// `a=setup:actpass` (RFC 8842 §5.5 lets the answerer keep its role), rtcp-mux and
    /// rtcp-rsize.
    /// - A first offer (`previous` nil): audio first, mids "0", "1", ….
    /// - A subsequent offer (RFC 8829 §5.2.2; `previous` is the current local description):
    ///   every section of `previous` in its place, with its mid — a track's with the track's
    ///   direction, negotiated payload type and mid-extension id, a section without a
    ///   track, or with a stopped one (one we rejected, or stopped), with port 0 — then the
    ///   tracks without a mid appended, each with the lowest unused number as mid.
    public static func createOffer(_ options: LocalDescriptionOptions, previous: SessionDescription? = nil) -> SessionDescription {
        var d = baseDescription(options)
        var placed = Set<Int>()
        for old in previous?.media ?? [] {
            if let mid = old.mid, let i = options.tracks.indices.first(where: { !placed.contains($0) && options.tracks[$0].mid == mid
                                                                                && options.tracks[$0].kind == old.kind }),
               !options.tracks[i].stopped, let m = offered(options.tracks[i], mid: mid, options) {
                placed.insert(i)
                d.media.append(m)
            } else {
                d.media.append(rejected(old))
            }
        }
        var rest = options.tracks.indices.filter { !placed.contains($0) && !options.tracks[$0].stopped }
        if previous == nil { rest.sort { (options.tracks[$0].kind == .audio ? 0 : 1, $0) < (options.tracks[$1].kind == .audio ? 0 : 1, $1) } }
        var usedMids = Set(d.media.compactMap(\.mid) + options.tracks.compactMap(\.mid))
        var next = 0
        for i in rest {
            var mid = options.tracks[i].mid
            if mid == nil || d.media.contains(where: { $0.mid == mid }) {
                while usedMids.contains(String(next)) { next += 1 }
                mid = String(next)
            }
            guard let mid, let m = offered(options.tracks[i], mid: mid, options) else { continue }
            usedMids.insert(mid)
            d.media.append(m)
        }
        let mids = d.media.filter { !$0.isRejected }.compactMap(\.mid)
        if !mids.isEmpty { d.groups = [Group(semantics: "BUNDLE", mids: mids)] }
        return d
    }

    /// The offered m-section of `track` with `mid` (nil for a kind without our codec);
    /// for `.application`, the data channel section.
    static func offered(_ track: LocalTrack, mid: String, _ options: LocalDescriptionOptions) -> MediaDescription? {
        if track.kind == .application {
            guard let form = track.legacyData else { return dataSection(mid: mid, options: options, setup: .actpass) }
            return legacyDataSection(mid: mid, options: options, setup: .actpass, form: form)
        }
        guard var codec = codec(for: track.kind) else { return nil }
        if let pt = track.payloadType, (0...127).contains(pt) { codec.payloadType = pt }
        var m = section(kind: track.kind, mid: mid, options: options, setup: .actpass)
        m.formats = [String(codec.payloadType)]
        m.payloads = [codec]
        m.extmaps = [Extmap(id: (1...14).contains(options.midExtensionID) ? options.midExtensionID : 1, uri: midExtension)]
        m.direction = track.direction
        announce(track, in: &m)
        return m
    }

    /// Builds the answer to `offer` (RFC 3264 §6, RFC 8829 §5.3.1):
    /// - m-sections mirrored in order with their mids;
    /// - codecs intersected by name, clock rate and channels, keeping the offerer's
    ///   payload types, with our fmtp and the offered feedback we support;
    /// - direction = our wish ∩ the reverse of the offered one;
    /// - a section we cannot serve (no common codec, no local track of its kind,
    ///   a rejected offer section) rejected with port 0, mid kept;
    /// - a data channel section (RFC 8841: `UDP/DTLS/SCTP webrtc-datachannel`, with or
    ///   without `a=sctp-port`; or the legacy `DTLS/SCTP 5000` with `a=sctpmap`, RFC 8829
    ///   §5.1.2) accepted when there is a local track of kind `.application`, answered in
    ///   the form and with the proto it was offered in (``legacyForm(of:)``); one with an
    ///   `a=sctpmap` that does not parse rejected (``dataSectionProblem(_:)``);
    /// - BUNDLE: the offered group minus rejected mids;
    /// - `a=setup:active` against actpass or passive, `passive` against active; once a DTLS
    ///   association exists, ``LocalDescriptionOptions/establishedSetup`` (the roles stay);
    /// - header extensions we support kept with the offerer's ids;
    /// - a section takes the track negotiated with its mid, else the first track of its
    ///   kind not negotiated yet (a subsequent offer, RFC 8829 §5.3.2).
    /// - Throws: ``JSEPError`` when the offer is not an offer we can answer at all
    ///   (an m-section without `a=mid`, an offered `a=setup:holdconn`, or a setup that would
    ///   swap the roles of the association in use).
    public static func createAnswer(to offer: SessionDescription, _ options: LocalDescriptionOptions) throws(JSEPError) -> SessionDescription {
        var d = baseDescription(options)
        d.extmapAllowMixed = offer.extmapAllowMixed
        var used = Set<Int>()
        for (index, o) in offer.media.enumerated() {
            guard let mid = o.mid else { throw .missingMid(index: index) }
            let offeredSetup = o.setup ?? offer.setup ?? .actpass
            var setup: Setup
            switch offeredSetup {
            case .actpass, .passive: setup = .active
            case .active: setup = .passive
            case .holdconn: throw .unusableSetup(mid: mid, setup: offeredSetup.rawValue)
            }
            if let kept = options.establishedSetup, !o.isRejected {
                guard offeredSetup == .actpass || setup == kept else {
                    throw .roleSwap(mid: mid, setup: offeredSetup.rawValue, kept: kept.rawValue)
                }
                setup = kept
            }
            var m = section(kind: o.kind, mid: mid, options: options, setup: setup)
            m.proto = o.proto
            let slot = options.tracks.indices.first { !used.contains($0) && !options.tracks[$0].stopped && options.tracks[$0].kind == o.kind && options.tracks[$0].mid == mid }
                ?? options.tracks.indices.first { !used.contains($0) && !options.tracks[$0].stopped && options.tracks[$0].kind == o.kind && options.tracks[$0].mid == nil }
            if o.kind == .application {
                if let slot, !o.isRejected, isDataSection(o) {
                    used.insert(slot)
                    if let form = legacyForm(of: o) {
                        d.media.append(legacyDataSection(mid: mid, options: options, setup: setup, form: form))
                    } else {
                        var data = dataSection(mid: mid, options: options, setup: setup)
                        data.proto = o.proto  // RFC 3264 §6: the answer's proto is the offer's
                        d.media.append(data)
                    }
                } else {
                    d.media.append(rejected(o))
                }
                continue
            }
            let common = commonPayloads(o)
            guard let slot, !o.isRejected, o.isRTP, !common.isEmpty,
                  o.proto.uppercased().contains("SAVP") else {
                d.media.append(rejected(o))
                continue
            }
            used.insert(slot)
            let track = options.tracks[slot]
            m.formats = common.map { String($0.payloadType) }
            m.payloads = common
            m.rtcpMux = o.rtcpMux
            m.rtcpRsize = o.rtcpRsize
            m.extmaps = o.extmaps.filter { $0.uri == midExtension }
            let direction = Direction(sends: track.direction.sends && o.effectiveDirection.receives,
                                      receives: track.direction.receives && o.effectiveDirection.sends)
            m.direction = direction
            if direction.sends { announce(track, in: &m) }
            d.media.append(m)
        }
        if let bundle = offer.bundleGroup {
            let accepted = Set(d.media.filter { !$0.isRejected }.compactMap(\.mid))
            let mids = bundle.mids.filter(accepted.contains)
            if !mids.isEmpty { d.groups = [Group(semantics: bundle.semantics, mids: mids)] }
        }
        return d
    }

    /// The offered payload formats that match our codec for the section's kind, in
    /// the offer's order, with the offerer's payload type, our fmtp and the
    /// feedback both sides support.
    static func commonPayloads(_ offered: MediaDescription) -> [PayloadFormat] {
        guard let ours = codec(for: offered.kind), let name = ours.name, let clock = ours.clockRate else { return [] }
        return offered.payloads.filter { $0.matches(name: name, clockRate: clock, channels: ours.channels ?? 1) }
            .map { theirs in
                var p = ours
                // The offerer's payload type, our canonical spelling of the name (`opus`,
                // `VP8`): names match case-insensitively (RFC 4855 §3), we write ours.
                p.payloadType = theirs.payloadType
                let fb = theirs.rtcpFeedback + offered.rtcpFeedbackAll
                p.rtcpFeedback = ours.rtcpFeedback.filter(fb.contains)
                return p
            }
    }

    /// True for a data channel section we can take: proto `UDP/DTLS/SCTP` (or
    /// `TCP/DTLS/SCTP`, or the drafts' `DTLS/SCTP`), format `webrtc-datachannel` (RFC 8841
    /// §4.1; `a=sctp-port` may be absent: its default is 5000, §5.2); or the legacy form,
    /// a format that an `a=sctpmap` maps to `webrtc-datachannel` (``legacyForm(of:)``). Not
    /// with an `a=sctpmap` that does not parse (``dataSectionProblem(_:)``).
    public static func isDataSection(_ m: MediaDescription) -> Bool {
        guard m.kind == .application, m.proto.uppercased().hasSuffix("DTLS/SCTP"), dataSectionProblem(m) == nil else { return false }
        return m.formats.contains(dataFormat) || legacyForm(of: m) != nil
    }

    /// Our data channel section with `mid` (RFC 8841): port 9, `UDP/DTLS/SCTP
    /// webrtc-datachannel`, ICE and DTLS attributes, `a=sctp-port`, `a=max-message-size`.
    static func dataSection(mid: String, options: LocalDescriptionOptions, setup: Setup) -> MediaDescription {
        var m = section(kind: .application, mid: mid, options: options, setup: setup)
        m.proto = dataProfile
        m.formats = [dataFormat]
        m.rtcp = nil
        m.rtcpMux = false
        m.rtcpRsize = false
        m.sctpPort = sctpPort
        m.maxMessageSize = maxMessageSize
        return m
    }

    static func rejected(_ offered: MediaDescription) -> MediaDescription {
        var m = MediaDescription(kind: offered.kind, port: 0, proto: offered.proto, formats: offered.formats)
        m.mid = offered.mid
        m.connection = Connection()
        if offered.isRTP {
            m.payloads = offered.payloads.map { PayloadFormat(payloadType: $0.payloadType, name: $0.name,
                                                              clockRate: $0.clockRate, channels: $0.channels) }
            m.direction = .inactive
        }
        return m
    }

    static func baseDescription(_ options: LocalDescriptionOptions) -> SessionDescription {
        var d = SessionDescription(origin: Origin(sessionId: String(options.sessionId),
                                                  sessionVersion: String(options.sessionVersion)))
        d.msidSemantic = MsidSemantic(semantic: "WMS", identifiers: ["*"])
        return d
    }

    static func section(kind: MediaKind, mid: String, options: LocalDescriptionOptions, setup: Setup) -> MediaDescription {
        var m = MediaDescription(kind: kind, port: 9, proto: rtpProfile)
        m.connection = Connection()
        m.rtcp = "9 IN IP4 0.0.0.0"
        m.iceUfrag = options.iceUfrag
        m.icePwd = options.icePwd
        m.iceOptions = options.iceOptions
        m.fingerprints = options.fingerprints
        m.setup = setup
        m.mid = mid
        m.rtcpMux = true
        m.rtcpRsize = true
        return m
    }

    static func announce(_ track: LocalTrack, in m: inout MediaDescription) {
        guard track.direction.sends else { return }
        m.msids = [Msid(streamId: track.streamId, trackId: track.trackId)]
        m.ssrcs = [SsrcAttribute(ssrc: track.ssrc, name: "cname", value: track.cname),
                   SsrcAttribute(ssrc: track.ssrc, name: "msid", value: "\(track.streamId) \(track.trackId)")]
    }
}

/// Why an offer cannot be answered.
public enum JSEPError: Error, Equatable, CustomStringConvertible {
    /// The m-section at `index` (0-based) has no `a=mid` (RFC 8829 §5.8 requires one).
    case missingMid(index: Int)
    /// The section `mid` offers `a=setup:<setup>`, which allows no DTLS role.
    case unusableSetup(mid: String, setup: String)
    /// A subsequent offer's `a=setup:<setup>` in `mid` would swap the roles of the DTLS
    /// association in use (we answer `kept`).
    case roleSwap(mid: String, setup: String, kept: String)

    public var description: String {
        switch self {
        case .missingMid(let index): return "offer m-section \(index) has no a=mid"
        case let .unusableSetup(mid, setup): return "offer m-section mid \(mid) has a=setup:\(setup); expected actpass, active or passive"
        case let .roleSwap(mid, setup, kept):
            return "re-offer m-section mid \(mid) has a=setup:\(setup), which swaps the DTLS roles in use (ours is a=setup:\(kept)); expected actpass"
        }
    }
}
