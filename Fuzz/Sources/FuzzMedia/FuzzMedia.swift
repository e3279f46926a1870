// libFuzzer target for the Media module's file readers: IVF (IVFReader, IVFSource), Y4M
// (Y4MReader, Y4MSource), WAV (WAVReader, WAVSource) and Ogg Opus (OggOpusReader). The
// readers take a path, so each input is written once to a file in /dev/shm and every
// reader opens it; every frame and sample block a reader yields is consumed until it
// throws or ends. A crash here IS the finding: each check traps with fatalError naming
// the property that broke.
import Media
#if canImport(Glibc)
import Glibc
#endif

/// The one scratch file this process writes each input to (tmpfs: no disk I/O).
private let path: String = {
    let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(dir)/peer-fuzz-media-\(getpid())"
}()

/// Removes the scratch file when libFuzzer exits (registered on the first input).
private let removeAtExit: Bool = {
    atexit { unlink(path) }
    return true
}()

/// Frames pulled from a looping source: enough to go round a small file twice.
private let loopPulls = 64

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = removeAtExit
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    fixOggChecksums(&bytes)
    writeFile(bytes)
    checkIVF()
    checkY4M()
    checkWAV(blockSize: 1 + size % 997)
    checkOgg()
    return 0
}

/// Writes `bytes` to ``path``, replacing what was there.
private func writeFile(_ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("harness: cannot create \(path) (errno \(errno))") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress.map { $0 + done }, bytes.count - done) }
        guard n > 0 else { fatalError("harness: write to \(path) failed (errno \(errno))") }
        done += n
    }
}

// MARK: - IVF

private func checkIVF() {
    guard let reader = try? IVFReader(path: path) else { return }
    guard (try? IVFHeader(parsing: reader.header.bytes)) == reader.header else {
        fatalError("IVFHeader round trip changed the header \(reader.header)")
    }
    var frames: [EncodedVideoFrame] = []
    var ended = false
    do {
        while let frame = try reader.next() {
            frames.append(frame)
            guard !frame.data.isEmpty, frame.isKeyframe == (frame.width != nil), frame.isKeyframe == (frame.height != nil) else {
                fatalError("IVF frame \(frames.count - 1): \(frame.data.count) bytes, key frame \(frame.isKeyframe), size \(String(describing: frame.width))x\(String(describing: frame.height))")
            }
            guard abs(frame.timestamp) <= IVFReader.maximumTimestampMagnitude else {
                fatalError("IVF frame \(frames.count - 1): timestamp \(frame.timestamp) beyond 2^53")
            }
            guard reader.framesRead == frames.count else { fatalError("IVFReader.framesRead \(reader.framesRead) after \(frames.count) frames") }
        }
        ended = true
    } catch {}
    // A file read to its end has as many frames as countFrames() walks.
    if ended {
        guard let counted = try? reader.countFrames(), counted == frames.count else {
            fatalError("IVFReader.countFrames() disagrees with the \(frames.count) frames read")
        }
    }
    // rewind() starts again at the same first frame.
    reader.rewind()
    if let first = frames.first {
        guard let again = try? reader.next(), again == first else { fatalError("IVFReader after rewind() gives another first frame") }
    }
    // The looping source: timestamps are overflow-checked, so any error is a thrown one.
    guard let source = try? IVFSource(path: path, loop: true) else {
        fatalError("IVFSource refuses a file IVFReader opened")
    }
    _ = source.frameRate
    for _ in 0..<(frames.isEmpty ? 1 : loopPulls) {
        guard let next = try? source.nextFrame() else { break }
        guard case .encoded = next else { fatalError("IVFSource yielded a raw frame") }
    }
}

// MARK: - Y4M

private func checkY4M() {
    guard let reader = try? Y4MReader(path: path) else { return }
    let h = reader.header
    guard (1...16384).contains(h.width), (1...16384).contains(h.height), h.frameRateNumerator > 0, h.frameRateDenominator > 0 else {
        fatalError("Y4MHeader out of range: \(h)")
    }
    var count = 0
    var last = Int64.min
    while let frame = try? reader.next() {
        count += 1
        guard frame.width == h.width, frame.height == h.height, frame.data.count == reader.frameByteCount else {
            fatalError("Y4M frame \(count - 1) is \(frame.width)x\(frame.height) with \(frame.data.count) bytes, header \(h.width)x\(h.height)")
        }
        guard frame.timestamp >= last, frame.timestamp >= 0 else {
            fatalError("Y4M frame \(count - 1) timestamp \(frame.timestamp) after \(last)")
        }
        last = frame.timestamp
        guard reader.framesRead == count else { fatalError("Y4MReader.framesRead \(reader.framesRead) after \(count) frames") }
    }
    guard let source = try? Y4MSource(path: path, loop: true) else { fatalError("Y4MSource refuses a file Y4MReader opened") }
    _ = source.frameRate
    for _ in 0..<(count == 0 ? 1 : loopPulls) {
        guard let next = try? source.nextFrame() else { break }
        guard case .raw = next else { fatalError("Y4MSource yielded an encoded frame") }
    }
}

// MARK: - WAV

private func checkWAV(blockSize: Int) {
    guard let reader = try? WAVReader(path: path) else { return }
    guard reader.channels == 1 || reader.channels == 2, reader.sampleRate == 48_000, reader.totalSamplesPerChannel >= 0 else {
        fatalError("WAVReader opened \(reader.channels) channels at \(reader.sampleRate) Hz, \(reader.totalSamplesPerChannel) samples")
    }
    var read: Int64 = 0
    do {
        while let block = try reader.read(samplesPerChannel: blockSize) {
            guard block.channels == reader.channels, block.samplesPerChannel >= 1, block.samplesPerChannel <= blockSize,
                  block.samples.count == block.samplesPerChannel * block.channels else {
                fatalError("WAV block of \(block.samples.count) samples, \(block.channels) channels (asked \(blockSize))")
            }
            guard block.timestamp == read else { fatalError("WAV block timestamp \(block.timestamp) after \(read) samples") }
            read += Int64(block.samplesPerChannel)
        }
        guard read == reader.totalSamplesPerChannel else {
            fatalError("WAVReader ended after \(read) of \(reader.totalSamplesPerChannel) samples per channel")
        }
    } catch {}
    guard let source = try? WAVSource(path: path, loop: true) else { fatalError("WAVSource refuses a file WAVReader opened") }
    for _ in 0..<(read == 0 ? 1 : 8) {
        guard let frame = try? source.nextFrame(sampleCount: 960) else { break }
        guard frame.samplesPerChannel == 960, frame.channels == reader.channels else {
            fatalError("WAVSource frame of \(frame.samplesPerChannel) samples, \(frame.channels) channels")
        }
    }
}

// MARK: - Ogg Opus

private func checkOgg() {
    guard let reader = try? OggOpusReader(path: path) else { return }
    guard (try? OpusHead(parsing: reader.head.bytes)) == reader.head else {
        fatalError("OpusHead round trip changed the header \(reader.head)")
    }
    guard (try? OpusTags(parsing: reader.tags.bytes)) == reader.tags else {
        fatalError("OpusTags round trip changed the tags")
    }
    guard !reader.pageGranules.isEmpty, reader.finalGranulePosition == reader.pageGranules.last else {
        fatalError("OggOpusReader: final granule \(reader.finalGranulePosition) is not the last page's")
    }
    var bytes = 0
    for packet in reader.packets { bytes += packet.count }
    _ = reader.playbackSamples
}

/// Puts the right CRC (Ogg framing, RFC 3533 §6) into every complete page of `bytes`
/// whose checksum field is not zero, so that mutations get past libogg's check; a page
/// whose field is 0 keeps it (a wrong checksum, unless it happens to be right), so the
/// path of a page libogg rejects stays reachable.
private func fixOggChecksums(_ bytes: inout [UInt8]) {
    let n = bytes.count
    var i = 0
    while i + 27 <= n {
        guard bytes[i] == 0x4F, bytes[i + 1] == 0x67, bytes[i + 2] == 0x67, bytes[i + 3] == 0x53 else { i += 1; continue }
        let segments = Int(bytes[i + 26])
        let headerLength = 27 + segments
        guard i + headerLength <= n else { return }
        var bodyLength = 0
        for s in 0..<segments { bodyLength += Int(bytes[i + 27 + s]) }
        let end = i + headerLength + bodyLength
        guard end <= n else { i += 1; continue }
        if bytes[i + 22] | bytes[i + 23] | bytes[i + 24] | bytes[i + 25] != 0 {
            for k in 22..<26 { bytes[i + k] = 0 }
            var crc: UInt32 = 0
            for k in i..<end {
                crc = (crc << 8) ^ oggCRCTable[Int((crc >> 24) ^ UInt32(bytes[k]))]
            }
            for k in 0..<4 { bytes[i + 22 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        }
        i = end
    }
}

/// The Ogg CRC-32 table: polynomial 0x04C11DB7, not reflected, initial value 0.
private let oggCRCTable: [UInt32] = (0..<256).map { (index: UInt32) -> UInt32 in
    var r = index << 24
    for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
    return r
}
