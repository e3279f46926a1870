// IVFReader: reads VP8 frames (RFC 6386) from an IVF file, the libvpx container (layout
// in IVFHeader.swift), one `pread(2)` at a time, timestamps rescaled to 90 kHz.

import Bytes
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
