// MatroskaWriter: VP8 video and Opus audio (RFC 6386, RFC 6716) into one WebM or Matroska file through libavformat's matroska muxer, as ffmpeg writes it — the only file that touches libavformat; clusters of at most 1 s written whole, so a killed process leaves a file players read to its last cluster.
import Bytes
import CAVFormat
import EventLoop
import Synchronization

/// Errors of ``MatroskaWriter``, naming the file.
public enum MatroskaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A libavformat call failed: which, its error text, the file.
    case libav(call: String, reason: String, path: String)
    /// A write after ``MatroskaWriter/close()``.
    case closed(path: String)
    /// A track index the writer was not made with.
    case noTrack(Int, path: String)

    public var description: String {
        switch self {
        case let .libav(call, reason, path): "Matroska \(path): \(call): \(reason)"
        case let .closed(path): "Matroska \(path): written after close"
        case let .noTrack(index, path): "Matroska \(path): no track \(index)"
        }
    }
}

/// Writes VP8 frames and Opus packets to one `.webm`, `.mkv` or `.mka` file (the muxer by
/// the extension: `webm` for `.webm`, else `matroska`), one track each as made.
///
/// - The file header goes out once every track's parameters are known: a video track's
///   size from its first key frame (frames before it are not written, a decoder could not
///   use them), an audio track's channel count from its first packet. Until then packets
///   wait, at most ``maximumWaiting`` (more are dropped and counted).
/// - Times are milliseconds on the file's timeline (the caller maps RTP time to it); each
///   track's are kept from going back.
/// - Clusters close every second and are written whole (`cluster_time_limit`), the file
///   flushed after each packet; ``close()`` writes the trailer (duration, cues), so ffprobe
///   reads the right duration.
///
/// Thread-safe: the muxer and the counts live in one `Mutex` (tracks may be fed from
/// different threads).
public final class MatroskaWriter: Sendable {
    /// What a track carries.
    public enum Track: Sendable, Equatable {
        /// VP8 video (size from the first key frame).
        case vp8
        /// Opus audio at 48 kHz (channels from the first packet's TOC, RFC 6716 §3.1).
        case opus
    }

    /// The file's path.
    public let path: String
    /// The tracks, in the order their indexes name them.
    public let tracks: [Track]
    /// libavformat's version ("59.27.100"): the loaded library's once a recording loaded
    /// it, else the one its headers describe, marked so.
    public static var libavformatVersion: String {
        func text(_ v: UInt32) -> String { "\(v >> 16).\(v >> 8 & 0xFF).\(v & 0xFF)" }
        guard loaded.withLock({ $0 }), case .success(let api) = library, let version = api.avformat_version else {
            return text(UInt32(peer_av_header_version)) + " (loaded for the first WebM/Matroska recording)"
        }
        return text(version())
    }

    /// libavformat's functions, loaded with dlopen the first time a writer is made (it and
    /// libavcodec bring about 110 shared libraries a call without such a recording never
    /// needs); every function is there once it loaded (peer_av_load checks each symbol).
    private static let library: Result<peer_av_api, MatroskaError> = {
        var api = peer_av_api()
        var failure: UnsafePointer<CChar>?
        guard peer_av_load(&api, &failure) == 0 else {
            return .failure(.libav(call: "dlopen(\(String(cString: peer_av_soname)))", reason: failure.map { String(cString: $0) } ?? "unknown", path: ""))
        }
        loaded.withLock { $0 = true }
        return .success(api)
    }()
    private static let loaded = Mutex(false)
    /// The loaded functions (a writer exists only once they loaded).
    private static var av: peer_av_api { (try? library.get()) ?? peer_av_api() }

    /// Most packets kept while the header waits for a track's parameters.
    public static let maximumWaiting = 2_000

    private struct Pending {
        let track: Int
        let data: [UInt8]
        let ms: Int64
        let key: Bool
    }

    private struct State {
        var context: UnsafeMutablePointer<AVFormatContext>?
        var started = false
        var closed = false
        var width: Int?, height: Int?, channels: Int?
        var waiting: [Pending] = []
        var last: [Int64?]
        var written: [Int]
        var dropped = 0
        var skippedBeforeKeyframe = 0
    }
    // @unchecked: the AVFormatContext pointer is only used with the lock held.
    private final class Box: @unchecked Sendable { let state: Mutex<State>; init(_ s: sending State) { state = Mutex(s) } }
    private let box: Box

    /// Creates the file (empty until the header can be written) for `tracks`.
    /// - Throws: ``MatroskaError/libav(call:reason:path:)`` when the muxer or the file
    ///   cannot be made (a missing directory, no permission).
    public init(path: String, tracks: [Track]) throws(MatroskaError) {
        self.path = path
        self.tracks = tracks
        let format = path.lowercased().hasSuffix(".webm") ? "webm" : "matroska"
        if case .failure(let error) = Self.library {
            guard case let .libav(call, reason, _) = error else { throw error }
            throw .libav(call: call, reason: reason, path: path)
        }
        Self.av.av_log_set_level!(Log.enabled(.debug) ? AV_LOG_INFO : AV_LOG_ERROR)  // libav's own stderr lines: errors only by default
        var context: UnsafeMutablePointer<AVFormatContext>?
        let made = Self.av.avformat_alloc_output_context2!(&context, nil, format, path)
        guard made >= 0, let context else { throw .libav(call: "Self.av.avformat_alloc_output_context2!(\(format))", reason: Self.text(made), path: path) }
        let opened = Self.av.avio_open!(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        guard opened >= 0 else {
            Self.av.avformat_free_context!(context)
            throw .libav(call: "avio_open", reason: Self.text(opened), path: path)
        }
        context.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
        context.pointee.max_interleave_delta = 1_000_000  // µs: a track that pauses (hold) holds the other up 1 s at most
        box = Box(State(context: context, last: Array(repeating: nil, count: tracks.count), written: Array(repeating: 0, count: tracks.count)))
    }

    deinit { try? close() }

    /// Packets written per track, in track order.
    public var packetsWritten: [Int] { box.state.withLock { $0.written } }
    /// Packets dropped while the header waited (over ``maximumWaiting``).
    public var droppedWaiting: Int { box.state.withLock { $0.dropped } }

    /// Writes a VP8 frame to video track `track` at `ms` on the file's timeline.
    /// - Throws: ``MatroskaError``: a closed writer, a track that is not video, libavformat.
    public func write(video frame: EncodedVideoFrame, track: Int, ms: Int64) throws(MatroskaError) {
        guard tracks.indices.contains(track), tracks[track] == .vp8 else { throw .noTrack(track, path: path) }
        try box.state.withLock { s throws(MatroskaError) in
            guard !s.closed else { throw MatroskaError.closed(path: path) }
            // The frame tag and a key frame's size, from the bytes (RFC 6386 §9.1).
            let tag = try? VP8FrameHeader(parsing: frame.data)
            if s.width == nil {
                guard let tag, tag.isKeyframe, let w = tag.width, let h = tag.height, w > 0, h > 0 else { s.skippedBeforeKeyframe += 1; return }
                s.width = w
                s.height = h
            }
            try take(&s, Pending(track: track, data: frame.data, ms: ms, key: tag?.isKeyframe ?? false))
        }
    }

    /// Writes an Opus packet to audio track `track` at `ms` on the file's timeline.
    /// - Throws: ``MatroskaError``: a closed writer, a track that is not audio, libavformat.
    public func write(audio packet: EncodedAudioFrame, track: Int, ms: Int64) throws(MatroskaError) {
        guard tracks.indices.contains(track), tracks[track] == .opus else { throw .noTrack(track, path: path) }
        try box.state.withLock { s throws(MatroskaError) in
            guard !s.closed else { throw MatroskaError.closed(path: path) }
            if s.channels == nil, let toc = packet.data.first { s.channels = toc & 0x04 != 0 ? 2 : 1 }
            try take(&s, Pending(track: track, data: packet.data, ms: ms, key: true))
        }
    }

    /// Writes the trailer (duration, cues) and closes the file; later calls do nothing. A
    /// file whose header never went out (no key frame came) is left empty.
    /// - Throws: ``MatroskaError/libav(call:reason:path:)``.
    public func close() throws(MatroskaError) {
        try box.state.withLock { s throws(MatroskaError) in
            guard !s.closed, let context = s.context else { return }
            s.closed = true
            s.context = nil
            defer {
                _ = Self.av.avio_closep!(&context.pointee.pb)
                Self.av.avformat_free_context!(context)
            }
            guard s.started else { return }
            let flushed = Self.av.av_interleaved_write_frame!(context, nil)
            let done = Self.av.av_write_trailer!(context)
            guard flushed >= 0, done >= 0 else { throw MatroskaError.libav(call: "av_write_trailer", reason: Self.text(min(flushed, done)), path: path) }
        }
    }

    // MARK: With the lock held

    private func take(_ s: inout State, _ p: Pending) throws(MatroskaError) {
        if !s.started {
            let ready = tracks.allSatisfy { $0 == .vp8 ? s.width != nil : s.channels != nil }
            guard ready else {
                if s.waiting.count < Self.maximumWaiting { s.waiting.append(p) } else { s.dropped += 1 }
                return
            }
            do { try start(&s) } catch {
                // Never tried again on a context that refused: the writer is done.
                if let context = s.context {
                    _ = Self.av.avio_closep!(&context.pointee.pb)
                    Self.av.avformat_free_context!(context)
                }
                s.context = nil
                s.closed = true
                s.waiting = []
                throw error
            }
            let waiting = s.waiting
            s.waiting = []
            for w in waiting { try mux(&s, w) }
        }
        try mux(&s, p)
    }

    private func start(_ s: inout State) throws(MatroskaError) {
        guard let context = s.context else { throw .closed(path: path) }
        for track in tracks {
            guard let stream = Self.av.avformat_new_stream!(context, nil), let par = stream.pointee.codecpar else {
                throw .libav(call: "avformat_new_stream", reason: "out of memory", path: path)
            }
            stream.pointee.time_base = AVRational(num: 1, den: 1000)
            switch track {
            case .vp8:
                par.pointee.codec_type = AVMEDIA_TYPE_VIDEO
                par.pointee.codec_id = AV_CODEC_ID_VP8
                par.pointee.width = Int32(s.width ?? 0)
                par.pointee.height = Int32(s.height ?? 0)
            case .opus:
                let channels = s.channels ?? 2
                par.pointee.codec_type = AVMEDIA_TYPE_AUDIO
                par.pointee.codec_id = AV_CODEC_ID_OPUS
                par.pointee.sample_rate = 48_000
                Self.av.av_channel_layout_default!(&par.pointee.ch_layout, Int32(channels))
                // OpusHead (RFC 7845 §5.1), pre-skip 0: the packets are a live stream's.
                let head = OpusHead(channels: channels, preSkip: 0, inputSampleRate: 48_000).bytes
                guard let extra = Self.av.av_mallocz!(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
                    throw .libav(call: "av_mallocz", reason: "out of memory", path: path)
                }
                extra.update(from: head, count: head.count)
                par.pointee.extradata = extra
                par.pointee.extradata_size = Int32(head.count)
            }
        }
        var options: OpaquePointer?
        _ = Self.av.av_dict_set!(&options, "cluster_time_limit", "1000", 0)  // ms: a cluster a second
        defer { Self.av.av_dict_free!(&options) }
        let written = Self.av.avformat_write_header!(context, &options)
        guard written >= 0 else { throw .libav(call: "avformat_write_header", reason: Self.text(written), path: path) }
        s.started = true
    }

    private func mux(_ s: inout State, _ p: Pending) throws(MatroskaError) {
        guard let context = s.context, let streams = context.pointee.streams, let stream = streams[p.track] else { throw .closed(path: path) }
        let ms = max(p.ms, s.last[p.track] ?? p.ms)  // never back
        s.last[p.track] = ms
        guard let packet = Self.av.av_packet_alloc!() else { throw .libav(call: "av_packet_alloc", reason: "out of memory", path: path) }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { Self.av.av_packet_free!(&packetPointer) }
        let made = Self.av.av_new_packet!(packet, Int32(p.data.count))
        guard made >= 0, let data = packet.pointee.data else { throw .libav(call: "av_new_packet", reason: Self.text(made), path: path) }
        data.update(from: p.data, count: p.data.count)
        let tb = stream.pointee.time_base
        let ts = Self.av.av_rescale_q!(ms, AVRational(num: 1, den: 1000), tb)
        packet.pointee.pts = ts
        packet.pointee.dts = ts
        packet.pointee.stream_index = Int32(p.track)
        if p.key { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        let result = Self.av.av_interleaved_write_frame!(context, packet)
        guard result >= 0 else { throw .libav(call: "av_interleaved_write_frame", reason: Self.text(result), path: path) }
        s.written[p.track] += 1
    }

    /// libav's text for error `code`.
    private static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        _ = Self.av.av_strerror!(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + " (\(code))"
    }
}
