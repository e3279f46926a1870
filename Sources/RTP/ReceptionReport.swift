// ReceptionReport: one 24-byte report block of an SR or RR, and the SR/RR layout they share (RFC 3550 §6.4.1).
import Bytes

/// One report block of an SR or RR (RFC 3550 §6.4.1), 24 bytes on the wire.
public struct ReceptionReport: Equatable, Sendable {
    /// The SSRC of the source this block reports on.
    public var ssrc: UInt32
    /// Fraction of packets lost since the last report, as a fixed-point number with the binary point at the left (lost/expected × 256).
    public var fractionLost: UInt8
    /// Cumulative packets lost (signed 24-bit on the wire; negative with duplicates).
    public var cumulativeLost: Int32
    /// Extended highest sequence number received (cycles × 65536 + highest seq).
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP timestamp units (e.g. 90 kHz ticks for video).
    public var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received (LSR), 1/65536 s units; 0 if none.
    public var lastSenderReport: UInt32
    /// Delay since that SR (DLSR), in 1/65536 s units.
    public var delaySinceLastSenderReport: UInt32

    /// Creates a report block.
    public init(ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0,
                extendedHighestSequenceNumber: UInt32 = 0, jitter: UInt32 = 0,
                lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// Opens an SR or RR (RFC 3550 §6.4): the RTCP header, which must have packet type
    /// `packetType` (200 SR, 201 RR), and a report count RC for which the `fixedLength`
    /// bytes after the header (SSRC, and sender info for an SR) and RC × 24 bytes of report
    /// blocks fit the packet. Returns the header and a reader positioned after it.
    ///
    /// Throws ``RTCPError``: `.wrongPacketType`, `.countInconsistentWithLength`, and
    /// those of opening the header (`.lengthBeyondBuffer`, `.truncated`, `.badVersion`, `.badPadding`).
    static func openReport(_ bytes: [UInt8], packetType: UInt8, fixedLength: Int) throws(RTCPError) -> (RTCPHeader, ByteReader) {
        let (h, r) = try RTCPHeader.open(bytes)
        guard h.packetType == packetType else { throw .wrongPacketType(offset: 1, packetType: h.packetType, format: h.count) }
        guard fixedLength + Int(h.count) * 24 <= r.remaining else {
            throw .countInconsistentWithLength(offset: 0, count: Int(h.count), length: h.packetLength)
        }
        return (h, r)
    }

    /// An SR or RR on the wire (RFC 3550 §6.4): the RTCP header (packet type `packetType`,
    /// RC = the blocks written), what `fixed` writes (SSRC, and sender info for an SR), the
    /// first 31 of `reports` and `profileExtension` padded with zeros to whole 32-bit words.
    static func serializeReport(packetType: UInt8, reports: [ReceptionReport], profileExtension: [UInt8],
                                fixed: (inout ByteWriter) -> Void) -> [UInt8] {
        let blocks = reports.prefix(31)
        var w = ByteWriter()
        fixed(&w)
        for b in blocks { b.write(&w) }
        w.append(padded4(profileExtension))
        return rtcpPacket(count: UInt8(blocks.count), packetType: packetType, body: w.bytes)
    }

    /// Reads the `count` report blocks of an SR or RR and the profile-specific extension
    /// after them (RFC 3550 §6.4.1), which must be whole 32-bit words.
    /// Throws `.truncated`, `.extensionNotWordAligned`.
    static func readBlocksAndExtension(count: Int, _ r: inout ByteReader) throws(RTCPError) -> (reports: [ReceptionReport], extension: [UInt8]) {
        var reports: [ReceptionReport] = []
        for _ in 0..<count { reports.append(try read(&r)) }
        let extAt = r.offset
        let ext = try rtcp { () throws(ByteReaderError) in try r.take(r.remaining, "profile extension") }
        guard ext.count % 4 == 0 else { throw .extensionNotWordAligned(offset: extAt, length: ext.count) }
        return (reports, ext)
    }

    /// Reads 24 bytes. Throws `.truncated`.
    static func read(_ r: inout ByteReader) throws(RTCPError) -> ReceptionReport {
        try rtcp { () throws(ByteReaderError) in
            let ssrc = try r.u32("report block SSRC")
            let fraction = try r.u8("fraction lost")
            let lost24 = try r.u24("cumulative lost")
            // Sign-extend the 24-bit two's complement value.
            let lost = Int32(bitPattern: lost24 << 8) >> 8
            return ReceptionReport(ssrc: ssrc, fractionLost: fraction, cumulativeLost: lost,
                                   extendedHighestSequenceNumber: try r.u32("extended highest sequence number"),
                                   jitter: try r.u32("jitter"), lastSenderReport: try r.u32("LSR"),
                                   delaySinceLastSenderReport: try r.u32("DLSR"))
        }
    }

    /// Writes 24 bytes; cumulative lost is clamped to the 24-bit signed range.
    func write(_ w: inout ByteWriter) {
        w.u32(ssrc)
        w.u8(fractionLost)
        let lost = min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF)
        w.u24(UInt32(bitPattern: lost) & 0xFF_FFFF)
        w.u32(extendedHighestSequenceNumber)
        w.u32(jitter)
        w.u32(lastSenderReport)
        w.u32(delaySinceLastSenderReport)
    }
}
