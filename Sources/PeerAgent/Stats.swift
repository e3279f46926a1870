// Stats: the W3C webrtc-stats dictionaries peer reports — outbound-rtp, inbound-rtp, remote-inbound-rtp, candidate-pair, candidates, transport, codec — and StatsReport.
import Foundation

/// `outbound-rtp` statistics of one sending stream (W3C webrtc-stats §7.6
/// RTCOutboundRtpStreamStats).
public struct OutboundRTPStats: Sendable, Encodable, Equatable {
    /// Stats object id, e.g. "OT-video-1234".
    public var id: String
    /// Always "outbound-rtp".
    public var type = "outbound-rtp"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The RTP SSRC of the stream.
    public var ssrc: UInt32
    /// "audio" or "video".
    public var kind: String
    /// The m-section's mid.
    public var mid: String?
    /// Id of the `codec` stats object.
    public var codecId: String?
    /// RTP packets sent, retransmissions included.
    public var packetsSent = 0
    /// Payload bytes sent (RTP headers and padding excluded), retransmissions included.
    public var bytesSent = 0
    /// RTP header bytes sent.
    public var headerBytesSent = 0
    /// Packets sent again in answer to NACKs (RFC 4585).
    public var retransmittedPacketsSent = 0
    /// Payload bytes of those retransmissions.
    public var retransmittedBytesSent = 0
    /// NACK packets received for this stream.
    public var nackCount = 0
    /// PLI packets received (video).
    public var pliCount = 0
    /// FIR packets received (video).
    public var firCount = 0
    /// Frames encoded (video) or passed through from a file.
    public var framesEncoded: Int?
    /// Key frames encoded (video).
    public var keyFramesEncoded: Int?
    /// Frames whose packets were all sent (video).
    public var framesSent: Int?
    /// Width of the last encoded frame in pixels (video).
    public var frameWidth: Int?
    /// Height of the last encoded frame in pixels (video).
    public var frameHeight: Int?
    /// Seconds spent encoding, in total.
    public var totalEncodeTime: Double?
    /// The encoder's target bitrate in bit/s.
    public var targetBitrate: Double?
    /// Frames encoded in the last second (video).
    public var framesPerSecond: Double?
    /// Why the encoding is limited: "none" (peer does not adapt resolution or rate to CPU
    /// or bandwidth) (video).
    public var qualityLimitationReason: String?
}

/// `inbound-rtp` statistics of one receiving stream (W3C webrtc-stats §7.4
/// RTCInboundRtpStreamStats).
public struct InboundRTPStats: Sendable, Encodable, Equatable {
    /// Stats object id, e.g. "IT-video-5678".
    public var id: String
    /// Always "inbound-rtp".
    public var type = "inbound-rtp"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The remote sender's SSRC (0 until a packet arrived).
    public var ssrc: UInt32
    /// "audio" or "video".
    public var kind: String
    /// The m-section's mid.
    public var mid: String?
    /// Id of the `codec` stats object.
    public var codecId: String?
    /// RTP packets received (duplicates included, RFC 3550 A.3 `received`).
    public var packetsReceived = 0
    /// Payload bytes received.
    public var bytesReceived = 0
    /// RTP header bytes received.
    public var headerBytesReceived = 0
    /// Packets lost: expected − received (RFC 3550 A.3; negative with duplicates).
    public var packetsLost = 0
    /// Interarrival jitter in seconds (RFC 3550 A.8).
    public var jitter = 0.0
    /// W3C: packets the jitter buffer discarded — arrived too late to be played out (after
    /// the frame or gap they belonged to was handed on); for audio also those dropped
    /// because the sink fell behind (``sinkOverflowDrops``). Duplicates are not in it
    /// (``packetsDuplicated``), nor packets dropped before reaching this stream (the
    /// `transport` object counts those by reason).
    public var packetsDiscarded = 0
    /// W3C (provisional): packets dropped as duplicates of one already received.
    public var packetsDuplicated = 0
    /// Not W3C: packets taken with a payload type an earlier negotiation gave this m-section
    /// and the last one renumbered (a remote whose running sender keeps its old numbers
    /// after a re-offer, as aiortc 1.16 does); ``previousPayloadType`` names the last.
    public var packetsWithPreviousPayloadType = 0
    /// Not W3C: the last such previous payload type received, nil while none came.
    public var previousPayloadType: Int?
    /// NACK packets sent.
    public var nackCount = 0
    /// PLI packets sent (video).
    public var pliCount: Int?
    /// FIR packets sent (video).
    public var firCount: Int?
    /// Complete frames reassembled (video).
    public var framesReceived: Int?
    /// Frames decoded (video, when decoding is on).
    public var framesDecoded: Int?
    /// Key frames decoded (video, when decoding is on).
    public var keyFramesDecoded: Int?
    /// Frames that could not be completed (a packet missing), were skipped waiting for
    /// a key frame, or dropped because the sink fell behind (video).
    public var framesDropped: Int?
    /// Not W3C: frames (video) or packets (audio) dropped on arrival because decoding
    /// and recording had fallen ``RtpReceiver/maximumSinkBacklog(_:)`` items (2 s) behind
    /// — the machine was too busy for this stream. Included in `framesDropped` (video)
    /// or `packetsDiscarded` (audio). Video counts the inter frames after such a drop up
    /// to the key frame that resumes decoding (also those a network loss in that wait
    /// would have cost). 0 on a machine that keeps up.
    public var sinkOverflowDrops = 0
    /// Width of the last decoded (or received key) frame in pixels (video).
    public var frameWidth: Int?
    /// Height of the last decoded (or received key) frame in pixels (video).
    public var frameHeight: Int?
    /// Audio samples decoded or concealed per channel (audio, when decoding is on).
    public var totalSamplesReceived: Int?
    /// Of those, samples made up by packet-loss concealment (audio).
    public var concealedSamples: Int?
    /// Packets (video frames or Opus packets) written to the recording file.
    public var framesWritten: Int?
    /// Frames rendered (decoded; written with decoding off) in the last second (video).
    public var framesPerSecond: Double?
    /// Sum of the times between consecutive rendered frames, s (video).
    public var totalInterFrameDelay: Double?
    /// Sum of the squares of those times, s² (video).
    public var totalSquaredInterFrameDelay: Double?
    /// Freezes: a frame at least max(3 × the average delay of the last 30, the average +
    /// 150 ms) after the one before (video).
    public var freezeCount: Int?
    /// Total duration of the freezes, s (video).
    public var totalFreezesDuration: Double?
    /// Pauses: more than 5 s without a frame (video).
    public var pauseCount: Int?
    /// Total duration of the pauses, s (video).
    public var totalPausesDuration: Double?
    /// Seconds from each frame's first packet to the frame leaving reassembly, summed
    /// (video; W3C jitterBufferDelay).
    public var jitterBufferDelay: Double?
    /// Frames that left reassembly, counted in ``jitterBufferDelay`` (video).
    public var jitterBufferEmittedCount: Int?
    /// Sum of the decoded frames' quantizer indexes (VP8 y_ac_qi, 0–127; video, decoding on).
    public var qpSum: Int?
    /// Seconds spent decoding (video, decoding on).
    public var totalDecodeTime: Double?
    /// Concealment events: gaps made up by packet-loss concealment (audio).
    public var concealmentEvents: Int?
    /// Level of the last ~100 ms, 0…1 linear (1 = 0 dBov): √(energy / duration) over those
    /// samples, the average `totalAudioEnergy` describes (audio).
    public var audioLevel: Double?
    /// Sum over samples of (value / full scale)² × its duration in s, the loudest channel's
    /// value for each sample (audio).
    public var totalAudioEnergy: Double?
    /// Seconds of audio samples received (audio).
    public var totalSamplesDuration: Double?
    /// When the last packet arrived, ms since the Unix epoch.
    public var lastPacketReceivedTimestamp: Double?
}

/// `remote-inbound-rtp`: what the remote receiver reported about one of our
/// streams in its RTCP report blocks (W3C webrtc-stats §7.5).
public struct RemoteInboundRTPStats: Sendable, Encodable, Equatable {
    /// Stats object id.
    public var id: String
    /// Always "remote-inbound-rtp".
    public var type = "remote-inbound-rtp"
    /// When the report arrived, ms since the Unix epoch.
    public var timestamp: Double
    /// Our SSRC the report is about.
    public var ssrc: UInt32
    /// "audio" or "video".
    public var kind: String
    /// Id of our `outbound-rtp` object for that SSRC.
    public var localId: String
    /// Cumulative packets lost as reported (RFC 3550 §6.4.1).
    public var packetsLost: Int
    /// Fraction lost since the previous report, 0…1.
    public var fractionLost: Double
    /// Jitter as reported, seconds.
    public var jitter: Double
    /// Round-trip time from the last report with LSR/DLSR, seconds (RFC 3550 §6.4.1).
    public var roundTripTime: Double?
    /// Sum of all round-trip time measurements, seconds.
    public var totalRoundTripTime: Double
    /// Number of round-trip time measurements.
    public var roundTripTimeMeasurements: Int
}

/// `local-candidate` / `remote-candidate`: one ICE candidate of the selected pair
/// (W3C webrtc-stats §7.11 RTCIceCandidateStats).
public struct IceCandidateStats: Sendable, Encodable, Equatable {
    /// Stats object id, e.g. "LC-1" / "RC-1".
    public var id: String
    /// "local-candidate" or "remote-candidate".
    public var type: String
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The candidate's IP address (or name).
    public var address: String
    /// The candidate's port.
    public var port: Int
    /// "udp" or "tcp".
    public var `protocol`: String
    /// "host", "srflx", "prflx" or "relay".
    public var candidateType: String
    /// The ICE priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// The candidate as its SDP attribute value.
    public var candidate: String
}

/// `candidate-pair`: the ICE pair in use (W3C webrtc-stats §7.12).
public struct CandidatePairStats: Sendable, Encodable, Equatable {
    /// Stats object id.
    public var id: String
    /// Always "candidate-pair".
    public var type = "candidate-pair"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// W3C `RTCStatsIceCandidatePairState`: "succeeded" while ICE is connected or
    /// completed, "failed" after ICE failed, else "in-progress".
    public var state: String
    /// True for the selected pair.
    public var nominated: Bool
    /// Id of the `local-candidate` object.
    public var localCandidateId: String
    /// Id of the `remote-candidate` object.
    public var remoteCandidateId: String
    /// Id of the `transport` object.
    public var transportId: String
    /// Bytes sent on the transport (SRTP, SRTCP, DTLS).
    public var bytesSent: Int
    /// Bytes received on the transport.
    public var bytesReceived: Int
    /// Datagrams sent.
    public var packetsSent: Int
    /// Datagrams received.
    public var packetsReceived: Int
    /// The latest RTCP round-trip time, seconds (libnice does not expose its STUN RTT).
    public var currentRoundTripTime: Double?
}

/// `transport`: the DTLS transport of the bundle (W3C webrtc-stats §7.15).
public struct TransportStats: Sendable, Encodable, Equatable {
    /// Stats object id.
    public var id: String
    /// Always "transport".
    public var type = "transport"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// W3C `RTCDtlsTransportState`: new, connecting, connected, closed, failed.
    public var dtlsState: String
    /// W3C `RTCIceTransportState`.
    public var iceState: String
    /// "client" or "server" once DTLS started.
    public var dtlsRole: String?
    /// Id of the selected `candidate-pair`.
    public var selectedCandidatePairId: String?
    /// The DTLS version as four upper-case hex digits of its wire value (W3C): "FEFD"
    /// (DTLS 1.2) once connected.
    public var tlsVersion: String?
    /// The SRTP profile by its IANA registry name: "SRTP_AEAD_AES_128_GCM" (RFC 7714)
    /// or "SRTP_AES128_CM_HMAC_SHA1_80" (RFC 5764).
    public var srtpCipher: String?
    /// Bytes sent on the transport (SRTP, SRTCP, DTLS).
    public var bytesSent: Int
    /// Bytes received on the transport.
    public var bytesReceived: Int
    /// SRTP/SRTCP packets that failed authentication or replay checks, or could not be protected.
    public var srtpFailures: Int
    /// Of the received ones, those whose authentication tag did not verify
    /// (`srtp_err_status_auth_fail`: forged, corrupted, or a wrong key), dropped. Not W3C.
    public var srtpAuthFailures = 0
    /// Received SRTP/SRTCP packets dropped as replays: already seen, or older than the
    /// replay window (RFC 3711 §3.3.2). Not W3C.
    public var srtpReplayDrops = 0
    /// Received datagrams from the selected path that are neither DTLS nor RTP/RTCP
    /// (RFC 7983 §7), dropped. Datagrams from addresses that are not a remote candidate
    /// never get this far: libnice drops them uncounted. Not W3C.
    public var unknownPacketsDropped = 0
    /// Received SRTP/SRTCP that could not be unprotected for another reason than its tag or
    /// a replay (too short for its header or tag, another libsrtp status), dropped. Not W3C.
    public var srtpMalformedDrops = 0
    /// Received SRTP/SRTCP that came before DTLS gave the keys (or after close), and DTLS
    /// records beyond the 16 kept before our handshake started, dropped. Not W3C.
    public var earlyPacketsDropped = 0
    /// Unprotected RTP packets that do not parse (RFC 3550 §5.1), dropped. Not W3C.
    public var rtpMalformedDrops = 0
    /// RTP packets whose m-section (by mid or SSRC, RFC 8843 §9.2) neither negotiated their
    /// payload type nor kept it from an earlier negotiation — or, with neither a mid nor a
    /// known SSRC, whose payload type no receiving m-section takes — dropped. Not W3C.
    public var rtpUnknownPayloadTypeDrops = 0
    /// RTP packets from an SSRC that is not their m-section's stream, or with a mid that
    /// names no m-section of ours, dropped. Not W3C.
    public var rtpUnknownSsrcDrops = 0
    /// RTCP packets that did not parse: skipped by their length inside a compound, or the
    /// rest of a compound whose header or length was broken (one for the rest), dropped
    /// while the compound's other packets were handled (RFC 3550 §6.1). Not W3C.
    public var rtcpMalformedDrops = 0
    /// RTCP packets of a type or format we do not read (XR, APP, …), skipped by their
    /// length. Not W3C; not a fault.
    public var rtcpUnknownPackets = 0
    /// Datagrams received on the transport (all kinds).
    public var packetsReceived = 0

    /// The fields that count received packets dropped, one per reason, in the order the
    /// `--stats` summary and the report list them (`rtcpUnknownPackets` is not among them:
    /// skipping a type we do not read is no fault).
    public static let dropFields = ["srtpAuthFailures", "srtpReplayDrops", "srtpMalformedDrops", "earlyPacketsDropped",
                                    "unknownPacketsDropped", "rtpMalformedDrops", "rtpUnknownPayloadTypeDrops",
                                    "rtpUnknownSsrcDrops", "rtcpMalformedDrops"]

    /// Each drop field (``dropFields``) with its count.
    public var drops: [(field: String, count: Int)] {
        zip(Self.dropFields, [srtpAuthFailures, srtpReplayDrops, srtpMalformedDrops, earlyPacketsDropped, unknownPacketsDropped,
                              rtpMalformedDrops, rtpUnknownPayloadTypeDrops, rtpUnknownSsrcDrops, rtcpMalformedDrops]).map { ($0, $1) }
    }
}

/// `codec`: a negotiated payload format (W3C webrtc-stats §7.2).
public struct CodecStats: Sendable, Encodable, Equatable {
    /// Stats object id.
    public var id: String
    /// Always "codec".
    public var type = "codec"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// RTP payload type.
    public var payloadType: Int
    /// "audio/opus" or "video/VP8".
    public var mimeType: String
    /// RTP clock rate, Hz.
    public var clockRate: Int
    /// Audio channels.
    public var channels: Int?
    /// The `a=fmtp` parameters.
    public var sdpFmtpLine: String?
}

/// Times from the start of a connection (the first setLocal/RemoteDescription) to
/// its milestones, in milliseconds; nil until reached.
public struct ConnectionTimings: Sendable, Encodable, Equatable {
    /// To ICE `connected`.
    public var iceConnectedMs: Double?
    /// To DTLS `connected`.
    public var dtlsConnectedMs: Double?
    /// To the first complete remote video frame (or first audio packet without video).
    public var firstRemoteFrameMs: Double?
}

/// The result of ``PeerConnection/getStats()``: W3C webrtc-stats objects by type,
/// plus connection timings. Encodes to JSON as `{"stats": {id: object, …}, "timings": …}`
/// like `RTCStatsReport`.
public struct StatsReport: Sendable, Encodable, Equatable {
    /// `outbound-rtp` objects, one per sending stream.
    public var outboundRTP: [OutboundRTPStats] = []
    /// `inbound-rtp` objects, one per receiving stream.
    public var inboundRTP: [InboundRTPStats] = []
    /// `remote-inbound-rtp` objects: the peer's reports about our streams.
    public var remoteInboundRTP: [RemoteInboundRTPStats] = []
    /// The selected `candidate-pair`, once there is one.
    public var candidatePairs: [CandidatePairStats] = []
    /// Its `local-candidate` and `remote-candidate` objects.
    public var candidates: [IceCandidateStats] = []
    /// The bundle's `transport`.
    public var transports: [TransportStats] = []
    /// The negotiated payload formats, sent and received.
    public var codecs: [CodecStats] = []
    /// One `data-channel` object per channel, and the association's `sctp-transport`.
    public var dataChannels: [DataChannelStats] = []
    public var sctpTransports: [SctpTransportStats] = []
    /// `peer-e2e` objects: the test pattern's markers of received video (not W3C).
    public var endToEnd: [EndToEndStats] = []
    /// Milestones of the connection, ms from the first description.
    public var timings = ConnectionTimings()

    /// Creates an empty report.
    public init() {}

    /// The `inbound-rtp` object of `kind` ("audio"/"video"), if any.
    public func inbound(_ kind: String) -> InboundRTPStats? { inboundRTP.first { $0.kind == kind } }
    /// The `data-channel` object of the channel labelled `label` (the last one), if any.
    public func dataChannel(_ label: String) -> DataChannelStats? { dataChannels.last { $0.label == label } }
    /// The `outbound-rtp` object of `kind`, if any.
    public func outbound(_ kind: String) -> OutboundRTPStats? { outboundRTP.first { $0.kind == kind } }

    private struct AnyEncodable: Encodable {
        let value: any Encodable
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }
    private struct Keys: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes as `{"stats": {id: object…}, "timings": {…}}`.
    public func encode(to encoder: any Encoder) throws {
        var top = encoder.container(keyedBy: Keys.self)
        var stats = top.nestedContainer(keyedBy: Keys.self, forKey: Keys(stringValue: "stats"))
        let all: [(String, any Encodable)] = outboundRTP.map { ($0.id, $0) } + inboundRTP.map { ($0.id, $0) }
            + remoteInboundRTP.map { ($0.id, $0) } + candidatePairs.map { ($0.id, $0) } + candidates.map { ($0.id, $0) }
            + transports.map { ($0.id, $0) } + codecs.map { ($0.id, $0) }
            + dataChannels.map { ($0.id, $0) } + sctpTransports.map { ($0.id, $0) } + endToEnd.map { ($0.id, $0) }
        for (id, value) in all { try stats.encode(AnyEncodable(value: value), forKey: Keys(stringValue: id)) }
        try top.encode(timings, forKey: Keys(stringValue: "timings"))
    }

    /// The report as one line of JSON with sorted keys.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// Unix time in milliseconds (`CLOCK_REALTIME`), the `timestamp` of stats objects.
func unixTimeMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

/// Monotonic milliseconds (`CLOCK_MONOTONIC`), for intervals.
func monotonicMs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// The current time as a 64-bit NTP timestamp (seconds since 1900 in the high
/// 32 bits, fraction in the low 32), RFC 3550 §4.
func ntpNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    let seconds = UInt64(ts.tv_sec) + 2_208_988_800
    let fraction = (UInt64(ts.tv_nsec) << 32) / 1_000_000_000
    return seconds << 32 | fraction
}
