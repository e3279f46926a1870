// ReceiverReport: the RTCP receiver report, packet type 201 (RFC 3550 §6.4.2).
import Bytes

/// An RTCP receiver report, packet type 201 (RFC 3550 §6.4.2).
public struct ReceiverReport: Equatable, Sendable {
    /// SSRC of the packet sender (the receiver writing the report).
    public var ssrc: UInt32
    /// Report blocks (at most 31).
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes after the report blocks, kept raw.
    public var profileExtension: [UInt8]

    /// Creates a receiver report.
    public init(ssrc: UInt32, reports: [ReceptionReport] = [], profileExtension: [UInt8] = []) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtension = profileExtension
    }

    /// Parses one RR packet. Throws ``RTCPError``: `.wrongPacketType`, `.lengthBeyondBuffer`,
    /// `.countInconsistentWithLength` (4 + RC × 24 bytes exceed the length), `.truncated`, `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try ReceptionReport.openReport(bytes, packetType: 201, fixedLength: 4)
        let ssrc = try rtcp { () throws(ByteReaderError) in try r.u32("SSRC") }
        let (reports, ext) = try ReceptionReport.readBlocksAndExtension(count: Int(h.count), &r)
        self.init(ssrc: ssrc, reports: reports, profileExtension: ext)
    }

    /// The packet on the wire (first 31 report blocks).
    public func serialized() -> [UInt8] {
        ReceptionReport.serializeReport(packetType: 201, reports: reports, profileExtension: profileExtension) { w in
            w.u32(ssrc)
        }
    }
}
