// libFuzzer target for PeerCall's signaling payloads (Signaling.description(from:) and
// Signaling.candidate(from:), shared/PROTOCOL.md), fed the JSON value decoded from the
// input, its array elements, and the input itself as a JSON string; and for the control
// lines of a running call (ControlCommand, `--control stdin`) and `--at` values
// (ScheduledAction) and `peer load`'s prefix and room patterns (LoadPlan), fed the input's
// lines; and for stats timelines (`peer report`:
// StatsTimeline.read, then the report's series and its webrtc-internals export, which must
// be JSON again), fed the whole input. A crash here IS the
// finding: each check traps with fatalError naming the property that broke.
import PeerCall
import WampClient

/// Checks one WAMP argument: what reads as a description or a candidate is written back
/// (in every wire form) to a value that reads as the same description or candidate.
private func check(_ value: JSONValue) {
    if let d = try? Signaling.description(from: value) {
        guard !d.sdp.isEmpty else { fatalError("description with an empty sdp from \(value.serialized.debugDescription)") }
        for asString in [false, true] {
            let wire = Signaling.value(d, asString: asString)
            guard let back = try? Signaling.description(from: wire), back == d else {
                fatalError("description round trip (asString \(asString)) broke: \(value.serialized.debugDescription) -> \(wire.serialized.debugDescription)")
            }
        }
    }
    if let c = try? Signaling.candidate(from: value) {
        let wire = Signaling.value(c)
        guard case .string = wire else { fatalError("candidate written as \(wire.serialized), not a JSON string") }
        guard let back = try? Signaling.candidate(from: wire), back == c else {
            fatalError("candidate round trip broke: \(value.serialized.debugDescription) -> \(wire.serialized.debugDescription)")
        }
    }
}

/// `peer load`'s `--prefix-pattern` and `--room-pattern` value `pattern`: refused with an
/// error that quotes it bounded (200 characters, each escape at most 6) and escaped, or taken, and then every call's topic prefix
/// (room) holds no `{i}` and no empty URI part.
private func checkLoadPattern(_ pattern: String) {
    let template = CallOptions(role: .offer, router: "ws://127.0.0.1:8080/ws")
    for signaling in [LoadPlan.SignalingMode.legacy(offers: true, prefixPattern: pattern), .rooms(roomPattern: pattern, roomSize: 3)] {
        let plan = LoadPlan(calls: 100_000, rampPerSecond: 10, signaling: signaling, template: template)
        do {
            try plan.validate()
        } catch {
            guard error.description.count <= 2_000, !error.description.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x1B }) else {
                fatalError("pattern error not bounded or not escaped: \(error.description.debugDescription)")
            }
            continue
        }
        for i in [1, 17, 100_000] {
            let name = plan.signalingName(ofCall: i)
            guard !name.contains(LoadPlan.placeholder), !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                fatalError("pattern \(pattern.debugDescription) gave call \(i) the name \(name.debugDescription)")
            }
        }
    }
}

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    // The input as a payload published as a JSON string.
    check(.string(text))
    // The input as the JSON of a payload, or of the whole args list (legacy: [description],
    // room: [fromUser, descriptionString]).
    if let value = try? JSONValue(parsing: text) {
        check(value)
        if case .array(let args) = value {
            for arg in args.prefix(4) { check(arg) }
        }
    }
    // Control lines: a command names a known action; an error quotes at most 80
    // characters of the line, with control characters escaped.
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(8) {
        do {
            let command = try ControlCommand(parsing: String(line))
            guard CallAction(rawValue: command.action.rawValue) == command.action else { fatalError("control action does not round-trip") }
        } catch {
            guard error.reason.count <= 400, !error.reason.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x1B }) else {
                fatalError("control error not bounded or not escaped: \(error.reason.debugDescription)")
            }
        }
        if let at = try? ScheduledAction(parsing: String(line)) {
            guard at.seconds >= 0, at.seconds <= 86_400 else { fatalError("--at \(line.debugDescription) gave \(at.seconds) s") }
        }
        checkLoadPattern(String(line))
    }
    // A stats timeline: read, summarised and exported without a crash; the export parses.
    if let samples = try? StatsTimeline.read(text, source: "fuzz") {
        _ = ReportSeries(samples)
        let dump = CallReport.webrtcInternals(samples)
        guard (try? JSONValue(parsing: dump)) != nil else { fatalError("webrtc-internals export is not JSON: \(dump.prefix(200).debugDescription)") }
    }
    return 0
}
