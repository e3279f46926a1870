// libFuzzer target for ResetRequestGate, the SCTP module's reader of SCTP packets (RFC 9260 §3) and RE-CONFIG chunks (RFC 6525 §3.1, §4.1) ahead of libusrsctp: a run of packets in and out must never trap, what goes on must be the packet or the packet with whole chunks taken out (the common header kept), and held chunks must stay within the limit and come back as RE-CONFIG packets. A crash here IS the finding: each check traps with fatalError naming the property that broke.
import SCTP

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
///
/// The input is a run of records: one byte (0 mod 3: a packet from the peer, 1: a packet
/// libusrsctp sends, 2: take the releasable chunks), a 16-bit big-endian length, that many
/// bytes (fewer at the end).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var gate = ResetRequestGate()
    var at = 0
    while at < bytes.count {
        let op = bytes[at] % 3
        let length = at + 2 < bytes.count ? Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) : 0
        let start = min(at + 3, bytes.count), end = min(start + length, bytes.count)
        let packet = Array(bytes[start..<end])
        at = end
        switch op {
        case 0:
            let passed = gate.incoming(packet)
            if let passed, passed != packet {
                guard passed.count < packet.count, passed.count >= 12, passed.prefix(12) == packet.prefix(12) else {
                    fatalError("the gate passed \(passed.prefix(32)) for \(packet.prefix(32)): not the packet less some chunks")
                }
                guard isSubsequence(passed, of: packet) else { fatalError("the gate passed bytes that were not in the packet: \(passed.prefix(32))") }
            } else if passed == nil, packet.count < 16 {
                fatalError("the gate held a packet of \(packet.count) bytes, too short for a chunk")
            }
        case 1:
            _ = gate.outgoing(packet)
        default:
            for released in gate.releasable() {
                guard released.count >= 16, released[12] == 130 else { fatalError("released a packet that is not RE-CONFIG: \(released.prefix(32))") }
            }
        }
        guard gate.heldCount <= ResetRequestGate.holdLimit else { fatalError("held \(gate.heldCount) chunks, over the limit") }
    }
    return 0
}

/// Whether `small` is `large` with some bytes left out (in order).
func isSubsequence(_ small: [UInt8], of large: [UInt8]) -> Bool {
    var i = 0
    for byte in large where i < small.count && small[i] == byte { i += 1 }
    return i == small.count
}
