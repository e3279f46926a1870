import Dispatch
import Foundation
import Testing
import TestSupport
@testable import Media

/// The issue's end-to-end acceptance checks: sources → encoders → file writers,
/// verified with the real tools (vpxdec, ffprobe, opusinfo).
@Suite struct PipelineTests {
    /// Pattern → VP8 (500 kbit/s, 640x480@30, 300 frames) → IVF writer; then vpxdec's MD5
    /// equals the MD5 of decoding the file in-process, ffprobe sees 300 frames of 640x480,
    /// and the markers of the decoded frames are 0…299 in order.
    @Test func patternEncodedToIVFDecodesIdenticallyInVpxdecAndInProcess() async throws {
        let dir = TestServices.temporaryDirectory("pipeline-ivf")
        let path = "\(dir)/pattern.ivf"
        // Seconds of encoding and decoding: on a thread of its own, never on the cooperative pool.
        let run = try await TestServices.offload { try Self.encodeThenDecode(path) }
        #expect(run.framesWritten == 300)
        print("pipeline: 300 frames 640x480 → \(run.bytes) bytes = \(run.bytes * 8 * 30 / 300 / 1000) kbit/s")
        #expect(run.framesDecoded == 300)
        #expect(run.markers == Array(0..<300))
        let expectedTimes: [Int64] = (0..<300).map { 1_700_000_000_000 + Int64($0) * 1000 / 30 }
        #expect(run.captureTimes == expectedTimes)
        let raw = run.raw
        let rawPath = "\(dir)/decoded.i420"
        try raw.write(to: URL(fileURLWithPath: rawPath))
        let ours = try await MediaFileTool.check("md5sum", [rawPath]).stdout.split(separator: " ").first.map(String.init)
        let theirs = try await MediaFileTool.vpxdecMD5(path)
        print("pipeline: vpxdec --md5 \(theirs), in-process \(ours ?? "?")")
        #expect(theirs.count == 32)
        #expect(ours == theirs)

        let probe = try await MediaFileTool.check("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                              "-show_entries", "stream=codec_name,width,height,nb_read_frames",
                                                              "-of", "csv=p=0", path])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "vp8,640,480,300")
    }

    /// What ``encodeThenDecode(_:)`` found.
    struct EncodeDecode: Sendable {
        var bytes = 0, framesWritten = 0, framesDecoded = 0
        var markers: [Int] = [], captureTimes: [Int64] = []
        var raw = Data()
    }

    /// Pattern → VP8 (500 kbit/s, 640x480@30, 300 frames, fixed clock) → IVF at `path`;
    /// then the file read back and decoded: markers, capture times and the raw I420 bytes.
    static func encodeThenDecode(_ path: String) throws -> EncodeDecode {
        var out = EncodeDecode()
        let source = try PatternSource(width: 640, height: 480, frameRate: 30, frameCount: 300, clock: { 1_700_000_000_000 })
        let encoder = try VP8Encoder(configuration: VP8EncoderConfiguration(width: 640, height: 480, frameRate: 30, bitrateKbps: 500))
        let writer = try IVFWriter(path: path)
        while case let .raw(frame)? = try source.nextFrame() {
            for encoded in try encoder.encode(frame) {
                out.bytes += encoded.data.count
                try writer.write(encoded)
            }
        }
        for encoded in try encoder.flush() { try writer.write(encoded) }
        try writer.close()
        out.framesWritten = writer.framesWritten

        let reader = try IVFReader(path: path)
        let decoder = try VP8Decoder()
        while let frame = try reader.next() {
            for decoded in try decoder.decode(frame.data, timestamp: frame.timestamp) {
                out.raw.append(contentsOf: decoded.frame.data)
                let marker = FrameMarker.read(from: decoded.frame)
                out.markers.append(marker?.frameNumber ?? -1)
                out.captureTimes.append(marker?.captureTimeMs ?? -1)
            }
        }
        out.framesDecoded = decoder.framesDecoded
        return out
    }

    /// Tone → Opus (20 ms) → Ogg writer: opusinfo accepts the file and ffprobe's
    /// duration is within 20 ms of the 4.00 s encoded.
    @Test func toneEncodedToOggOpusHasItsTrueDuration() async throws {
        let dir = TestServices.temporaryDirectory("pipeline-ogg")
        let path = "\(dir)/tone.opus"
        let source = try ToneSource(frequency: 1000, levelDBFS: -12, channels: 2)
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 2, bitrate: 64_000, application: .audio))
        let writer = try OggOpusWriter(path: path, channels: 2, preSkip: encoder.lookahead)
        for _ in 0..<200 {  // 200 × 20 ms = 4.00 s
            let block = try #require(try source.nextFrame(sampleCount: encoder.configuration.samplesPerFrame))
            try writer.write(try encoder.encode(block))
        }
        try writer.close()
        let info = try await OggOpusFixture.opusinfo(path)
        #expect(info.contains("Channels: 2"))
        let duration = try await OggOpusFixture.ffprobeDuration(path)
        print("pipeline: Ogg Opus 4.00 s written, ffprobe says \(duration) s")
        #expect(abs(duration - 4.0) <= 0.020)
        let read = try OggOpusReader(path: path)
        #expect(read.head.preSkip == encoder.lookahead)
        #expect(read.packets.count == 200)
    }

    /// Paced by the media pacer, stamped and recycled by its consumer, as a sender does,
    /// the pattern source draws every frame into the same buffer: the pacer hands the frame
    /// over and keeps no reference, so stamping the marker changes it in place (no copy)
    /// and the buffer given back is unshared when the next frame is drawn.
    @Test func pacedStampedAndRecycledFramesShareOneBuffer() async throws {
        let source = try PatternSource(width: 320, height: 240, frameRate: 100, frameCount: 20)
        final class Got: @unchecked Sendable { var buffers: Set<UInt> = []; var copies = 0; var stamps: [Int64] = [] }
        let got = Got()
        func address(_ f: I420Frame) -> UInt { f.data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }
        let error: Error? = await withCheckedContinuation { done in
            let pacer = MediaPacer(video: source, thread: MediaThread(name: "test.recycle"), deliver: { (frame: consuming VideoSourceFrame) in
                guard case .raw(var f) = consume frame else { return }
                let before = address(f)
                source.stamp(&f, captureTimeMs: 1_000 + Int64(got.stamps.count))
                if address(f) != before { got.copies += 1 }
                got.buffers.insert(address(f))
                got.stamps.append(FrameMarker.read(from: f)?.captureTimeMs ?? -1)
                source.recycle(f)
            }, finished: { done.resume(returning: $0) })
            pacer.start()
        }
        #expect(error == nil)
        #expect(got.copies == 0, "stamping copied \(got.copies) of 20 frames")
        #expect(got.buffers.count <= 2, "\(got.buffers.count) buffers for 20 frames")
        #expect(got.stamps == (0..<20).map { 1_000 + Int64($0) }, "each frame carries its stamp")
    }

    /// The pattern source paced by the media pacer: 15 frames at 30 fps arrive ~33 ms
    /// apart, and the capture time in each frame's marker is the time it was delivered.
    @Test func pacedPatternSourceStampsItsDeliveryTime() async throws {
        let source = try PatternSource(width: 160, height: 120, frameRate: 30, frameCount: 15)
        final class Got: @unchecked Sendable { var items: [(marker: FrameMarker?, atMs: Int64)] = [] }
        let got = Got()
        let error: Error? = await withCheckedContinuation { done in
            let pacer = MediaPacer(video: source, thread: MediaThread(name: "test.pattern"), deliver: { frame in
                guard case let .raw(f) = frame else { return }
                got.items.append((FrameMarker.read(from: f), PatternSource.unixTimeMs()))
            }, finished: { done.resume(returning: $0) })
            pacer.start()
        }
        #expect(error == nil)
        #expect(got.items.compactMap { $0.marker?.frameNumber } == Array(0..<15))
        // A frame is never delivered before its capture time, and typically at it: the
        // median lateness is a few ms (a busy machine may delay single deliveries).
        var lateness: [Int64] = []
        for item in got.items {
            let marker = try #require(item.marker)
            #expect(item.atMs >= marker.captureTimeMs - 2, "frame \(marker.frameNumber) delivered before its capture time")
            lateness.append(item.atMs - marker.captureTimeMs)
        }
        let median = lateness.sorted()[lateness.count / 2]
        #expect(median <= 15, "median lateness \(median) ms: \(lateness)")
        let captures = got.items.compactMap { $0.marker?.captureTimeMs }
        #expect((captures.last ?? 0) - (captures.first ?? 0) == 466)  // 14 intervals of 33.3 ms
    }
}

/// The file-backed sources: timestamps, looping, padding.
@Suite struct SourceTests {
    @Test func ivfSourcePassesFramesThroughAndLoopsWithRisingTimestamps() async throws {
        let dir = TestServices.temporaryDirectory("source-ivf")
        let ivf = try await MediaFileTool.makeVP8(dir)  // 60 frames at 30 fps
        let source = try IVFSource(path: ivf, loop: true)
        #expect(source.dimensions == (320, 240))
        #expect(source.frameRate == 30)
        var timestamps: [Int64] = []
        var keyframes: [Int] = []
        for i in 0..<130 {
            guard case let .encoded(frame)? = try source.nextFrame() else { Issue.record("frame \(i) missing"); return }
            timestamps.append(frame.timestamp)
            if frame.isKeyframe { keyframes.append(i) }
        }
        let expected: [Int64] = (0..<130).map { Int64($0) * 3000 }
        #expect(timestamps == expected)
        #expect(keyframes.contains(0) && keyframes.contains(60) && keyframes.contains(120))
        let once = try IVFSource(path: ivf)
        var count = 0
        while try once.nextFrame() != nil { count += 1 }
        #expect(count == 60)
    }

    @Test func y4mSourceYieldsRawFramesAtItsRate() async throws {
        let dir = TestServices.temporaryDirectory("source-y4m")
        let y4m = try await MediaFileTool.makeY4M(dir, size: "176x144", rate: 25, frames: 10)
        let source = try Y4MSource(path: y4m, loop: true)
        #expect(source.frameRate == 25)
        var timestamps: [Int64] = []
        for _ in 0..<12 {
            guard case let .raw(frame)? = try source.nextFrame() else { Issue.record("no raw frame"); return }
            #expect(frame.width == 176 && frame.height == 144)
            timestamps.append(frame.timestamp)
        }
        let expected: [Int64] = (0..<12).map { Int64($0) * 3600 }
        #expect(timestamps == expected)
    }

    @Test func wavSourceBlocksCrossTheLoopAndPadTheEnd() throws {
        let dir = TestServices.temporaryDirectory("source-wav")
        let path = "\(dir)/ramp.wav"
        let writer = try WAVWriter(path: path, channels: 1)
        try writer.write(try AudioFrame(channels: 1, samples: (0..<1500).map { Int16($0) }))
        try writer.close()
        let looping = try WAVSource(path: path, loop: true)
        let a = try #require(try looping.nextFrame(sampleCount: 960))
        let b = try #require(try looping.nextFrame(sampleCount: 960))
        #expect(a.samples == (0..<960).map { Int16($0) })
        let wrapped: [Int16] = (960..<1500).map { Int16($0) } + (0..<420).map { Int16($0) }
        #expect(b.samples == wrapped)
        #expect(b.timestamp == 960)
        let once = try WAVSource(path: path)
        _ = try once.nextFrame(sampleCount: 960)
        let last = try #require(try once.nextFrame(sampleCount: 960))
        let padded: [Int16] = (960..<1500).map { Int16($0) } + [Int16](repeating: 0, count: 420)
        #expect(last.samples == padded)
        #expect(try once.nextFrame(sampleCount: 960) == nil)
    }
}
