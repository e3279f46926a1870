import Testing
import TestSupport
@testable import Media

@Suite struct TestPatternTests {
    /// Timestamps are `number × 90 000 / fps` in 90 kHz ticks.
    @Test func timestampsAre90kHzTicks() throws {
        let p30 = try TestPattern(width: 64, height: 64, frameRate: 30)
        #expect(p30.frame(number: 0, captureTimeMs: 0).timestamp == 0)
        #expect(p30.frame(number: 30, captureTimeMs: 0).timestamp == 90_000)
        #expect(try TestPattern(width: 64, height: 64, frameRate: 25).frame(number: 1, captureTimeMs: 0).timestamp == 3600)
        #expect(try TestPattern(width: 64, height: 64, frameRate: 7).timestamp(ofFrame: 1) == 12_857)
    }

    /// The band layout per size: macroblock cells at 640×480 and 1280×720, smaller cells at
    /// smaller sizes, no marker at 16×16.
    @Test func layoutsPerSize() {
        func cell(_ w: Int, _ h: Int) -> Int? { FrameMarker.layout(width: w, height: h)?.cellSize }
        #expect(FrameMarker.layout(width: 640, height: 480).map { [$0.cellSize, $0.cellsPerRow, $0.rows, $0.bandHeight] } == [16, 40, 3, 48])
        #expect(cell(1280, 720) == 16)
        #expect(cell(320, 240) == 8)
        #expect(cell(160, 120) == 4)
        #expect(cell(176, 144) == 4)
        #expect(cell(64, 56) == 4)
        #expect(cell(64, 55) == nil)
        #expect(cell(16, 16) == nil)
    }

    /// Uncoded frames of many sizes give back the exact marker, extreme values included;
    /// sizes without room for a marker read nil but still make frames.
    @Test(arguments: [(640, 480), (320, 240), (160, 120), (161, 121), (1280, 720), (64, 56), (100, 400), (16, 16), (17, 31)])
    func markerRoundTripsOnUncodedFrames(size: (Int, Int)) throws {
        let (w, h) = size
        let pattern = try TestPattern(width: w, height: h)
        for (n, t) in [(0, Int64(0)), (299, Int64(1_764_489_609_966)), (4_294_967_295, Int64(-1)), (12_345, (Int64(1) << 47) - 1)] {
            let frame = pattern.frame(number: n, captureTimeMs: t)
            #expect(frame.width == w && frame.height == h && frame.data.count == I420Frame.byteCount(width: w, height: h))
            let expected: FrameMarker? = pattern.markerLayout == nil ? nil : FrameMarker(frameNumber: n, captureTimeMs: t)
            #expect(FrameMarker.read(from: frame) == expected)
            if expected != nil { #expect(FrameMarker.read(from: frame)?.captureTimeMs == t) }
        }
    }

    /// Values outside the stored ranges wrap: frame numbers modulo 2³², times modulo 2⁴⁸ sign-extended.
    @Test func markerValuesWrap() {
        #expect(FrameMarker(frameNumber: (1 << 32) + 5, captureTimeMs: 0).frameNumber == 5)
        #expect(FrameMarker(frameNumber: -1, captureTimeMs: 0).frameNumber == 4_294_967_295)
        #expect(FrameMarker(frameNumber: 0, captureTimeMs: 1 << 47).captureTimeMs == -(1 << 47))
        #expect(FrameMarker(frameNumber: 0, captureTimeMs: -5).captureTimeMs == -5)
        #expect(FrameMarker.bitCount == 112)
        // CRC-32 check value of "123456789" (IEEE 802.3).
        #expect(FrameMarker.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    /// A marker with any single cell inverted, or any cell made mid-grey, is rejected (CRC or
    /// doubt), as are black, white and seeded-noise frames: a damaged marker reads nil.
    @Test func damagedMarkersAndForeignFramesReadNil() throws {
        let pattern = try TestPattern(width: 320, height: 240)
        let good = pattern.frame(number: 77, captureTimeMs: 1234)
        let layout = try #require(pattern.markerLayout)
        let c = layout.cellSize
        var flippedReads = 0, greyReads = 0
        for index in 0..<FrameMarker.bitCount {
            let x0 = (index % layout.cellsPerRow) * c, y0 = (index / layout.cellsPerRow) * c
            var flipped = good, grey = good
            for y in y0..<(y0 + c) {
                for x in x0..<(x0 + c) {
                    flipped.data[y * 320 + x] = good.data[y * 320 + x] > 128 ? 16 : 235
                    grey.data[y * 320 + x] = 128
                }
            }
            if FrameMarker.read(from: flipped) != nil { flippedReads += 1 }
            if FrameMarker.read(from: grey) != nil { greyReads += 1 }
        }
        #expect(flippedReads == 0 && greyReads == 0)

        #expect(FrameMarker.read(from: try I420Frame(width: 320, height: 240)) == nil)
        let white = try I420Frame(width: 320, height: 240, data: [UInt8](repeating: 235, count: 320 * 240 * 3 / 2))
        #expect(FrameMarker.read(from: white) == nil)
        var g = SplitMix64(state: 11)
        var noiseReads = 0
        for _ in 0..<200 {
            // Noise of black and white cells (so every cell is readable): only the CRC can refuse.
            var frame = try I420Frame(width: 320, height: 240)
            for index in 0..<FrameMarker.bitCount {
                let v: UInt8 = Bool.random(using: &g) ? 235 : 16
                let x0 = (index % layout.cellsPerRow) * c, y0 = (index / layout.cellsPerRow) * c
                for y in y0..<(y0 + c) { for x in x0..<(x0 + c) { frame.data[y * 320 + x] = v } }
            }
            if FrameMarker.read(from: frame) != nil { noiseReads += 1 }
        }
        #expect(noiseReads == 0)
    }

    /// Frames are pure functions of their number, and consecutive frames differ in the
    /// gradient, the box and the random patch; the marker band has neutral chroma.
    @Test func framesMoveAndRepeat() throws {
        let pattern = try TestPattern(width: 320, height: 240)
        let a = pattern.frame(number: 5, captureTimeMs: 9)
        #expect(pattern.frame(number: 5, captureTimeMs: 9) == a)
        let b = pattern.frame(number: 6, captureTimeMs: 9)
        let band = try #require(pattern.markerLayout).bandHeight
        let changed = (band * 320..<(320 * 240)).filter { a.data[$0] != b.data[$0] }.count
        // The scrolling gradient alone changes most of the picture.
        #expect(changed > 320 * (240 - band) / 2)
        // The random patch (bottom-right quarter, 8×8 blocks) has new levels.
        let patch = (200..<240).flatMap { y in (240..<320).map { y * 320 + $0 } }
        #expect(patch.filter { a.data[$0] != b.data[$0] }.count > patch.count / 2)
        // Neutral chroma under the band.
        let chromaBand = (0..<(band / 2)).flatMap { y in (0..<160).map { a.uOffset + y * 160 + $0 } }
        #expect(chromaBand.allSatisfy { a.data[$0] == 128 && a.data[$0 + 160 * 120] == 128 })
    }

    /// Sizes below 16×16 and frame rates outside 1…240 are refused naming the values.
    @Test func badArgumentsAreTypedErrors() {
        #expect(throws: TestPatternError.badSize(width: 15, height: 16)) { try TestPattern(width: 15, height: 16) }
        #expect(throws: TestPatternError.badSize(width: 16, height: 20000)) { try TestPattern(width: 16, height: 20000) }
        #expect(throws: TestPatternError.badFrameRate(0)) { try TestPattern(width: 64, height: 64, frameRate: 0) }
        #expect(TestPatternError.badFrameRate(0).description.contains("0"))
    }

    /// Drawing into the last frame's buffer gives the very bytes a fresh frame has (every
    /// pixel is drawn again), for sizes with and without a marker; the source reuses the
    /// buffer once the consumer let go of its frame (no new storage per frame).
    @Test(arguments: [(640, 480), (161, 121), (16, 16)])
    func renderingIntoTheLastFrameEqualsAFreshFrame(size: (Int, Int)) throws {
        let pattern = try TestPattern(width: size.0, height: size.1)
        var reused = pattern.frame(number: 0, captureTimeMs: 5)
        for n in [1, 2, 3, 57, 300, 1_000] {
            pattern.render(number: n, captureTimeMs: Int64(n) * 33, into: &reused)
            #expect(reused == pattern.frame(number: n, captureTimeMs: Int64(n) * 33), "frame \(n) at \(size)")
        }
        var other = try I420Frame(width: 32, height: 32)
        pattern.render(number: 9, captureTimeMs: 1, into: &other)
        #expect(other == pattern.frame(number: 9, captureTimeMs: 1), "a frame of another size is replaced")

        let source = try PatternSource(width: size.0, height: size.1, clock: { 1_000 })
        var storage: [UnsafeRawPointer] = []
        for n in 0..<5 {
            guard case let .raw(frame)? = try source.nextFrame() else { Issue.record("no frame"); return }
            #expect(frame == pattern.frame(number: n, captureTimeMs: 1_000 + Int64(n) * 1000 / 30))
            frame.data.withUnsafeBytes { if let b = $0.baseAddress { storage.append(b) } }
            source.recycle(frame)
        }
        #expect(Set(storage).count == 1, "one buffer for every recycled frame: \(Set(storage).count)")
    }

    /// The marker read in place from a decoder's own buffer is the one the packed copy gives.
    @Test func theMarkerReadsInPlaceFromTheDecoder() throws {
        let pattern = try TestPattern(width: 320, height: 240)
        let encoder = try VP8Encoder(configuration: VP8EncoderConfiguration(width: 320, height: 240, frameRate: 30, bitrateKbps: 800))
        let copying = try VP8Decoder(), lending = try VP8Decoder()
        var inPlace: [Int] = [], copied: [Int] = []
        for n in 0..<20 {
            for e in try encoder.encode(pattern.frame(number: n, captureTimeMs: Int64(n))) {
                copied += try copying.decode(e.data, timestamp: e.timestamp).compactMap { FrameMarker.read(from: $0.frame)?.frameNumber }
                let pictures = try lending.decode(e.data) { luma, stride, width, height in
                    #expect(stride >= width && width == 320 && height == 240)
                    if let m = FrameMarker.read(luma: luma, stride: stride, width: width, height: height) { inPlace.append(m.frameNumber) }
                }
                #expect(pictures == 1)
            }
        }
        #expect(inPlace == Array(0..<20) && inPlace == copied)
        #expect(lending.framesDecoded == 20 && lending.keyFramesDecoded == copying.keyFramesDecoded)
    }

    /// A sender stamps a frame's capture time when it takes it to the encoder (the
    /// number read back from the timestamp), and a recycled frame's buffer is drawn into
    /// next: the same pixels as a fresh frame, no new storage.
    @Test func stampAndRecycle() throws {
        let source = try PatternSource(width: 160, height: 120, frameRate: 30, clock: { 5_000 })
        var storage: Set<UnsafeRawPointer> = []
        for n in 0..<6 {
            guard case .raw(var frame)? = try source.nextFrame() else { Issue.record("no frame"); return }
            #expect(FrameMarker.read(from: frame) == FrameMarker(frameNumber: n, captureTimeMs: 5_000 + Int64(n) * 1000 / 30))
            source.stamp(&frame, captureTimeMs: 9_000 + Int64(n))
            #expect(FrameMarker.read(from: frame) == FrameMarker(frameNumber: n, captureTimeMs: 9_000 + Int64(n)))
            frame.data.withUnsafeBytes { if let b = $0.baseAddress { storage.insert(b) } }
            source.recycle(frame)
        }
        #expect(storage.count == 1, "one buffer for every frame: \(storage.count)")
    }
}
