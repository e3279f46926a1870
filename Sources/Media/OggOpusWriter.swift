import COgg
import COpus
import Foundation
import Bytes
#if canImport(Glibc)
import Glibc
#endif

// Ogg Opus (RFC 7845) through libogg (RFC 3533 pages).
//
// Stream layout written by OggOpusWriter:
//   page 0: OpusHead alone (b_o_s), granule position 0          (RFC 7845 §3, §5.1)
//   page 1: OpusTags alone, granule position 0                  (§5.2)
//   pages 2…: audio packets; a page's granule position is the total number of
//             48 kHz samples decodable from all packets completed on it, counted from
//             the stream's start and INCLUDING the pre-skip samples (§4); the
//             playback length is the last granule position minus the pre-skip (§4.5).
//   last page: e_o_s set (the last packet is held back so it can carry the flag).

// MARK: - Headers

/// The OpusHead identification header (RFC 7845 §5.1), 19 bytes for mapping family 0.
public struct OpusHead: Equatable, Sendable {
    /// Version (1).
    public var version: Int
    /// Output channel count (1 or 2 for mapping family 0).
    public var channels: Int
    /// Pre-skip: 48 kHz samples to drop from the start of the decoded output (the encoder's lookahead).
    public var preSkip: Int
    /// Sample rate of the original input in Hz (informational; 48000 here).
    public var inputSampleRate: UInt32
    /// Output gain in Q7.8 dB (0 here).
    public var outputGain: Int16
    /// Channel mapping family (0: mono or stereo, no mapping table).
    public var mappingFamily: Int

    /// A header from its fields.
    public init(version: Int = 1, channels: Int, preSkip: Int, inputSampleRate: UInt32 = 48_000,
                outputGain: Int16 = 0, mappingFamily: Int = 0) {
        self.version = version
        self.channels = channels
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
        self.mappingFamily = mappingFamily
    }

    /// Parses an OpusHead packet. Throws ``OggOpusError/badOpusHead(_:)`` naming the problem
    /// (missing magic "OpusHead", shorter than 19 bytes, version not 1.x, channel count 0,
    /// more than 2 channels with mapping family 0 — RFC 7845 §5.1).
    public init(parsing p: [UInt8]) throws(OggOpusError) {
        guard p.count >= 19 else { throw .badOpusHead("\(p.count) bytes, need 19") }
        var r = ByteReader(p)
        guard p.starts(with: Array("OpusHead".utf8)) else { throw .badOpusHead("no OpusHead magic") }
        do throws(ByteReaderError) {
            try r.skip(8, "OpusHead magic")
            version = Int(try r.u8("version"))
            channels = Int(try r.u8("channel count"))
            preSkip = Int(try r.u16le("pre-skip"))
            inputSampleRate = try r.u32le("input sample rate")
            outputGain = Int16(bitPattern: try r.u16le("output gain"))
            mappingFamily = Int(try r.u8("channel mapping family"))
        } catch { throw .badOpusHead("\(error)") }
        guard version >> 4 == 0 else { throw .badOpusHead("version \(version)") }
        // RFC 7845 §5.1: the channel count "MUST NOT be zero"; family 0 allows 1 or 2.
        guard channels > 0 else { throw .badOpusHead("channel count 0 at byte 9") }
        guard mappingFamily != 0 || channels <= 2 else {
            throw .badOpusHead("channel count \(channels) at byte 9 with mapping family 0 (at most 2)")
        }
    }

    /// The header packet bytes (19 bytes; mapping family 0 has no mapping table).
    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: 19)
        w.append(Array("OpusHead".utf8))
        w.u8(UInt8(truncatingIfNeeded: version))
        w.u8(UInt8(truncatingIfNeeded: channels))
        w.u16le(UInt16(truncatingIfNeeded: preSkip))
        w.u32le(inputSampleRate)
        w.u16le(UInt16(bitPattern: outputGain))
        w.u8(UInt8(truncatingIfNeeded: mappingFamily))
        return w.bytes
    }
}

/// The OpusTags comment header (RFC 7845 §5.2): a vendor string and "NAME=value" comments.
public struct OpusTags: Equatable, Sendable {
    /// The vendor string ("peer" for our files).
    public var vendor: String
    /// User comments, each "NAME=value".
    public var comments: [String]

    /// Tags from their fields.
    public init(vendor: String = "peer", comments: [String] = []) {
        self.vendor = vendor
        self.comments = comments
    }

    /// Parses an OpusTags packet. Throws ``OggOpusError/badOpusTags(_:)`` naming the problem.
    public init(parsing p: [UInt8]) throws(OggOpusError) {
        guard p.count >= 16, Array(p[0..<8]) == Array("OpusTags".utf8) else { throw .badOpusTags("no OpusTags magic") }
        var r = ByteReader(p, offset: 8)
        func string() throws(OggOpusError) -> String {
            let at = r.offset
            let n: Int
            do { n = Int(try r.u32le("string length")) } catch { throw .badOpusTags("length field at byte \(at) beyond the packet") }
            do { return String(decoding: try r.take(n, "string"), as: UTF8.self) } catch {
                throw .badOpusTags("string of \(n) bytes at byte \(at) beyond the packet")
            }
        }
        vendor = try string()
        let count: Int
        do { count = Int(try r.u32le("comment count")) } catch { throw .badOpusTags("no comment count") }
        var list: [String] = []
        for _ in 0..<min(count, p.count) { list.append(try string()) }
        guard list.count == count else { throw .badOpusTags("comment count \(count) beyond the packet") }
        comments = list
    }

    /// The header packet bytes.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        w.append(Array("OpusTags".utf8))
        let v = Array(vendor.utf8)
        w.u32le(UInt32(v.count))
        w.append(v)
        w.u32le(UInt32(comments.count))
        for c in comments {
            let u = Array(c.utf8)
            w.u32le(UInt32(u.count))
            w.append(u)
        }
        return w.bytes
    }
}

// MARK: - Errors

/// Errors of ``OggOpusWriter`` and ``OggOpusReader``; each names the offending value.
public enum OggOpusError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(MediaIOError)
    /// A channel count other than 1 or 2.
    case badChannelCount(Int)
    /// A pre-skip outside 0…65535 samples.
    case badPreSkip(Int)
    /// Packet number `index` (0-based, of those given) at 48 kHz `timestamp` is not a valid Opus
    /// packet (RFC 6716 §3: empty, or libopus cannot count its samples; `reason` says which).
    case badPacket(index: Int, timestamp: Int64, reason: String)
    /// libogg refused a call (`call` names it).
    case ogg(call: String)
    /// ``OggOpusWriter/write(_:)`` after ``OggOpusWriter/close()``.
    case closed(path: String)
    /// The file holds no Ogg page.
    case noOggPages(path: String)
    /// The first packet is not a valid OpusHead.
    case badOpusHead(String)
    /// The second packet is not a valid OpusTags.
    case badOpusTags(String)

    /// One line naming the values.
    public var description: String {
        switch self {
        case let .io(e): return "Ogg Opus: \(e)"
        case let .badChannelCount(c): return "Ogg Opus: channel count \(c), expected 1 or 2"
        case let .badPreSkip(p): return "Ogg Opus: pre-skip \(p) outside 0…65535"
        case let .badPacket(i, t, r): return "Ogg Opus: packet \(i) at timestamp \(t): \(r)"
        case let .ogg(call): return "Ogg Opus: libogg \(call) failed"
        case let .closed(p): return "Ogg Opus: \(p) is closed"
        case let .noOggPages(p): return "Ogg Opus: \(p) has no Ogg page"
        case let .badOpusHead(r): return "Ogg Opus: bad OpusHead: \(r)"
        case let .badOpusTags(r): return "Ogg Opus: bad OpusTags: \(r)"
        }
    }
}

// MARK: - Writer

/// Writes Opus packets to one Ogg Opus file (RFC 7845) through libogg, like pion's
/// `oggwriter`: it knows nothing of RTP.
///
/// - OpusHead (version 1, mapping family 0, input rate 48000, gain 0) and OpusTags
///   (vendor "peer") are written at once, each on its own page; the serial is random.
/// - Packets are ``EncodedAudioFrame``s with 48 kHz timestamps; their duration is what
///   libopus counts in the packet (`opus_packet_get_nb_samples`). When a timestamp jumps
///   forward (lost packets, DTX) the gap is filled with 1-byte packets: the previous
///   packet's TOC byte with frame-count code 0 and no frame data, i.e. one zero-length
///   frame, which decoders treat as lost and conceal (RFC 6716 §3.2.1, RFC 7845 §4.1);
///   a remainder that the previous frame size does not cover is filled with CELT
///   fullband frames of 20/10/5/2.5 ms (configs 31…28). A rest below 2.5 ms (120
///   samples) is left out; gaps above `maxGapSamples` are not filled. A packet whose
///   timestamp is before the end of the previous one is dropped (``latePacketsDropped``).
/// - Granule positions count 48 kHz samples including pre-skip (RFC 7845 §4); pages go to
///   the file (header and body in one `write(2)`) whenever libogg fills one and at
///   least every `flushSamples` (default 48000 = 1 s) of audio.
/// - ``close()`` (and `deinit`) writes the last packet on a page with e_o_s set.
///
/// Thread-safe (a lock serializes calls).
public final class OggOpusWriter: @unchecked Sendable {
    /// The file's path.
    public let path: String
    /// The OpusHead written.
    public let head: OpusHead
    /// The Ogg stream serial number.
    public let serial: Int32
    /// Audio (48 kHz samples) after which the pages so far are flushed to the file.
    public let flushSamples: Int64
    /// Longest gap (48 kHz samples) filled with loss packets.
    public let maxGapSamples: Int64
    private let lock = NSLock()
    private let file: MediaFileDescriptor
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private var open = true
    private var packetNumber: Int64 = 2
    private var granule: Int64 = 0
    private var lastFlushGranule: Int64 = 0
    private var pending: [UInt8]?  // the last packet, held back for e_o_s
    private var pendingSamples: Int64 = 0
    private var nextTimestamp: Int64?
    private var lastTOC: UInt8?
    private var given = 0
    private var _packets = 0, _gapPackets = 0, _late = 0

    /// Audio packets given and written (gap-fill packets not counted).
    public var packetsWritten: Int { lock.mediaLocked { _packets } }
    /// 1-byte loss packets written to fill timestamp gaps.
    public var gapPacketsWritten: Int { lock.mediaLocked { _gapPackets } }
    /// Packets dropped because their timestamp was before the end of the previous one.
    public var latePacketsDropped: Int { lock.mediaLocked { _late } }
    /// Granule position (48 kHz samples including pre-skip) after the packets handed to libogg;
    /// the held-back last packet is not included.
    public var granulePosition: Int64 { lock.mediaLocked { granule } }

    /// Creates (or truncates) `path` and writes the OpusHead and OpusTags pages.
    ///
    /// `preSkip` is the encoder's lookahead in 48 kHz samples (312 for libopus at 48 kHz);
    /// `comments` are "NAME=value" OpusTags comments; `serial` nil picks a random one.
    /// Throws ``OggOpusError/badChannelCount(_:)``, ``OggOpusError/badPreSkip(_:)``,
    /// ``OggOpusError/ogg(call:)``, ``OggOpusError/io(_:)``.
    public init(path: String, channels: Int, preSkip: Int = 312, comments: [String] = [], serial: Int32? = nil,
                flushSamples: Int64 = 48_000, maxGapSamples: Int64 = 48_000 * 600) throws(OggOpusError) {
        guard channels == 1 || channels == 2 else { throw .badChannelCount(channels) }
        guard (0...65535).contains(preSkip) else { throw .badPreSkip(preSkip) }
        self.path = path
        self.head = OpusHead(channels: channels, preSkip: preSkip)
        self.serial = serial ?? Int32.random(in: Int32.min...Int32.max)
        self.flushSamples = flushSamples
        self.maxGapSamples = maxGapSamples
        do throws(MediaIOError) { file = try MediaFileDescriptor(path: path, writing: true) } catch { throw .io(error) }
        stream = .allocate(capacity: 1)
        guard ogg_stream_init(stream, self.serial) == 0 else {
            open = false  // deinit deallocates `stream` and skips the clear
            throw .ogg(call: "ogg_stream_init")
        }
        try packetIn(head.bytes, granule: 0, number: 0, bos: true, eos: false)
        try flushPages()
        try packetIn(OpusTags(comments: comments).bytes, granule: 0, number: 1, bos: false, eos: false)
        try flushPages()
    }

    deinit {
        try? closeLocked()
        if open { ogg_stream_clear(stream) }
        stream.deallocate()
    }

    /// Adds one Opus packet (see the type's comment for gaps and late packets).
    ///
    /// Throws ``OggOpusError/badPacket(index:timestamp:reason:)`` for an empty or malformed
    /// packet (nothing is written), ``OggOpusError/closed(path:)``, ``OggOpusError/io(_:)``,
    /// ``OggOpusError/ogg(call:)``.
    public func write(_ packet: EncodedAudioFrame) throws(OggOpusError) {
        try lock.mediaLocked { () throws(OggOpusError) in
            guard open else { throw .closed(path: path) }
            let index = given
            given += 1
            guard !packet.data.isEmpty else { throw .badPacket(index: index, timestamp: packet.timestamp, reason: "empty") }
            let samples = packet.data.withUnsafeBufferPointer { buf -> Int32 in
                guard let base = buf.baseAddress else { return -1 }
                return opus_packet_get_nb_samples(base, Int32(clamping: buf.count), 48_000)
            }
            guard samples > 0 else {
                throw .badPacket(index: index, timestamp: packet.timestamp,
                                 reason: "opus_packet_get_nb_samples returned \(samples)")
            }
            if let expected = nextTimestamp {
                let gap = packet.timestamp - expected
                if gap < 0 { _late += 1; return }
                if gap >= 120 && gap <= maxGapSamples { try fillGap(gap) }
            }
            try submitPending(eos: false)
            pending = packet.data
            pendingSamples = Int64(samples)
            lastTOC = packet.data[0]
            nextTimestamp = packet.timestamp + Int64(samples)
            _packets += 1
        }
    }

    /// Writes loss packets covering `gap` samples (rounded down to 2.5 ms).
    private func fillGap(_ gap: Int64) throws(OggOpusError) {
        try submitPending(eos: false)
        let stereo: UInt8 = head.channels == 2 ? 0x04 : 0
        var left = gap
        if let toc = lastTOC {
            let frame = Int64(OpusTOC.samplesPerFrame(config: toc >> 3))
            let lossTOC = toc & 0xFC  // same config and stereo flag, code 0
            while left >= frame {
                try packetInAudio([lossTOC], samples: frame, eos: false, isGap: true)
                left -= frame
            }
        }
        for (config, frame) in [(31, Int64(960)), (30, 480), (29, 240), (28, 120)] {
            while left >= frame {
                try packetInAudio([UInt8(config << 3) | stereo], samples: frame, eos: false, isGap: true)
                left -= frame
            }
        }
    }

    private func submitPending(eos: Bool) throws(OggOpusError) {
        guard let data = pending else { return }
        pending = nil
        try packetInAudio(data, samples: pendingSamples, eos: eos)
    }

    /// Hands one audio packet to libogg, writes full pages, and flushes once per `flushSamples`.
    private func packetInAudio(_ data: [UInt8], samples: Int64, eos: Bool, isGap: Bool = false) throws(OggOpusError) {
        granule += samples
        if isGap { _gapPackets += 1 }
        try packetIn(data, granule: granule, number: packetNumber, bos: false, eos: eos)
        packetNumber += 1
        if eos || granule - lastFlushGranule >= flushSamples {
            try flushPages()
            lastFlushGranule = granule
        } else {
            try pageOut()
        }
    }

    private func packetIn(_ data: [UInt8], granule: Int64, number: Int64, bos: Bool, eos: Bool) throws(OggOpusError) {
        var copy = data
        let count = copy.count
        let result = copy.withUnsafeMutableBufferPointer { buf -> Int32 in
            var packet = ogg_packet(packet: buf.baseAddress, bytes: count, b_o_s: bos ? 1 : 0, e_o_s: eos ? 1 : 0,
                                    granulepos: granule, packetno: number)
            return ogg_stream_packetin(stream, &packet)
        }
        guard result == 0 else { throw .ogg(call: "ogg_stream_packetin") }
    }

    /// Writes the pages libogg has completed.
    private func pageOut() throws(OggOpusError) {
        var page = ogg_page()
        while ogg_stream_pageout(stream, &page) != 0 { try writePage(page) }
    }

    /// Writes every buffered packet as pages, the last one possibly short.
    private func flushPages() throws(OggOpusError) {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try writePage(page) }
    }

    private func writePage(_ page: ogg_page) throws(OggOpusError) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(page.header_len + page.body_len)
        if let h = page.header { bytes += UnsafeBufferPointer(start: h, count: page.header_len) }
        if let b = page.body { bytes += UnsafeBufferPointer(start: b, count: page.body_len) }
        do throws(MediaIOError) { try file.append(bytes) } catch { throw .io(error) }
    }

    /// Writes the held-back last packet on a final page with e_o_s set and closes the
    /// file; later calls do nothing. With no audio at all, the final page holds one loss
    /// packet with granule position = pre-skip (zero playback samples).
    /// Throws ``OggOpusError/io(_:)``, ``OggOpusError/ogg(call:)``.
    public func close() throws(OggOpusError) {
        try lock.mediaLocked { () throws(OggOpusError) in try closeLocked() }
    }

    private func closeLocked() throws(OggOpusError) {
        guard open else { return }
        defer {
            open = false
            ogg_stream_clear(stream)
            try? file.close()
        }
        if pending != nil {
            try submitPending(eos: true)
        } else if _packets == 0 {
            let stereo: UInt8 = head.channels == 2 ? 0x04 : 0
            try packetIn([UInt8(31 << 3) | stereo], granule: Int64(head.preSkip), number: packetNumber, bos: false, eos: true)
            try flushPages()
        } else {
            try flushPages()
        }
        do throws(MediaIOError) { try file.close() } catch { throw .io(error) }
    }
}

// MARK: - Reader

/// A minimal Ogg Opus reader (libogg): the headers, the audio packets and the granule
/// positions of the first logical stream. Reads the whole file at once (for tests and
/// small files).
public struct OggOpusReader: Sendable {
    /// The OpusHead of the stream.
    public let head: OpusHead
    /// The OpusTags of the stream.
    public let tags: OpusTags
    /// The audio packets in order (headers excluded).
    public let packets: [[UInt8]]
    /// The stream's serial number.
    public let serial: Int32
    /// Granule position of each page, in file order (header pages included: 0).
    public let pageGranules: [Int64]
    /// The last page's granule position (48 kHz samples including pre-skip).
    public let finalGranulePosition: Int64
    /// True when the last page has e_o_s set.
    public let endOfStream: Bool
    /// Playback length in 48 kHz samples: final granule position − pre-skip (RFC 7845 §4.5).
    public var playbackSamples: Int64 { finalGranulePosition - Int64(head.preSkip) }

    /// Reads `path`. Throws ``OggOpusError/io(_:)``, ``OggOpusError/noOggPages(path:)``,
    /// ``OggOpusError/badOpusHead(_:)``, ``OggOpusError/badOpusTags(_:)``.
    public init(path: String) throws(OggOpusError) {
        let bytes: [UInt8]
        do throws(MediaIOError) {
            let file = try MediaFileDescriptor(path: path, writing: false)
            bytes = try file.read(at: 0, count: Int(try file.size()))
        } catch { throw .io(error) }
        var sync = ogg_sync_state()
        ogg_sync_init(&sync)
        defer { ogg_sync_clear(&sync) }
        if let buffer = ogg_sync_buffer(&sync, bytes.count), !bytes.isEmpty {
            bytes.withUnsafeBufferPointer { src in
                if let base = src.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: src.count) }
            }
            ogg_sync_wrote(&sync, bytes.count)
        }
        var stream = ogg_stream_state()
        var streamSerial: Int32?
        defer { if streamSerial != nil { ogg_stream_clear(&stream) } }
        var all: [[UInt8]] = [], granules: [Int64] = [], eos = false
        var page = ogg_page()
        while ogg_sync_pageout(&sync, &page) == 1 {
            let s = ogg_page_serialno(&page)
            if streamSerial == nil {
                ogg_stream_init(&stream, s)
                streamSerial = s
            }
            guard s == streamSerial else { continue }
            ogg_stream_pagein(&stream, &page)
            granules.append(ogg_page_granulepos(&page))
            eos = ogg_page_eos(&page) != 0
            var packet = ogg_packet()
            while ogg_stream_packetout(&stream, &packet) == 1 {
                all.append(packet.packet.map { Array(UnsafeBufferPointer(start: $0, count: packet.bytes)) } ?? [])
            }
        }
        guard let serial = streamSerial else { throw .noOggPages(path: path) }
        guard all.count >= 1 else { throw .badOpusHead("no packet") }
        head = try OpusHead(parsing: all[0])
        guard all.count >= 2 else { throw .badOpusTags("no second packet") }
        tags = try OpusTags(parsing: all[1])
        packets = Array(all.dropFirst(2))
        self.serial = serial
        pageGranules = granules
        finalGranulePosition = granules.last ?? 0
        endOfStream = eos
    }
}
