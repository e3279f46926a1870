// Tests of ResetRequestGate on SCTP packets built from the chunk layouts of RFC 9260 §3 (INIT, DATA, SACK) and RFC 6525 §3.1/§4.1 (RE-CONFIG, Outgoing SSN Reset Request).
import Testing
@testable import SCTP

/// SCTP packets byte by byte.
enum Packet {
    /// Common header: ports 5000 → 5000, verification tag 0x01020304, checksum 0 (RFC 9260 §3.1).
    static let header: [UInt8] = [0x13, 0x88, 0x13, 0x88, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0]

    static func word(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// A chunk: type, flags, length (header and value, not the padding), value, padding.
    static func chunk(_ type: UInt8, flags: UInt8 = 0, _ value: [UInt8]) -> [UInt8] {
        let length = 4 + value.count
        return [type, flags, UInt8(length >> 8), UInt8(length & 0xFF)] + value + [UInt8](repeating: 0, count: (4 - length % 4) % 4)
    }

    /// RE-CONFIG (type 130) with one Outgoing SSN Reset Request (type 13, length 16 + 2 per
    /// stream): request and response sequence numbers, the sender's last assigned TSN.
    static func reset(sequence: UInt32, lastTSN: UInt32, streams: [UInt16] = [1]) -> [UInt8] {
        let length = 16 + 2 * streams.count
        var parameter: [UInt8] = [0, 13, UInt8(length >> 8), UInt8(length & 0xFF)] + word(sequence) + word(sequence &- 1) + word(lastTSN)
        for s in streams { parameter += [UInt8(s >> 8), UInt8(s & 0xFF)] }
        return chunk(130, parameter)  // the last parameter's padding is the chunk's
    }

    /// DATA (type 0), unordered and whole (flags U|B|E = 0x07): TSN, stream 3, SSN 0, PPID 51, one byte.
    static func data(tsn: UInt32) -> [UInt8] { chunk(0, flags: 0x07, word(tsn) + [0, 3, 0, 0] + word(51) + [0xAB]) }

    /// SACK (type 3): cumulative TSN ack, a_rwnd 65536, no gap blocks, no duplicates.
    static func sack(_ cumulative: UInt32) -> [UInt8] { chunk(3, word(cumulative) + word(65536) + [0, 0, 0, 0]) }

    /// INIT (type 1): tag, a_rwnd, 1024 streams each way, the initial TSN.
    static func initiation(initialTSN: UInt32) -> [UInt8] { chunk(1, word(7) + word(65536) + [4, 0, 4, 0] + word(initialTSN)) }
}

/// The gate behind a reference, so that `#expect` can call its mutating methods.
final class Gate {
    private var gate = ResetRequestGate()
    func incoming(_ packet: [UInt8], now: Int64 = 0) -> [UInt8]? { gate.incoming(packet, now: now) }
    func overdue(now: Int64) -> [[UInt8]] { gate.overdue(now: now) }
    func outgoing(_ packet: [UInt8]) -> Bool { gate.outgoing(packet) }
    func releasable() -> [[UInt8]] { gate.releasable() }
    var heldCount: Int { gate.heldCount }
    var acknowledged: UInt32? { gate.acknowledged }
}

@Suite struct ResetRequestGateTests {
    /// A repeated INIT ACK (or a later INIT) does not move the mark our SACKs set.
    @Test func onlyTheFirstInitSetsTheMark() {
        let gate = Gate()
        _ = gate.incoming(Packet.header + Packet.initiation(initialTSN: 90))
        _ = gate.outgoing(Packet.header + Packet.sack(120))
        _ = gate.incoming(Packet.header + Packet.initiation(initialTSN: 90))
        #expect(gate.acknowledged == 120)
        #expect(gate.incoming(Packet.header + Packet.reset(sequence: 3, lastTSN: 110)) != nil, "its data arrived: it goes on")
    }

    /// A held request goes on after the deadline even when no SACK ever covers it.
    @Test func aHeldRequestGoesOnAfterTheDeadline() {
        let gate = Gate()
        _ = gate.incoming(Packet.header + Packet.initiation(initialTSN: 90))
        let reset = Packet.reset(sequence: 7, lastTSN: 100)
        #expect(gate.incoming(Packet.header + reset, now: 1_000) == nil && gate.heldCount == 1)
        #expect(gate.overdue(now: 1_000 + ResetRequestGate.holdDeadlineMs - 1).isEmpty && gate.heldCount == 1)
        #expect(gate.overdue(now: 1_000 + ResetRequestGate.holdDeadlineMs) == [Packet.header + reset])
        #expect(gate.heldCount == 0)
        #expect(gate.incoming(Packet.header + reset) == Packet.header + reset, "a repeat of one handed on goes on")
    }

    @Test func packetsWithoutAResetGoOnUnchanged() {
        let gate = Gate()
        let packet = Packet.header + Packet.data(tsn: 5) + Packet.sack(9)
        #expect(gate.incoming(packet) == packet)
        #expect(gate.incoming([1, 2, 3]) == [1, 2, 3])
        #expect(gate.heldCount == 0)
    }

    @Test func aResetWaitingForDataIsHeldAndTheDataGoesOn() {
        let gate = Gate()
        _ = gate.incoming(Packet.header + Packet.initiation(initialTSN: 90))
        #expect(gate.acknowledged == 89)
        let reset = Packet.reset(sequence: 7, lastTSN: 100)
        #expect(reset.count == 24 && reset[3] == 22, "chunk length 22: 4 + a parameter of 16 + one stream")
        // The request, then DATA past its last TSN, in one packet: the DATA goes on alone.
        #expect(gate.incoming(Packet.header + reset + Packet.data(tsn: 101)) == Packet.header + Packet.data(tsn: 101))
        #expect(gate.heldCount == 1)
        #expect(gate.outgoing(Packet.header + Packet.sack(99)) == false)
        #expect(gate.releasable().isEmpty)
        #expect(gate.outgoing(Packet.header + Packet.sack(101)) == true)
        #expect(gate.releasable() == [Packet.header + reset])
        #expect(gate.heldCount == 0)
    }

    @Test func aResetWhoseDataHasArrivedGoesOnAtOnce() {
        let gate = Gate()
        _ = gate.outgoing(Packet.header + Packet.sack(100))
        let packet = Packet.header + Packet.reset(sequence: 7, lastTSN: 100)
        #expect(gate.incoming(packet) == packet)
        #expect(gate.heldCount == 0)
    }

    @Test func beforeAnyInitOrSackEveryResetIsHeld() {
        let gate = Gate()
        #expect(gate.incoming(Packet.header + Packet.reset(sequence: 1, lastTSN: 0)) == nil)
        #expect(gate.heldCount == 1)
        #expect(gate.outgoing(Packet.header + Packet.sack(0)))
        #expect(gate.releasable().count == 1)
    }

    @Test func repeatsOfAHeldResetAreDroppedAndOfAPassedOneGoOn() {
        let gate = Gate()
        _ = gate.outgoing(Packet.header + Packet.sack(10))
        let reset = Packet.header + Packet.reset(sequence: 7, lastTSN: 20)
        #expect(gate.incoming(reset) == nil)
        #expect(gate.incoming(reset + Packet.data(tsn: 11)) == Packet.header + Packet.data(tsn: 11))
        #expect(gate.heldCount == 1)
        _ = gate.outgoing(Packet.header + Packet.sack(20))
        #expect(gate.releasable() == [reset])
        #expect(gate.incoming(reset) == reset, "a repeat after libusrsctp answered: it answers again")
        #expect(gate.heldCount == 0)
    }

    @Test func heldResetsGoOnInTheirOrder() {
        let gate = Gate()
        _ = gate.outgoing(Packet.header + Packet.sack(10))
        let first = Packet.header + Packet.reset(sequence: 7, lastTSN: 30)
        let second = Packet.header + Packet.reset(sequence: 8, lastTSN: 10)
        #expect(gate.incoming(first) == nil)
        #expect(gate.incoming(second) == nil, "held behind the first, though its data is here")
        _ = gate.outgoing(Packet.header + Packet.sack(29))
        #expect(gate.releasable().isEmpty)
        _ = gate.outgoing(Packet.header + Packet.sack(30))
        #expect(gate.releasable() == [first, second])
    }

    @Test func tsnsCompareAcrossTheWrap() {
        let gate = Gate()
        _ = gate.outgoing(Packet.header + Packet.sack(0xFFFF_FFF0))
        #expect(gate.incoming(Packet.header + Packet.reset(sequence: 1, lastTSN: 5)) == nil)
        _ = gate.outgoing(Packet.header + Packet.sack(4))
        #expect(gate.releasable().isEmpty)
        _ = gate.outgoing(Packet.header + Packet.sack(5))
        #expect(gate.releasable().count == 1)
    }

    @Test func malformedChunksAndParametersGoOnUntouched() {
        let gate = Gate()
        let shortChunk = Packet.header + [130, 0, 0, 2, 0, 13, 0, 16]
        let overrun = Packet.header + [130, 0, 0xFF, 0xFF] + Packet.reset(sequence: 1, lastTSN: 9)
        var badParameter = Packet.reset(sequence: 1, lastTSN: 9)
        badParameter[7] = 200  // the parameter's length runs past the chunk
        for packet in [shortChunk, overrun, Packet.header + badParameter] { #expect(gate.incoming(packet) == packet) }
        // After a held chunk, bytes that cannot be read go on as they were.
        let tail: [UInt8] = [0, 0, 0xFF, 0xFF, 1]
        #expect(gate.incoming(Packet.header + Packet.reset(sequence: 1, lastTSN: 9) + tail) == Packet.header + tail)
        #expect(gate.heldCount == 1)
    }

    @Test func noMoreThanTheLimitIsHeld() {
        let gate = Gate()
        for n in 0..<UInt32(ResetRequestGate.holdLimit + 3) {
            let packet = Packet.header + Packet.reset(sequence: n, lastTSN: 1000)
            #expect(gate.incoming(packet) == (n < ResetRequestGate.holdLimit ? nil : packet))
        }
        #expect(gate.heldCount == ResetRequestGate.holdLimit)
    }
}
