// VP8Decoder: a VP8 decoder over libvpx (RFC 6386) and the frames it decodes.
import CVPX
import Bytes
import Dispatch
import Synchronization

/// One frame out of ``VP8Decoder``: the picture and what the decoder knew about it.
public struct VP8DecodedFrame: Sendable, Equatable {
    /// The decoded picture, packed I420 (a copy of libvpx's buffer), with the timestamp
    /// given to ``VP8Decoder/decode(_:timestamp:)``.
    public var frame: I420Frame
    /// True when the input was a key frame (frame tag P bit 0, RFC 6386 §9.1).
    public var isKeyframe: Bool
    /// True when libvpx reported the frame corrupt (`VP8D_GET_FRAME_CORRUPTED`): it refers to
    /// a damaged or missing reference, and the picture may show artefacts until a key frame.
    public var isCorrupt: Bool

    /// Creates a result from its fields.
    public init(frame: I420Frame, isKeyframe: Bool, isCorrupt: Bool) {
        self.frame = frame
        self.isKeyframe = isKeyframe
        self.isCorrupt = isCorrupt
    }
}

/// A VP8 decoder (RFC 6386) over libvpx, one thread, no post-processing.
///
/// Inter frames given before the first key frame throw
/// ``VP8CodecError/waitingForKeyframe(byteCount:)`` without reaching libvpx (the caller
/// should request a key frame). Data libvpx cannot parse throws
/// ``VP8CodecError/libvpx(function:code:message:detail:)``; frames libvpx decodes but flags
/// as corrupt come back with ``VP8DecodedFrame/isCorrupt`` set and count in
/// ``corruptFrames``. No input crashes the decoder.
///
/// Thread-safe: the libvpx context and the counts live in one `Mutex`, taken by every call.
public final class VP8Decoder: Sendable {
    private struct Counters {
        var framesDecoded = 0
        var keyFramesDecoded = 0
        var corruptFrames = 0
        var qpSum = 0
        var decodeSeconds = 0.0
        var width: Int?
        var height: Int?
        var sawKeyframe = false
    }

    /// The libvpx context and the counts.
    private struct State {
        let ctx: UnsafeMutablePointer<vpx_codec_ctx_t>
        /// True after a successful `vpx_codec_dec_init`: `deinit` destroys the context only then
        /// and frees `ctx` exactly once (also after a failed init, when Swift runs `deinit`).
        var isOpen = false
        var counters = Counters()
    }

    private let state: Mutex<State>

    /// Frames decoded and returned (W3C `framesDecoded`), corrupt ones included.
    public var framesDecoded: Int { state.withLock { $0.counters.framesDecoded } }
    /// Key frames decoded (W3C `keyFramesDecoded`).
    public var keyFramesDecoded: Int { state.withLock { $0.counters.keyFramesDecoded } }
    /// Frames libvpx decoded but reported corrupt (`VP8D_GET_FRAME_CORRUPTED`).
    public var corruptFrames: Int { state.withLock { $0.counters.corruptFrames } }
    /// The sum of the decoded frames' quantizer indexes (W3C `qpSum`; VP8's y_ac_qi, 0–127).
    public var qpSum: Int { state.withLock { $0.counters.qpSum } }
    /// Seconds spent in libvpx decoding (W3C `totalDecodeTime`: wall time of the calls).
    public var totalDecodeTime: Double { state.withLock { $0.counters.decodeSeconds } }
    /// Width in pixels of the last decoded frame; nil before the first.
    public var width: Int? { state.withLock { $0.counters.width } }
    /// Height in pixels of the last decoded frame; nil before the first.
    public var height: Int? { state.withLock { $0.counters.height } }

    /// Opens a libvpx VP8 decoder. Throws ``VP8CodecError/libvpx(function:code:message:detail:)``
    /// when libvpx refuses.
    public convenience init() throws(VP8CodecError) {
        try self.init(fault: nil)
    }

    /// Opens a decoder, making `vpx_codec_dec_init` fail when `fault` is `.initialize` (tests).
    init(fault: VP8CodecFault?) throws(VP8CodecError) {
        state = Mutex(State(ctx: Self.newContext()))
        // Every stored property is set from here on: a throw runs `deinit`, which frees `ctx`.
        try state.withLock { s throws(VP8CodecError) in
            guard let iface = vpx_codec_vp8_dx() else {
                throw .libvpx(function: "vpx_codec_vp8_dx", code: -1, message: "no VP8 decoder in libvpx", detail: "")
            }
            var dcfg = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
            let res = fault == .initialize ? VPX_CODEC_MEM_ERROR : peer_vpx_codec_dec_init(s.ctx, iface, &dcfg, 0)
            guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_dec_init", res, fault == nil ? s.ctx : nil) }
            s.isOpen = true
        }
    }

    /// A zeroed `vpx_codec_ctx_t` on the heap.
    private static func newContext() -> UnsafeMutablePointer<vpx_codec_ctx_t> {
        let ctx = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        ctx.initialize(to: vpx_codec_ctx_t())
        return ctx
    }

    deinit {
        state.withLock { s in
            if s.isOpen { vpx_codec_destroy(s.ctx) }
            s.ctx.deinitialize(count: 1)
            s.ctx.deallocate()
        }
    }

    /// Decodes one complete VP8 frame (as the encoder emitted it, or as reassembled from RTP
    /// by RFC 7741 depacketization) and returns the pictures libvpx produced: one for a
    /// shown frame, none for a frame with `show_frame` 0. Each picture is a packed copy
    /// (libvpx's strides and display size `d_w × d_h` respected) stamped with `timestamp`
    /// (90 kHz ticks).
    ///
    /// Throws ``VP8CodecError/emptyInput`` for no bytes,
    /// ``VP8CodecError/waitingForKeyframe(byteCount:)`` for an inter frame before any key
    /// frame, and ``VP8CodecError/libvpx(function:code:message:detail:)`` with libvpx's
    /// error text for data it cannot decode (truncated, garbage).
    public func decode(_ data: [UInt8], timestamp: Int64 = 0) throws(VP8CodecError) -> [VP8DecodedFrame] {
        var out: [VP8DecodedFrame] = []
        try decodePictures(data) { image, isKey, isCorrupt in
            guard let frame = Self.copy(image, timestamp: timestamp) else { return false }
            out.append(VP8DecodedFrame(frame: frame, isKeyframe: isKey, isCorrupt: isCorrupt))
            return true
        }
        return out
    }

    /// Decodes like ``decode(_:timestamp:)`` but copies nothing: each picture's luma plane
    /// is lent to `inspect` (pointer, stride, width, height) while libvpx holds it, for a
    /// look (a ``FrameMarker``) without a packed copy (at 640x480 a 460 KB buffer cleared,
    /// filled and freed per frame). Returns how many pictures came; counts as `decode` does.
    /// Throws as ``decode(_:timestamp:)``.
    @discardableResult
    public func decode(_ data: [UInt8], inspect: (UnsafePointer<UInt8>, Int, Int, Int) -> Void) throws(VP8CodecError) -> Int {
        try decodePictures(data) { image, _, _ in
            guard image.fmt == VPX_IMG_FMT_I420 || image.fmt == VPX_IMG_FMT_YV12, let luma = image.planes.0,
                  image.stride.0 >= Int32(image.d_w) else { return false }
            inspect(UnsafePointer(luma), Int(image.stride.0), Int(image.d_w), Int(image.d_h))
            return true
        }
    }

    /// Decodes one frame and hands each picture libvpx gives to `take` (the image, key
    /// frame, corrupt), counting those it took (it returns true); returns their number.
    @discardableResult
    private func decodePictures(_ data: [UInt8], _ take: (vpx_image_t, Bool, Bool) -> Bool) throws(VP8CodecError) -> Int {
        try state.withLock { s throws(VP8CodecError) in
            let ctx = s.ctx
            guard !data.isEmpty else { throw .emptyInput }
            let isKey = VP8FrameHeader.isKeyframe(data)
            guard isKey || s.counters.sawKeyframe else { throw .waitingForKeyframe(byteCount: data.count) }
            let started = DispatchTime.now().uptimeNanoseconds
            let res = data.withUnsafeBufferPointer { buf in
                vpx_codec_decode(ctx, buf.baseAddress, UInt32(buf.count), nil, 0)
            }
            s.counters.decodeSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_decode", res, ctx) }
            var qp: Int32 = 0
            let quantizer = peer_vpxd_get_last_quantizer(ctx, &qp) == VPX_CODEC_OK ? Int(qp) : 0
            var corrupt: Int32 = 0
            let corruptRes = peer_vp8d_get_frame_corrupted(ctx, &corrupt)
            let isCorrupt = corruptRes == VPX_CODEC_OK && corrupt != 0
            if isKey { s.counters.sawKeyframe = true }
            var pictures = 0
            var iter: vpx_codec_iter_t? = nil
            while let image = vpx_codec_get_frame(ctx, &iter) {
                guard take(image.pointee, isKey, isCorrupt) else { continue }
                pictures += 1
                s.counters.framesDecoded += 1
                s.counters.qpSum += quantizer
                if isKey { s.counters.keyFramesDecoded += 1 }
                if isCorrupt { s.counters.corruptFrames += 1 }
                s.counters.width = Int(image.pointee.d_w)
                s.counters.height = Int(image.pointee.d_h)
            }
            return pictures
        }
    }

    /// Copies an I420 `vpx_image_t` row by row into a packed ``I420Frame``; nil for other formats.
    private static func copy(_ image: vpx_image_t, timestamp: Int64) -> I420Frame? {
        guard image.fmt == VPX_IMG_FMT_I420 || image.fmt == VPX_IMG_FMT_YV12 else { return nil }
        let width = Int(image.d_w)
        let height = Int(image.d_h)
        guard let blank = try? I420Frame(width: width, height: height, timestamp: timestamp) else { return nil }
        var frame = blank
        // YV12 stores V before U; plane indexes 1 and 2 are still U and V in vpx_image_t.
        let planes = [(image.planes.0, image.stride.0, width, height, 0),
                      (image.planes.1, image.stride.1, frame.chromaWidth, frame.chromaHeight, frame.uOffset),
                      (image.planes.2, image.stride.2, frame.chromaWidth, frame.chromaHeight, frame.vOffset)]
        let ok = frame.data.withUnsafeMutableBufferPointer { dst -> Bool in
            guard let dstBase = dst.baseAddress else { return false }
            for (src, stride, w, h, offset) in planes {
                guard let src, Int(stride) >= w else { return false }
                for row in 0..<h {
                    (dstBase + offset + row * w).update(from: src + row * Int(stride), count: w)
                }
            }
            return true
        }
        return ok ? frame : nil
    }
}
