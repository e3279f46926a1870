// ReportCommand: `peer report TIMELINE… -o report.html` (and `--report` at a call's end) — a stats timeline as an HTML page with plots, or as a chrome://webrtc-internals dump.
import Bytes
import Foundation
import PeerCall

/// What `peer report` writes.
enum ReportFormat: String {
    case html
    case webrtcInternals = "webrtc-internals"
}

/// `peer report TIMELINE… [-o PATH] [--format html|webrtc-internals] [--title TEXT]`:
/// reads the timelines (`--stats-timeline` files; `-` for stdin) and writes the report;
/// exits 2 naming the file and line of anything it cannot read, 1 when the report cannot
/// be made (gnuplot missing or failing) or written.
func reportCommand(_ arguments: [String]) -> Never {
    var files: [String] = []
    var output: String?
    var format = ReportFormat.html
    var title: String?
    var p = OptionParser(command: "report", arguments)
    while let argument = p.next() {
        switch argument {
        case "-o", "--output": output = p.output()
        case "--format":
            let text = p.value()
            guard let f = ReportFormat(rawValue: text) else { p.refuse(text, expected: "html or webrtc-internals") }
            format = f
        case "--title": title = p.value()
        case "-": files.append("-")
        case let option where option.hasPrefix("-"): p.unknownOption()
        default: files.append(argument)
        }
    }
    guard !files.isEmpty else { p.fail("missing TIMELINE (a --stats-timeline file, or - for stdin)") }
    var samples: [TimelineSample] = []
    for file in files {
        let text: String
        if file == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: file) else {
                p.fail("cannot read \"\(Untrusted.quoted(file))\": no such file or not readable")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        do {
            var read = try StatsTimeline.read(text, source: file == "-" ? "stdin" : Untrusted.quoted(file))
            // Two timelines (two ends, or two members of a room) may both name a peer "C":
            // each file's connections are kept apart by the file's name.
            if files.count > 1 {
                let name = file == "-" ? "stdin" : URL(fileURLWithPath: file).lastPathComponent
                for i in read.indices { read[i].peer = "\(name): \(read[i].peer)" }
            }
            samples += read
        } catch {
            p.fail("\(error)")
        }
    }
    guard !samples.isEmpty else { p.fail("no stats snapshot in \(files.map { Untrusted.quoted($0) }.joined(separator: ", ")) (an empty timeline)") }
    let path = output ?? (format == .html ? "report.html" : "webrtc-internals.json")
    if let problem = Preflight.outputProblem(path) { p.refuse(path, expected: "a file that can be written: \(problem)", option: "-o") }
    do {
        try makeReport(samples, format: format, title: title ?? "peer call report: " + files.joined(separator: ", "), to: path)
    } catch {
        FileHandle.standardError.write(Data("peer report: \(error)\n".utf8))
        exit(1)
    }
    FileHandle.standardError.write(Data("peer report: \(samples.count) snapshots → \(path)\n".utf8))
    exit(0)
}

/// Writes the report of `samples` in `format` to `path`.
/// - Throws: `Gnuplot.Failure`, or the file's write error.
func makeReport(_ samples: [TimelineSample], format: ReportFormat, title: String, to path: String) throws {
    let text = switch format {
    case .html: try CallReport.html(samples, title: title)
    case .webrtcInternals: CallReport.webrtcInternals(samples)
    }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

/// `--report PATH` at the end of a call: the HTML report of `timelines`; a `report` event
/// with `--json` (`out`), a line on stderr when it fails (the call's exit code stays).
func writeReport(timelines: [String], to path: String, json out: JSONEvents?) {
    do {
        var samples: [TimelineSample] = []
        for file in timelines {
            guard let data = FileManager.default.contents(atPath: file) else { throw ReportInputMissing(path: file) }
            samples += try StatsTimeline.read(String(decoding: data, as: UTF8.self), source: file)
        }
        guard !samples.isEmpty else { throw ReportInputMissing(path: timelines.joined(separator: ", ")) }
        try makeReport(samples, format: .html, title: "peer call report", to: path)
        say("report: \(path) (\(samples.count) snapshots)")
        out?.emit(["event": "report", "path": path, "snapshots": samples.count])
    } catch {
        say("report \(path) not made: \(error)", level: .error)
        out?.emit(["event": "report", "path": path, "error": "\(error)"])
    }
}

/// The call's timeline could not be read back, or holds no snapshot (it could not be
/// written, or the call ended before its first second).
struct ReportInputMissing: Error, CustomStringConvertible {
    /// The timeline file(s).
    var path: String
    var description: String { "no stats snapshot in \(path) (not written, or the call ended before its first)" }
}
