// CallReport: a stats timeline as one self-contained HTML page (summary per peer and direction, gnuplot SVG plots inline) or as a chrome://webrtc-internals dump.
import Foundation
import PeerAgent
import WampClient

/// Makes the call report of `peer report` and `--report` from timeline samples.
public enum CallReport {
    /// One HTML page that opens offline: a summary per peer and direction, then the plots
    /// (bitrate each way, frames per second, RTT, packets lost, jitter, end-to-end
    /// latency, packets dropped on arrival by reason; freezes marked), each an SVG drawn by
    /// gnuplot and written into the page.
    /// - Throws: ``Gnuplot/Failure`` when a plot cannot be drawn.
    public static func html(_ samples: [TimelineSample], title: String, plotter: Gnuplot = Gnuplot()) throws(Gnuplot.Failure) -> String {
        let series = ReportSeries(samples)
        var body = "<h1>\(escape(title))</h1>\n"
        let first = samples.map(\.timestamp).min().map { Date(timeIntervalSince1970: $0 / 1000) }
        body += "<p class=\"meta\">\(samples.count) snapshots of \(series.peers.count) peer\(series.peers.count == 1 ? "" : "s") over "
            + String(format: "%.1f s", series.duration)
            + (first.map { ", from \(ISO8601DateFormatter().string(from: $0))" } ?? "") + ". Made by peer \(escape(PeerVersion.current)).</p>\n"
        body += "<h2>Summary</h2>\n<table>\n<tr><th>peer</th><th>direction</th><th>figure</th><th>value</th></tr>\n"
        for row in series.summary {
            body += "<tr><td>\(escape(row.peer))</td><td>\(escape(row.direction))</td><td>\(escape(row.figure))</td><td class=\"n\">\(escape(row.value))</td></tr>\n"
        }
        body += "</table>\n<h2>Over time</h2>\n"
        for plot in series.plots {
            body += "<section class=\"plot\" data-title=\"\(escape(plot.title))\">\n"
            if let svg = try plotter.svg(plot, xRange: series.duration) {
                body += svg + "\n"
            } else {
                body += "<h3>\(escape(plot.title))</h3><p class=\"meta\">no data in this timeline</p>\n"
            }
            body += "</section>\n"
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body { font: 14px sans-serif; margin: 24px; color: #222; }
            table { border-collapse: collapse; margin-bottom: 16px; }
            td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            .meta { color: #666; }
            section.plot { margin: 12px 0; }
            </style></head>
            <body>
            \(body)</body></html>

            """
    }

    /// The timeline as a `chrome://webrtc-internals` dump (what its "Create a dump" saves
    /// and viewers such as fippo's webrtc-dump-importer load): one entry per peer under
    /// `PeerConnections`, each stats field a series `"<id>-<field>"` with `startTime`,
    /// `endTime` (ISO 8601), `statsType` and `values` (a JSON array as a string, one
    /// value a second).
    public static func webrtcInternals(_ samples: [TimelineSample]) -> String {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ ms: Double) -> JSONValue { .string(iso.string(from: Date(timeIntervalSince1970: ms / 1000))) }
        var connections: [String: JSONValue] = [:]
        for (index, (peer, list)) in TimelineSample.byPeer(samples).enumerated() {
            var series: [String: (type: String, start: Double, end: Double, values: [String])] = [:]
            for s in list {
                for (id, fields) in s.objects {
                    let type = fields["type"]?.string ?? ""
                    for (name, value) in fields where name != "id" && name != "type" && name != "timestamp" {
                        let key = "\(id)-\(name)"
                        var entry = series[key] ?? (type, s.timestamp, s.timestamp, [])
                        entry.end = s.timestamp
                        entry.values.append(value.json)
                        series[key] = entry
                    }
                }
            }
            var stats: [String: JSONValue] = [:]
            for (key, e) in series {
                stats[key] = .object(["startTime": time(e.start), "endTime": time(e.end), "statsType": .string(e.type),
                                      "values": .string("[" + e.values.joined(separator: ",") + "]")])
            }
            connections["\(getpid())-\(index + 1)"] = .object([
                "pid": .int(Int64(getpid())), "lid": .int(Int64(index + 1)), "url": .string("peer: \(peer)"),
                "rtcConfiguration": .string("{}"), "constraints": .string(""),
                "updateLog": .array([]), "stats": .object(stats),
            ])
        }
        let dump: JSONValue = .object(["getUserMedia": .array([]), "PeerConnections": .object(connections),
                                       "UserAgent": .string("peer/\(PeerVersion.current)"), "version": .string(PeerVersion.current)])
        return dump.serialized + "\n"
    }

    /// `text` with HTML's five special characters escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
