// VP8Encoder: a VP8 encoder over libvpx (RFC 6386) in real-time CBR mode, with key frames on request.
import CVPX
import Bytes
import Synchronization

/// Errors from the VP8 encoder and decoder over libvpx; each names the offending value.
public enum VP8CodecError: Error, Equatable, CustomStringConvertible {
    /// A configuration value outside its range: the field's name, the value, and the allowed range.
    case badConfiguration(field: String, value: Int, allowed: String)
    /// A frame of `actual` size given to an encoder configured for `expected` (width × height).
    case frameSizeMismatch(expected: String, actual: String)
    /// An empty buffer given to the decoder.
    case emptyInput
    /// An inter frame (frame tag P bit 1, RFC 6386 §9.1) reached the decoder before any key
    /// frame: it cannot be decoded; the receiver should ask for a key frame (PLI/FIR).
    case waitingForKeyframe(byteCount: Int)
    /// libvpx refused a call: the function, libvpx's error code, `vpx_codec_error` and
    /// `vpx_codec_error_detail` texts.
    case libvpx(function: String, code: Int, message: String, detail: String)

    /// One line naming the offending values.
    public var description: String {
        switch self {
        case let .badConfiguration(field, value, allowed):
            return "VP8 configuration \(field) = \(value), allowed \(allowed)"
        case let .frameSizeMismatch(expected, actual):
            return "VP8 frame is \(actual), the encoder is configured for \(expected)"
        case .emptyInput:
            return "VP8 decoder given 0 bytes"
        case let .waitingForKeyframe(count):
            return "VP8 inter frame (\(count) bytes) before the first key frame"
        case let .libvpx(function, code, message, detail):
            return "libvpx \(function) failed (\(code)): \(message)\(detail.isEmpty ? "" : " — \(detail)")"
        }
    }

    /// Builds ``libvpx(function:code:message:detail:)`` from a context's last error.
    static func from(_ function: String, _ code: vpx_codec_err_t, _ ctx: UnsafeMutablePointer<vpx_codec_ctx_t>?) -> VP8CodecError {
        var message = ""
        var detail = ""
        if let ctx {
            if let text = vpx_codec_error(ctx) { message = String(cString: text) }
            if let text = vpx_codec_error_detail(ctx) { detail = String(cString: text) }
        }
        if message.isEmpty, let text = vpx_codec_err_to_string(code) { message = String(cString: text) }
        return .libvpx(function: function, code: Int(code.rawValue), message: message, detail: detail)
    }
}

/// Settings of a ``VP8Encoder``: real-time, one pass, constant bit rate, no lag.
public struct VP8EncoderConfiguration: Sendable, Equatable {
    /// Frame width in pixels (1…16383, VP8's 14-bit field, RFC 6386 §9.1).
    public var width: Int
    /// Frame height in pixels (1…16383).
    public var height: Int
    /// Nominal frames per second (1…240): sets each frame's duration (90 000 / fps ticks)
    /// and the rate control's per-frame budget.
    public var frameRate: Int
    /// Target bit rate in kbit/s (`rc_target_bitrate`, CBR), 1…100 000.
    public var bitrateKbps: Int
    /// libvpx speed (`VP8E_SET_CPUUSED`), −16…16. Default −6, WebRTC's desktop setting: a
    /// negative value fixes the speed at |value| (repeatable output), a positive one lets
    /// libvpx change speed from frame to frame to meet the real-time deadline. Larger
    /// magnitudes are faster and lower in quality.
    public var cpuUsed: Int
    /// Error-resilient mode (`g_error_resilient`, on by default): frames do not depend on
    /// probability updates of earlier frames, so a loss damages only the frames that
    /// reference lost data.
    public var errorResilient: Bool
    /// Longest distance between key frames in frames (`kf_max_dist`, ≥ 1); libvpx may put
    /// key frames closer (scene cuts). Default 3000, as WebRTC.
    public var keyframeInterval: Int
    /// Encoder threads (`g_threads`, 1…8). Default 1: one thread keeps output repeatable
    /// and costs little at sizes up to 640×480; raise it for larger frames.
    public var threads: Int
    /// Lowest quantizer index (`rc_min_quantizer`, 0…63). Default 2 (WebRTC).
    public var minQuantizer: Int
    /// Highest quantizer index (`rc_max_quantizer`, `minQuantizer`…63). Default 56 (WebRTC).
    public var maxQuantizer: Int

    /// Creates a configuration; every field after `bitrateKbps` has a real-time default.
    public init(width: Int, height: Int, frameRate: Int = 30, bitrateKbps: Int = 500,
                cpuUsed: Int = -6, errorResilient: Bool = true, keyframeInterval: Int = 3000,
                threads: Int = 1, minQuantizer: Int = 2, maxQuantizer: Int = 56) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitrateKbps = bitrateKbps
        self.cpuUsed = cpuUsed
        self.errorResilient = errorResilient
        self.keyframeInterval = keyframeInterval
        self.threads = threads
        self.minQuantizer = minQuantizer
        self.maxQuantizer = maxQuantizer
    }

    /// Checks every field; throws ``VP8CodecError/badConfiguration(field:value:allowed:)`` naming the first bad one.
    func validate() throws(VP8CodecError) {
        func check(_ field: String, _ value: Int, _ range: ClosedRange<Int>) throws(VP8CodecError) {
            guard range.contains(value) else {
                throw .badConfiguration(field: field, value: value, allowed: "\(range.lowerBound)…\(range.upperBound)")
            }
        }
        try check("width", width, 1...16383)
        try check("height", height, 1...16383)
        try check("frameRate", frameRate, 1...240)
        try check("bitrateKbps", bitrateKbps, 1...100_000)
        try check("cpuUsed", cpuUsed, -16...16)
        try check("keyframeInterval", keyframeInterval, 1...Int(Int32.max))
        try check("threads", threads, 1...8)
        try check("minQuantizer", minQuantizer, 0...63)
        try check("maxQuantizer", maxQuantizer, minQuantizer...63)
    }
}

/// A real-time VP8 encoder (RFC 6386) over libvpx: one pass, CBR, no lag
/// (`g_lag_in_frames` 0), `VPX_DL_REALTIME`, time base 1/90 000 so that presentation
/// times are the 90 kHz RTP timestamps (RFC 7741 §4.1) of the frames given.
///
/// Frame dropping is off (`rc_dropframe_thresh` 0): each ``encode(_:forceKeyframe:)`` call
/// returns exactly the frame it was given, encoded. Frames must all have the configured
/// size; a different size throws ``VP8CodecError/frameSizeMismatch(expected:actual:)``
/// (make a new encoder for a new size: the next frame is then a key frame anyway).
///
/// Thread-safe: the libvpx context and its settings live in one `Mutex`, taken by every call.
public final class VP8Encoder: Sendable {
    /// The configuration in force (``setBitrate(kbps:)`` updates `bitrateKbps`).
    public var configuration: VP8EncoderConfiguration { state.withLock { $0.config } }

    private let state: Mutex<State>
    /// Tests only: a libvpx step to make fail (see ``VP8CodecFault``).
    private let fault: VP8CodecFault?

    /// The libvpx context and what configures it.
    fileprivate struct State {
        var config: VP8EncoderConfiguration
        let ctx: UnsafeMutablePointer<vpx_codec_ctx_t>
        /// True between a successful `vpx_codec_enc_init` and `vpx_codec_destroy`: `deinit`
        /// destroys the context only then, and frees `ctx` exactly once (also after a failed init,
        /// when Swift runs `deinit` because every stored property was already set).
        var isOpen = false
        var cfg = vpx_codec_enc_cfg_t()
        var keyframeRequested = false
    }

    /// Opens a libvpx VP8 encoder with `configuration`.
    ///
    /// Throws ``VP8CodecError/badConfiguration(field:value:allowed:)`` for a value out of
    /// range and ``VP8CodecError/libvpx(function:code:message:detail:)`` when libvpx refuses.
    public convenience init(configuration: VP8EncoderConfiguration) throws(VP8CodecError) {
        try self.init(configuration: configuration, fault: nil)
    }

    /// Opens an encoder, making the libvpx step `fault` fail when given (tests of the
    /// failure paths: libvpx itself never refuses a validated configuration).
    init(configuration: VP8EncoderConfiguration, fault: VP8CodecFault?) throws(VP8CodecError) {
        try configuration.validate()
        self.fault = fault
        let ctx = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        ctx.initialize(to: vpx_codec_ctx_t())
        state = Mutex(State(config: configuration, ctx: ctx))  // `ctx` is used through `state` only from here
        // On failure `deinit` runs (all stored properties are set) and frees `ctx`; nothing to do here.
        try state.withLock { s throws(VP8CodecError) in try s.open(fault: fault) }
    }

    deinit {
        state.withLock { s in
            if s.isOpen { vpx_codec_destroy(s.ctx) }
            s.ctx.deinitialize(count: 1)
            s.ctx.deallocate()
        }
    }

    /// Encodes one frame; returns the VP8 frames libvpx emitted for it (one, with lag 0 and
    /// frame dropping off), each with the input's 90 kHz timestamp, `isKeyframe` from
    /// `VPX_FRAME_IS_KEY`, and width/height read from a key frame's header (RFC 6386 §9.1).
    ///
    /// `forceKeyframe` (or an earlier ``requestKeyframe()``) makes this frame a key frame.
    /// Timestamps should grow by about `90 000 / frameRate` per frame: libvpx accepts any
    /// order, but its rate control budgets bits from the gaps (a long gap gives a big frame).
    /// Throws ``VP8CodecError/frameSizeMismatch(expected:actual:)`` when the frame's size is
    /// not the configured one, ``VP8CodecError/libvpx(function:code:message:detail:)`` when
    /// `vpx_codec_encode` fails.
    public func encode(_ frame: I420Frame, forceKeyframe: Bool = false) throws(VP8CodecError) -> [EncodedVideoFrame] {
        try state.withLock { s throws(VP8CodecError) in try s.encode(frame, forceKeyframe: forceKeyframe) }
    }

    /// Makes the next ``encode(_:forceKeyframe:)`` produce a key frame (after a PLI or FIR
    /// from the receiver, RFC 4585 §6.3.1).
    public func requestKeyframe() {
        state.withLock { $0.keyframeRequested = true }
    }

    /// Changes the target bit rate at run time (`vpx_codec_enc_config_set`); takes effect
    /// from the next frame. Throws ``VP8CodecError/badConfiguration(field:value:allowed:)``
    /// outside 1…100 000 kbit/s, ``VP8CodecError/libvpx(function:code:message:detail:)`` when
    /// libvpx refuses.
    public func setBitrate(kbps: Int) throws(VP8CodecError) {
        try state.withLock { s throws(VP8CodecError) in
            guard (1...100_000).contains(kbps) else {
                throw .badConfiguration(field: "bitrateKbps", value: kbps, allowed: "1…100000")
            }
            s.cfg.rc_target_bitrate = UInt32(kbps)
            let res = vpx_codec_enc_config_set(s.ctx, &s.cfg)
            guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_enc_config_set", res, s.ctx) }
            s.config.bitrateKbps = kbps
        }
    }

    /// Asks libvpx for any frames it still holds (none with lag 0) and returns them.
    /// Throws ``VP8CodecError/libvpx(function:code:message:detail:)`` when libvpx refuses.
    public func flush() throws(VP8CodecError) -> [EncodedVideoFrame] {
        try state.withLock { s throws(VP8CodecError) in
            let res = vpx_codec_encode(s.ctx, nil, -1, 0, 0, peer_vpx_dl_realtime)
            guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_encode(flush)", res, s.ctx) }
            return s.drain()
        }
    }

    /// The quantizer index (0…63) libvpx used for the last frame (`VP8E_GET_LAST_QUANTIZER_64`),
    /// nil when libvpx does not answer.
    public var lastQuantizer: Int? {
        state.withLock { s in
            var q: Int32 = 0
            return peer_vp8e_get_last_quantizer_64(s.ctx, &q) == VPX_CODEC_OK ? Int(q) : nil
        }
    }
}

extension VP8Encoder.State {
    /// Configures and opens the libvpx context (once, from `init`).
    mutating func open(fault: VP8CodecFault?) throws(VP8CodecError) {
        guard let iface = vpx_codec_vp8_cx() else {
            throw .libvpx(function: "vpx_codec_vp8_cx", code: -1, message: "no VP8 encoder in libvpx", detail: "")
        }
        var res = vpx_codec_enc_config_default(iface, &cfg, 0)
        guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_enc_config_default", res, nil) }
        cfg.g_w = UInt32(config.width)
        cfg.g_h = UInt32(config.height)
        cfg.g_timebase = vpx_rational(num: 1, den: 90_000)
        cfg.g_threads = UInt32(config.threads)
        cfg.g_pass = VPX_RC_ONE_PASS
        cfg.g_lag_in_frames = 0
        cfg.g_error_resilient = config.errorResilient ? vpx_codec_er_flags_t(peer_vpx_error_resilient_default) : 0
        cfg.rc_end_usage = VPX_CBR
        cfg.rc_target_bitrate = UInt32(config.bitrateKbps)
        cfg.rc_dropframe_thresh = 0
        cfg.rc_resize_allowed = 0
        cfg.rc_min_quantizer = UInt32(config.minQuantizer)
        cfg.rc_max_quantizer = UInt32(config.maxQuantizer)
        cfg.rc_undershoot_pct = 100
        cfg.rc_overshoot_pct = 15
        cfg.rc_buf_initial_sz = 500
        cfg.rc_buf_optimal_sz = 600
        cfg.rc_buf_sz = 1000
        cfg.kf_mode = VPX_KF_AUTO
        cfg.kf_min_dist = 0
        cfg.kf_max_dist = UInt32(config.keyframeInterval)
        res = fault == .initialize ? VPX_CODEC_MEM_ERROR : peer_vpx_codec_enc_init(ctx, iface, &cfg, 0)
        guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_enc_init", res, fault == nil ? ctx : nil) }
        isOpen = true
        // Controls as WebRTC's real-time VP8 encoder sets them.
        let ctx = self.ctx
        let cpuUsed = Int32(config.cpuUsed)
        let maxIntraPct = UInt32(max(300, 600 / 2 * config.frameRate / 10))
        let controls: [(String, () -> vpx_codec_err_t)] = [
            ("VP8E_SET_CPUUSED", { peer_vp8e_set_cpuused(ctx, cpuUsed) }),
            ("VP8E_SET_STATIC_THRESHOLD", { peer_vp8e_set_static_threshold(ctx, 1) }),
            ("VP8E_SET_NOISE_SENSITIVITY", { peer_vp8e_set_noise_sensitivity(ctx, 0) }),
            ("VP8E_SET_TOKEN_PARTITIONS", { peer_vp8e_set_token_partitions(ctx, 0) }),
            ("VP8E_SET_MAX_INTRA_BITRATE_PCT", { peer_vp8e_set_max_intra_bitrate_pct(ctx, maxIntraPct) }),
        ]
        for (name, call) in controls {
            let r = fault == .control(name) ? VPX_CODEC_INVALID_PARAM : call()
            guard r == VPX_CODEC_OK else {
                let error = VP8CodecError.from(name, r, ctx)
                vpx_codec_destroy(ctx)
                isOpen = false
                throw error
            }
        }
    }

    mutating func encode(_ frame: I420Frame, forceKeyframe: Bool) throws(VP8CodecError) -> [EncodedVideoFrame] {
        guard frame.width == config.width, frame.height == config.height, frame.data.count == frame.byteCount else {
            throw .frameSizeMismatch(expected: "\(config.width)x\(config.height)",
                                     actual: "\(frame.width)x\(frame.height) (\(frame.data.count) bytes)")
        }
        var flags: vpx_enc_frame_flags_t = 0
        if forceKeyframe || keyframeRequested { flags |= vpx_enc_frame_flags_t(peer_vpx_eflag_force_kf) }
        keyframeRequested = false
        let duration = UInt(max(1, 90_000 / config.frameRate))
        let ctx = self.ctx
        let res: vpx_codec_err_t = frame.data.withUnsafeBufferPointer { buf in
            guard let base = buf.baseAddress else { return VPX_CODEC_INVALID_PARAM }
            let bytes = UnsafeMutablePointer(mutating: base)
            var image = vpx_image_t()
            guard vpx_img_wrap(&image, VPX_IMG_FMT_I420, UInt32(frame.width), UInt32(frame.height), 1, bytes) != nil else {
                return VPX_CODEC_INVALID_PARAM
            }
            // Our planes are packed with no padding; vpx_img_wrap rounds odd sizes up, so set
            // the planes and strides explicitly.
            image.planes.0 = bytes
            image.planes.1 = bytes + frame.uOffset
            image.planes.2 = bytes + frame.vOffset
            image.stride.0 = Int32(frame.width)
            image.stride.1 = Int32(frame.chromaWidth)
            image.stride.2 = Int32(frame.chromaWidth)
            return vpx_codec_encode(ctx, &image, frame.timestamp, duration, flags, peer_vpx_dl_realtime)
        }
        guard res == VPX_CODEC_OK else { throw VP8CodecError.from("vpx_codec_encode", res, ctx) }
        return drain()
    }

    /// Takes every compressed-frame packet from `vpx_codec_get_cx_data`.
    func drain() -> [EncodedVideoFrame] {
        var out: [EncodedVideoFrame] = []
        var iter: vpx_codec_iter_t? = nil
        while let pkt = vpx_codec_get_cx_data(ctx, &iter) {
            guard pkt.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let f = pkt.pointee.data.frame
            guard let buf = f.buf, f.sz > 0 else { continue }
            let bytes = [UInt8](UnsafeRawBufferPointer(start: buf, count: f.sz))
            let isKey = (f.flags & vpx_codec_frame_flags_t(peer_vpx_frame_is_key)) != 0
            var encoded = EncodedVideoFrame(data: bytes, isKeyframe: isKey, timestamp: f.pts)
            if isKey, let header = try? VP8FrameHeader(parsing: bytes), header.isKeyframe {
                encoded.width = header.width
                encoded.height = header.height
            }
            out.append(encoded)
        }
        return out
    }
}

/// Tests only: a libvpx step the encoder or decoder makes fail, to exercise the error paths
/// of their initialisers (libvpx does not refuse a validated configuration by itself).
enum VP8CodecFault: Equatable {
    /// `vpx_codec_enc_init` / `vpx_codec_dec_init` fails (the context is never opened).
    case initialize
    /// The named control (e.g. "VP8E_SET_CPUUSED") fails after the context was opened.
    case control(String)
}
