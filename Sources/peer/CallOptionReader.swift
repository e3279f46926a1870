// CallOptionReader: the options `peer offer|answer|room` and `peer load` share — router and authentication, STUN/TURN servers, ICE policy, trickle, media and its bitrate, --duration, --timeout, --min-frames, local addresses, decoding — read into CallOptions alike.
import Bytes
import Foundation
import ICE
import PeerAgent
import PeerCall
import WampClient

/// Reads the options every call command shares into a ``CallOptions`` (``take(_:_:into:)``
/// for each option, ``finish(_:_:)`` once after the last), worded alike wherever they are
/// given: a refusal names the option and the value and exits 2 (``OptionParser``).
struct CallOptionReader {
    private var router = ProcessInfo.processInfo.environment["PEER_ROUTER"]
    /// Where the router URL came from, for messages.
    private var routerSource = "PEER_ROUTER"
    private var realm = ProcessInfo.processInfo.environment["PEER_REALM"] ?? "realm1"
    private var auth = WampAuth.anonymous
    private var caFile: String?
    /// PEER_STUN: one or more URLs, separated by commas or spaces; --stun replaces them.
    private var stun: [(url: String, source: String)] = Preflight.stunList(ProcessInfo.processInfo.environment["PEER_STUN"] ?? "").map { ($0, "PEER_STUN") }
    private var stunGiven = false
    /// Each --turn URL takes the --turn-user/--turn-password in effect when it is given,
    /// replaced by any given right after it (before the next --turn); a URL left without
    /// takes the last ones on the command line.
    private var turn: [(url: String, user: String?, password: String?)] = []
    private var lastUser: String?
    private var lastPassword: String?

    /// Takes `option` when it is one of the shared ones (reading its value from `p` into
    /// `o`); false when it is not (the command reads it). Exits 2 on a bad value.
    mutating func take(_ option: String, _ p: inout OptionParser, into o: inout CallOptions) -> Bool {
        switch option {
        case "--router":
            router = p.value()
            routerSource = "--router"
        case "--realm": realm = p.value()
        case "--ca-file": caFile = p.value()
        case "--auth":
            let text = p.value()
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[1].isEmpty, !parts[2].isEmpty, parts[0] == "cra" || parts[0] == "ticket" else {
                p.refuse(text, expected: "cra:USER:SECRET or ticket:USER:TICKET")
            }
            auth = parts[0] == "cra" ? .cra(authid: parts[1], secret: parts[2]) : .ticket(authid: parts[1], ticket: parts[2])
        case "--stun":
            if !stunGiven { stun = [] }
            stunGiven = true
            stun.append((p.value(), "--stun"))
        case "--turn": turn.append((p.value(), lastUser, lastPassword))
        case "--turn-user":
            lastUser = p.value()
            if !turn.isEmpty { turn[turn.count - 1].user = lastUser }
        case "--turn-password":
            lastPassword = p.value()
            if !turn.isEmpty { turn[turn.count - 1].password = lastPassword }
        case "--ice-policy":
            let text = p.value()
            guard let policy = IceTransportPolicy(rawValue: text) else { p.refuse(text, expected: "all or relay") }
            o.peerConnection.iceTransportPolicy = policy
        case "--trickle": o.trickle = true
        case "--vanilla": o.trickle = false
        case "--payload":
            let text = p.value()
            guard text == "object" || text == "string" else { p.refuse(text, expected: "object or string") }
            o.descriptionAsString = text == "string"
        case "--video":
            o.video = p.video()
            if let problem = Preflight.videoProblem(o.video) { p.refuse(o.video.description, expected: "a readable video file: \(Untrusted.quoted(problem))") }
        case "--audio":
            o.audio = p.audio()
            if let problem = Preflight.audioProblem(o.audio) { p.refuse("\(o.audio)", expected: "a readable audio file: \(Untrusted.quoted(problem))") }
        case "--bitrate": o.encoding.videoBitrateKbps = p.bitrateKbps()
        case "--duration": o.durationSeconds = p.durationSeconds()
        case "--timeout": o.timeoutSeconds = p.timeoutSeconds()
        case "--min-frames": o.minFrames = Int(p.number(0...10_000_000))
        case "--local-address":
            let text = p.value()
            if let problem = Preflight.localAddressProblem(text) { p.refuse(text, expected: "an address of this host: \(problem)") }
            o.peerConnection.localAddresses.append(text)
        case "--no-decode": o.decode = false
        case "--no-ice-restart": o.restartsIce = false
        case "--e2e-clock":
            let text = p.value()
            guard let choice = EndToEndClockChoice(rawValue: text) else { p.refuse(text, expected: "auto, shared or rtcp-sr") }
            o.peerConnection.endToEndClock = choice
        default:
            return false
        }
        return true
    }

    /// After the last option: the router (required, from `--router` or PEER_ROUTER, and
    /// checked), realm and authentication into `o.wamp`, and the STUN and TURN servers
    /// parsed into `o.peerConnection.iceServers`. Exits 2 naming what is missing or wrong.
    func finish(_ o: inout CallOptions, _ p: OptionParser) {
        guard let router, !router.isEmpty else { p.fail("--router URL is required (or set PEER_ROUTER), e.g. --router ws://127.0.0.1:8080/ws") }
        if let problem = Preflight.routerProblem(router) { p.refuse(router, expected: problem, option: routerSource) }
        o.wamp = WampConfiguration(url: router, realm: realm, auth: auth)
        o.wamp.caFile = caFile
        for (url, source) in stun {
            do { o.peerConnection.iceServers.append(try IceServer(url)) } catch { p.fail("\(source) \"\(Untrusted.quoted(url))\": \(error)") }
        }
        for entry in turn {
            guard let user = entry.user ?? lastUser, let password = entry.password ?? lastPassword else {
                p.fail("--turn \"\(Untrusted.quoted(entry.url))\" needs --turn-user and --turn-password")
            }
            do { o.peerConnection.iceServers.append(try IceServer(entry.url, username: user, password: password)) } catch {
                p.fail("--turn \"\(Untrusted.quoted(entry.url))\": \(error)")
            }
        }
    }
}
