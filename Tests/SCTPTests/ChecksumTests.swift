// Tests of SCTPAssociation.checksum: the CRC32c of RFC 9260 §6.8 against RFC 3720 §B.4's published values and against libusrsctp's own code.
import Testing
@testable import SCTP

@Suite struct ChecksumTests {
    /// The checksum as the bytes of the field on the wire (stored in host order, as
    /// SCTPAssociation stores it).
    private func wireBytes(_ data: [UInt8]) -> [UInt8] {
        let value = data.withUnsafeBytes { SCTPAssociation.checksum($0) }
        return withUnsafeBytes(of: value) { Array($0) }
    }

    /// RFC 3720 §B.4 (iSCSI uses the same CRC32c): 32 bytes of zeros, of ones, ascending,
    /// descending, and the iSCSI read command PDU; each checksum as its bytes are sent.
    @Test func matchesRFC3720Vectors() {
        #expect(wireBytes([UInt8](repeating: 0, count: 32)) == [0xAA, 0x36, 0x91, 0x8A])
        #expect(wireBytes([UInt8](repeating: 0xFF, count: 32)) == [0x43, 0xAB, 0xA8, 0x62])
        #expect(wireBytes((0..<32).map { UInt8($0) }) == [0x4E, 0x79, 0xDD, 0x46])
        #expect(wireBytes((0..<32).map { UInt8(31 - $0) }) == [0x5C, 0xDB, 0x3F, 0x11])
        var pdu = [UInt8](repeating: 0, count: 48)
        for (at, byte) in [(0, 0x01), (1, 0xC0), (16, 0x14), (22, 0x04), (27, 0x14), (31, 0x18), (32, 0x28), (40, 0x02)] {
            pdu[at] = UInt8(byte)
        }
        #expect(wireBytes(pdu) == [0x56, 0x3A, 0x96, 0xD9])
    }

    /// Every length from 0 to 2,100 bytes (the 8-byte steps and the tail), at each
    /// alignment, gives libusrsctp's value.
    @Test func matchesLibusrsctpAtEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let data = (0..<2_200).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var mismatches: [String] = []
        data.withUnsafeBytes { all in
            for offset in 0..<8 {
                for length in stride(from: 0, through: 2_100, by: offset == 0 ? 1 : 7) {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    if SCTPAssociation.checksum(slice) != SCTPAssociation.libusrsctpChecksum(slice) {
                        mismatches.append("offset \(offset) length \(length)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
