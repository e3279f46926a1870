// Help: the text of `peer --help` and of each subcommand's `--help` (`peer SUB --help`, `peer help SUB`), built from one definition of each part.

/// The help texts. The general one (`peer --help`) holds every part; a subcommand's
/// holds its own usage line, its options (each with an example), examples and exit codes.
enum Help {
    /// The first lines of every text.
    static let header = """
    peer — headless WebRTC peer agent (WAMP signaling, ICE, DTLS-SRTP, VP8, Opus)
    """

    /// The call commands' usage lines.
    static let callCommands = """
      peer offer  [options]   publish an offer (legacy profile), record what the answerer sends
      peer answer [options]   wait for an offer (legacy profile), answer it, record what comes
      peer room   [options]   join a room (room profile): call every member, answer newcomers,
                              record each member to its own files
    """

    /// `peer load`: its usage line.
    static let loadCommand = """
      peer load   [options]   N calls in this process on one router session (load tests):
                              --role offer|answer (legacy, one prefix per call) or rooms
    """

    /// `peer load`'s own options, each with an example.
    static let loadOptions = """
      --calls N               how many calls this process runs (1…100000), e.g. --calls 50
      --role offer|answer     legacy profile: this process offers (or answers) every call;
                              the other process runs the other role with the same pattern
      --ramp CALLS_PER_S      calls started a second (default 10; above 0), e.g. --ramp 20
      --prefix-pattern P      each call's topic prefix, {i} its number 1…N (default
                              com.nakadoribook.webrtc.load.{i}), e.g. --prefix-pattern load.{i}
      --room-pattern P --room-size K
                              rooms instead: call i is a member of room P with {i} = ⌈i/K⌉
                              (K members of this process per room, default 2; members call
                              each other and whoever else joins), e.g. --room-pattern lr.{i}
      --prefix PREFIX         the rooms' topic prefix (default com.nakadoribook.webrtc)
      --record none|first|all what calls record (default none: receivers count only; first:
                              call 1; all), as DIR/load.<i>.ivf and .ogg, e.g. --record first
      --out-dir DIR           where recordings go (default .), e.g. --out-dir /tmp/load
      --no-decode             receivers do not decode (count frames, loss, jitter, freezes)
      --ice-tcp               gather ICE TCP candidates too (off in load mode: sockets and
                              ports per connection), e.g. --ice-tcp
      --summary PATH          the final summary as JSON (plan, limits, p50/p95/p99 of
                              set-up, loss, jitter, RTT, fps; freezes, packets, router
                              outages, CPU, memory, threads, every call's verdict)
      --json                  events on stdout: loadStart, loadStatus (each second:
                              aggregates), callEnded (each call: code, reason, figures),
                              router, loadSummary, exit (all fields: docs/EVENTS.md)
      --progress              the status line rewritten in place (default on a terminal;
                              else one line a second)
      Shared with peer offer/answer (peer offer --help): --router, --realm, --auth,
      --ca-file, --stun, --turn, --turn-user, --turn-password, --ice-policy, --trickle,
      --vanilla, --payload, --video, --audio, --bitrate, --duration (each call's media
      time), --timeout (each step of each call), --min-frames (counts frames received when
      nothing is recorded), --local-address, --no-ice-restart, --e2e-clock, -v, -q,
      --log-level (every line about a call starts with its name, load.<i>).
      Limits: RLIMIT_NOFILE is raised to its hard limit at start; a call count this host
      cannot open (file descriptors, local ports, threads, memory) is refused before the
      first call, exit 2, naming the limit and how many calls fit.
    """

    /// `peer load`'s examples.
    static let loadExamples = """
      peer load --role answer --calls 50 --ramp 10 --router ws://127.0.0.1:8080/ws \\
                --stun stun:127.0.0.1:3478 --video ivf:clip.ivf --audio ogg:voice.ogg --no-decode &
      peer load --role offer  --calls 50 --ramp 10 --router ws://127.0.0.1:8080/ws \\
                --stun stun:127.0.0.1:3478 --video ivf:clip.ivf --audio ogg:voice.ogg --no-decode \\
                --duration 60 --summary load.json --json
    """

    /// `peer load`'s exit codes.
    static let loadExitCodes = """
      0 every call passed (each as peer offer/answer would exit 0)
      2 bad arguments, or more calls than this host's limits allow (named)
      3 router unreachable or auth refused (no call started)
      4, 5, 6, 7, 8 the exit code of the first call (by number) that did not pass; each
      call's code, meaning and reason are in its callEnded event and the summary
      130 interrupted (SIGINT), 143 (SIGTERM), after every call hung up
    """

    /// `peer loopback`: its usage, options and exit codes.
    static let loopback = """
      peer loopback [--duration S] [--timeout S] [--video pattern:WxH@FPS] [--bitrate KBPS]
                    [--out-dir DIR] [--vanilla] [--json] [--no-media]
                    [--data-channel SPEC …] [--data-burst LABEL:N:BYTES …] [-v | -q | --log-level L]
                              self-test without router or STUN: two peer connections in this
                              process call each other over 127.0.0.1 and record
                              loopback-a/b.ivf and .ogg; exit 0 when each side got ≥ 95 % of
                              the frames, 7 if not, 5 when it did not connect within
                              --timeout S (default 10); side a opens the data channels, each
                              side sends its bursts on them and reports what arrived
                              (dataSummary); --no-media: data only
    """

    /// `peer sdp`: its usage.
    static let sdp = """
      peer sdp FILE|- [--answer]
                              parse a session description and print it as JSON; with --answer
                              print the SDP answer peer would give to it
    """

    /// `peer report`: its usage.
    static let report = """
      peer report TIMELINE… [-o PATH] [--format html|webrtc-internals] [--title TEXT]
                              one or more --stats-timeline files (or - for stdin) as one
                              self-contained HTML page (default report.html: summary per
                              peer and direction, plots drawn by gnuplot, freezes marked) or
                              as a chrome://webrtc-internals dump (default
                              webrtc-internals.json); with several files each peer is named
                              FILE: PEER; exit 2 names the file and line it cannot read (or
                              an empty timeline), 1 when gnuplot is missing or fails
    """

    /// `--version` and `--help`.
    static let other = """
      peer --version          the version of peer and of each C library
      peer --help             this text; peer SUB --help or peer help SUB: one command
    """

    /// The options of `peer offer|answer|room`, each with an example.
    static let callOptions = """
      --router URL            ws:// or wss:// WAMP router (default $PEER_ROUTER)
                              e.g. --router wss://example.org:8443/ws
      --realm NAME            realm (default $PEER_REALM, else realm1), e.g. --realm realm1
      --auth cra:USER:SECRET | ticket:USER:TICKET
                              WAMP-CRA (plain or salted) or ticket authentication,
                              e.g. --auth cra:alice:s3cret
      --ca-file PATH          trust this CA for wss://, e.g. --ca-file ca.pem
      --profile legacy|room   signaling profile (offer/answer: legacy; room: room),
                              e.g. peer offer --profile room --room lobby (same as peer room)
      --prefix PREFIX         topic prefix (default com.nakadoribook.webrtc), e.g. --prefix org.example.call7
      --room NAME             room name (room profile; default "default"), e.g. --room lobby
      --user ID               our user id in the room (default: random), e.g. --user alice
      --stun URL              STUN server, repeatable (default $PEER_STUN),
                              e.g. --stun stun:stun.example.org:3478
      --turn URL --turn-user USER --turn-password PASSWORD
                              TURN server, repeatable; a URL takes the credentials given
                              right after it, else the last ones given, e.g.
                              --turn turn:t.example.org:3478?transport=tcp --turn-user u
                              --turn-password p (also turns:host:5349)
      --ice-policy all|relay  all candidates, or relay (TURN) only, e.g. --ice-policy relay
      --trickle | --vanilla   trickle ICE (default) or vanilla (descriptions after gathering,
                              candidates inside), e.g. --vanilla for the oldest clients
      --payload object|string legacy: publish descriptions as a JSON object (default) or
                              string, e.g. --payload string
      --video pattern[:WxH@FPS] | y4m:PATH | ivf:PATH | none
                              what to send (default pattern:640x480@30; files loop),
                              e.g. --video pattern:320x240@15 or --video y4m:clip.y4m
      --audio tone[:HZ] | wav:PATH | ogg:PATH | none
                              what to send (default tone:440; files loop; an Ogg Opus file's
                              packets go as they are), e.g. --audio wav:voice.wav
      --video-out PATH        record remote video here (default remote-<peer>.ivf; in a room
                              -<peer> is added before the extension); the format by the
                              extension: .ivf, or .webm/.mkv (WebM/Matroska, which ffprobe
                              and players read with its duration), e.g. --video-out in.webm
      --audio-out PATH        record remote audio here (default remote-<peer>.ogg): .ogg (Ogg
                              Opus), .wav (decoded PCM), .webm/.mka/.mkv (Matroska),
                              e.g. --audio-out in.wav
      --record PATH           also record the peer's audio and video in one .mkv or .webm, in
                              sync (each track's RTP time mapped to the sender's clock by its
                              RTCP sender reports), e.g. --record call.mkv
      --bitrate KBPS          video bitrate (default 1000), e.g. --bitrate 500
      --duration S            media time once established (default 10), e.g. --duration 30
      --timeout S             wait at most this long for the router, then for each step of
                              the set-up: the offer or answer, ICE, DTLS (default 30),
                              e.g. --timeout 5
      --min-frames N          exit 7 unless every recorded video has ≥ N frames (default 1
                              for a peer that sends video, 0 for one that sends none;
                              --min-frames 0 turns the check off), e.g. --min-frames 270
      --local-address IP      gather only on this address (repeatable), e.g. --local-address 127.0.0.1
      --no-decode             record without decoding (less CPU; no framesDecoded), e.g. for
                              long recordings
      --at SECONDS:ACTION     during the call, SECONDS after "established" (repeatable):
                              hold, unhold, ice-restart, video:off, video:on, audio:off,
                              audio:on or hangup; hold/unhold and on/off re-offer new
                              directions (state hold while either side holds), e.g.
                              --at 3:hold --at 6:unhold --at 9:hangup
      --no-ice-restart        do not restart ICE when it stays disconnected 5 s or fails (by
                              default the side that offered first re-offers with new ICE
                              credentials, and the call fails, exit 5, only when that
                              restart does not connect within 15 s), e.g. --no-ice-restart
                              to see a path failure end the call
      --control stdin         one JSON command per line on stdin, the same actions, e.g.
                              {"action":"hold","id":1}; each answered by an "action" event
                              on stdout (ok, detail, id); a bad line gets ok false only;
                              {"action":"send","label":"chat","text":"hi"} (or "base64")
                              sends on a data channel, answered by a "send" event
      --data-channel SPEC     the offerer opens this data channel (repeatable; the answerer
                              takes whatever the peer opens): LABEL[,unordered]
                              [,retransmits=N][,lifetime=MS][,protocol=P][,id=N] (id: a
                              negotiated channel both sides make), e.g. --data-channel chat
                              --data-channel telemetry,unordered,retransmits=0; a channel
                              labelled control carries the JSON commands of PROTOCOL.md
                              (hold, unhold, video, audio, keyframe, hangup, ping), each
                              answered on it; every message is a "message" event
      --at SECONDS:send:LABEL:TEXT  send TEXT on the channel LABEL, e.g. --at 2:send:chat:hi
                              or --at '4:send:control:{"action":"hold"}' (quoted for the
                              shell); --at SECONDS:close:LABEL closes it (the control
                              command {"action":"close","label":…} too)
      --data-burst LABEL:N:BYTES  once LABEL is open send N numbered messages of BYTES bytes
                              as fast as it takes them; the receiving peer counts them
                              (dataSummary: received, missing, repeated, out of order),
                              e.g. --data-burst chat:10000:1024
      --data-echo             send every message received back on its channel, e.g.
                              peer answer … --data-echo for round-trip tests
      --data-out PATH         every message sent and received as a JSON line (time, peer,
                              direction, label, text or base64), e.g. --data-out chat.jsonl
      --min-messages N        exit 7 unless each peer sent us ≥ N data channel messages
                              (with --video none --audio none a call is data only),
                              e.g. --min-messages 100
      --json                  one JSON event per line on stdout: state, milestone,
                              connectionState, candidate, candidateDropped, track, frames
                              (every second), busy, peerJoined, peerLeft, router,
                              signalingError, renegotiated (offerer, reason, before/after
                              directions, ms), renegotiationFailed, remapped,
                              previousPayloadType (the peer still sends a renumbered
                              payload type), iceRestart, iceRecovered, dtlsRestart (the peer
                              back with a new certificate), action, datachannel, message,
                              dataError, send, control, dataSummary, recorded, stats (W3C
                              webrtc-stats), report, callEnded, exit; each with t = ms since
                              start (all fields: docs/EVENTS.md),
                              e.g. peer offer … --json | jq 'select(.event=="frames")'
      --progress              one status line on stderr, rewritten each second: state, video
                              frames in/out, kbit/s each way, RTT, loss (the default when
                              stderr is a terminal), e.g. peer offer … --progress
      -v, --verbose | -q, --quiet | --log-level error|warn|info|debug|trace
                              how much goes to stderr (default info, or $PEER_LOG): -v is
                              debug (libnice's connectivity checks, the DTLS handshake, WAMP
                              messages, libsrtp), -vv trace (STUN messages, WebSocket
                              frames); -q errors only; from -v on every line is timed and
                              named by its component, e.g. --log-level debug prints
                              "0.168 dtls: …" and "0.201 peer: established"
      --stats PATH            write the final statistics of every peer to PATH (JSON),
                              e.g. --stats call-stats.json
      --stats-timeline PATH   every peer's getStats snapshot every second, as JSON lines
                              (for peer report), e.g. --stats-timeline call.jsonl
      --report PATH           at the end, an HTML report of the call (summary, plots of
                              bitrate, fps, RTT, loss, jitter, latency; needs gnuplot; no
                              --stats-timeline needed: a temporary one is kept then),
                              e.g. --report report.html
      --e2e-clock auto|shared|rtcp-sr
                              how the end-to-end latency of frame markers (peer-e2e) relates
                              the sender's clock to ours: auto (one clock when the remote
                              address is this host's, else estimated from its RTCP sender
                              reports), shared (hosts kept in sync by PTP/NTP), rtcp-sr
                              (always estimated), e.g. --e2e-clock shared
      --repeat N|forever      offer/answer only: N calls one after another in this process
                              (forever: until SIGINT/SIGTERM, waiting for each offer without
                              a limit); every file gets -<call> before its extension
                              (remote-offerer-1.ivf, stats-1.json); events carry "call";
                              after each call a callEnded event (code, reason, rssBytes,
                              openFiles, threads); exit: the first failed call's code, else
                              0; the run stops early only at exit 3 or 4 (no call can come;
                              forever retries the router every 2 s), e.g. --repeat 500
    """

    /// Where output goes, and signals.
    static let progress = """
    Progress for people goes to stderr. SIGINT/SIGTERM hang up and close the files.
    """

    /// Example command lines.
    static let examples = """
      peer answer --router ws://127.0.0.1:8080/ws --stun stun:127.0.0.1:3478 --duration 10
      peer offer  --router ws://127.0.0.1:8080/ws --stun stun:127.0.0.1:3478 --duration 10 \\
                  --video pattern:320x240@30 --video-out from-answerer.ivf --json
      peer room   --router wss://example.org/ws --ca-file ca.pem --room lobby --user alice \\
                  --auth cra:alice:SECRET --turn turn:turn.example.org:3478 \\
                  --turn-user u --turn-password p --ice-policy relay
      peer loopback --duration 5
      peer sdp offer.sdp --answer
    """

    /// The exit codes of the call commands.
    static let exitCodes = """
      0 call done: established, --min-frames met
      2 bad arguments or input
      3 router unreachable or auth refused
      4 no offer/answer within --timeout
      5 ICE failed (or no usable codec)
      6 DTLS failed
      7 fewer frames than --min-frames (or messages than --min-messages)
      8 busy: the answerer is in another call
      130 interrupted (SIGINT), 143 (SIGTERM), after hanging up and closing the files
      A call that never reached "established" never exits 0: if the peer hangs up first
      it exits 4, 5 or 6 for the step it reached (no offer/answer, ICE, DTLS), named in
      the final state's reason.
    """

    /// `peer --help`: everything.
    static var general: String {
        [header, "usage:", callCommands, loadCommand, loopback, sdp, report, other, "", "call options (offer, answer, room):", callOptions, progress, "",
         "load options (peer load):", loadOptions, "", "examples:", examples, "", "exit codes:", exitCodes].joined(separator: "\n")
    }

    /// The help of subcommand `command` (offer, answer, room, load, loopback, sdp, report), nil for
    /// any other word.
    static func text(for command: String) -> String? {
        switch command {
        case "offer", "answer", "room":
            let usage = callCommands.split(separator: "\n", omittingEmptySubsequences: false)
            var own: [Substring] = []
            for line in usage {
                let starts = line.hasPrefix("  peer ")
                if starts, !own.isEmpty { break }  // the next command's line
                if starts ? line.hasPrefix("  peer \(command)") : !own.isEmpty { own.append(line) }
            }
            let shown = examples.split(separator: "\n", omittingEmptySubsequences: false)
            var mine: [Substring] = [], taking = false
            for line in shown {
                if line.hasPrefix("  peer ") { taking = line.hasPrefix("  peer \(command)") }
                if taking { mine.append(line) }
            }
            return ["usage:", own.joined(separator: "\n"), "", "options:", callOptions, progress, "",
                    "examples:", mine.isEmpty ? examples : mine.joined(separator: "\n"), "", "exit codes:", exitCodes].joined(separator: "\n")
        case "load":
            return ["usage:", loadCommand, "", "options:", loadOptions, "", "examples:", loadExamples, "", "exit codes:", loadExitCodes]
                .joined(separator: "\n")
        case "loopback":
            return ["usage:", loopback, "", "examples:", "  peer loopback --duration 5",
                    "  peer loopback --video pattern:320x240@15 --bitrate 300 --out-dir /tmp/lb --json",
                    "  peer loopback --no-media --data-channel chat --data-burst chat:1000:1024",
                    "  peer loopback --timeout 5 --vanilla -v"].joined(separator: "\n")
        case "sdp":
            return ["usage:", sdp, "", "examples:", "  peer sdp offer.sdp", "  peer sdp offer.sdp --answer",
                    "  cat offer.sdp | peer sdp -"].joined(separator: "\n")
        case "report":
            return ["usage:", report, "", "examples:", "  peer report call.jsonl -o report.html",
                    "  peer report a.jsonl b.jsonl --format webrtc-internals -o dump.json",
                    "  peer answer --router ws://127.0.0.1:8080/ws --stats-timeline call.jsonl --report report.html"].joined(separator: "\n")
        default:
            return nil
        }
    }
}
