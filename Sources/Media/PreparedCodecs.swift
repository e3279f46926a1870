// PreparedCodecs: a VP8 encoder and decoder made ahead, while a call waits for its peer, and taken by the first track that needs one with the same settings.
import Dispatch
import Synchronization

/// Codecs made before a call needs them. libvpx takes 6 ms on a quiet core, and 20–37 ms
/// in a call's set-up (two processes, ICE and DTLS on this 2-core machine), to make a
/// 640x480 VP8 encoder: it allocates and clears ~9 MB. Made while the answerer waits for an
/// offer (or the offerer for its router), that work is off the set-up's path; the first
/// track with the same configuration takes it. Nothing else changes: a taken codec is
/// unused before, and a track that finds none makes its own as before.
///
/// Thread-safe: ``prepare(encoder:)`` and ``prepareDecoder()`` return at once and make the
/// codec on a background queue; ``takeEncoder(_:)`` and ``takeDecoder()`` from any thread.
public enum PreparedCodecs {
    private struct Store {
        var encoders: [VP8Encoder] = []
        var decoders: [VP8Decoder] = []
    }
    private static let store = Mutex(Store())
    /// Most codecs kept of each kind (a first call's tracks; a mesh makes the rest itself).
    public static let limit = 2

    /// Makes a VP8 encoder with `configuration` in the background (nothing when `limit`
    /// are already waiting, or libvpx refuses the configuration).
    public static func prepare(encoder configuration: VP8EncoderConfiguration) {
        DispatchQueue.global(qos: .utility).async {
            guard store.withLock({ $0.encoders.count < limit }), let encoder = try? VP8Encoder(configuration: configuration) else { return }
            store.withLock { s in if s.encoders.count < limit { s.encoders.append(encoder) } }
        }
    }

    /// Makes a VP8 decoder in the background (nothing when `limit` are already waiting).
    public static func prepareDecoder() {
        DispatchQueue.global(qos: .utility).async {
            guard store.withLock({ $0.decoders.count < limit }), let decoder = try? VP8Decoder() else { return }
            store.withLock { s in if s.decoders.count < limit { s.decoders.append(decoder) } }
        }
    }

    /// A prepared encoder with exactly `configuration`, if one is ready (it is the caller's).
    public static func takeEncoder(_ configuration: VP8EncoderConfiguration) -> VP8Encoder? {
        store.withLock { s in
            guard let i = s.encoders.firstIndex(where: { $0.configuration == configuration }) else { return nil }
            return s.encoders.remove(at: i)
        }
    }

    /// A prepared decoder, if one is ready (it is the caller's).
    public static func takeDecoder() -> VP8Decoder? {
        store.withLock { s in s.decoders.isEmpty ? nil : s.decoders.removeLast() }
    }
}
