// IVFWriter: writes VP8 frames (RFC 6386) to an IVF file, the libvpx container (layout
// in IVFHeader.swift), with the header's frame count kept fresh for a killed process.

import Bytes
import Foundation
import Synchronization

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
/// Thread-safe: the file and the counts live in one `Mutex`, which serializes calls.
public final class IVFWriter: Sendable {
    /// The file's path.
    public let path: String
    /// Seconds between header frame-count rewrites while writing (default 1).
    public let headerRewriteInterval: Double
    /// Where the rewrite every `headerRewriteInterval` s runs.
    private let refresher: MediaThread
    /// The refresher is this writer's own (stopped on close), not the caller's.
    private let ownsRefresher: Bool
    private let state: Mutex<State>

    /// The file and what has been written to it.
    fileprivate struct State {
        let path: String
        let headerRewriteInterval: Double
        let file: MediaFileDescriptor
        var header = IVFHeader(width: 0, height: 0, frameCount: 0)
        var lastHeaderWrite: Double
        var framesWritten = 0
        var skipped = 0
        var bytes: Int64 = Int64(IVFHeader.size)
        var started = false
        /// Frames were written since the header's frame count was last rewritten.
        var dirty = false
    }

    /// Frames written to the file so far.
    public var framesWritten: Int { state.withLock { $0.framesWritten } }
    /// Frames given before the first key frame and not written.
    public var framesSkippedBeforeKeyframe: Int { state.withLock { $0.skipped } }
    /// Bytes in the file so far (header included).
    public var bytesWritten: Int64 { state.withLock { $0.bytes } }
    /// The header as last written (width and height from the first key frame).
    public var currentHeader: IVFHeader { state.withLock { $0.header } }

    /// Creates (or truncates) `path` and writes a header for 0 frames of size 0×0.
    /// The periodic header rewrite runs on `thread` (the receiving track's), or on a
    /// thread of the writer's own, ended by ``close()``, when it is nil.
    /// Throws ``IVFError/io(_:)``.
    public init(path: String, headerRewriteInterval: Double = 1.0, thread: MediaThread? = nil) throws(IVFError) {
        self.path = path
        self.headerRewriteInterval = headerRewriteInterval
        let file: MediaFileDescriptor
        do {
            file = try MediaFileDescriptor(path: path, writing: true)
            try file.append(IVFHeader(width: 0, height: 0, frameCount: 0).bytes)
        } catch { throw .io(error) }
        state = Mutex(State(path: path, headerRewriteInterval: headerRewriteInterval, file: file,
                            lastHeaderWrite: mediaMonotonicSeconds()))
        refresher = thread ?? MediaThread(name: "peer.ivf.header")
        ownsRefresher = thread == nil
        scheduleRefresh()
    }

    deinit {
        if ownsRefresher { refresher.stop() }
        state.withLock { try? $0.close() }
    }

    /// Queues the next ``refreshHeader()``, `headerRewriteInterval` (at least 10 ms) from now.
    private func scheduleRefresh() {
        let due = DispatchTime.now().uptimeNanoseconds + UInt64(max(0.01, headerRewriteInterval) * 1e9)
        refresher.async(atUptimeNanoseconds: due) { [weak self] in self?.refreshHeader() }
    }

    /// The periodic work: rewrite the frame count if frames were written since the last
    /// rewrite, and queue the next one while the file is open.
    private func refreshHeader() {
        let open = state.withLock { s -> Bool in
            guard s.file.isOpen else { return false }
            if s.dirty {
                try? s.writeCount()
                s.lastHeaderWrite = mediaMonotonicSeconds()
            }
            return true
        }
        if open { scheduleRefresh() }
    }

    /// Appends one frame (its `timestamp`, 90 kHz ticks, becomes the IVF timestamp).
    ///
    /// The frame type comes from the data's P bit (RFC 6386 §9.1). Throws
    /// ``IVFError/badFrame(index:offset:size:)`` when the data is not a VP8 frame
    /// (index = frames written so far, offset = current file size),
    /// ``IVFError/closed(path:)`` after ``close()``, ``IVFError/io(_:)``.
    public func write(_ frame: EncodedVideoFrame) throws(IVFError) {
        try state.withLock { s throws(IVFError) in try s.write(frame) }
    }

    /// Rewrites the frame count and closes the file; later calls do nothing.
    /// Throws ``IVFError/io(_:)``.
    public func close() throws(IVFError) {
        if ownsRefresher { refresher.stop() }
        try state.withLock { s throws(IVFError) in try s.close() }
    }
}

extension IVFWriter.State {
    mutating func write(_ frame: EncodedVideoFrame) throws(IVFError) {
        guard file.isOpen else { throw .closed(path: path) }
        guard let tag = try? VP8FrameHeader(parsing: frame.data) else {
            throw .badFrame(index: framesWritten, offset: bytes, size: frame.data.count)
        }
        if !started {
            guard tag.isKeyframe, let w = tag.width, let h = tag.height else { skipped += 1; return }
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
        framesWritten += 1
        bytes += Int64(w.bytes.count)
        dirty = true
        let now = mediaMonotonicSeconds()
        if now - lastHeaderWrite >= headerRewriteInterval {
            try writeCount()
            lastHeaderWrite = now
        }
    }

    /// Rewrites the frame count (bytes 24–27) with the frames written.
    mutating func writeCount() throws(IVFError) {
        header.frameCount = UInt32(truncatingIfNeeded: framesWritten)
        var count = ByteWriter(capacity: 4)
        count.u32le(header.frameCount)
        do throws(MediaIOError) { try file.write(count.bytes, at: 24) } catch { throw .io(error) }
        dirty = false
    }

    /// Rewrites the frame count and closes the file; later calls do nothing.
    mutating func close() throws(IVFError) {
        guard file.isOpen else { return }
        defer { try? file.close() }
        try writeCount()
        do throws(MediaIOError) { try file.close() } catch { throw .io(error) }
    }
}
