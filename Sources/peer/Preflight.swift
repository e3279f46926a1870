// Preflight: what `peer offer|answer|room` checks before it connects — source files opened and their first frame read, output directories writable, addresses of this host, the router URL, the STUN list of PEER_STUN — each problem worded for an exit 2 that names the option and value.
import Bytes
import Foundation
import ICE
import Glibc
import Media
import PeerCall

/// Checks of the command line that need the file system or the host, made before any
/// connection so that a mistake is exit 2 at once, not a router error or a timeout later.
/// Each returns nil when all is well, else what is wrong (the caller names the option).
enum Preflight {
    /// `--video y4m:PATH | ivf:PATH`: the file opens, its header is valid and a first frame
    /// reads (a pattern or `none` needs nothing).
    static func videoProblem(_ spec: VideoSpec) -> String? {
        do {
            switch spec {
            case .y4m(let path):
                guard try Y4MSource(path: path).nextFrame() != nil else { return "no frame in it" }
            case .ivf(let path):
                guard try IVFSource(path: path).nextFrame() != nil else { return "no frame in it" }
            default:
                return nil
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    /// `--audio wav:PATH | ogg:PATH`: the file opens, its header is one we take, and 20 ms
    /// of samples (WAV) or every packet's TOC byte (Ogg Opus) read.
    static func audioProblem(_ spec: AudioSpec) -> String? {
        do {
            switch spec {
            case .wav(let path):
                guard try WAVSource(path: path).nextFrame(sampleCount: 960) != nil else { return "no samples in it" }
            case .ogg(let path):
                _ = try OggOpusSource(path: path)
            default:
                return nil
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    /// An output file (`--video-out`, `--audio-out`, `--stats`): its directory exists and
    /// is writable, and the path itself, if it exists, is a writable file.
    static func outputProblem(_ path: String) -> String? {
        guard !path.isEmpty else { return "an empty path" }
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            return "no directory \"\(Untrusted.quoted(directory))\""
        }
        guard isDirectory.boolValue else { return "\"\(Untrusted.quoted(directory))\" is not a directory" }
        guard access(directory, W_OK) == 0 else { return "the directory \"\(Untrusted.quoted(directory))\" is not writable" }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return "it is a directory" }
            if access(path, W_OK) != 0 { return "the file is not writable" }
        }
        return nil
    }

    /// `--local-address IP`: an IPv4 or IPv6 literal that an interface of this host has.
    static func localAddressProblem(_ text: String) -> String? {
        guard let wanted = HostAddresses.canonical(text) else { return "not an IPv4 or IPv6 address" }
        guard let here = HostAddresses.all() else { return nil }  // cannot tell: let ICE find out
        guard here.contains(wanted) else {
            return "not an address of this host (it has \(here.sorted().joined(separator: ", ")))"
        }
        return nil
    }

    /// The router URL: `ws://` or `wss://` (any case), a host (URLComponents'; an IPv6 one
    /// in brackets), and a port in 1…65535 when given.
    static func routerProblem(_ url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("ws://") || lower.hasPrefix("wss://") else { return "a ws:// or wss:// URL" }
        guard let c = URLComponents(string: url) else { return "a ws:// or wss:// URL (this one does not parse)" }
        guard let host = c.host, !host.isEmpty else { return "a ws:// or wss:// URL with a host, e.g. ws://127.0.0.1:8080/ws" }
        if let port = c.port, !(1...65_535).contains(port) { return "a port in 1…65535 (got \(port))" }
        if c.port == nil, let authority = url.split(separator: "/", maxSplits: 3).dropFirst().first, authority.hasSuffix(":") {
            return "a port in 1…65535 after the host's colon"
        }
        return nil
    }

    /// The STUN URLs of a `PEER_STUN` value: separated by commas or spaces, empty parts dropped.
    static func stunList(_ value: String) -> [String] {
        value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
    }
}
