// WAV: the RIFF WAVE reader and writer for 16-bit PCM (a source and a sink).
import Foundation
import Bytes
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// WAV (RIFF WAVE) with 16-bit PCM at 48 kHz, 1 or 2 channels, little-endian:
//
//    0  "RIFF", 4-byte size of everything after these 8 bytes, "WAVE"
//   12  "fmt " chunk, 16 bytes: format tag (1 = PCM), channels, sample rate,
//       byte rate (rate × block align), block align (channels × 2), bits per sample (16)
//   36  "data" chunk: its byte count, then interleaved samples (L R L R …)
//
// Chunks are padded to an even size. The reader also takes WAVE_FORMAT_EXTENSIBLE
// (tag 0xFFFE) whose sub-format is PCM, and skips chunks it does not know.

/// Errors of ``WAVReader`` and ``WAVWriter``; each names the offending value and where.
public enum WAVError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// The file does not start with "RIFF" (`found`: its first bytes, at most 4, as text).
    case notRIFF(found: String)
    /// The RIFF form type at byte 8 is not "WAVE".
    case notWAVE(found: String)
    /// The "fmt " chunk at byte `offset` is shorter than 16 bytes (`size`).
    case shortFormatChunk(offset: Int64, size: Int64)
    /// A format tag other than 1 (PCM); for WAVE_FORMAT_EXTENSIBLE (0xFFFE), the sub-format's tag
    /// (e.g. 3 for IEEE float). `offset`: byte offset of the "fmt " chunk (0 when not from a file).
    case unsupportedFormatTag(Int, offset: Int64 = 0)
    /// A sample rate (Hz) other than 48000; `offset`: byte offset of the "fmt " chunk (0 when not from a file).
    case unsupportedSampleRate(Int, offset: Int64 = 0)
    /// A sample size (bits) other than 16; `offset`: byte offset of the "fmt " chunk (0 when not from a file).
    case unsupportedBitDepth(Int, offset: Int64 = 0)
    /// A channel count other than 1 or 2; `offset`: byte offset of the "fmt " chunk, 0 when
    /// not from a file (``WAVWriter/init(path:channels:sizeUpdateInterval:maxGapSamples:)``).
    case unsupportedChannelCount(Int, offset: Int64 = 0)
    /// The chunk `id` at byte `offset` declares `size` bytes but only `bytesLeft` follow (not for "data").
    case chunkBeyondEnd(id: String, offset: Int64, size: Int64, bytesLeft: Int64)
    /// The file has no "fmt " chunk before its end or its "data" chunk.
    case missingFormatChunk
    /// The file has no "data" chunk.
    case missingDataChunk
    /// ``WAVWriter/write(_:)`` got a frame with `got` channels for a file of `expected`.
    case channelMismatch(expected: Int, got: Int)
    /// ``WAVWriter/write(_:)`` after ``WAVWriter/close()``.
    case closed(path: String)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "WAV: \(e)"
        case let .notRIFF(f): return "WAV: not a RIFF file (starts with \"\(f)\")"
        case let .notWAVE(f): return "WAV: RIFF form \"\(f)\", expected WAVE"
        case let .shortFormatChunk(o, s): return "WAV: fmt chunk at byte \(o) has \(s) bytes, need 16"
        case let .unsupportedFormatTag(t, o): return "WAV: fmt chunk at byte \(o): format tag \(t) not supported, only 1 (PCM)"
        case let .unsupportedSampleRate(r, o): return "WAV: fmt chunk at byte \(o): sample rate \(r) Hz not supported, only 48000"
        case let .unsupportedBitDepth(b, o): return "WAV: fmt chunk at byte \(o): \(b) bits per sample not supported, only 16"
        case let .unsupportedChannelCount(c, o):
            return o > 0 ? "WAV: fmt chunk at byte \(o): \(c) channels not supported, only 1 or 2"
                         : "WAV: \(c) channels not supported, only 1 or 2"
        case let .chunkBeyondEnd(id, o, s, left): return "WAV: chunk \"\(id)\" at byte \(o) declares \(s) bytes, \(left) left"
        case .missingFormatChunk: return "WAV: no fmt chunk before the data"
        case .missingDataChunk: return "WAV: no data chunk"
        case let .channelMismatch(e, g): return "WAV: frame has \(g) channels, file has \(e)"
        case let .closed(p): return "WAV: \(p) is closed"
        }
    }
}

// MARK: - Writer

/// Writes 16-bit PCM at 48 kHz (1 or 2 channels) to one WAV file.
///
/// - The 44-byte header is written at once; the RIFF and data sizes are rewritten when a
///   write finds the last rewrite at least `sizeUpdateInterval` seconds old, and on
///   ``close()`` and `deinit` (sizes clamp at 4 GiB − 1).
/// - Each frame's samples go to the file in one `write(2)`.
/// - When a frame's timestamp (48 kHz) is after the end of the previous one, the gap
///   (up to `maxGapSamples`) is written as silence so the file keeps the true duration,
///   in writes of at most one second from one reused buffer; a frame at or before that
///   end is appended as is.
///
/// Thread-safe: the file and the counts live in one `Mutex`, which serializes calls.
public final class WAVWriter: Sendable {
    /// The file's path.
    public let path: String
    /// Channels in the file (1 or 2).
    public let channels: Int
    /// Seconds between size rewrites while writing (default 1).
    public let sizeUpdateInterval: Double
    /// Longest timestamp gap (48 kHz samples) filled with silence.
    public let maxGapSamples: Int64
    private let state: Mutex<State>

    /// The file and what has been written to it.
    fileprivate struct State {
        let path: String
        let channels: Int
        let sizeUpdateInterval: Double
        let maxGapSamples: Int64
        let file: MediaFileDescriptor
        var dataBytes: Int64 = 0
        var lastSizeWrite: Double
        var nextTimestamp: Int64?
        /// Zeros for gap silence, at most one second, reused.
        var silence: [UInt8] = []
        var largestAppend = 0
    }

    /// Largest single append so far in bytes (tests: gap silence is written in pieces).
    var largestAppend: Int { state.withLock { $0.largestAppend } }

    /// Samples per channel written so far (gap silence included).
    public var samplesPerChannelWritten: Int64 { state.withLock { $0.dataBytes } / Int64(2 * channels) }

    /// The 44-byte header of a 16-bit 48 kHz PCM file of `channels` and `dataBytes`.
    public static func header(channels: Int, dataBytes: Int64) -> [UInt8] {
        let data = UInt32(clamping: dataBytes)
        var w = ByteWriter(capacity: 44)
        w.append(Array("RIFF".utf8))
        w.u32le(UInt32(clamping: Int64(data) + 36))
        w.append(Array("WAVEfmt ".utf8))
        w.u32le(16)
        w.u16le(1)
        w.u16le(UInt16(truncatingIfNeeded: channels))
        w.u32le(UInt32(AudioFrame.sampleRate))
        w.u32le(UInt32(AudioFrame.sampleRate * channels * 2))
        w.u16le(UInt16(truncatingIfNeeded: channels * 2))
        w.u16le(16)
        w.append(Array("data".utf8))
        w.u32le(data)
        return w.bytes
    }

    /// Creates (or truncates) `path` and writes the header for no samples.
    /// Throws ``WAVError/unsupportedChannelCount(_:)``, ``WAVError/io(_:)``.
    public init(path: String, channels: Int, sizeUpdateInterval: Double = 1.0,
                maxGapSamples: Int64 = 48_000 * 600) throws(WAVError) {
        guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(channels) }
        self.path = path
        self.channels = channels
        self.sizeUpdateInterval = sizeUpdateInterval
        self.maxGapSamples = maxGapSamples
        let file: MediaFileDescriptor
        do throws(MediaIOError) {
            file = try MediaFileDescriptor(path: path, writing: true)
            try file.append(WAVWriter.header(channels: channels, dataBytes: 0))
        } catch { throw .io(error) }
        state = Mutex(State(path: path, channels: channels, sizeUpdateInterval: sizeUpdateInterval,
                            maxGapSamples: maxGapSamples, file: file, lastSizeWrite: mediaMonotonicSeconds()))
    }

    deinit { state.withLock { try? $0.close() } }

    /// Appends one block of samples. Throws ``WAVError/channelMismatch(expected:got:)``,
    /// ``WAVError/closed(path:)``, ``WAVError/io(_:)``.
    public func write(_ frame: AudioFrame) throws(WAVError) {
        try state.withLock { s throws(WAVError) in try s.write(frame) }
    }

    /// Rewrites the sizes and closes the file; later calls do nothing. Throws ``WAVError/io(_:)``.
    public func close() throws(WAVError) {
        try state.withLock { s throws(WAVError) in try s.close() }
    }
}

extension WAVWriter.State {
    mutating func write(_ frame: AudioFrame) throws(WAVError) {
        guard file.isOpen else { throw .closed(path: path) }
        guard frame.channels == channels else { throw .channelMismatch(expected: channels, got: frame.channels) }
        var gap: Int64 = 0
        if let expected = nextTimestamp, frame.timestamp > expected, frame.timestamp - expected <= maxGapSamples {
            gap = frame.timestamp - expected
        }
        if gap > 0 { try writeSilence(samplesPerChannel: gap) }
        var w = ByteWriter(capacity: frame.samples.count * 2)
        for s in frame.samples { w.u16le(UInt16(bitPattern: s)) }
        try append(w.bytes)
        nextTimestamp = max(nextTimestamp ?? .min, frame.timestamp + Int64(frame.samplesPerChannel))
        let now = mediaMonotonicSeconds()
        if now - lastSizeWrite >= sizeUpdateInterval {
            try writeSizes()
            lastSizeWrite = now
        }
    }

    /// Appends `bytes` and counts them.
    mutating func append(_ bytes: [UInt8]) throws(WAVError) {
        do throws(MediaIOError) { try file.append(bytes) } catch { throw .io(error) }
        dataBytes += Int64(bytes.count)
        largestAppend = max(largestAppend, bytes.count)
    }

    /// Writes `samplesPerChannel` of silence in writes of at most one second, from one
    /// reused zero buffer (a 10-minute gap of stereo is 115 MB: never allocated at once).
    mutating func writeSilence(samplesPerChannel: Int64) throws(WAVError) {
        let bytesPerSample = Int64(2 * channels)
        var left = samplesPerChannel * bytesPerSample
        let chunk = Int(min(left, Int64(AudioFrame.sampleRate) * bytesPerSample))
        if silence.count < chunk { silence = [UInt8](repeating: 0, count: chunk) }
        while left > 0 {
            let n = Int(min(left, Int64(silence.count)))
            try append(n == silence.count ? silence : Array(silence.prefix(n)))
            left -= Int64(n)
        }
    }

    func writeSizes() throws(WAVError) {
        var riff = ByteWriter(capacity: 4), data = ByteWriter(capacity: 4)
        riff.u32le(UInt32(clamping: dataBytes + 36))
        data.u32le(UInt32(clamping: dataBytes))
        do throws(MediaIOError) {
            try file.write(riff.bytes, at: 4)
            try file.write(data.bytes, at: 40)
        } catch { throw .io(error) }
    }

    /// Rewrites the sizes and closes the file; later calls do nothing.
    func close() throws(WAVError) {
        guard file.isOpen else { return }
        defer { try? file.close() }
        try writeSizes()
        do throws(MediaIOError) { try file.close() } catch { throw .io(error) }
    }
}

// MARK: - Reader

/// The fields of a "fmt " chunk body the reader checks (RIFF WAVE, little-endian).
struct WAVFormat: Equatable {
    /// Format tag (1 = PCM); for WAVE_FORMAT_EXTENSIBLE (0xFFFE) with its 26+ bytes, the
    /// sub-format GUID's first two bytes.
    var tag: Int
    /// Channels.
    var channels: Int
    /// Samples per second per channel (Hz).
    var sampleRate: Int
    /// Bits per sample.
    var bitsPerSample: Int

    /// Parses the chunk body `f` (without its 8-byte chunk header) of the chunk at byte `offset`.
    /// Throws ``WAVError/shortFormatChunk(offset:size:)`` when `f` has fewer than 16 bytes.
    init(parsing f: [UInt8], offset: Int64) throws(WAVError) {
        var r = ByteReader(f)
        do throws(ByteReaderError) {
            tag = Int(try r.u16le("format tag"))
            channels = Int(try r.u16le("channels"))
            sampleRate = Int(try r.u32le("sample rate"))
            try r.skip(6, "byte rate and block align")
            bitsPerSample = Int(try r.u16le("bits per sample"))
            if tag == 0xFFFE && f.count >= 26 {
                try r.skip(8, "cbSize, valid bits, channel mask")
                tag = Int(try r.u16le("sub-format tag"))
            }
        } catch {
            throw .shortFormatChunk(offset: offset, size: Int64(f.count))
        }
    }
}

/// Reads a 16-bit PCM 48 kHz WAV file (1 or 2 channels) in blocks of a requested size.
///
/// Unknown chunks are skipped. A data chunk running past the end of the file (a killed
/// writer, or a streamed file with size 0 or 0xFFFFFFFF) is tolerated: the whole samples
/// present are read.
public final class WAVReader {
    /// The file's path.
    public let path: String
    /// Channels (1 or 2).
    public let channels: Int
    /// Sample rate in Hz (always 48000).
    public let sampleRate: Int
    /// Samples per channel in the file.
    public let totalSamplesPerChannel: Int64
    /// Byte offset of the first sample.
    public let dataOffset: Int64
    /// When true, ``read(samplesPerChannel:)`` starts over at the end (timestamps keep increasing).
    public var loop: Bool
    private let file: MediaFileDescriptor
    private var position: Int64 = 0   // samples per channel into the data
    private var timestamp: Int64 = 0  // 48 kHz ticks of the next block

    /// Opens and checks `path`. Throws ``WAVError/notRIFF(found:)``, ``WAVError/notWAVE(found:)``,
    /// ``WAVError/unsupportedFormatTag(_:)``, ``WAVError/unsupportedSampleRate(_:)``,
    /// ``WAVError/unsupportedBitDepth(_:)``, ``WAVError/unsupportedChannelCount(_:)``,
    /// ``WAVError/shortFormatChunk(offset:size:)``, ``WAVError/chunkBeyondEnd(id:offset:size:bytesLeft:)``,
    /// ``WAVError/missingFormatChunk``, ``WAVError/missingDataChunk``, ``WAVError/io(_:)``.
    public init(path: String, loop: Bool = false) throws(WAVError) {
        self.path = path
        self.loop = loop
        let size: Int64
        let start: [UInt8]
        do throws(MediaIOError) {
            file = try MediaFileDescriptor(path: path, writing: false)
            size = try file.size()
            start = try file.read(at: 0, count: 12)
        } catch { throw .io(error) }
        guard start.count >= 4, Array(start[0..<4]) == Array("RIFF".utf8) else {
            throw .notRIFF(found: String(decoding: start.prefix(4), as: UTF8.self))
        }
        guard start.count == 12, Array(start[8..<12]) == Array("WAVE".utf8) else {
            throw .notWAVE(found: String(decoding: start.dropFirst(8), as: UTF8.self))
        }
        var offset: Int64 = 12
        var format: (channels: Int, rate: Int)?
        while true {
            let chunk: [UInt8]
            do throws(MediaIOError) { chunk = try file.read(at: offset, count: 8) } catch { throw .io(error) }
            guard chunk.count == 8 else { throw format == nil ? .missingFormatChunk : .missingDataChunk }
            var header = ByteReader(chunk)
            let id: String, declared: Int64
            do throws(ByteReaderError) {
                id = String(decoding: try header.take(4, "chunk id"), as: UTF8.self)
                declared = Int64(try header.u32le("chunk size"))
            } catch { throw format == nil ? .missingFormatChunk : .missingDataChunk }
            let left = size - offset - 8
            if id == "data" {
                guard let format else { throw .missingFormatChunk }
                var bytes = declared
                if bytes == 0 || bytes == 0xFFFF_FFFF || bytes > left { bytes = left }
                channels = format.channels
                sampleRate = format.rate
                dataOffset = offset + 8
                totalSamplesPerChannel = bytes / Int64(2 * channels)
                return
            }
            guard declared <= left else { throw .chunkBeyondEnd(id: id, offset: offset, size: declared, bytesLeft: left) }
            if id == "fmt " {
                guard declared >= 16 else { throw .shortFormatChunk(offset: offset, size: declared) }
                let f: [UInt8]
                do throws(MediaIOError) { f = try file.read(at: offset + 8, count: Int(min(declared, 40))) } catch { throw .io(error) }
                let fmt = try WAVFormat(parsing: f, offset: offset)
                guard fmt.tag == 1 else { throw .unsupportedFormatTag(fmt.tag, offset: offset) }
                guard fmt.bitsPerSample == 16 else { throw .unsupportedBitDepth(fmt.bitsPerSample, offset: offset) }
                guard fmt.sampleRate == AudioFrame.sampleRate else { throw .unsupportedSampleRate(fmt.sampleRate, offset: offset) }
                guard fmt.channels == 1 || fmt.channels == 2 else { throw .unsupportedChannelCount(fmt.channels, offset: offset) }
                let (ch, rate) = (fmt.channels, fmt.sampleRate)
                format = (ch, rate)
            }
            offset += 8 + declared + (declared & 1)
        }
    }

    /// The next block of up to `samplesPerChannel` samples per channel (the last block may be
    /// shorter), its timestamp in 48 kHz ticks from the start; nil at the end (never with
    /// ``loop``, unless the file has no samples). Throws ``WAVError/io(_:)``.
    public func read(samplesPerChannel: Int) throws(WAVError) -> AudioFrame? {
        guard samplesPerChannel > 0 else { return nil }
        if position >= totalSamplesPerChannel {
            guard loop, totalSamplesPerChannel > 0 else { return nil }
            position = 0
        }
        let n = min(Int64(samplesPerChannel), totalSamplesPerChannel - position)
        let block = Int64(2 * channels)
        let bytes: [UInt8]
        do throws(MediaIOError) {
            bytes = try file.read(at: dataOffset + position * block, count: Int(n * block))
        } catch { throw .io(error) }
        let whole = bytes.count / Int(block) * Int(block)
        var samples = [Int16](repeating: 0, count: whole / 2)
        var r = ByteReader(bytes)
        do throws(ByteReaderError) {
            for i in 0..<samples.count { samples[i] = Int16(bitPattern: try r.u16le("sample")) }
        } catch { return nil }  // unreachable: `whole` ≤ bytes.count
        guard !samples.isEmpty, let frame = try? AudioFrame(channels: channels, samples: samples, timestamp: timestamp) else {
            return nil
        }
        position += Int64(frame.samplesPerChannel)
        timestamp += Int64(frame.samplesPerChannel)
        return frame
    }

    /// Goes back to the first sample (timestamps start again at 0).
    public func rewind() {
        position = 0
        timestamp = 0
    }
}
