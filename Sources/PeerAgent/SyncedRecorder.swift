// SyncedRecorder: a peer's audio and video in one WebM/Matroska file (`--record`), in sync — each track's RTP time mapped to the sender's NTP clock through its RTCP sender reports (RFC 3550 §6.4.1), both on one timeline.
import Foundation
import Media
import Synchronization

/// The sender's clock as its last RTCP sender report gave it: at NTP time `ntpSeconds`
/// (seconds since 1900) its stream was at `ticks` (the stream's clock, counted from the
/// first timestamp received).
public struct SenderClock: Sendable, Equatable {
    /// The report's NTP time, seconds since 1900 (RFC 3550 §4).
    public var ntpSeconds: Double
    /// The stream's time then, in its clock's ticks (90 kHz video, 48 kHz audio), counted
    /// from its first timestamp received.
    public var ticks: Int64
}

/// Records the audio and video a peer sends into one `.mkv` or `.webm` (``MatroskaWriter``),
/// their times on one timeline: a frame's time is its sender's NTP time, from the stream's
/// RTP timestamp through that stream's sender report (RFC 3550 §6.4.1), so lip sync is
/// the sender's, whatever each stream's network delay.
///
/// - Frames wait (at most ``maximumWaiting``) until the timeline can be fixed: every stream
///   seen has had a sender report and both kinds came, or 2 s passed with the reports of
///   the ones seen. After ``fallbackSeconds`` without them each stream is placed by when
///   its first frame arrived instead (then the sync is only as good as the arrival times).
/// - The file holds the kinds seen by then (video first); a kind that starts later is not
///   recorded (counted in ``lateDropped``).
///
/// Thread-safe: both receivers' sink threads feed it; the state lives in one `Mutex`.
public final class SyncedRecorder: Sendable, Equatable {
    /// The file's path.
    public let path: String
    /// Most frames and packets kept while the timeline waits.
    public static let maximumWaiting = 3_000
    /// How long the timeline waits for sender reports before it falls back on arrival times, s.
    public static let fallbackSeconds = 4.0

    private enum Item {
        case video(EncodedVideoFrame)
        case audio(EncodedAudioFrame)
        var isVideo: Bool { if case .video = self { true } else { false } }
        var ticks: Int64 { switch self { case .video(let f): f.timestamp; case .audio(let p): p.timestamp } }
        var rate: Double { isVideo ? 90_000 : 48_000 }
    }

    private struct State {
        var writer: MatroskaWriter?
        var closed = false
        var waiting: [Item] = []
        /// By kind (video, audio): the NTP time of the stream's tick 0, from its first report.
        var ntpZero: [Bool: Double] = [:]
        /// By kind: the monotonic time of tick 0, from the first frame's arrival.
        var arrivalZero: [Bool: Double] = [:]
        var firstAt: Double?
        /// Once fixed: tick 0 of each recorded kind on the file's timeline, s.
        var zero: [Bool: Double] = [:]
        var track: [Bool: Int] = [:]
        var lateDropped = 0
        var errors: [String] = []
        var usesReports = false
    }
    private let state = Mutex(State())

    /// A recorder for `path` (`.mkv` or `.webm`); the file is made when the timeline is fixed.
    public init(path: String) { self.path = path }

    /// The same recorder (identity: two recorders of one path are still two files' worth).
    public static func == (a: SyncedRecorder, b: SyncedRecorder) -> Bool { a === b }

    /// Frames and packets of a kind that started after the file was made, not recorded.
    public var lateDropped: Int { state.withLock { $0.lateDropped } }
    /// Whether the timeline came from sender reports (false: from arrival times).
    public var usesSenderReports: Bool { state.withLock { $0.usesReports } }
    /// Problems met (the file could not be made or written), oldest first.
    public var errors: [String] { state.withLock { $0.errors } }

    /// A video frame from the receiver's sink thread, with the sender's clock if known.
    func video(_ frame: EncodedVideoFrame, clock: SenderClock?) { take(.video(frame), clock: clock) }

    /// An audio packet from the receiver's sink thread, with the sender's clock if known.
    func audio(_ packet: EncodedAudioFrame, clock: SenderClock?) { take(.audio(packet), clock: clock) }

    /// Writes what waits (fixing the timeline as it can) and closes the file. Idempotent.
    public func close() {
        state.withLock { s in
            guard !s.closed else { return }
            if s.writer == nil, !s.waiting.isEmpty { start(&s) }
            s.closed = true
            do { try s.writer?.close() } catch { s.errors.append("\(error)") }
        }
    }

    private func take(_ item: Item, clock: SenderClock?) {
        let now = ProcessInfo.processInfo.systemUptime
        state.withLock { s in
            guard !s.closed else { return }
            let video = item.isVideo
            if s.ntpZero[video] == nil, let clock { s.ntpZero[video] = clock.ntpSeconds - Double(clock.ticks) / item.rate }
            if s.arrivalZero[video] == nil { s.arrivalZero[video] = now - Double(item.ticks) / item.rate }
            if s.firstAt == nil { s.firstAt = now }
            guard s.writer == nil else { return write(&s, item) }
            if s.waiting.count < Self.maximumWaiting { s.waiting.append(item) }
            let kinds = Set(s.arrivalZero.keys)
            let reported = kinds.allSatisfy { s.ntpZero[$0] != nil }
            let waited = now - (s.firstAt ?? now)
            if (reported && (kinds.count == 2 || waited >= 2)) || waited >= Self.fallbackSeconds || s.waiting.count >= Self.maximumWaiting {
                start(&s)
            }
        }
    }

    /// Fixes the timeline and makes the file with the kinds seen, then writes what waited.
    private func start(_ s: inout State) {
        let kinds = [true, false].filter { s.arrivalZero[$0] != nil }
        s.usesReports = kinds.allSatisfy { s.ntpZero[$0] != nil }
        // A sender whose reports put its two streams far apart from how they arrive (NTP
        // clocks of different bases) is not believed: arrival times then.
        if s.usesReports, kinds.count == 2, let nv = s.ntpZero[true], let na = s.ntpZero[false],
           let av = s.arrivalZero[true], let aa = s.arrivalZero[false], abs((nv - na) - (av - aa)) > 2 {
            s.usesReports = false
            s.errors.append(String(format: "the sender reports put video %.1f s from audio, their arrival %.1f s: placed by arrival times",
                                   nv - na, av - aa))
        }
        let base = s.usesReports ? s.ntpZero : s.arrivalZero
        // The timeline starts at the earliest frame waiting.
        let times = s.waiting.map { (base[$0.isVideo] ?? 0) + Double($0.ticks) / $0.rate }
        let origin = times.min() ?? 0
        for kind in kinds { s.zero[kind] = (base[kind] ?? 0) - origin }
        for (i, kind) in kinds.enumerated() { s.track[kind] = i }
        do {
            s.writer = try MatroskaWriter(path: path, tracks: kinds.map { $0 ? .vp8 : .opus })
        } catch {
            s.errors.append("\(error)")
            s.closed = true
            return
        }
        let waiting = s.waiting.enumerated().sorted { times[$0.offset] < times[$1.offset] }.map(\.element)
        s.waiting = []
        for item in waiting { write(&s, item) }
    }

    private func write(_ s: inout State, _ item: Item) {
        guard let writer = s.writer, let track = s.track[item.isVideo], let zero = s.zero[item.isVideo] else {
            s.lateDropped += 1
            return
        }
        let ms = max(0, Int64(((zero + Double(item.ticks) / item.rate) * 1000).rounded()))
        do {
            switch item {
            case .video(let f): try writer.write(video: f, track: track, ms: ms)
            case .audio(let p): try writer.write(audio: p, track: track, ms: ms)
            }
        } catch {
            if s.errors.count < 10 { s.errors.append("\(error)") }
        }
    }
}
