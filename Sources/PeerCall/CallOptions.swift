// CallOptions: everything a Call needs — router, profile and role, media specs (--video, --audio), ICE, files, timeouts.
import Bytes
import PeerAgent
import Foundation
import ICE
import Media
import WampClient

/// What a call sends as video (`--video`).
public enum VideoSpec: Sendable, Equatable, CustomStringConvertible {
    /// Nothing (the transceiver receives only).
    case none
    /// The synthetic test pattern with frame markers, W×H at FPS.
    case pattern(width: Int, height: Int, frameRate: Int)
    /// A Y4M file (4:2:0), looped.
    case y4m(path: String)
    /// An IVF file of VP8, passed through without re-encoding, looped.
    case ivf(path: String)

    /// Parses `none`, `pattern`, `pattern:WxH@FPS`, `y4m:PATH`, `ivf:PATH`.
    /// - Throws: ``CallOptionError`` naming the value and what was expected.
    public init(parsing text: String) throws(CallOptionError) {
        if text == "none" { self = .none; return }
        if text.hasPrefix("y4m:"), text.count > 4 { self = .y4m(path: String(text.dropFirst(4))); return }
        if text.hasPrefix("ivf:"), text.count > 4 { self = .ivf(path: String(text.dropFirst(4))); return }
        guard text.hasPrefix("pattern") else {
            throw CallOptionError(option: "--video", value: text, expected: "pattern[:WxH@FPS], y4m:PATH, ivf:PATH or none")
        }
        let rest = text.dropFirst("pattern".count)
        if rest.isEmpty { self = .pattern(width: 640, height: 480, frameRate: 30); return }
        let bad = CallOptionError(option: "--video", value: text, expected: "pattern:WxH@FPS with W and H in 16…4096 and FPS in 1…120, e.g. pattern:640x480@30")
        guard rest.hasPrefix(":") else { throw bad }
        let parts = rest.dropFirst().split(separator: "@", omittingEmptySubsequences: false)
        let size = parts.first?.split(separator: "x", omittingEmptySubsequences: false) ?? []
        guard parts.count <= 2, size.count == 2, let w = Int(size[0]), let h = Int(size[1]),
              (16...4096).contains(w), (16...4096).contains(h) else { throw bad }
        var fps = 30
        if parts.count == 2 {
            guard let f = Int(parts[1]), (1...120).contains(f) else { throw bad }
            fps = f
        }
        self = .pattern(width: w, height: h, frameRate: fps)
    }

    /// A new source for one sender (each peer connection pulls its own).
    /// - Throws: the file's error (``Y4MError``, ``IVFError``) or ``TestPatternError``.
    public func makeSource() throws -> VideoSource? {
        switch self {
        case .none: return nil
        case let .pattern(w, h, fps): return try PatternSource(width: w, height: h, frameRate: fps)
        case let .y4m(path): return try Y4MSource(path: path, loop: true)
        case let .ivf(path): return try IVFSource(path: path, loop: true)
        }
    }

    /// The spec as written on the command line.
    public var description: String {
        switch self {
        case .none: return "none"
        case let .pattern(w, h, fps): return "pattern:\(w)x\(h)@\(fps)"
        case let .y4m(path): return "y4m:\(path)"
        case let .ivf(path): return "ivf:\(path)"
        }
    }
}

/// What a call sends as audio (`--audio`).
public enum AudioSpec: Sendable, Equatable, CustomStringConvertible {
    /// Nothing.
    case none
    /// A sine tone of this frequency (Hz) at −12 dBFS.
    case tone(frequency: Double)
    /// A WAV file (PCM 16-bit, 48 kHz), looped.
    case wav(path: String)
    /// An Ogg Opus file, its packets sent as they are (paced by their samples), looped.
    case ogg(path: String)

    /// Parses `none`, `tone`, `tone:HZ`, `wav:PATH`, `ogg:PATH`.
    /// - Throws: ``CallOptionError`` naming the value.
    public init(parsing text: String) throws(CallOptionError) {
        if text == "none" { self = .none; return }
        if text == "tone" { self = .tone(frequency: 440); return }
        if text.hasPrefix("wav:"), text.count > 4 { self = .wav(path: String(text.dropFirst(4))); return }
        if text.hasPrefix("ogg:"), text.count > 4 { self = .ogg(path: String(text.dropFirst(4))); return }
        if text.hasPrefix("tone:"), let hz = Double(text.dropFirst(5)), hz >= 20, hz <= 20_000 {
            self = .tone(frequency: hz)
            return
        }
        throw CallOptionError(option: "--audio", value: text, expected: "tone[:HZ] with HZ in 20…20000, wav:PATH, ogg:PATH or none")
    }

    /// A new source for one sender.
    /// - Throws: ``WAVError`` or ``OggOpusError`` for an unusable file.
    public func makeSource() throws -> AudioSource? {
        switch self {
        case .none: return nil
        case let .tone(hz): return try ToneSource(frequency: hz, levelDBFS: -12, channels: 1)
        case let .wav(path): return try WAVSource(path: path, loop: true)
        case let .ogg(path): return try OggOpusSource(path: path, loop: true)
        }
    }

    /// The spec as written on the command line.
    public var description: String {
        switch self {
        case .none: return "none"
        case let .tone(hz): return "tone:\(hz == hz.rounded() ? String(Int(hz)) : String(hz))"
        case let .wav(path): return "wav:\(path)"
        case let .ogg(path): return "ogg:\(path)"
        }
    }
}

/// A command-line option with a value that cannot be used.
public struct CallOptionError: Error, Equatable, CustomStringConvertible {
    /// The option, e.g. "--video".
    public var option: String
    /// The value given.
    public var value: String
    /// What would have been accepted.
    public var expected: String
    /// Creates the error.
    public init(option: String, value: String, expected: String) {
        self.option = option; self.value = value; self.expected = expected
    }
    /// One line: the option, the value (control characters escaped, cut to 200
    /// characters), what was expected.
    public var description: String { "\(option) \"\(Untrusted.quoted(value))\": expected \(expected)" }
}

/// Everything a ``Call`` needs: the router, the signaling profile and role, ICE
/// servers, media, files and limits.
public struct CallOptions: Sendable {
    /// What this process does.
    public enum Role: String, Sendable {
        /// Legacy profile: publish an offer and wait for the answer.
        case offer
        /// Legacy profile: wait for an offer and answer it.
        case answer
        /// Room profile: announce ourselves, call everyone in the room, answer newcomers.
        case room
    }

    /// The role (and with it the profile: offer/answer are `legacy`, room is `room`).
    public var role: Role
    /// The router connection (URL, realm, auth). Reconnects are on: a router restart
    /// does not end a call.
    public var wamp: WampConfiguration
    /// Topic prefix (PROTOCOL.md), default `com.nakadoribook.webrtc`.
    public var prefix = Signaling.defaultPrefix
    /// Room name (room profile).
    public var room = "default"
    /// Our user id (room profile): a short random string unless given.
    public var user = randomIceChars(8).replacingOccurrences(of: "+", with: "x").replacingOccurrences(of: "/", with: "y")
    /// Trickle ICE (descriptions at once, candidates after) or vanilla (descriptions after
    /// gathering, with every candidate inside).
    public var trickle = true
    /// Legacy profile: publish descriptions as a JSON string instead of an object (`--payload string`).
    public var descriptionAsString = false
    /// ICE servers, policy and the rest of the peer connection configuration.
    public var peerConnection = PeerConnectionConfiguration()
    /// What to send as video (default the 640x480@30 test pattern).
    public var video: VideoSpec = .pattern(width: 640, height: 480, frameRate: 30)
    /// What to send as audio (default a 440 Hz tone).
    public var audio: AudioSpec = .tone(frequency: 440)
    /// Bitrates and codec settings.
    public var encoding = SendEncoding()
    /// Where to record remote video; nil: `remote-<peer>.ivf` in the current directory.
    /// With several peers (room) `-<peer>` goes before the extension.
    public var videoOut: String?
    /// Where to record remote audio; nil: `remote-<peer>.ogg`; `-<peer>` added as for video.
    public var audioOut: String?
    /// `--record`: the peer's audio and video in one `.mkv` or `.webm`, in sync (nil: none);
    /// `-<peer>` added as for video.
    public var recordOut: String?
    /// Decode received video (framesDecoded in stats; costs some CPU).
    public var decode = true
    /// Record what each peer sends (`videoOut`, `audioOut`, `recordOut`, or the default
    /// names). False (`peer load --record none`): nothing is written, the receivers only
    /// count (and decode when ``decode``), and `--min-frames` counts the video frames
    /// received (W3C `framesReceived`) instead of those written.
    public var recordsMedia = true
    /// The name of the call's connections in log lines and events (`peer load`: `load.17`);
    /// nil: none (one call per process needs none).
    public var logTag: String?
    /// How long media flows once the call is established, seconds.
    public var durationSeconds = 10.0
    /// How long to wait for the router, and then for each step of the set-up (the offer
    /// or answer, ICE checks, the DTLS handshake), seconds.
    public var timeoutSeconds = 30.0
    /// True: wait for the offer (or the answer) without a limit; `timeoutSeconds` still
    /// bounds joining the router (`peer answer --repeat forever`).
    public var waitsWithoutTimeout = false
    /// The call succeeds only when every recorded IVF has at least this many frames.
    /// Nil (the default): 1 for each peer whose video was negotiated to reach us, 0 for
    /// one that sends none; 0 turns the check off.
    public var minFrames: Int?
    /// The offerer republishes its offer this often until answered, seconds.
    public var offerRepeatSeconds = 3.0
    /// Periodic `frames` events this often, seconds.
    public var progressIntervalSeconds = 1.0
    /// `--stats-timeline PATH`: every connection's getStats snapshot every second, as JSON
    /// lines (``StatsTimeline``).
    public var statsTimelinePath: String?
    /// `--at`: actions taken at set times after `established`, in any order.
    public var scheduledActions: [ScheduledAction] = []
    /// `--data-channel`: the channels the offerer creates (the answerer takes whatever the
    /// peer opens; a channel with an id is created by both).
    public var dataChannels: [DataChannelSpec] = []
    /// `--data-burst`: numbered messages sent once their channel opens.
    public var dataBursts: [DataBurst] = []
    /// `--at SECONDS:send:LABEL:TEXT`: messages sent at set times after `established`.
    public var scheduledSends: [ScheduledSend] = []
    /// `--data-out PATH`: every message sent and received, as a JSON line with its time,
    /// peer, direction and channel.
    public var dataOut: String?
    /// `--data-echo`: every message received (not on `control`) is sent back on its channel.
    public var dataEcho = false
    /// `--min-messages N`: the call succeeds only when each peer sent us at least N data
    /// channel messages (nil: no check).
    public var minMessages: Int?
    /// Restart ICE automatically (a re-offer with new credentials from the side that
    /// offered first) when ICE is `disconnected` for 5 s or `failed`; `--no-ice-restart`
    /// turns it off.
    public var restartsIce = true

    /// Options for `role` against the router `url`.
    public init(role: Role, router url: String, realm: String = "realm1") {
        self.role = role
        wamp = WampConfiguration(url: url, realm: realm)
    }

    /// ``peerConnection`` with ICE checking and the DTLS handshake bounded by
    /// ``timeoutSeconds`` (1 s … 1 h, in ms): `--timeout` bounds each step of the set-up.
    var connectionConfiguration: PeerConnectionConfiguration {
        var c = peerConnection
        if let logTag, c.logTag == nil { c.logTag = logTag }
        let stepMs = UInt32(max(1_000, min(timeoutSeconds * 1000, 3_600_000)))
        c.iceCheckingTimeoutMs = stepMs
        c.dtlsTimeoutMs = stepMs
        return c
    }

    /// The IVF path for the remote `peer` (with `several` peers the name is made unique).
    func videoPath(peer: String, several: Bool) -> String { path(videoOut, peer: peer, several: several, ext: "ivf") }
    /// The Ogg path for the remote `peer`.
    func audioPath(peer: String, several: Bool) -> String { path(audioOut, peer: peer, several: several, ext: "ogg") }
    /// The `--record` path for the remote `peer`, if any.
    func recordPath(peer: String, several: Bool) -> String? { recordOut.map { path($0, peer: peer, several: several, ext: "mkv") } }

    private func path(_ given: String?, peer: String, several: Bool, ext: String) -> String {
        let safe = String(peer.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        guard let given else { return "remote-\(safe).\(ext)" }
        guard several else { return given }
        let url = URL(fileURLWithPath: given)
        let base = url.deletingPathExtension().path
        let e = url.pathExtension.isEmpty ? ext : url.pathExtension
        return "\(base)-\(safe).\(e)"
    }
}
