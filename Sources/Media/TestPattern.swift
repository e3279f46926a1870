/// Errors from building a ``TestPattern``.
public enum TestPatternError: Error, Equatable, CustomStringConvertible {
    /// A size outside 16…16384 pixels on either side.
    case badSize(width: Int, height: Int)
    /// A frame rate outside 1…240 frames per second.
    case badFrameRate(Int)

    /// One line naming the offending values.
    public var description: String {
        switch self {
        case let .badSize(w, h): return "test pattern size \(w)x\(h) outside 16…16384"
        case let .badFrameRate(r): return "test pattern frame rate \(r) outside 1…240"
        }
    }
}

/// A synthetic I420 video source: moving content that gives an encoder real work, with a
/// ``FrameMarker`` (frame number and capture time) drawn in a band at the top.
///
/// Each frame is a pure function of its number: a diagonal luma gradient scrolling 1 px
/// per frame over still chroma gradients, a box bouncing between the edges, and a patch of
/// 8×8-pixel blocks (a quarter of the width and of the content height) whose grey levels are new random values (seeded by the frame number)
/// in every frame. Any size from 16×16 works; the marker is drawn only when it fits
/// (``FrameMarker/layout(width:height:)``: e.g. 64×56 has one, 64×55 not; 160×120,
/// 176×144, 320×240, 640×480 and 1280×720 all have it).
public struct TestPattern: Sendable {
    /// Width in pixels (16…16384).
    public let width: Int
    /// Height in pixels (16…16384).
    public let height: Int
    /// Frames per second (1…240): sets the frames' 90 kHz timestamps.
    public let frameRate: Int
    /// Where the marker goes in frames of this size; nil when it does not fit.
    public let markerLayout: FrameMarker.Layout?

    private let blank: I420Frame
    private let lumaRamp: [UInt8]
    private let chromaRamp: [UInt8]
    private static let period = 256

    /// A pattern of `width × height` at `frameRate` frames per second.
    ///
    /// Throws ``TestPatternError/badSize(width:height:)`` when a side is outside 16…16384
    /// and ``TestPatternError/badFrameRate(_:)`` outside 1…240.
    public init(width: Int, height: Int, frameRate: Int = 30) throws(TestPatternError) {
        guard (16...16384).contains(width), (16...16384).contains(height) else {
            throw .badSize(width: width, height: height)
        }
        guard (1...240).contains(frameRate) else { throw .badFrameRate(frameRate) }
        do {
            blank = try I420Frame(width: width, height: height)
        } catch {
            throw .badSize(width: width, height: height)
        }
        self.width = width
        self.height = height
        self.frameRate = frameRate
        markerLayout = FrameMarker.layout(width: width, height: height)
        // Triangle waves over one 256-sample period, repeated to cover a row from any offset.
        let p = TestPattern.period
        let span = p + max(width, height) + 1
        lumaRamp = (0..<span).map { i in
            let t = i % p
            return UInt8(40 + (t < p / 2 ? t : p - 1 - t) * 160 / (p / 2))
        }
        chromaRamp = (0..<span).map { i in
            let t = i % p
            return UInt8(96 + (t < p / 2 ? t : p - 1 - t) * 64 / (p / 2))
        }
    }

    /// The 90 kHz timestamp of frame `number`: `number × 90 000 / frameRate`.
    public func timestamp(ofFrame number: Int) -> Int64 {
        Int64(number) * 90_000 / Int64(frameRate)
    }

    /// Frame `number` (≥ 0; negative numbers draw as 0), stamped ``timestamp(ofFrame:)``, with
    /// a ``FrameMarker`` of `number` and `captureTimeMs` when the size allows one.
    public func frame(number: Int, captureTimeMs: Int64) -> I420Frame {
        var frame = blank
        render(number: number, captureTimeMs: captureTimeMs, into: &frame)
        return frame
    }

    /// Draws frame `number` into `frame` (a frame of this pattern's size, e.g. the one the
    /// last call filled), writing every pixel: the same bytes as ``frame(number:captureTimeMs:)``
    /// without a new 460 KB buffer (at 640x480) when `frame`'s storage is not shared.
    /// A frame of another size is replaced by a new one.
    public func render(number: Int, captureTimeMs: Int64, into frame: inout I420Frame) {
        if frame.width != width || frame.height != height || frame.data.count != blank.data.count { frame = blank }
        let n = max(0, number)
        frame.timestamp = timestamp(ofFrame: n)
        let top = markerLayout?.bandHeight ?? 0
        let w = width, h = height, cw = frame.chromaWidth, ch = frame.chromaHeight
        let p = TestPattern.period
        let uOffset = frame.uOffset, vOffset = frame.vOffset
        lumaRamp.withUnsafeBufferPointer { luma in
            chromaRamp.withUnsafeBufferPointer { chroma in
                frame.data.withUnsafeMutableBufferPointer { out in
                    guard let dst = out.baseAddress, let ramp = luma.baseAddress, let cramp = chroma.baseAddress else { return }
                    // Diagonal luma gradient moving 1 px per frame.
                    for y in top..<h {
                        (dst + y * w).update(from: ramp + (y + n) % p, count: w)
                    }
                    // Still chroma: U a horizontal gradient, V a vertical one.
                    for y in (top / 2)..<ch {
                        (dst + uOffset + y * cw).update(from: cramp, count: cw)
                        (dst + vOffset + y * cw).update(repeating: cramp[y % p], count: cw)
                    }
                    // A patch of 8×8 blocks with new random grey levels in every frame.
                    let patchW = max(8, w / 4 / 8 * 8), patchH = max(8, (h - top) / 4 / 8 * 8)
                    let px = w - patchW, py = max(0, h - patchH)
                    for by in stride(from: 0, to: patchH, by: 8) {
                        for bx in stride(from: 0, to: patchW, by: 8) {
                            let v = UInt8(96 + TestPattern.mix(UInt64(n) << 40 ^ UInt64(by) << 20 ^ UInt64(bx)) % 64)
                            for row in 0..<8 where py + by + row < h {
                                (dst + (py + by + row) * w + px + bx).update(repeating: v, count: min(8, w - px - bx))
                            }
                        }
                    }
                    // A box bouncing between the edges of the content area.
                    let boxW = max(4, w / 6), boxH = max(4, (h - top) / 6)
                    let x0 = TestPattern.pingPong(n * max(1, w / 160), w - boxW)
                    let y0 = top + TestPattern.pingPong(n * max(1, (h - top) / 160), h - top - boxH)
                    for y in y0..<min(h, y0 + boxH) {
                        let edge = y - y0 < 2 || y0 + boxH - 1 - y < 2
                        (dst + y * w + x0).update(repeating: edge ? 32 : 220, count: boxW)
                        if !edge {
                            (dst + y * w + x0).update(repeating: 32, count: min(2, boxW))
                            (dst + y * w + x0 + boxW - 2).update(repeating: 32, count: min(2, boxW))
                        }
                    }
                    for y in (y0 / 2)..<min(ch, (y0 + boxH + 1) / 2) {
                        let cx = x0 / 2, cn = min(cw - cx, (boxW + 1) / 2)
                        (dst + uOffset + y * cw + cx).update(repeating: 90, count: cn)
                        (dst + vOffset + y * cw + cx).update(repeating: 200, count: cn)
                    }
                }
            }
        }
        if !FrameMarker(frameNumber: n, captureTimeMs: captureTimeMs).draw(into: &frame), top > 0 {
            frame = blank  // cannot happen (the layout fitted above); keep the frame well defined
        }
    }

    /// Position bouncing between 0 and `range` (inclusive) as `t` grows.
    static func pingPong(_ t: Int, _ range: Int) -> Int {
        guard range > 0 else { return 0 }
        let m = t % (2 * range)
        return m <= range ? m : 2 * range - m
    }

    /// SplitMix64's finaliser: a well-mixed 64-bit value from `x`.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A frame number and capture time drawn into a video frame as black and white luma
/// cells, readable after lossy coding: how tests prove which frames arrived.
///
/// The marker holds 112 bits, most significant first: the frame number's low 32 bits, the
/// capture time's low 48 bits (ms, two's complement), and a CRC-32 (IEEE 802.3) of those
/// 10 bytes XORed with 0x50454552 ("PEER"). Each bit is one square cell of luma 235 (1) or
/// 16 (0), laid out left to right, top to bottom in a band at the top of the frame, cells
/// aligned to the frame's origin (so 16-pixel cells are VP8 macroblocks); the band's chroma
/// is neutral (128). ``read(from:)`` averages the middle half of each cell and rejects the
/// frame when a cell is not clearly dark or light, or when the CRC does not match.
public struct FrameMarker: Sendable, Equatable {
    /// Where the marker sits in frames of one size.
    public struct Layout: Sendable, Equatable {
        /// Side of a cell in pixels: 16, 8 or 4.
        public let cellSize: Int
        /// Cells per row of the band: `width / cellSize`.
        public let cellsPerRow: Int
        /// Rows of cells: enough for ``FrameMarker/bitCount`` cells.
        public let rows: Int
        /// Height of the band in pixels: `rows × cellSize`.
        public var bandHeight: Int { rows * cellSize }
    }

    /// Bits in a marker: 32 (frame number) + 48 (capture time) + 32 (CRC).
    public static let bitCount = 112
    /// Luma of a 1 cell.
    static let light: UInt8 = 235
    /// Luma of a 0 cell.
    static let dark: UInt8 = 16
    /// A cell whose average is within this distance of the midpoint (125.5) is unreadable.
    static let doubt = 45.0
    static let magic: UInt32 = 0x5045_4552

    /// The frame number, 0…2³²−1 (numbers are stored modulo 2³²).
    public var frameNumber: Int
    /// The capture time in ms, −2⁴⁷…2⁴⁷−1 (times are stored modulo 2⁴⁸, sign-extended on reading).
    public var captureTimeMs: Int64

    /// A marker of `frameNumber` (kept modulo 2³²) and `captureTimeMs` (kept modulo 2⁴⁸, sign-extended).
    public init(frameNumber: Int, captureTimeMs: Int64) {
        self.frameNumber = Int(UInt32(truncatingIfNeeded: frameNumber))
        self.captureTimeMs = (captureTimeMs << 16) >> 16
    }

    /// The layout for `width × height`: the largest cell (16, 8, then 4 px) whose band takes
    /// at most a quarter of the height, else 4-px cells if their band (`4 × ⌈112 / ⌊width/4⌋⌉`
    /// rows) takes at most half; nil when nothing fits. For example 64×56, 160×120 and
    /// 176×144 get 4-px cells, 320×240 8-px, 640×480 and 1280×720 16-px (macroblocks);
    /// 64×55 and 16×16 get none.
    public static func layout(width: Int, height: Int) -> Layout? {
        func make(_ cell: Int) -> Layout? {
            let perRow = width / cell
            guard perRow > 0 else { return nil }
            return Layout(cellSize: cell, cellsPerRow: perRow, rows: (bitCount + perRow - 1) / perRow)
        }
        for cell in [16, 8, 4] {
            if let l = make(cell), l.bandHeight <= height / 4 { return l }
        }
        if let l = make(4), l.bandHeight <= height / 2 { return l }
        return nil
    }

    /// The 112 bits, most significant first.
    var bits: [Bool] {
        var payload: [UInt8] = []
        let n = UInt32(truncatingIfNeeded: frameNumber)
        for shift in stride(from: 24, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: n >> UInt32(shift))) }
        let t = UInt64(bitPattern: captureTimeMs)
        for shift in stride(from: 40, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: t >> UInt64(shift))) }
        let check = FrameMarker.crc32(payload) ^ FrameMarker.magic
        for shift in stride(from: 24, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: check >> UInt32(shift))) }
        return payload.flatMap { byte in (0..<8).map { byte & (0x80 >> $0) != 0 } }
    }

    /// Draws the marker into `frame`'s top band (cells, grey filler after the last cell,
    /// neutral chroma). Returns false, leaving the frame unchanged, when the frame is too
    /// small for ``layout(width:height:)``.
    @discardableResult
    public func draw(into frame: inout I420Frame) -> Bool {
        guard let layout = FrameMarker.layout(width: frame.width, height: frame.height),
              frame.data.count == frame.byteCount else { return false }
        let bits = self.bits
        let w = frame.width, cw = frame.chromaWidth, c = layout.cellSize
        let uOffset = frame.uOffset, vOffset = frame.vOffset
        frame.data.withUnsafeMutableBufferPointer { out in
            guard let dst = out.baseAddress else { return }
            for y in 0..<layout.bandHeight {
                let row = dst + y * w
                row.update(repeating: 128, count: w)
                let cellRow = y / c
                for col in 0..<layout.cellsPerRow {
                    let index = cellRow * layout.cellsPerRow + col
                    guard index < bits.count else { break }
                    (row + col * c).update(repeating: bits[index] ? FrameMarker.light : FrameMarker.dark, count: c)
                }
            }
            for y in 0..<((layout.bandHeight + 1) / 2) {
                (dst + uOffset + y * cw).update(repeating: 128, count: cw)
                (dst + vOffset + y * cw).update(repeating: 128, count: cw)
            }
        }
        return true
    }

    /// Reads the marker from `frame`; nil when the frame is too small, a cell is neither
    /// clearly dark nor clearly light, or the CRC does not match.
    public static func read(from frame: I420Frame) -> FrameMarker? {
        read(from: frame, margins: nil)
    }

    /// ``read(from:)`` that also reports the smallest distance (in luma levels) of any cell's
    /// average from the midpoint: how much room the coding left.
    static func read(from frame: I420Frame, margins: UnsafeMutablePointer<Double>?) -> FrameMarker? {
        guard frame.data.count == frame.byteCount else { return nil }
        return frame.data.withUnsafeBufferPointer { src in
            src.baseAddress.flatMap { read(luma: $0, stride: frame.width, width: frame.width, height: frame.height, margins: margins) }
        }
    }

    /// Reads the marker from a luma plane in place (`height` rows of `stride` bytes, the
    /// first `width` of each the picture), as a decoder's own buffer holds it: nil as for
    /// ``read(from:)``.
    public static func read(luma: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int) -> FrameMarker? {
        read(luma: luma, stride: stride, width: width, height: height, margins: nil)
    }

    static func read(luma base: UnsafePointer<UInt8>, stride w: Int, width: Int, height: Int,
                     margins: UnsafeMutablePointer<Double>?) -> FrameMarker? {
        guard let layout = layout(width: width, height: height), w >= width else { return nil }
        let c = layout.cellSize, inset = c / 4, inner = c / 2
        var bytes = [UInt8](repeating: 0, count: bitCount / 8)
        var smallest = Double.infinity
        let ok = { () -> Bool in
            for index in 0..<bitCount {
                let x0 = (index % layout.cellsPerRow) * c + inset
                let y0 = (index / layout.cellsPerRow) * c + inset
                var sum = 0
                for y in y0..<(y0 + inner) {
                    let row = base + y * w + x0
                    for x in 0..<inner { sum += Int(row[x]) }
                }
                let mean = Double(sum) / Double(inner * inner)
                let distance = abs(mean - 125.5)
                smallest = min(smallest, distance)
                guard distance >= doubt else { return false }
                if mean > 125.5 { bytes[index / 8] |= 0x80 >> UInt8(index % 8) }
            }
            return true
        }()
        margins?.pointee = smallest
        guard ok else { return nil }
        let check = bytes[10..<14].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard check == crc32(Array(bytes[0..<10])) ^ magic else { return nil }
        let number = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let raw = bytes[4..<10].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let time = Int64(bitPattern: raw << 16) >> 16
        return FrameMarker(frameNumber: Int(number), captureTimeMs: time)
    }

    /// CRC-32 (IEEE 802.3, reflected, initial and final XOR 0xFFFFFFFF) of `bytes`.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
