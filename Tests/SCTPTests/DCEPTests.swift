// Tests of DCEP (RFC 8832 §5): DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK bytes both ways, and refusals naming the field.
import Testing
import SCTP

@Suite struct DCEPTests {
    /// RFC 8832 §5.1's layout: type 0x03, channel type, priority, reliability parameter,
    /// label length, protocol length, label, protocol (network order).
    @Test func openMessageBytesAsTheRFCLaysThemOut() throws {
        let open = DCEPMessage.open(type: DCEPChannelType(ordered: false, reliability: .maxRetransmits(3)), priority: 256,
                                    label: "chat", protocol: "x")
        let bytes: [UInt8] = [0x03, 0x81, 0x01, 0x00, 0, 0, 0, 3, 0, 4, 0, 1] + Array("chat".utf8) + Array("x".utf8)
        #expect(open.serialized == bytes)
        #expect(try DCEPMessage(parsing: bytes) == open)
        #expect(DCEPMessage.ack.serialized == [0x02])
        #expect(try DCEPMessage(parsing: [0x02]) == .ack)
        let timed: [UInt8] = [0x03, 0x02, 0, 0, 0, 0, 0x03, 0xE8, 0, 0, 0, 0]
        #expect(try DCEPMessage(parsing: timed) == .open(type: DCEPChannelType(ordered: true, reliability: .maxPacketLifeTime(1000)),
                                                          priority: 0, label: "", protocol: ""))
    }

    @Test func malformedMessagesAreRefusedNamingTheField() {
        #expect(throws: DCEPError.unknownMessageType(0x07)) { try DCEPMessage(parsing: [0x07]) }
        #expect(throws: DCEPError.unknownChannelType(0x05)) { try DCEPMessage(parsing: [0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: DCEPError.trailing(offset: 1, count: 1)) { try DCEPMessage(parsing: [0x02, 0]) }
        #expect(throws: DCEPError.notUTF8(field: "label", offset: 12)) { try DCEPMessage(parsing: [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xFF]) }
        do {
            _ = try DCEPMessage(parsing: [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0x41])
            Issue.record("a label longer than the message parsed")
        } catch {
            #expect("\(error)".contains("label"), "\(error)")
        }
        #expect(throws: DCEPError.self) { try DCEPMessage(parsing: []) }
    }
}
