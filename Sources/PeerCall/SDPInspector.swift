// SDPInspector: `peer sdp FILE [--answer]` — a session description described as JSON, or the answer peer would give (RFC 8866, RFC 8829).
import PeerAgent
import DTLS
import Foundation
import SDP

/// What `peer sdp FILE [--answer]` does, apart from file I/O: describe a session
/// description as JSON, or compute the answer `peer` would give to it.
public enum SDPInspector {
    /// The parsed description as pretty-printed JSON with sorted keys.
    /// - Throws: ``SDPError`` (line number, line, expectation) when `text` does not parse.
    public static func describe(_ text: String) throws -> String {
        let description = try SessionDescription(parsing: text)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(description), as: UTF8.self)
    }

    /// The SDP answer `peer` gives to the offer in `text`: audio (Opus) and video (VP8)
    /// tracks sendrecv, fresh ICE credentials and a fresh certificate's fingerprint.
    /// - Throws: ``SDPError`` for an unparsable offer, ``JSEPError`` for one that
    ///   cannot be answered, ``CertificateError`` if OpenSSL fails.
    public static func answer(_ text: String) throws -> String {
        let offer = try SessionDescription(parsing: text)
        let certificate = try Certificate.shared()
        let options = LocalDescriptionOptions.fresh(fingerprint: Fingerprint(algorithm: "sha-256", value: try certificate.fingerprint()))
        return try JSEP.createAnswer(to: offer, options).serialized()
    }
}

extension LocalDescriptionOptions {
    /// Random ids for a new session (RFC 8829 §5.2.1 session id < 2^62; RFC 8839 §5.4
    /// ufrag of 8 and pwd of 24 ice-chars) with one audio and one video track, sendrecv.
    public static func fresh(fingerprint: Fingerprint, audio: Direction? = .sendrecv,
                             video: Direction? = .sendrecv) -> LocalDescriptionOptions {
        let streamId = UUID().uuidString.lowercased()
        let cname = randomIceChars(16)
        var tracks: [LocalTrack] = []
        if let audio {
            tracks.append(LocalTrack(kind: .audio, direction: audio, ssrc: UInt32.random(in: 1...UInt32.max),
                                     cname: cname, streamId: streamId, trackId: UUID().uuidString.lowercased()))
        }
        if let video {
            tracks.append(LocalTrack(kind: .video, direction: video, ssrc: UInt32.random(in: 1...UInt32.max),
                                     cname: cname, streamId: streamId, trackId: UUID().uuidString.lowercased()))
        }
        return LocalDescriptionOptions(sessionId: UInt64.random(in: 1..<(1 << 62)), iceUfrag: randomIceChars(8),
                                       icePwd: randomIceChars(24), fingerprints: [fingerprint], tracks: tracks)
    }
}
