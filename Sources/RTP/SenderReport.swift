// SenderReport: the RTCP sender report, packet type 200 (RFC 3550 §6.4.1).
import Bytes

/// An RTCP sender report, packet type 200 (RFC 3550 §6.4.1).
public struct SenderReport: Equatable, Sendable {
    /// SSRC of the sender.
    public var ssrc: UInt32
    /// NTP timestamp of this report (64-bit, seconds since 1900 in 32.32 fixed point).
    public var ntpTimestamp: UInt64
    /// The same instant in RTP timestamp units (the media clock, e.g. 90 kHz).
    public var rtpTimestamp: UInt32
    /// Packets sent since the start of transmission.
    public var packetCount: UInt32
    /// Payload bytes sent since the start of transmission.
    public var octetCount: UInt32
    /// Report blocks (at most 31).
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes after the report blocks, kept raw.
    public var profileExtension: [UInt8]

    /// Creates a sender report.
    public init(ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32,
                octetCount: UInt32, reports: [ReceptionReport] = [], profileExtension: [UInt8] = []) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
        self.profileExtension = profileExtension
    }

    /// Parses one SR packet. Throws ``RTCPError``: `.wrongPacketType`, `.lengthBeyondBuffer`,
    /// `.countInconsistentWithLength` (RC × 24 + 28 bytes exceed the length), `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try ReceptionReport.openReport(bytes, packetType: 200, fixedLength: 24)
        let fixed = try rtcp { () throws(ByteReaderError) in
            (try r.u32("SSRC"), try r.u64("NTP timestamp"), try r.u32("RTP timestamp"),
             try r.u32("packet count"), try r.u32("octet count"))
        }
        let (reports, ext) = try ReceptionReport.readBlocksAndExtension(count: Int(h.count), &r)
        self.init(ssrc: fixed.0, ntpTimestamp: fixed.1, rtpTimestamp: fixed.2, packetCount: fixed.3,
                  octetCount: fixed.4, reports: reports, profileExtension: ext)
    }

    /// The packet on the wire (first 31 report blocks; extension padded to 4 bytes).
    public func serialized() -> [UInt8] {
        ReceptionReport.serializeReport(packetType: 200, reports: reports, profileExtension: profileExtension) { w in
            w.u32(ssrc); w.u64(ntpTimestamp); w.u32(rtpTimestamp); w.u32(packetCount); w.u32(octetCount)
        }
    }
}
