// Libraries: facts about this module's codec and container libraries (libvpx, libopus, libogg versions).
import COgg
import COpus
import CVPX

/// Facts about the codec and container libraries of this module.
public enum MediaLibraries {
    /// libvpx's run-time version, "MAJOR.MINOR.PATCH" (`vpx_codec_version()`, packed 0xMMmmpp).
    public static var vpxVersion: String {
        let v = vpx_codec_version()
        return "\((v >> 16) & 0xff).\((v >> 8) & 0xff).\(v & 0xff)"
    }

    /// libopus's run-time version text, e.g. "libopus 1.3.1" (`opus_get_version_string()`).
    public static var opusVersionText: String {
        guard let text = opus_get_version_string() else { return "unknown" }
        return String(cString: text)
    }

    /// libopus's version, "MAJOR.MINOR[.PATCH]", taken from ``opusVersionText``.
    public static var opusVersion: String {
        opusVersionText.split(separator: " ").last.map(String.init) ?? "unknown"
    }

    /// The name of libvpx's VP8 encoder interface (`vpx_codec_iface_name`), e.g.
    /// "WebM Project VP8 Encoder v1.12.0": proves the VP8 encoder is compiled in.
    public static var vp8EncoderName: String {
        guard let iface = vpx_codec_vp8_cx(), let name = vpx_codec_iface_name(iface) else { return "none" }
        return String(cString: name)
    }

    /// Writes and reads back one empty Ogg page through libogg: returns the page's
    /// serial number as libogg parsed it (equals `serial` when libogg works).
    public static func oggRoundTrip(serial: Int32) -> Int32 {
        var stream = ogg_stream_state()
        guard ogg_stream_init(&stream, serial) == 0 else { return -1 }
        defer { ogg_stream_clear(&stream) }
        var bytes: [UInt8] = [1, 2, 3]
        let count = bytes.count
        return bytes.withUnsafeMutableBufferPointer { buf -> Int32 in
            var packet = ogg_packet(packet: buf.baseAddress, bytes: count, b_o_s: 1, e_o_s: 0,
                                    granulepos: 0, packetno: 0)
            guard ogg_stream_packetin(&stream, &packet) == 0 else { return -1 }
            var page = ogg_page()
            guard ogg_stream_flush(&stream, &page) != 0 else { return -1 }
            return ogg_page_serialno(&page)
        }
    }

    /// The library versions this module links, name → version (libogg has no version call).
    public static var libraryVersions: [String: String] {
        ["libvpx": vpxVersion, "libopus": opusVersion, "libavformat": MatroskaWriter.libavformatVersion]
    }
}
