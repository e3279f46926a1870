// RTCPSession: the RTCP of one BUNDLE transport — our reports and feedback compounds, and what received RTCP means (RFC 3550 §6, RFC 4585, RFC 5104).
import EventLoop
import Foundation
import RTP
import Synchronization

/// The RTCP side of a ``PeerConnection`` (one BUNDLE transport with rtcp-mux):
///
/// - builds our regular compound: a sender report (RFC 3550 §6.4.1) per sending
///   transceiver, the first carrying the reception report blocks of every receiving one,
///   or one receiver report when nothing is sent; then SDES with our CNAME (§6.5);
/// - wraps feedback (PLI, NACK) in a compound led by an empty RR and our CNAME, valid
///   with or without rtcp-rsize (RFC 4585 §3.1, RFC 5506);
/// - hands received RTCP to the senders and receivers it concerns (SR → LSR/DLSR, PLI
///   and FIR → key frame, NACK → retransmission, BYE → flush) and keeps the
///   `remote-inbound-rtp` statistics and round-trip time (RFC 3550 §6.4.1, A.8) that
///   report blocks about our streams carry.
///
/// It also keeps the two timers on the event loop that say when: the regular report
/// (RFC 3550 §6.2 interval, randomised) and the 20 ms NACK tick while packets are missing. It never waits and never
/// holds its `Mutex` while calling a sender, a receiver or the connection.
final class RTCPSession: Sendable {
    /// Our CNAME (SDES item 1), the same for every stream of the connection.
    let cname: String
    private let state = Mutex(State())

    /// What the session keeps (behind `state`).
    private struct State {
        var remoteInbound: [UInt32: RemoteInboundRTPStats] = [:]
        var lastRTT: Double?
        var counts = RTCPReceivedCounts()
        /// Timer ids on the loop (0: none) and whether ``stopTimers(on:)`` ran.
        var reportTimer: UInt32 = 0, nackTimer: UInt32 = 0, timersStopped = false
        /// The NACK tick's loop and closure, kept to arm it again (``wakeTick()``).
        var tickLoop: EventLoop?
        var tick: (@Sendable () -> TickOutcome)?
    }

    /// What one NACK tick says about the next.
    enum TickOutcome: Sendable {
        /// NACKs still wait: tick again in 20 ms.
        case again
        /// Nothing waits: no tick until ``RTCPSession/wakeTick()`` (a new gap).
        case idle
        /// The connection is gone or closed: no tick again.
        case stop
    }


    /// A session that reports with `cname`.
    init(cname: String) { self.cname = cname }

    /// Starts the timers on `loop`: `report` about every `minimumIntervalMs` (RFC 3550 §6.2
    /// with 2 members, randomised 0.5–1.5×), returning false when its connection is gone or
    /// closed, which ends it; and `tick` every 20 ms while it says ``TickOutcome/again``:
    /// after ``TickOutcome/idle`` it waits for ``wakeTick()`` (it was 50 wake-ups a second of
    /// the loop thread for nothing while no packet was missing), after
    /// ``TickOutcome/stop`` it ends.
    func startTimers(on loop: EventLoop, minimumIntervalMs: Double, report: @escaping @Sendable () -> Bool,
                     tick: @escaping @Sendable () -> TickOutcome) {
        scheduleReport(on: loop, minimumIntervalMs: minimumIntervalMs, report)
        state.withLock { s in
            s.tickLoop = loop
            s.tick = tick
        }
        wakeTick()
    }

    /// Arms the NACK tick (in 20 ms) unless it is armed or the timers were stopped (any
    /// thread): a receiver found a packet missing.
    func wakeTick() {
        guard let (loop, tick) = state.withLock({ s -> (EventLoop, @Sendable () -> TickOutcome)? in
            guard !s.timersStopped, s.nackTimer == 0, let loop = s.tickLoop, let tick = s.tick else { return nil }
            s.nackTimer = UInt32.max  // reserved until the timer's id is known
            return (loop, tick)
        }) else { return }
        scheduleTick(on: loop, tick)
    }

    /// Cancels the timers (any thread); a timer already firing sees its closure return false.
    func stopTimers(on loop: EventLoop) {
        let ids = state.withLock { s -> [UInt32] in
            s.timersStopped = true
            defer { s.reportTimer = 0; s.nackTimer = 0 }
            return [s.reportTimer, s.nackTimer]
        }
        for id in ids where id != 0 { loop.cancelTimer(id) }
    }

    /// Sets the next report timer; each firing sets the one after while `report` says so.
    private func scheduleReport(on loop: EventLoop, minimumIntervalMs: Double, _ report: @escaping @Sendable () -> Bool) {
        let interval = RTCPInterval.milliseconds(members: 2, averagePacketBytes: 120, rtcpBandwidthBitsPerSecond: 50_000,
                                                 minimumMs: minimumIntervalMs, random: Double.random(in: 0..<1))
        let id = loop.after(milliseconds: UInt32(interval)) { [weak self] in
            guard let self, report() else { return }
            scheduleReport(on: loop, minimumIntervalMs: minimumIntervalMs, report)
        }
        state.withLock { if !$0.timersStopped { $0.reportTimer = id } }
    }

    /// Sets the next 20 ms tick; each firing sets the one after while `tick` says
    /// ``TickOutcome/again``, and otherwise leaves the tick unarmed.
    private func scheduleTick(on loop: EventLoop, _ tick: @escaping @Sendable () -> TickOutcome) {
        let id = loop.after(milliseconds: 20) { [weak self] in
            guard let self else { return }
            // Unarmed before the tick runs: a gap found inside it arms the next one.
            state.withLock { $0.nackTimer = 0 }
            switch tick() {
            case .again:
                guard state.withLock({ s -> Bool in
                    guard !s.timersStopped, s.nackTimer == 0 else { return false }
                    s.nackTimer = UInt32.max
                    return true
                }) else { return }
                scheduleTick(on: loop, tick)
            case .idle, .stop:
                return
            }
        }
        state.withLock { s in
            if s.timersStopped { return }
            if s.nackTimer == UInt32.max { s.nackTimer = id }
        }
    }

    /// Our regular compound for now (`ntp`: the 64-bit NTP time of sending) about the
    /// transceivers in `list`.
    func reports(for list: [RtpTransceiver], ntp: UInt64) -> [RTCPPacket] {
        let blocks = list.filter { $0.currentDirection?.receives == true }.compactMap { $0.receiver.receptionReport() }
        var packets: [RTCPPacket] = []
        var remaining = blocks
        for t in list where t.currentDirection?.sends == true {
            guard var sr = t.sender.senderReport(ntp: ntp) else { continue }
            sr.reports = remaining
            remaining = []
            packets.append(.senderReport(sr))
        }
        let reporter = list.first?.sender.ssrc ?? 0
        if packets.isEmpty { packets.append(.receiverReport(ReceiverReport(ssrc: reporter, reports: blocks))) }
        let ssrcs = list.filter { $0.currentDirection?.sends == true }.map(\.sender.ssrc)
        let chunks = (ssrcs.isEmpty ? [reporter] : ssrcs).map { ssrc in
            SourceDescription.Chunk(source: ssrc, items: [SourceDescription.Item(type: 1, text: Array(cname.utf8))])
        }
        packets.append(.sourceDescription(SourceDescription(chunks: chunks)))
        return packets
    }

    /// `feedback` in a compound led by an empty RR from `reporter` and our CNAME.
    func feedbackCompound(_ feedback: [RTCPPacket], reporter: UInt32) -> [RTCPPacket] {
        [.receiverReport(ReceiverReport(ssrc: reporter, reports: [])),
         .sourceDescription(SourceDescription(ssrc: reporter, cname: cname))] + feedback
    }

    /// The compound that ends our streams: an empty RR, our CNAME, BYE for `ssrcs` (RFC 3550 §6.6).
    func goodbyeCompound(ssrcs: [UInt32]) -> [RTCPPacket] {
        [.receiverReport(ReceiverReport(ssrc: ssrcs.first ?? 0, reports: [])),
         .sourceDescription(SourceDescription(ssrc: ssrcs.first ?? 0, cname: cname)),
         .goodbye(Goodbye(sources: ssrcs))]
    }

    /// Handles one received (already unprotected) RTCP compound for the transceivers in
    /// `list`. One bad packet never costs the rest (RFC 3550 §6.1): a malformed packet is
    /// skipped by its length field, and where a length itself is broken what came before it
    /// is still handled (``RTCPCompound/parseSkipping(_:)``); both are counted in
    /// ``RTCPReceivedCounts/malformed``, packets of types we do not read in `other`.
    func receive(_ bytes: [UInt8], transceivers list: [RtpTransceiver]) {
        let parsed = RTCPCompound.parseSkipping(bytes)
        let packets = parsed.packets
        state.withLock { $0.counts.add(packets, malformed: parsed.malformed) }
        guard !packets.isEmpty else { return }
        let arrival = RoundTripTime.middle32(ofNTP: ntpNow())
        for packet in packets {
            switch packet {
            case let .senderReport(sr):
                let rtt = roundTripTime
                for t in list { t.receiver.senderReport(sr, roundTripTime: rtt) }
                reportBlocks(sr.reports, list: list, arrival: arrival)
            case let .receiverReport(rr):
                reportBlocks(rr.reports, list: list, arrival: arrival)
            case let .pictureLossIndication(pli):
                list.first { $0.sender.ssrc == pli.mediaSSRC }?.sender.pictureLossIndication()
            case let .fullIntraRequest(fir):
                for entry in fir.entries {
                    list.first { $0.sender.ssrc == entry.ssrc }?.sender.fullIntraRequest(sequenceNumber: entry.sequenceNumber)
                }
            case let .nack(nack):
                list.first { $0.sender.ssrc == nack.mediaSSRC }?.sender.nack(nack.lostSequenceNumbers)
            case let .goodbye(bye):
                for t in list where bye.sources.contains(where: { $0 == t.receiver.ssrc }) { t.receiver.goodbye() }
            case .sourceDescription, .receiverEstimatedMaxBitrate, .unknown:
                break
            }
        }
    }

    /// `remote-inbound-rtp` of each of our streams a report block was about, by SSRC.
    var remoteInboundStats: [RemoteInboundRTPStats] { state.withLock { $0.remoteInbound.values.sorted { $0.ssrc < $1.ssrc } } }
    /// The last round-trip time measured from a report block, in seconds.
    var roundTripTime: Double? { state.withLock { $0.lastRTT } }

    /// The RTCP received so far, by packet type, SSRC and compound: a test hook
    /// (``PeerConnection/receivedRTCPCounts()``).
    var receivedCounts: RTCPReceivedCounts { state.withLock { $0.counts } }

    /// Report blocks about our streams: `remote-inbound-rtp` and, with LSR/DLSR, the
    /// round-trip time (`arrival`: the middle 32 bits of the NTP time they arrived).
    private func reportBlocks(_ blocks: [ReceptionReport], list: [RtpTransceiver], arrival: UInt32) {
        for block in blocks {
            guard let t = list.first(where: { $0.sender.ssrc == block.ssrc }) else { continue }
            let rtt = RoundTripTime.milliseconds(arrival: arrival, lastSenderReport: block.lastSenderReport,
                                                 delaySinceLastSenderReport: block.delaySinceLastSenderReport).map { $0 / 1000 }
            state.withLock { state in
                var s = state.remoteInbound[block.ssrc] ?? RemoteInboundRTPStats(
                    id: "RI-\(t.kind)-\(block.ssrc)", timestamp: 0, ssrc: block.ssrc, kind: "\(t.kind)",
                    localId: "OT-\(t.kind)-\(block.ssrc)", packetsLost: 0, fractionLost: 0, jitter: 0,
                    roundTripTime: nil, totalRoundTripTime: 0, roundTripTimeMeasurements: 0)
                s.timestamp = unixTimeMs()
                s.packetsLost = Int(block.cumulativeLost)
                s.fractionLost = Double(block.fractionLost) / 256
                s.jitter = Double(block.jitter) / (t.kind == .video ? 90_000 : 48_000)
                if let rtt {
                    s.roundTripTime = rtt
                    s.totalRoundTripTime += rtt
                    s.roundTripTimeMeasurements += 1
                    state.lastRTT = rtt
                }
                state.remoteInbound[block.ssrc] = s
            }
        }
    }
}

/// The RTCP a ``RTCPSession`` received: packets by type (RFC 3550 §6, RFC 4585 §6,
/// RFC 5104 §4.3.1), sender reports and BYEs by SSRC, and compounds. Kept for tests, which
/// read it through ``PeerConnection/receivedRTCPCounts()``.
struct RTCPReceivedCounts: Sendable, Equatable {
    /// SR, RR, SDES and BYE packets (RFC 3550 §6.4.1, §6.4.2, §6.5, §6.6).
    var senderReports = 0, receiverReports = 0, sourceDescriptions = 0, goodbyes = 0
    /// PLI (RFC 4585 §6.3.1), FIR (RFC 5104 §4.3.1), generic NACK (RFC 4585 §6.2.1) and
    /// REMB packets.
    var pictureLossIndications = 0, fullIntraRequests = 0, nacks = 0, remb = 0
    /// Packets of a type we do not read (skipped by their length, RFC 3550 §6.1).
    var other = 0
    /// Packets dropped as malformed: a bad body skipped by its length field, or the rest of
    /// a compound whose header or length field was broken (one for the rest).
    var malformed = 0
    /// Compound packets, and the SDES packets among them that carry a CNAME (§6.1: one a compound).
    var compounds = 0, compoundsWithCNAME = 0
    /// Sender reports by the SSRC of their sender.
    var senderReportsBySSRC: [UInt32: Int] = [:]
    /// How many BYE packets named each SSRC.
    var goodbyesBySSRC: [UInt32: Int] = [:]

    /// Counts one received compound: the `packets` that parsed and `malformed` ones dropped.
    mutating func add(_ packets: [RTCPPacket], malformed: Int = 0) {
        self.malformed += malformed
        guard !packets.isEmpty else { return }
        compounds += 1
        for packet in packets {
            switch packet {
            case let .senderReport(sr):
                senderReports += 1
                senderReportsBySSRC[sr.ssrc, default: 0] += 1
            case .receiverReport: receiverReports += 1
            case let .sourceDescription(sdes):
                sourceDescriptions += 1
                if sdes.chunks.contains(where: { $0.cname != nil }) { compoundsWithCNAME += 1 }
            case let .goodbye(bye):
                goodbyes += 1
                for ssrc in bye.sources { goodbyesBySSRC[ssrc, default: 0] += 1 }
            case .pictureLossIndication: pictureLossIndications += 1
            case .fullIntraRequest: fullIntraRequests += 1
            case .nack: nacks += 1
            case .receiverEstimatedMaxBitrate: remb += 1
            case .unknown: other += 1
            }
        }
    }
}
