// main: the `peer` command line — offer, answer, room over a WAMP router; load (many calls in one process); loopback; sdp — and its exit codes.
import Bytes
import Foundation
import PeerAgent
import PeerCall

/// Exits 2 with `peer: <message>` on stderr (bad arguments or input), and with `--json`
/// anywhere on the command line also an `exit` event (code 2, the message as reason).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("peer: \(message)\n".utf8))
    if jsonRequested { JSONEvents().emit(["event": "exit", "code": 2, "reason": message]) }
    exit(2)
}

/// `--json` is on the command line (after the subcommand): argument errors are events too.
let jsonRequested = CommandLine.arguments.dropFirst(2).contains("--json")

/// `peer sdp FILE|- [--answer]`: prints the session description in FILE (or stdin) as
/// JSON, or with `--answer` the SDP answer peer would give to it; exits 2 on bad input.
func sdpCommand(_ arguments: [String]) {
    var answer = false
    var path: String?
    var p = OptionParser(command: "sdp", arguments)
    while let argument = p.next() {
        switch argument {
        case "--answer": answer = true
        case "-": path = "-"
        case let option where option.hasPrefix("--"): p.unknownOption()
        default:
            guard path == nil else { p.fail("one FILE only, got \"\(Untrusted.quoted(path ?? ""))\" and \"\(Untrusted.quoted(argument))\"") }
            path = argument
        }
    }
    guard let path else { p.fail("missing FILE (a path, or - for stdin)") }
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            p.fail("cannot read \"\(Untrusted.quoted(path))\": no such file")
        }
        guard !isDirectory.boolValue, let contents = FileManager.default.contents(atPath: path) else {
            p.fail("cannot read \"\(Untrusted.quoted(path))\": " + (isDirectory.boolValue ? "it is a directory" : "permission denied or unreadable"))
        }
        data = contents
    }
    let text = String(decoding: data, as: UTF8.self)
    let name = path == "-" ? "stdin" : Untrusted.quoted(path)
    do {
        print(answer ? try SDPInspector.answer(text) : try SDPInspector.describe(text), terminator: answer ? "" : "\n")
    } catch {
        p.fail("\(name): \(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
configureLogFromEnvironment()
switch arguments.first {
case "--version", "version":
    print(PeerVersion.text)
case "--help", "-h":
    print(Help.general)
case "help":
    guard let sub = arguments.dropFirst().first else { print(Help.general); break }
    guard let text = Help.text(for: sub) else { fail("help: no command \"\(Untrusted.quoted(sub))\" (offer, answer, room, load, loopback, sdp, report)") }
    print(text)
case nil:
    FileHandle.standardError.write(Data((Help.general + "\n").utf8))
    exit(2)
case "sdp":
    sdpCommand(Array(arguments.dropFirst()))
case "report":
    reportCommand(Array(arguments.dropFirst()))
case "loopback":
    await loopbackCommand(Array(arguments.dropFirst()))
case "offer":
    await callCommand(role: .offer, Array(arguments.dropFirst()))
case "answer":
    await callCommand(role: .answer, Array(arguments.dropFirst()))
case "room":
    await callCommand(role: .room, Array(arguments.dropFirst()))
case "load":
    await loadCommand(Array(arguments.dropFirst()))
case let other?:
    fail("unknown command \"\(Untrusted.quoted(other))\" (try peer --help)")
}
