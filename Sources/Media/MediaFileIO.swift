// Media file I/O shared by the readers and writers of this module (IVF, Ogg Opus, WAV,
// Y4M): MediaIOError, MediaFileDescriptor (POSIX open/pread/pwrite/write, no buffering),
// monotonic seconds and 128-bit rescaling.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
