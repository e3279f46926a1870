// StatsAssembly: a connection's W3C webrtc-stats report put together from its transceivers, ICE pair, DTLS-SRTP transport and RTCP.
import DTLS
import ICE
import SDP

extension StatsReport {
    /// The report of one connection (W3C webrtc-stats §7): `outbound-rtp` and `inbound-rtp`
    /// of each negotiated transceiver of `plane` (waits for each sender's and sink's
    /// thread to read their counters), the `codec`s in use,
    /// `remote-inbound-rtp` and the round-trip time from its RTCP, the selected
    /// `candidate-pair` with its `local-candidate`/`remote-candidate`, and the bundle's
    /// `transport` with its DTLS and SRTP figures and every received datagram dropped, by
    /// reason (the transport's, the plane's RTP and RTCP drops); `timings` as measured by
    /// the connection. `timestamp`s in ms since the Unix epoch.
    init(plane: MediaPlane, selectedPair pair: IceCandidatePair?, transport: DtlsSrtpTransport?,
         iceState ice: IceConnectionState, dtlsRole role: DTLSRole?, timings: ConnectionTimings) {
        let list = plane.transceivers, rtcp = plane.rtcp
        var report = StatsReport()
        let remoteIn = rtcp.remoteInboundStats, rtt = rtcp.roundTripTime
        let now = unixTimeMs()
        var codecs: [Int: CodecStats] = [:]
        for t in list where t.currentDirection != nil && t.currentDirection != .inactive {
            let direction = t.currentDirection ?? .inactive
            let outbound = t.sender.snapshot()
            if direction.sends { report.outboundRTP.append(outbound) }
            if direction.receives {
                let inbound = t.receiver.snapshot()
                report.inboundRTP.append(inbound)
                if let e2e = t.receiver.endToEndSnapshot(inboundId: inbound.id) { report.endToEnd.append(e2e) }
            }
            let codecIds = [outbound.codecId, direction.receives ? report.inboundRTP.last?.codecId : nil]
            for pt in Set(codecIds.compactMap { $0.flatMap { Int($0.dropFirst(3)) } }) {
                codecs[pt] = CodecStats(id: "CO-\(pt)", timestamp: now, payloadType: pt,
                                        mimeType: t.kind == .video ? "video/VP8" : "audio/opus",
                                        clockRate: t.kind == .video ? 90_000 : 48_000, channels: t.kind == .audio ? 2 : nil,
                                        sdpFmtpLine: t.kind == .audio ? JSEP.opus.fmtp : nil)
            }
        }
        report.codecs = codecs.keys.sorted().compactMap { codecs[$0] }
        report.remoteInboundRTP = remoteIn
        let counters = transport?.snapshot
        let pairId = pair.map { "CP-\($0.local.foundation)-\($0.remote.foundation)" }
        if let pair, let pairId {
            let localId = "LC-\(pair.local.foundation)", remoteId = "RC-\(pair.remote.foundation)"
            let pairState = ice == .connected || ice == .completed ? "succeeded" : (ice == .failed ? "failed" : "in-progress")
            report.candidatePairs.append(CandidatePairStats(
                id: pairId, timestamp: now, state: pairState, nominated: true,
                localCandidateId: localId, remoteCandidateId: remoteId, transportId: "T-bundle",
                bytesSent: counters?.bytesSent ?? 0, bytesReceived: counters?.bytesReceived ?? 0,
                packetsSent: counters?.packetsSent ?? 0, packetsReceived: counters?.packetsReceived ?? 0,
                currentRoundTripTime: rtt))
            for (id, type, c) in [(localId, "local-candidate", pair.local), (remoteId, "remote-candidate", pair.remote)] {
                report.candidates.append(IceCandidateStats(id: id, type: type, timestamp: now, address: c.address, port: c.port,
                                                           protocol: c.transport.lowercased(), candidateType: c.type.rawValue,
                                                           priority: c.priority, candidate: c.sdpValue))
            }
        }
        if let transport, let counters {
            let dtls = transport.state
            let drops = counters.inboundDrops, rtp = plane.rtpDrops, received = rtcp.receivedCounts
            report.transports.append(TransportStats(
                id: "T-bundle", timestamp: now, dtlsState: dtls.rawValue, iceState: ice.rawValue,
                dtlsRole: role.map { $0 == .client ? "client" : "server" }, selectedCandidatePairId: pairId,
                tlsVersion: dtls == .connected ? "FEFD" : nil, srtpCipher: transport.srtpProfile.map(Self.ianaName),
                bytesSent: counters.bytesSent, bytesReceived: counters.bytesReceived,
                srtpFailures: counters.srtpFailures, srtpAuthFailures: drops.authFailures, srtpReplayDrops: drops.replays,
                unknownPacketsDropped: counters.unknownDropped, srtpMalformedDrops: drops.malformed, earlyPacketsDropped: drops.early,
                rtpMalformedDrops: rtp.malformed, rtpUnknownPayloadTypeDrops: rtp.unknownPayloadType, rtpUnknownSsrcDrops: rtp.unknownSource,
                rtcpMalformedDrops: received.malformed, rtcpUnknownPackets: received.other, packetsReceived: counters.packetsReceived))
        }
        report.timings = timings
        self = report
    }

    /// The profile's name in the IANA DTLS-SRTP registry, as W3C `srtpCipher` wants it.
    static func ianaName(_ profile: SRTPProfile) -> String {
        switch profile {
        case .aes128CmSha1_80: return "SRTP_AES128_CM_HMAC_SHA1_80"
        case .aeadAes128Gcm: return "SRTP_AEAD_AES_128_GCM"
        }
    }
}

extension StatsReport {
    /// Adds a `data-channel` object per channel and the `sctp-transport` once the
    /// association started (waits for the loop thread for its status).
    mutating func addDataChannels(_ sctp: SctpTransport) {
        let now = unixTimeMs()
        dataChannels = sctp.channels.map { $0.stats(timestamp: now) }
        let state = sctp.state
        guard state != .new else { return }
        let status = sctp.status()
        sctpTransports = [SctpTransportStats(timestamp: now, state: state.rawValue,
                                             smoothedRoundTripTime: status.map { Double($0.smoothedRoundTripTimeMs) / 1000 },
                                             congestionWindow: status?.congestionWindow, receiverWindow: status?.peerWindow,
                                             mtu: status?.mtu, unackData: status?.unacknowledged, discarded: sctp.discards)]
    }
}
