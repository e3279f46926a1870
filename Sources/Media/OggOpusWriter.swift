// OggOpusWriter: writes Opus packets (RFC 6716) to an Ogg Opus file (RFC 7845) through
// libogg (RFC 3533 pages).
//
// Stream layout written by OggOpusWriter:
//   page 0: OpusHead alone (b_o_s), granule position 0          (RFC 7845 §3, §5.1)
//   page 1: OpusTags alone, granule position 0                  (§5.2)
//   pages 2…: audio packets; a page's granule position is the total number of
//             48 kHz samples decodable from all packets completed on it, counted from
//             the stream's start and INCLUDING the pre-skip samples (§4); the
//             playback length is the last granule position minus the pre-skip (§4.5).
//   last page: e_o_s set (the last packet is held back so it can carry the flag).

import Bytes
import COgg
import COpus
import Foundation
import Synchronization

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
/// Thread-safe: the file, the libogg stream and the counts live in one `Mutex`, which
/// serializes calls.
public final class OggOpusWriter: Sendable {
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
    private let state: Mutex<State>

    /// The file, the libogg stream and what has been written.
    fileprivate struct State {
        let path: String
        let head: OpusHead
        let flushSamples: Int64
        let maxGapSamples: Int64
        let file: MediaFileDescriptor
        let stream: UnsafeMutablePointer<ogg_stream_state>
        var open = true
        var packetNumber: Int64 = 2
        var granule: Int64 = 0
        var lastFlushGranule: Int64 = 0
        var pending: [UInt8]?  // the last packet, held back for e_o_s
        var pendingSamples: Int64 = 0
        var nextTimestamp: Int64?
        var lastTOC: UInt8?
        var given = 0
        var packets = 0, gapPackets = 0, late = 0
    }

    /// Audio packets given and written (gap-fill packets not counted).
    public var packetsWritten: Int { state.withLock { $0.packets } }
    /// 1-byte loss packets written to fill timestamp gaps.
    public var gapPacketsWritten: Int { state.withLock { $0.gapPackets } }
    /// Packets dropped because their timestamp was before the end of the previous one.
    public var latePacketsDropped: Int { state.withLock { $0.late } }
    /// Granule position (48 kHz samples including pre-skip) after the packets handed to libogg;
    /// the held-back last packet is not included.
    public var granulePosition: Int64 { state.withLock { $0.granule } }

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
        let head = OpusHead(channels: channels, preSkip: preSkip)
        self.head = head
        let serial = serial ?? Int32.random(in: Int32.min...Int32.max)
        self.serial = serial
        self.flushSamples = flushSamples
        self.maxGapSamples = maxGapSamples
        let file: MediaFileDescriptor
        do throws(MediaIOError) { file = try MediaFileDescriptor(path: path, writing: true) } catch { throw .io(error) }
        var s = State(path: path, head: head, flushSamples: flushSamples, maxGapSamples: maxGapSamples,
                      file: file, stream: .allocate(capacity: 1))
        let initialized = ogg_stream_init(s.stream, serial) == 0
        if !initialized { s.open = false }  // deinit deallocates `stream` and skips the clear
        state = Mutex(s)
        // Every stored property is set from here on: a throw runs `deinit`.
        guard initialized else { throw .ogg(call: "ogg_stream_init") }
        try state.withLock { s throws(OggOpusError) in
            try s.packetIn(head.bytes, granule: 0, number: 0, bos: true, eos: false)
            try s.flushPages()
            try s.packetIn(OpusTags(comments: comments).bytes, granule: 0, number: 1, bos: false, eos: false)
            try s.flushPages()
        }
    }

    deinit {
        state.withLock { s in
            try? s.close()
            if s.open { ogg_stream_clear(s.stream) }
            s.stream.deallocate()
        }
    }

    /// Adds one Opus packet (see the type's comment for gaps and late packets).
    ///
    /// Throws ``OggOpusError/badPacket(index:timestamp:reason:)`` for an empty or malformed
    /// packet (nothing is written), ``OggOpusError/closed(path:)``, ``OggOpusError/io(_:)``,
    /// ``OggOpusError/ogg(call:)``.
    public func write(_ packet: EncodedAudioFrame) throws(OggOpusError) {
        try state.withLock { s throws(OggOpusError) in try s.write(packet) }
    }

    /// Writes the held-back last packet on a final page with e_o_s set and closes the
    /// file; later calls do nothing. With no audio at all, the final page holds one loss
    /// packet with granule position = pre-skip (zero playback samples).
    /// Throws ``OggOpusError/io(_:)``, ``OggOpusError/ogg(call:)``.
    public func close() throws(OggOpusError) {
        try state.withLock { s throws(OggOpusError) in try s.close() }
    }
}

extension OggOpusWriter.State {
    mutating func write(_ packet: EncodedAudioFrame) throws(OggOpusError) {
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
            if gap < 0 { late += 1; return }
            if gap >= 120 && gap <= maxGapSamples { try fillGap(gap) }
        }
        try submitPending(eos: false)
        pending = packet.data
        pendingSamples = Int64(samples)
        lastTOC = packet.data[0]
        nextTimestamp = packet.timestamp + Int64(samples)
        packets += 1
    }

    /// Writes loss packets covering `gap` samples (rounded down to 2.5 ms).
    mutating func fillGap(_ gap: Int64) throws(OggOpusError) {
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

    mutating func submitPending(eos: Bool) throws(OggOpusError) {
        guard let data = pending else { return }
        pending = nil
        try packetInAudio(data, samples: pendingSamples, eos: eos)
    }

    /// Hands one audio packet to libogg, writes full pages, and flushes once per `flushSamples`.
    mutating func packetInAudio(_ data: [UInt8], samples: Int64, eos: Bool, isGap: Bool = false) throws(OggOpusError) {
        granule += samples
        if isGap { gapPackets += 1 }
        try packetIn(data, granule: granule, number: packetNumber, bos: false, eos: eos)
        packetNumber += 1
        if eos || granule - lastFlushGranule >= flushSamples {
            try flushPages()
            lastFlushGranule = granule
        } else {
            try pageOut()
        }
    }

    func packetIn(_ data: [UInt8], granule: Int64, number: Int64, bos: Bool, eos: Bool) throws(OggOpusError) {
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
    func pageOut() throws(OggOpusError) {
        var page = ogg_page()
        while ogg_stream_pageout(stream, &page) != 0 { try writePage(page) }
    }

    /// Writes every buffered packet as pages, the last one possibly short.
    func flushPages() throws(OggOpusError) {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try writePage(page) }
    }

    func writePage(_ page: ogg_page) throws(OggOpusError) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(page.header_len + page.body_len)
        if let h = page.header { bytes += UnsafeBufferPointer(start: h, count: page.header_len) }
        if let b = page.body { bytes += UnsafeBufferPointer(start: b, count: page.body_len) }
        do throws(MediaIOError) { try file.append(bytes) } catch { throw .io(error) }
    }

    /// Writes the held-back last packet with e_o_s set and closes the file; later calls do nothing.
    mutating func close() throws(OggOpusError) {
        guard open else { return }
        defer {
            open = false
            ogg_stream_clear(stream)
            try? file.close()
        }
        if pending != nil {
            try submitPending(eos: true)
        } else if packets == 0 {
            let stereo: UInt8 = head.channels == 2 ? 0x04 : 0
            try packetIn([UInt8(31 << 3) | stereo], granule: Int64(head.preSkip), number: packetNumber, bos: false, eos: true)
            try flushPages()
        } else {
            try flushPages()
        }
        do throws(MediaIOError) { try file.close() } catch { throw .io(error) }
    }
}
