// OggOpusReader: reads the first logical stream of an Ogg Opus file (RFC 7845) through
// libogg (RFC 3533 pages): the headers, the audio packets and the granule positions.

import COgg

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
