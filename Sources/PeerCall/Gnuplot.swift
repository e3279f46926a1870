// Gnuplot: a ReportPlot drawn as SVG by gnuplot (Debian's gnuplot-nox; its svg terminal), for the self-contained report page.
import Dispatch
import Foundation

/// Draws ``ReportPlot``s with the `gnuplot` program (its SVG terminal, no mouse script:
/// the SVG stands alone inside an HTML page that must open offline).
public struct Gnuplot: Sendable {
    /// Why a plot could not be drawn.
    public struct Failure: Error, CustomStringConvertible {
        /// One sentence: what failed (gnuplot missing, its exit and message, a file it left out).
        public var description: String
    }

    /// The program; found on `PATH` when nil.
    public var executable: String
    /// Longest a plot may take before gnuplot is stopped, seconds.
    static let timeoutSeconds = 30.0
    /// Size of each plot in pixels.
    public var width = 960, height = 320

    /// A plotter running `executable` (default: `gnuplot` on PATH, from scripts/bootstrap).
    public init(executable: String? = nil) {
        self.executable = executable ?? Self.onPath("gnuplot") ?? "/usr/bin/gnuplot"
    }

    /// The first executable `name` in the directories of `PATH`.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The SVG of `plot` (an `<svg>` element, no XML prolog), or nil when it has no point.
    /// - Throws: ``Failure`` when gnuplot is missing or fails (its own message).
    public func svg(_ plot: ReportPlot, xRange: Double) throws(Failure) -> String? {
        let lines = plot.lines.filter { !$0.points.isEmpty }
        guard !lines.isEmpty else { return nil }
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failure(description: "gnuplot not found (\(executable)): install Debian's gnuplot-nox (scripts/bootstrap does)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-report-\(getpid())-\(UUID().uuidString)").path
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw Failure(description: "cannot make \(dir): \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var script = """
            set terminal svg size \(width),\(height) dynamic font "sans,11" background rgb "white"
            set termoption noenhanced
            set output \(Self.quoted(dir + "/plot.svg"))
            set title \(Self.quoted(plot.title))
            set xlabel 'time (s)'
            set ylabel \(Self.quoted(plot.yLabel))
            set grid
            set key outside right top
            set xrange [0:\(max(1, xRange))]
            set yrange [0:*]

            """
        for (i, mark) in plot.marks.enumerated() {
            script += "set arrow \(i + 1) from \(mark.0), graph 0 to \(mark.0), graph 1 nohead lc rgb \"#d62728\" dt 2\n"
        }
        var parts: [String] = []
        for (i, line) in lines.enumerated() {
            let file = "\(dir)/line\(i).dat"
            let text = line.points.map { "\($0.0) \($0.1.isFinite ? $0.1 : 0)" }.joined(separator: "\n") + "\n"
            do { try text.write(toFile: file, atomically: false, encoding: .utf8) } catch {
                throw Failure(description: "cannot write \(file): \(error)")
            }
            parts.append("\(Self.quoted(file)) using 1:2 with linespoints pt 7 ps 0.4 title \(Self.quoted(line.name))")
        }
        if !plot.marks.isEmpty {  // the marks' meaning in the key
            parts.append("NaN with lines lc rgb \"#d62728\" dt 2 title \"freeze\"")
        }
        script += "plot " + parts.joined(separator: ", \\\n     ") + "\nunset output\n"
        // The script from a file, not a pipe: gnuplot exiting early cannot end us with SIGPIPE.
        let scriptFile = "\(dir)/plot.gp"
        do { try script.write(toFile: scriptFile, atomically: false, encoding: .utf8) } catch {
            throw Failure(description: "cannot write \(scriptFile): \(error)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [scriptFile]
        let errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { throw Failure(description: "cannot run \(executable): \(error)") }
        let timeout = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeoutSeconds, execute: timeout)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        timeout.cancel()
        guard process.terminationStatus == 0, let svg = try? String(contentsOfFile: "\(dir)/plot.svg", encoding: .utf8),
              let start = svg.range(of: "<svg") else {
            throw Failure(description: "gnuplot failed (status \(process.terminationStatus)) on \"\(plot.title)\": \(message.prefix(400))")
        }
        return String(svg[start.lowerBound...])
    }

    /// `text` as a gnuplot single-quoted string: no escapes, no backquote or macro
    /// substitution inside it (a room's user ids come from outside); `'` doubled, control
    /// characters as spaces.
    static func quoted(_ text: String) -> String {
        let clean = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        return "'" + clean.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
