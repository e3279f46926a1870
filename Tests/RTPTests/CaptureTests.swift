import Foundation
import Testing
@testable import RTP

/// A capture file from `scripts/fixtures/make-rtp-capture`: `#` header lines
/// (versions, date, and what the call's SDP answer negotiated: `# rtpmap KIND PT NAME`,
/// `# extmap KIND ID URI`, `# cname CNAME`), then one packet per line in hex.
struct CaptureFile {
    var packets: [[UInt8]] = []
    /// Payload type → media kind ("audio" / "video"), from the rtpmap lines.
    var kindOfPayloadType: [UInt8: String] = [:]
    /// Payload type → encoding name ("opus/48000/2", "VP8/90000", "rtx/90000", …).
    var encodingOfPayloadType: [UInt8: String] = [:]
    /// Media kind → negotiated extmap ids.
    var extmapIDs: [String: Set<UInt8>] = [:]
    var cname: String?

    init(named name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name)
        let text = try String(contentsOf: url, encoding: .utf8)
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("#") {
                let f = line.dropFirst().split(separator: " ").map(String.init)
                guard f.count >= 2 else { continue }
                switch f[0] {
                case "rtpmap" where f.count == 4:
                    let pt = try #require(UInt8(f[2]))
                    kindOfPayloadType[pt] = f[1]
                    encodingOfPayloadType[pt] = f[3]
                case "extmap" where f.count == 4:
                    extmapIDs[f[1], default: []].insert(try #require(UInt8(f[2])))
                case "cname":
                    cname = f[1]
                default: break
                }
                continue
            }
            packets.append(try Self.bytes(hex: String(line)))
        }
    }

    static func bytes(hex: String) throws -> [UInt8] {
        let chars = Array(hex.utf8)
        try #require(chars.count % 2 == 0)
        return try stride(from: 0, to: chars.count, by: 2).map { i in
            try #require(UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16))
        }
    }
}

/// Packets Chromium sent to aiortc in a real loopback call (fake camera and
/// microphone), decrypted by aiortc after SRTP unprotect; see the fixtures' headers.
@Suite struct CaptureTests {
    @Test func chromiumRTPPacketsParseAndRoundTrip() throws {
        let capture = try CaptureFile(named: "chromium-rtp.txt")
        #expect(capture.packets.count >= 40)
        let opus = try #require(capture.encodingOfPayloadType.first { $0.value.hasPrefix("opus/") }?.key)
        let vp8 = try #require(capture.encodingOfPayloadType.first { $0.value.hasPrefix("VP8/") }?.key)
        var lastSequence: [UInt32: UInt16] = [:]
        var idsSeen: [String: Set<UInt8>] = [:]
        var payloadTypesSeen: Set<UInt8> = []
        for (index, bytes) in capture.packets.enumerated() {
            let packet = try RTPPacket(parsing: bytes)
            #expect(bytes[0] >> 6 == 2, "packet \(index): version")
            #expect(packet.version == 2)
            let kind = try #require(capture.kindOfPayloadType[packet.payloadType],
                                    "packet \(index): PT \(packet.payloadType) not negotiated")
            payloadTypesSeen.insert(packet.payloadType)
            guard case let .oneByte(elements) = packet.headerExtension else {
                Issue.record("packet \(index): no one-byte (0xBEDE) header extension: \(String(describing: packet.headerExtension))")
                continue
            }
            #expect(bytes[12 + 4 * packet.csrcs.count] == 0xBE && bytes[13 + 4 * packet.csrcs.count] == 0xDE)
            #expect(!elements.isEmpty)
            let negotiated = capture.extmapIDs[kind] ?? []
            for element in elements {
                #expect(negotiated.contains(element.id), "packet \(index): extension id \(element.id) not in the \(kind) extmap")
                idsSeen[kind, default: []].insert(element.id)
            }
            if let previous = lastSequence[packet.ssrc] {
                // Increasing, modulo 2^16 (a wrap stays within half the space).
                let step = packet.sequenceNumber &- previous
                #expect(step > 0 && step < 0x8000, "packet \(index): SSRC \(packet.ssrc) seq \(previous) → \(packet.sequenceNumber)")
            }
            lastSequence[packet.ssrc] = packet.sequenceNumber
            #expect(packet.serialized() == bytes, "packet \(index) does not serialize back to the captured bytes")
        }
        #expect(payloadTypesSeen.contains(opus))
        #expect(payloadTypesSeen.contains(vp8))
        // Every negotiated header extension shows up in Chromium's packets.
        #expect(idsSeen == capture.extmapIDs)
    }

    @Test func chromiumRTCPPacketsParseAsCompounds() throws {
        let capture = try CaptureFile(named: "chromium-rtcp.txt")
        let rtp = try CaptureFile(named: "chromium-rtp.txt")
        let rtpSources = Set(try rtp.packets.map { try RTPPacket(parsing: $0).ssrc })
        let cname = try #require(capture.cname)
        #expect(capture.packets.count >= 6)
        var senderReports = 0, cnames = 0
        for (index, bytes) in capture.packets.enumerated() {
            let packets = try RTCPCompound.parse(bytes)
            #expect(!packets.isEmpty)
            // RFC 3550 §6.1 compounds start with SR or RR; Chromium also sends
            // reduced-size (RFC 5506) lone RRs, which also start with an RR.
            switch packets.first {
            case .senderReport?, .receiverReport?: break
            default: Issue.record("packet \(index) starts with \(String(describing: packets.first))")
            }
            for packet in packets {
                switch packet {
                case let .senderReport(sr):
                    senderReports += 1
                    #expect(rtpSources.contains(sr.ssrc), "SR from SSRC \(sr.ssrc) that sent no RTP")
                case let .sourceDescription(sdes):
                    for chunk in sdes.chunks {
                        #expect(chunk.cname == cname)
                        cnames += 1
                    }
                case .receiverReport: break
                default: Issue.record("packet \(index): unexpected \(packet)")
                }
            }
            #expect(RTCPCompound.serialize(packets) == bytes, "packet \(index) does not serialize back")
        }
        #expect(senderReports > 0)
        #expect(cnames > 0)
    }
}
