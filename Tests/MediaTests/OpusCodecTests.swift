import Foundation
import Testing
import TestSupport
@testable import Media

/// Measurements of a mono signal.
private enum Signal {
    /// Power at `frequency` (Goertzel) as a share of the signal's total power (1.0 for a pure tone).
    static func toneShare(_ x: ArraySlice<Double>, frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / 48_000
        let coeff = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        for v in x {
            let s0 = v + coeff * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coeff * s1 * s2
        let n = Double(x.count)
        let total = x.reduce(0) { $0 + $1 * $1 }
        guard total > 0 else { return 0 }
        // A sine of amplitude A over n samples gives Goertzel power (A n / 2)², total power A² n / 2.
        return power / (n / 2 * total)
    }

    /// Frequency in Hz from the count of upward zero crossings.
    static func zeroCrossingFrequency(_ x: ArraySlice<Double>) -> Double {
        var crossings: [Int] = []
        var previous = x.first ?? 0
        for (i, v) in zip(x.indices, x) {
            if previous < 0, v >= 0 { crossings.append(i) }
            previous = v
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * 48_000 / Double(last - first)
    }

    /// Level in dBFS of a sine with this RMS (peak = RMS × √2, 0 dBFS = 32767).
    static func sineLevel(_ x: ArraySlice<Double>) -> Double {
        let rms = sqrt(x.reduce(0) { $0 + $1 * $1 } / Double(max(1, x.count)))
        return 20 * log10(rms * 2.0.squareRoot() / 32767)
    }

    /// Normalised correlation of two equal-length signals (1 = same shape).
    static func correlation(_ a: ArraySlice<Double>, _ b: ArraySlice<Double>) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for (x, y) in zip(a, b) { ab += x * y; aa += x * x; bb += y * y }
        return ab / max(1e-9, (aa * bb).squareRoot())
    }
}

/// `x` with two decimals.
private func format2(_ x: Double) -> String {
    let scaled = Int((x * 100).rounded())
    let frac = String(abs(scaled) % 100)
    return "\(scaled < 0 && scaled > -100 ? "-" : "")\(scaled / 100).\(frac.count < 2 ? "0" : "")\(frac)"
}

@Suite struct OpusCodecTests {
    /// Acceptance 4: a 1 kHz tone at −12 dBFS through encoder and decoder at each allowed
    /// frame duration comes back at 1 kHz and −12 dBFS (±1.5 dB), delayed by exactly the
    /// encoder's lookahead (the decoded signal lines up with the input after `lookahead` samples).
    @Test(arguments: [10, 20, 40, 60])
    func toneRoundTrip(durationMs: Int) throws {
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 1, frameDurationMs: durationMs, bitrate: 32_000))
        let decoder = try OpusDecoder(channels: 1)
        var tone = try ToneGenerator(frequency: 1000, levelDBFS: -12)
        let perFrame = encoder.configuration.samplesPerFrame
        #expect(perFrame == 48 * durationMs)
        var input: [Double] = [], output: [Double] = []
        var bytes = 0
        for i in 0..<(1200 / durationMs) {
            let block = tone.next(sampleCount: perFrame)
            #expect(block.timestamp == Int64(i * perFrame))
            input += block.samples.map(Double.init)
            let packet = try encoder.encode(block)
            #expect(packet.sampleCount == perFrame && packet.timestamp == block.timestamp)
            bytes += packet.data.count
            let decoded = try decoder.decode(packet.data, timestamp: packet.timestamp)
            #expect(decoded.samplesPerChannel == perFrame && decoded.timestamp == packet.timestamp)
            output += decoded.samples.map(Double.init)
        }
        let look = encoder.lookahead
        // Skip the first 200 ms (start-up), compare 0.8 s.
        let range = 9600..<48_000
        let decoded = output[(range.lowerBound + look)..<(range.upperBound + look)]
        let share = Signal.toneShare(decoded, frequency: 1000)
        let frequency = Signal.zeroCrossingFrequency(decoded)
        let level = Signal.sineLevel(decoded)
        let aligned = Signal.correlation(decoded, input[range])
        let halfPeriodOff = Signal.correlation(output[(range.lowerBound + look + 24)..<(range.upperBound + look + 24)], input[range])
        print("Opus \(durationMs) ms: lookahead \(look), \(bytes * 8 / 1200) kbit/s, 1 kHz share \(format2(share)), "
            + "zero-crossing frequency \(format2(frequency)) Hz, level \(format2(level)) dBFS, correlation at lookahead \(format2(aligned))")
        #expect(look == 312)
        #expect(share > 0.95)
        #expect(abs(frequency - 1000) < 2)
        #expect(abs(level + 12) < 1.5)
        #expect(aligned > 0.95)
        #expect(halfPeriodOff < -0.9)
    }

    /// Stereo in, stereo out: both channels keep the tone and its level.
    @Test func stereoToneKeepsBothChannels() throws {
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 2, bitrate: 64_000, application: .audio))
        let decoder = try OpusDecoder(channels: 2)
        var tone = try ToneGenerator(frequency: 1000, levelDBFS: -12, channels: 2)
        var left: [Double] = [], right: [Double] = []
        for _ in 0..<50 {
            let packet = try encoder.encode(tone.next(sampleCount: 960))
            let out = try decoder.decode(packet.data, timestamp: packet.timestamp)
            #expect(out.channels == 2 && out.samples.count == 1920)
            for i in 0..<960 {
                left.append(Double(out.samples[2 * i]))
                right.append(Double(out.samples[2 * i + 1]))
            }
        }
        for channel in [left, right] {
            let tail = channel[9600..<48_000]
            #expect(abs(Signal.sineLevel(tail) + 12) < 1.5)
            #expect(Signal.toneShare(tail, frequency: 1000) > 0.95)
        }
    }

    /// Acceptance 4: 25 ms and other durations are refused naming the value; blocks of the
    /// wrong length or channel count are refused naming both counts.
    @Test func badDurationsAndBlocksAreTypedErrors() throws {
        for ms in [25, 0, 5, 120] {
            #expect(throws: OpusCodecError.badFrameDuration(ms: ms)) {
                try OpusEncoder(configuration: OpusEncoderConfiguration(frameDurationMs: ms))
            }
        }
        #expect(OpusCodecError.badFrameDuration(ms: 25).description.contains("25 ms"))
        #expect(throws: OpusCodecError.badChannelCount(3)) { try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 3)) }
        #expect(throws: OpusCodecError.badChannelCount(0)) { try OpusDecoder(channels: 0) }
        #expect(throws: OpusCodecError.badConfiguration(field: "bitrate", value: 1000, allowed: "6000…510000 bit/s")) {
            try OpusEncoder(configuration: OpusEncoderConfiguration(bitrate: 1000))
        }
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration())
        var tone = try ToneGenerator(frequency: 440, levelDBFS: -20)
        #expect(throws: OpusCodecError.wrongSampleCount(expected: 960, actual: 480)) { try encoder.encode(tone.next(sampleCount: 480)) }
        var stereo = try ToneGenerator(frequency: 440, levelDBFS: -20, channels: 2)
        #expect(throws: OpusCodecError.channelMismatch(expected: 1, actual: 2)) { try encoder.encode(stereo.next(sampleCount: 960)) }
    }

    /// Acceptance 4: `concealLoss` returns the samples asked for, continuing the timestamps;
    /// counts that are not multiples of 2.5 ms are refused.
    @Test func concealLossReturnsTheAskedSamples() throws {
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration())
        let decoder = try OpusDecoder(channels: 1)
        var tone = try ToneGenerator(frequency: 1000, levelDBFS: -12)
        for _ in 0..<10 {
            let p = try encoder.encode(tone.next(sampleCount: 960))
            _ = try decoder.decode(p.data, timestamp: p.timestamp)
        }
        #expect(decoder.nextTimestamp == 9600)
        let concealed = try decoder.concealLoss(sampleCount: 960)
        #expect(concealed.samplesPerChannel == 960 && concealed.timestamp == 9600)
        // Concealment continues the tone rather than going silent.
        #expect(Signal.sineLevel(concealed.samples.map(Double.init)[...]) > -24)
        let longer = try decoder.concealLoss(sampleCount: 2880)
        #expect(longer.samplesPerChannel == 2880 && longer.timestamp == 10_560)
        #expect(decoder.concealedSamples == 3840 && decoder.samplesDecoded == 9600)
        #expect(throws: OpusCodecError.badConfiguration(field: "sampleCount", value: 100, allowed: "120…5760 in steps of 120")) {
            try decoder.concealLoss(sampleCount: 100)
        }
    }

    /// Acceptance 4: with in-band FEC on, a lost packet in which a tone starts is recovered
    /// from the next packet's FEC data (the tone is there), where concealment of the same
    /// loss extrapolates the silence before it.
    @Test func inbandFECRecoversTheLostFrame() throws {
        let config = OpusEncoderConfiguration(channels: 1, bitrate: 24_000, inbandFEC: true, packetLossPercent: 20)
        let encoder = try OpusEncoder(configuration: config)
        var tone = try ToneGenerator(frequency: 440, levelDBFS: -12)
        var packets: [EncodedAudioFrame] = []
        for i in 0..<20 {
            var block = tone.next(sampleCount: 960)
            if i < 10 { block.samples = [Int16](repeating: 0, count: 960) }
            packets.append(try encoder.encode(block))
        }
        let viaFEC = try OpusDecoder(channels: 1)
        let viaPLC = try OpusDecoder(channels: 1)
        for p in packets[0..<10] {
            _ = try viaFEC.decode(p.data, timestamp: p.timestamp)
            _ = try viaPLC.decode(p.data, timestamp: p.timestamp)
        }
        // Packet 10 (the tone's first 20 ms) is lost.
        let recovered = try viaFEC.decodeFEC(from: packets[11].data, sampleCount: 960, timestamp: packets[10].timestamp)
        let concealed = try viaPLC.concealLoss(sampleCount: 960)
        #expect(recovered.samplesPerChannel == 960 && recovered.timestamp == 9600)
        // The lost block's second half is past the encoder delay: the tone is sounding there.
        let fecLevel = Signal.sineLevel(recovered.samples[480...].map(Double.init)[...])
        let plcLevel = Signal.sineLevel(concealed.samples[480...].map(Double.init)[...])
        print("Opus FEC: recovered block \(format2(fecLevel)) dBFS, concealed block \(format2(plcLevel)) dBFS")
        #expect(fecLevel > -20)
        #expect(plcLevel < -40)
        // The next packet then decodes normally.
        #expect(try viaFEC.decode(packets[11].data, timestamp: packets[11].timestamp).samplesPerChannel == 960)
    }

    /// Acceptance 4: with DTX on, silence becomes packets of at most 2 bytes (after libopus's
    /// 200 ms hangover), against larger packets with DTX off; the tiny packets decode.
    @Test func dtxShrinksSilence() throws {
        func sizes(dtx: Bool) throws -> [Int] {
            let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration(dtx: dtx))
            let decoder = try OpusDecoder(channels: 1)
            var tone = try ToneGenerator(frequency: 1000, levelDBFS: -12)
            var out: [Int] = []
            for i in 0..<50 {
                var block = tone.next(sampleCount: 960)
                if i >= 10 { block.samples = [Int16](repeating: 0, count: 960) }
                let p = try encoder.encode(block)
                out.append(p.data.count)
                #expect(try decoder.decode(p.data, timestamp: p.timestamp).samplesPerChannel == 960)
            }
            return out
        }
        let on = try sizes(dtx: true), off = try sizes(dtx: false)
        print("Opus silence packet sizes, DTX on: \(on[10...]); DTX off: \(off[10...])")
        let tinyOn = on[30...].filter { $0 <= 2 }.count
        #expect(tinyOn >= 15)
        #expect(off[30...].allSatisfy { $0 > 2 })
        #expect(on[0..<10].allSatisfy { $0 > 2 })
    }

    /// Garbage: invalid packets (RFC 6716 §3.4 rules R1–R7 broken) give libopus's error text;
    /// empty packets are refused; seeded random packets never crash.
    @Test func invalidAndRandomPacketsNeverCrash() throws {
        let decoder = try OpusDecoder(channels: 2)
        let invalid: [[UInt8]] = [
            [0x01, 0x00, 0x00, 0x00], // code 1 needs an even payload (R3)
            [0x02, 0xFF],             // code 2 first frame longer than the packet (R4)
            [0x03, 0x00],             // code 3 with zero frames (R5)
            [0x03],                   // code 3 without its frame-count byte (R6)
            [0x1B, 0x03] + [UInt8](repeating: 0, count: 9), // SILK 60 ms, code 3, 3 frames = 180 ms > 120 ms (R5)
        ]
        for packet in invalid {
            var outcome = "decoded"
            do { _ = try decoder.decode(packet, timestamp: 0) } catch { outcome = error.description }
            #expect(outcome == "libopus opus_decode failed (-4): corrupted stream", "packet \(packet)")
        }
        #expect(throws: OpusCodecError.emptyPacket) { try decoder.decode([], timestamp: 0) }
        #expect(throws: OpusCodecError.emptyPacket) { try decoder.decodeFEC(from: [], sampleCount: 960, timestamp: 0) }
        var g = SplitMix64(state: 0x0905)
        var errors = 0, decoded = 0
        for _ in 0..<2000 {
            let b = (0..<Int.random(in: 1...300, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            do {
                let out = try decoder.decode(b, timestamp: 0)
                #expect(out.samplesPerChannel > 0 && out.samplesPerChannel <= 5760)
                decoded += 1
            } catch {
                errors += 1
                guard case let .libopus(_, code, message) = error else { Issue.record("unexpected \(error)"); continue }
                #expect(code < 0 && !message.isEmpty)
            }
        }
        print("Opus 2000 random packets: \(errors) refused, \(decoded) decoded")
        #expect(errors > 100 && decoded > 100)
    }

    /// The tone generator: phase-continuous blocks, running timestamps, peak at the asked level.
    @Test func toneGeneratorIsPhaseContinuous() throws {
        var split = try ToneGenerator(frequency: 1000, levelDBFS: -12)
        var whole = try ToneGenerator(frequency: 1000, levelDBFS: -12)
        let a = split.next(sampleCount: 700), b = split.next(sampleCount: 1220)
        #expect(a.timestamp == 0 && b.timestamp == 700 && split.nextTimestamp == 1920)
        #expect(a.samples + b.samples == whole.next(sampleCount: 1920).samples)
        // 1 kHz at 48 kHz: sample 12 is the crest; −12 dBFS peaks at 32767 × 10^(−0.6) = 8230.9.
        #expect(a.samples[12] == 8231 && a.samples[36] == -8231 && a.samples[0] == 0)
        var stereo = try ToneGenerator(frequency: 440, levelDBFS: -6, channels: 2, startTimestamp: 48_000)
        let s = stereo.next(sampleCount: 480)
        #expect(s.channels == 2 && s.timestamp == 48_000 && s.samplesPerChannel == 480)
        #expect((0..<480).allSatisfy { s.samples[2 * $0] == s.samples[2 * $0 + 1] })
        #expect(throws: MediaFrameError.badChannelCount(3)) { try ToneGenerator(frequency: 1, levelDBFS: 0, channels: 3) }
    }
}
