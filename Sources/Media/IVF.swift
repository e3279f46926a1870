import Foundation
import Bytes
#if canImport(Glibc)
import Glibc
#endif

// IVF: the simple VP8 container of libvpx (vpxenc/vpxdec). Layout, all little-endian:
//
//   file header, 32 bytes
//     0  4  signature "DKIF"
//     4  2  version (0)
//     6  2  header size in bytes (32)
//     8  4  FourCC ("VP80")
//    12  2  width in pixels
//    14  2  height in pixels
//    16  4  time base denominator, "rate" (90000 here: ticks per second)
//    20  4  time base numerator, "scale" (1 here: a tick is scale/rate seconds)
//    24  4  frame count
//    28  4  unused (0)
//   then per frame, a 12-byte frame header and the frame:
//     0  4  frame size in bytes
//     4  8  timestamp (presentation time in time-base ticks)
//    12  …  the VP8 frame (RFC 6386)

// MARK: - File I/O shared by the readers and writers of this module

/// A failed system call on a media file: the path, the operation and `errno`.
public struct MediaIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file's path.
    public let path: String
    /// What was being done: "open", "write", "read", "stat", "close".
    public let operation: String
    /// The system error number (`errno`).
    public let code: Int32

    /// One line: the operation, the path and the system's text for `code`.
    public var description: String { "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))" }
}

/// One open file descriptor with whole-buffer reads and writes (no user-space
/// buffering: every write is a `write(2)`/`pwrite(2)` straight to the file, so a
/// killed process leaves everything it wrote).
final class MediaFileDescriptor {
    let path: String
    private(set) var fd: Int32

    /// Opens `path` for reading (`writing == false`) or creates/truncates it for writing.
    init(path: String, writing: Bool) throws(MediaIOError) {
        self.path = path
        let flags = writing ? (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw MediaIOError(path: path, operation: "open", code: errno) }
        self.fd = fd
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    var isOpen: Bool { fd >= 0 }

    /// The file's size in bytes.
    func size() throws(MediaIOError) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw MediaIOError(path: path, operation: "stat", code: errno) }
        return Int64(st.st_size)
    }

    /// Appends `bytes` at the end (one `write(2)`, repeated only for a partial write).
    func append(_ bytes: [UInt8]) throws(MediaIOError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress.map { $0 + done }, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaIOError(path: path, operation: "write", code: errno)
            }
            done += n
        }
    }

    /// Writes `bytes` at `offset` without moving the append position (`pwrite(2)`).
    func write(_ bytes: [UInt8], at offset: Int64) throws(MediaIOError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                pwrite(fd, raw.baseAddress.map { $0 + done }, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaIOError(path: path, operation: "write", code: errno)
            }
            done += n
        }
    }

    /// Up to `count` bytes from `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws(MediaIOError) -> [UInt8] {
        guard count > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaIOError(path: path, operation: "read", code: errno)
            }
            if n == 0 { break }
            done += n
        }
        if done < count { buffer.removeLast(count - done) }
        return buffer
    }

    /// Closes the descriptor (once; later calls do nothing).
    func close() throws(MediaIOError) {
        guard fd >= 0 else { return }
        let result = Glibc.close(fd)
        fd = -1
        guard result == 0 else { throw MediaIOError(path: path, operation: "close", code: errno) }
    }
}

extension NSLock {
    /// Runs `body` holding the lock, keeping its typed error.
    func mediaLocked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Monotonic seconds, for the writers' once-a-second header refresh.
func mediaMonotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// `value × numerator / denominator` without overflow (128-bit), clamped to Int64.
func mediaRescale(_ value: Int64, _ numerator: Int64, _ denominator: Int64) -> Int64 {
    guard denominator != 0 else { return 0 }
    let q = Int128(value) * Int128(numerator) / Int128(denominator)
    if q > Int128(Int64.max) { return .max }
    if q < Int128(Int64.min) { return .min }
    return Int64(q)
}

// MARK: - Header

/// The 32-byte IVF file header (field order in the comment at the top of IVF.swift).
public struct IVFHeader: Equatable, Sendable {
    /// Bytes in the file header.
    public static let size = 32
    /// Bytes in each frame header (32-bit size, 64-bit timestamp).
    public static let frameHeaderSize = 12

    /// Header version (bytes 4–5); 0.
    public var version: Int
    /// Header size in bytes (bytes 6–7); 32.
    public var headerSize: Int
    /// FourCC (bytes 8–11), e.g. "VP80".
    public var fourCC: String
    /// Width in pixels (bytes 12–13); 0 when the writer never saw a key frame.
    public var width: Int
    /// Height in pixels (bytes 14–15); 0 when the writer never saw a key frame.
    public var height: Int
    /// Time base denominator, ticks per second (bytes 16–19); 90000 for our files.
    public var timeBaseRate: UInt32
    /// Time base numerator (bytes 20–23): one tick is `timeBaseScale / timeBaseRate` s; 1 for our files.
    public var timeBaseScale: UInt32
    /// Frame count as the writer last recorded it (bytes 24–27).
    public var frameCount: UInt32

    /// A header from its fields.
    public init(version: Int = 0, headerSize: Int = IVFHeader.size, fourCC: String = "VP80", width: Int, height: Int,
                timeBaseRate: UInt32 = 90_000, timeBaseScale: UInt32 = 1, frameCount: UInt32) {
        self.version = version
        self.headerSize = headerSize
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.timeBaseRate = timeBaseRate
        self.timeBaseScale = timeBaseScale
        self.frameCount = frameCount
    }

    /// Parses and validates the first 32 bytes of a file.
    ///
    /// Throws ``IVFError/truncatedHeader(bytesFound:)`` for fewer than 32 bytes,
    /// ``IVFError/badSignature(found:)``, ``IVFError/unsupportedVersion(_:)`` (not 0),
    /// ``IVFError/badHeaderSize(_:)`` (below 32), ``IVFError/unsupportedFourCC(_:)``
    /// (anything but VP80), ``IVFError/badDimensions(width:height:)`` (above 16384) and
    /// ``IVFError/badTimeBase(rate:scale:)`` (a zero field).
    public init(parsing bytes: [UInt8]) throws(IVFError) {
        guard bytes.count >= IVFHeader.size else { throw .truncatedHeader(bytesFound: bytes.count) }
        var r = ByteReader(bytes)
        let count = bytes.count
        func take(_ n: Int, _ field: String) throws(IVFError) -> [UInt8] {
            do { return try r.take(n, field) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        func u16(_ field: String) throws(IVFError) -> Int {
            do { return Int(try r.u16le(field)) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        func u32(_ field: String) throws(IVFError) -> UInt32 {
            do { return try r.u32le(field) } catch { throw .truncatedHeader(bytesFound: count) }
        }
        let signature = try take(4, "IVF signature")
        guard signature == Array("DKIF".utf8) else { throw .badSignature(found: signature) }
        version = try u16("IVF version")
        guard version == 0 else { throw .unsupportedVersion(version) }
        headerSize = try u16("IVF header size")
        guard headerSize >= IVFHeader.size else { throw .badHeaderSize(headerSize) }
        fourCC = String(decoding: try take(4, "IVF FourCC"), as: UTF8.self)
        guard fourCC == "VP80" else { throw .unsupportedFourCC(fourCC) }
        width = try u16("IVF width")
        height = try u16("IVF height")
        guard width <= 16384, height <= 16384 else { throw .badDimensions(width: width, height: height) }
        timeBaseRate = try u32("IVF time base rate")
        timeBaseScale = try u32("IVF time base scale")
        guard timeBaseRate > 0, timeBaseScale > 0 else { throw .badTimeBase(rate: timeBaseRate, scale: timeBaseScale) }
        frameCount = try u32("IVF frame count")
    }

    /// The 32 header bytes (the unused last 4 are zero; the FourCC is padded or cut to 4 bytes).
    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: IVFHeader.size)
        w.append(Array("DKIF".utf8))
        w.u16le(UInt16(truncatingIfNeeded: version))
        w.u16le(UInt16(truncatingIfNeeded: headerSize))
        w.append(Array((Array(fourCC.utf8) + [0x20, 0x20, 0x20, 0x20]).prefix(4)))
        w.u16le(UInt16(truncatingIfNeeded: width))
        w.u16le(UInt16(truncatingIfNeeded: height))
        w.u32le(timeBaseRate)
        w.u32le(timeBaseScale)
        w.u32le(frameCount)
        w.u32le(0)
        return w.bytes
    }
}

// MARK: - Errors

/// Errors of ``IVFReader`` and ``IVFWriter``; each names the offending values and where.
public enum IVFError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// The file has fewer than the 32 header bytes.
    case truncatedHeader(bytesFound: Int)
    /// The first 4 bytes are not "DKIF".
    case badSignature(found: [UInt8])
    /// A header version other than 0.
    case unsupportedVersion(Int)
    /// A header size below 32 bytes.
    case badHeaderSize(Int)
    /// A codec other than VP8 ("VP80").
    case unsupportedFourCC(String)
    /// Header width or height above 16384.
    case badDimensions(width: Int, height: Int)
    /// A time base with a zero rate or scale.
    case badTimeBase(rate: UInt32, scale: UInt32)
    /// Frame `index` (0-based) at byte `offset` has only `bytesLeft` of its 12 header bytes.
    case truncatedFrameHeader(index: Int, offset: Int64, bytesLeft: Int64)
    /// Frame `index` at byte `offset` declares `size` bytes but only `bytesLeft` follow its header.
    case frameBeyondEnd(index: Int, offset: Int64, size: Int64, bytesLeft: Int64)
    /// Frame `index` at byte `offset` is not a VP8 frame: shorter than the 3-byte frame tag, or a key
    /// frame without the start code 9d 01 2a and size fields (RFC 6386 §9.1); `size` is its length.
    case badFrame(index: Int, offset: Int64, size: Int)
    /// ``IVFWriter/write(_:)`` after ``IVFWriter/close()``.
    case closed(path: String)
    /// Frame `index` at byte `offset` has timestamp `value` (in the file's time base) beyond
    /// ±2^53 ticks, in the file or once converted to 90 kHz (or, from a looping ``IVFSource``,
    /// its timestamp would pass the 64-bit range).
    case badTimestamp(index: Int, offset: Int64, value: Int64)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "IVF: \(e)"
        case let .truncatedHeader(n): return "IVF: truncated header, \(n) of 32 bytes"
        case let .badSignature(found):
            return "IVF: bad signature \(found.map { String(format: "%02x", $0) }.joined(separator: " ")), expected DKIF"
        case let .unsupportedVersion(v): return "IVF: header version \(v), expected 0"
        case let .badHeaderSize(s): return "IVF: header size \(s), expected 32"
        case let .unsupportedFourCC(f): return "IVF: codec FourCC \"\(f)\" not supported, only VP80"
        case let .badDimensions(w, h): return "IVF: header size \(w)x\(h) above 16384"
        case let .badTimeBase(r, s): return "IVF: time base \(s)/\(r) has a zero field"
        case let .truncatedFrameHeader(i, o, left): return "IVF: frame \(i) at byte \(o): \(left) of 12 frame-header bytes"
        case let .frameBeyondEnd(i, o, s, left):
            return "IVF: frame \(i) at byte \(o) declares \(s) bytes, only \(left) left in the file"
        case let .badFrame(i, o, s): return "IVF: frame \(i) at byte \(o) (\(s) bytes) is not a VP8 frame"
        case let .closed(p): return "IVF: \(p) is closed"
        case let .badTimestamp(i, o, v): return "IVF: frame \(i) at byte \(o) has timestamp \(v), beyond ±2^53 ticks"
        }
    }
}

// MARK: - Writer

/// Writes VP8 frames to one IVF file (time base 1/90000, FourCC VP80), like pion's
/// `ivfwriter`: it knows nothing of RTP.
///
/// - The header is written at once (size 0×0, 0 frames) and rewritten with the size of
///   the first key frame; frames before the first key frame are not written (a decoder
///   could not use them) but counted in ``framesSkippedBeforeKeyframe``.
/// - Each frame's 12-byte header and data go to the file in one `write(2)`.
/// - The header's frame count is rewritten when a write finds the last rewrite at least
///   `headerRewriteInterval` seconds old, every `headerRewriteInterval` seconds on a
///   ``MediaThread`` when frames were written since (so an idle writer's header is never
///   stale for long),
///   and on ``close()`` and `deinit`, so a killed process leaves a file vpxdec reads to its
///   last whole frame.
///
/// Thread-safe (a lock serializes calls).
public final class IVFWriter: @unchecked Sendable {
    /// The file's path.
    public let path: String
    /// Seconds between header frame-count rewrites while writing (default 1).
    public let headerRewriteInterval: Double
    private let lock = NSLock()
    private let file: MediaFileDescriptor
    private var header = IVFHeader(width: 0, height: 0, frameCount: 0)
    private var lastHeaderWrite: Double
    private var _framesWritten = 0
    private var _skipped = 0
    private var _bytes: Int64 = Int64(IVFHeader.size)
    private var started = false
    /// Frames were written since the header's frame count was last rewritten.
    private var dirty = false
    /// Where the rewrite every `headerRewriteInterval` s runs.
    private let refresher: MediaThread
    /// The refresher is this writer's own (stopped on close), not the caller's.
    private let ownsRefresher: Bool

    /// Frames written to the file so far.
    public var framesWritten: Int { lock.withLock { _framesWritten } }
    /// Frames given before the first key frame and not written.
    public var framesSkippedBeforeKeyframe: Int { lock.withLock { _skipped } }
    /// Bytes in the file so far (header included).
    public var bytesWritten: Int64 { lock.withLock { _bytes } }
    /// The header as last written (width and height from the first key frame).
    public var currentHeader: IVFHeader { lock.withLock { header } }

    /// Creates (or truncates) `path` and writes a header for 0 frames of size 0×0.
    /// The periodic header rewrite runs on `thread` (the receiving track's), or on a
    /// thread of the writer's own, ended by ``close()``, when it is nil.
    /// Throws ``IVFError/io(_:)``.
    public init(path: String, headerRewriteInterval: Double = 1.0, thread: MediaThread? = nil) throws(IVFError) {
        self.path = path
        self.headerRewriteInterval = headerRewriteInterval
        do {
            file = try MediaFileDescriptor(path: path, writing: true)
            try file.append(header.bytes)
        } catch { throw .io(error) }
        lastHeaderWrite = mediaMonotonicSeconds()
        refresher = thread ?? MediaThread(name: "peer.ivf.header")
        ownsRefresher = thread == nil
        scheduleRefresh()
    }

    deinit { try? closeLocked() }

    /// Queues the next ``refreshHeader()``, `headerRewriteInterval` (at least 10 ms) from now.
    private func scheduleRefresh() {
        let due = DispatchTime.now().uptimeNanoseconds + UInt64(max(0.01, headerRewriteInterval) * 1e9)
        refresher.async(atUptimeNanoseconds: due) { [weak self] in self?.refreshHeader() }
    }

    /// The periodic work: rewrite the frame count if frames were written since the last
    /// rewrite, and queue the next one while the file is open.
    private func refreshHeader() {
        lock.mediaLocked {
            guard file.isOpen else { return }
            if dirty {
                try? writeCount()
                lastHeaderWrite = mediaMonotonicSeconds()
            }
            scheduleRefresh()
        }
    }

    /// Appends one frame (its `timestamp`, 90 kHz ticks, becomes the IVF timestamp).
    ///
    /// The frame type comes from the data's P bit (RFC 6386 §9.1). Throws
    /// ``IVFError/badFrame(index:offset:size:)`` when the data is not a VP8 frame
    /// (index = frames written so far, offset = current file size),
    /// ``IVFError/closed(path:)`` after ``close()``, ``IVFError/io(_:)``.
    public func write(_ frame: EncodedVideoFrame) throws(IVFError) {
        try lock.mediaLocked { () throws(IVFError) in
            guard file.isOpen else { throw .closed(path: path) }
            guard let tag = try? VP8FrameHeader(parsing: frame.data) else {
                throw .badFrame(index: _framesWritten, offset: _bytes, size: frame.data.count)
            }
            if !started {
                guard tag.isKeyframe, let w = tag.width, let h = tag.height else { _skipped += 1; return }
                started = true
                header.width = w
                header.height = h
                do throws(MediaIOError) { try file.write(header.bytes, at: 0) } catch { throw .io(error) }
            }
            var w = ByteWriter(capacity: IVFHeader.frameHeaderSize + frame.data.count)
            w.u32le(UInt32(truncatingIfNeeded: frame.data.count))
            w.u64le(UInt64(bitPattern: frame.timestamp))
            w.append(frame.data)
            do throws(MediaIOError) { try file.append(w.bytes) } catch { throw .io(error) }
            _framesWritten += 1
            _bytes += Int64(w.bytes.count)
            dirty = true
            let now = mediaMonotonicSeconds()
            if now - lastHeaderWrite >= headerRewriteInterval {
                try writeCount()
                lastHeaderWrite = now
            }
        }
    }

    /// Rewrites the frame count (bytes 24–27) with the frames written.
    private func writeCount() throws(IVFError) {
        header.frameCount = UInt32(truncatingIfNeeded: _framesWritten)
        var count = ByteWriter(capacity: 4)
        count.u32le(header.frameCount)
        do throws(MediaIOError) { try file.write(count.bytes, at: 24) } catch { throw .io(error) }
        dirty = false
    }

    /// Rewrites the frame count and closes the file; later calls do nothing.
    /// Throws ``IVFError/io(_:)``.
    public func close() throws(IVFError) {
        try lock.mediaLocked { () throws(IVFError) in try closeLocked() }
    }

    private func closeLocked() throws(IVFError) {
        if ownsRefresher { refresher.stop() }
        guard file.isOpen else { return }
        defer { try? file.close() }
        try writeCount()
        do throws(MediaIOError) { try file.close() } catch { throw .io(error) }
    }
}

// MARK: - Reader

/// Reads VP8 frames from an IVF file one by one (`pread(2)`, nothing cached).
///
/// A header frame count that disagrees with the frames present is tolerated (a killed
/// writer leaves a stale one): ``countFrames()`` gives the actual count.
public final class IVFReader {
    /// The file's path.
    public let path: String
    /// The validated file header.
    public let header: IVFHeader
    /// The file size in bytes when opened.
    public let fileSize: Int64
    private let file: MediaFileDescriptor
    private var offset: Int64
    /// Frames returned by ``next()`` since opening or ``rewind()``.
    public private(set) var framesRead = 0
    /// Byte offset of the frame header of the frame ``next()`` returned last.
    private(set) var lastFrameOffset: Int64 = 0
    /// Largest timestamp magnitude accepted, in the file's ticks and in 90 kHz ticks: 2^53
    /// (exact in a Double, and far from Int64 overflow in any later sum or difference).
    public static let maximumTimestampMagnitude: Int64 = 1 << 53

    /// Opens `path` and validates its header (see ``IVFHeader/init(parsing:)`` for the errors).
    public init(path: String) throws(IVFError) {
        self.path = path
        do {
            file = try MediaFileDescriptor(path: path, writing: false)
            fileSize = try file.size()
            header = try IVFHeader(parsing: try file.read(at: 0, count: IVFHeader.size))
        } catch let e as IVFError {
            throw e
        } catch let e as MediaIOError {
            throw .io(e)
        } catch {
            throw .io(MediaIOError(path: path, operation: "read", code: EIO))
        }
        offset = Int64(header.headerSize)
    }

    /// The next frame, or nil at the end of the file.
    ///
    /// Its timestamp is converted from the file's time base to 90 kHz; `isKeyframe` comes from
    /// the P bit and key frames carry their width and height. Throws
    /// ``IVFError/truncatedFrameHeader(index:offset:bytesLeft:)``,
    /// ``IVFError/frameBeyondEnd(index:offset:size:bytesLeft:)``,
    /// ``IVFError/badFrame(index:offset:size:)``, ``IVFError/badTimestamp(index:offset:value:)``
    /// (beyond ±2^53 ticks in the file's time base or in 90 kHz), ``IVFError/io(_:)``.
    public func next() throws(IVFError) -> EncodedVideoFrame? {
        guard let (size, pts) = try frameHeader(at: offset) else { return nil }
        let dataOffset = offset + Int64(IVFHeader.frameHeaderSize)
        let data: [UInt8]
        do throws(MediaIOError) { data = try file.read(at: dataOffset, count: size) } catch { throw .io(error) }
        guard data.count == size else {
            throw .frameBeyondEnd(index: framesRead, offset: offset, size: Int64(size), bytesLeft: Int64(data.count))
        }
        guard let tag = try? VP8FrameHeader(parsing: data) else { throw .badFrame(index: framesRead, offset: offset, size: size) }
        let timestamp = mediaRescale(pts, 90_000 * Int64(header.timeBaseScale), Int64(header.timeBaseRate))
        let limit = IVFReader.maximumTimestampMagnitude
        guard (-limit...limit).contains(pts), (-limit...limit).contains(timestamp) else {
            throw .badTimestamp(index: framesRead, offset: offset, value: pts)
        }
        lastFrameOffset = offset
        offset = dataOffset + Int64(size)
        framesRead += 1
        return EncodedVideoFrame(data: data, isKeyframe: tag.isKeyframe, timestamp: timestamp,
                                 width: tag.width, height: tag.height)
    }

    /// The frame header at `at`: (size, timestamp in file ticks), nil at the end; checks the
    /// declared size against the bytes left.
    private func frameHeader(at: Int64) throws(IVFError) -> (Int, Int64)? {
        let left = fileSize - at
        if left <= 0 { return nil }
        let index = framesRead
        guard left >= Int64(IVFHeader.frameHeaderSize) else {
            throw .truncatedFrameHeader(index: index, offset: at, bytesLeft: left)
        }
        let bytes: [UInt8]
        do throws(MediaIOError) { bytes = try file.read(at: at, count: IVFHeader.frameHeaderSize) } catch { throw .io(error) }
        guard bytes.count == IVFHeader.frameHeaderSize else {
            throw .truncatedFrameHeader(index: index, offset: at, bytesLeft: Int64(bytes.count))
        }
        var r = ByteReader(bytes)
        let size: Int64, pts: UInt64
        do throws(ByteReaderError) {
            size = Int64(try r.u32le("IVF frame size"))
            pts = try r.u64le("IVF frame timestamp")
        } catch {
            throw .truncatedFrameHeader(index: index, offset: at, bytesLeft: Int64(bytes.count))
        }
        let after = left - Int64(IVFHeader.frameHeaderSize)
        guard size <= after else { throw .frameBeyondEnd(index: index, offset: at, size: size, bytesLeft: after) }
        return (Int(size), Int64(bitPattern: pts))
    }

    /// Goes back to the first frame.
    public func rewind() {
        offset = Int64(header.headerSize)
        framesRead = 0
    }

    /// The number of frames actually in the file, walking the frame headers (the reading
    /// position is kept). Throws the frame-header errors of ``next()``.
    public func countFrames() throws(IVFError) -> Int {
        let saved = (offset, framesRead)
        defer { (offset, framesRead) = saved }
        offset = Int64(header.headerSize)
        framesRead = 0
        while let (size, _) = try frameHeader(at: offset) {
            offset += Int64(IVFHeader.frameHeaderSize + size)
            framesRead += 1
        }
        return framesRead
    }

    /// All frames of the file at `path` (see ``next()`` for the errors).
    public static func readAll(path: String) throws(IVFError) -> [EncodedVideoFrame] {
        let reader = try IVFReader(path: path)
        var frames: [EncodedVideoFrame] = []
        while let f = try reader.next() { frames.append(f) }
        return frames
    }
}
