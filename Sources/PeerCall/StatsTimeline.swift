// StatsTimeline: a call's getStats snapshots, one a second per peer, as JSON lines (`--stats-timeline`) — written during the call, read back by `peer report`.
import Bytes
import Foundation
import PeerAgent
import Synchronization
import WampClient

/// One snapshot of a peer connection's statistics: when (ms since the Unix epoch), whose
/// (the call's peer name), and every stats object by id — each a flat dictionary of its
/// numbers, strings and booleans (W3C webrtc-stats names; `peer-e2e` for the markers).
public struct TimelineSample: Sendable, Equatable {
    /// When it was taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The call's name for the remote peer ("answerer", a room user id).
    public var peer: String
    /// The stats objects by id: field name → value.
    public var objects: [String: [String: TimelineValue]]

    /// `samples` by peer, the peers in the order they first appear, each peer's samples in
    /// the order given.
    public static func byPeer(_ samples: [TimelineSample]) -> [(peer: String, samples: [TimelineSample])] {
        var order: [String] = []
        var groups: [String: [TimelineSample]] = [:]
        for s in samples {
            if groups[s.peer] == nil { order.append(s.peer) }
            groups[s.peer, default: []].append(s)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    /// The objects of W3C `type` (e.g. "inbound-rtp"), sorted by id.
    public func objects(ofType type: String) -> [(id: String, fields: [String: TimelineValue])] {
        objects.filter { $0.value["type"]?.string == type }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

/// A stats field's value in a timeline.
public enum TimelineValue: Sendable, Equatable {
    /// A JSON number (counts, seconds, bytes: as the stats field says).
    case number(Double)
    /// A JSON string (`kind`, `clock`, ids).
    case string(String)
    /// A JSON boolean (`nominated`).
    case bool(Bool)

    /// The number, if it is one.
    public var number: Double? { if case .number(let d) = self { d } else { nil } }
    /// The string, if it is one.
    public var string: String? { if case .string(let s) = self { s } else { nil } }
    /// As JSON text.
    var json: String {
        switch self {
        case .number(let d): return d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)) : "null"
        case .string(let s): return JSONValue.string(s).serialized
        case .bool(let b): return b ? "true" : "false"
        }
    }
}

/// Why a timeline could not be read: the line and what was wrong with it.
public struct TimelineError: Error, Equatable, CustomStringConvertible {
    /// The file (or "-") and the line number (from 1).
    public var source: String, line: Int
    /// What was wrong.
    public var reason: String
    /// One sentence naming the place.
    public var description: String { "\(source):\(line): \(reason)" }
}

/// Reads and writes stats timelines: one JSON object per line,
/// `{"timestamp": ms, "peer": "…", "report": {"stats": {id: {field: value…}…}, "timings": {…}}}`.
public enum StatsTimeline {
    /// Longest line taken, bytes (a snapshot of a big call is a few KB).
    public static let maximumLineBytes = 1 << 20

    /// The line for `report` of `peer` at `timestamp` (ms since the Unix epoch).
    public static func line(peer: String, timestamp: Double, report: StatsReport) -> String {
        #"{"peer":\#(JSONValue.string(peer).serialized),"timestamp":\#(timestamp),"report":\#(report.json)}"#
    }

    /// The samples in `text` (the whole file), in order; empty lines are skipped.
    /// - Throws: ``TimelineError`` naming the first line that is not a snapshot.
    public static func read(_ text: String, source: String) throws(TimelineError) -> [TimelineSample] {
        var samples: [TimelineSample] = []
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty else { continue }
            samples.append(try sample(String(line), source: source, line: number))
        }
        return samples
    }

    /// One line's sample.
    /// - Throws: ``TimelineError`` naming what is missing or malformed.
    public static func sample(_ line: String, source: String, line number: Int) throws(TimelineError) -> TimelineSample {
        func fail(_ reason: String) -> TimelineError { TimelineError(source: source, line: number, reason: reason) }
        guard line.utf8.count <= maximumLineBytes else { throw fail("a line of \(line.utf8.count) bytes (at most \(maximumLineBytes))") }
        let value: JSONValue
        do { value = try JSONValue(parsing: line) } catch { throw fail("not JSON: \(Untrusted.quoted(line, limit: 80))") }
        guard case .object(let top) = value else { throw fail("not a JSON object") }
        guard let timestamp = top["timestamp"]?.doubleValue, timestamp.isFinite else { throw fail("no numeric \"timestamp\"") }
        guard let peer = top["peer"]?.stringValue else { throw fail("no \"peer\" string") }
        guard case .object(let stats)? = top["report"]?["stats"] else { throw fail("no \"report\".\"stats\" object") }
        var objects: [String: [String: TimelineValue]] = [:]
        for (id, object) in stats {
            guard case .object(let fields) = object else { throw fail("stats object \"\(Untrusted.quoted(id, limit: 80))\" is not a JSON object") }
            var flat: [String: TimelineValue] = [:]
            for (name, v) in fields {
                switch v {
                case .int(let i): flat[name] = .number(Double(i))
                case .double(let d): flat[name] = .number(d)
                case .string(let s): flat[name] = .string(s)
                case .bool(let b): flat[name] = .bool(b)
                case .null, .array, .object: continue  // not a plotted value
                }
            }
            objects[id] = flat
        }
        return TimelineSample(timestamp: timestamp, peer: peer, objects: objects)
    }
}

/// Appends timeline lines to a file, each written whole (a reader sees complete lines);
/// thread-safe.
public final class StatsTimelineWriter: Sendable {
    /// The file's path.
    public let path: String
    private let handle: Mutex<FileHandle?>

    /// Creates (or empties) the file at `path`.
    /// - Throws: `CocoaError` when the file cannot be created.
    public init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        self.path = path
        handle = Mutex(try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
    }

    /// Appends `report` of `peer` taken at `timestamp` (ms since the Unix epoch).
    public func append(peer: String, timestamp: Double, report: StatsReport) {
        let data = Data((StatsTimeline.line(peer: peer, timestamp: timestamp, report: report) + "\n").utf8)
        handle.withLock { h in
            do { try h?.write(contentsOf: data) } catch { h = nil }  // a full disk: the call goes on
        }
    }

    /// Closes the file.
    public func close() { handle.withLock { h in try? h?.close(); h = nil } }
}
