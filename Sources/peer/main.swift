import Foundation
import PeerAgent

/// `peer` command line. This slice knows `--version`, `--help` and `sdp`;
/// the call subcommands arrive with their issues.
let usage = """
    peer — headless WebRTC peer agent (WAMP signaling, ICE, DTLS-SRTP, VP8, Opus)

    usage:
      peer sdp FILE|- [--answer]   parse a session description (FILE, or - for stdin)
                                   and print it as JSON; with --answer print the SDP
                                   answer peer would give to it
                                   example: peer sdp offer.sdp --answer
      peer loopback [--duration S] [--video pattern:WxH@FPS] [--bitrate KBPS]
                    [--out-dir DIR] [--vanilla] [--json]
                                   self-test: two peer connections in this process call
                                   each other over 127.0.0.1 (no router, no STUN server),
                                   send the test pattern and a tone both ways, record
                                   loopback-a/b.ivf and .ogg, print the statistics;
                                   exit 0 when each side got ≥ 95 % of the frames, 7 if
                                   not, 5 when it did not connect
                                   example: peer loopback --duration 5
      peer --version               the version of peer and of each C library
      peer --help                  this text

    exit codes: 0 done; 2 bad arguments or bad input (the error names the file and the
                SDP line, or the m-section that cannot be answered)
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("peer: \(message)\n".utf8))
    exit(2)
}

func sdpCommand(_ arguments: [String]) {
    var answer = false
    var path: String?
    for argument in arguments {
        switch argument {
        case "--answer": answer = true
        case "-": path = "-"
        case let option where option.hasPrefix("--"): fail("sdp: unknown option \"\(option)\" (try peer --help)")
        default:
            guard path == nil else { fail("sdp: one FILE only, got \"\(path ?? "")\" and \"\(argument)\"") }
            path = argument
        }
    }
    guard let path else { fail("sdp: missing FILE (a path, or - for stdin)") }
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            fail("sdp: cannot read \"\(path)\": no such file")
        }
        guard !isDirectory.boolValue, let contents = FileManager.default.contents(atPath: path) else {
            fail("sdp: cannot read \"\(path)\": " + (isDirectory.boolValue ? "it is a directory" : "permission denied or unreadable"))
        }
        data = contents
    }
    let text = String(decoding: data, as: UTF8.self)
    let name = path == "-" ? "stdin" : path
    do {
        print(answer ? try SDPInspector.answer(text) : try SDPInspector.describe(text), terminator: answer ? "" : "\n")
    } catch {
        fail("sdp: \(name): \(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--version", "version":
    print(PeerVersion.text)
case "--help", "-h", "help":
    print(usage)
case nil:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
case "sdp":
    sdpCommand(Array(arguments.dropFirst()))
case "loopback":
    await loopbackCommand(Array(arguments.dropFirst()))
case "offer":
    await callCommand(role: .offer, Array(arguments.dropFirst()))
case "answer":
    await callCommand(role: .answer, Array(arguments.dropFirst()))
case "room":
    await callCommand(role: .room, Array(arguments.dropFirst()))
case let other?:
    fail("unknown command \"\(other)\" (try peer --help)")
}
