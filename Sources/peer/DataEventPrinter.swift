// DataEventPrinter: the data channel events of a call on stderr and as --json lines (`datachannel`, `message`, `dataError`, `send`, `control`, `dataSummary`).
import Foundation
import PeerAgent
import PeerCall

/// Prints one data channel event: a line on stderr (messages only with `--json` off,
/// at most 200 characters of them), and with `json` one JSON line through `out`:
/// `{"event":"message","peer":…,"label":"chat","text":"…"}` (binary as `"binary"`, base64).
func printDataEvent(_ event: CallEvent, json: Bool, out: JSONEvents) {
    switch event {
    case let .dataChannel(peer, label, id, state, detail):
        say("\(peer): data channel \"\(label)\"\(id.map { " (id \($0))" } ?? "") \(state == "datachannel" ? "opened by the peer" : state)"
            + (detail.map { ": \($0)" } ?? ""))
        if json {
            out.emit(["event": "datachannel", "peer": peer, "label": label, "id": id ?? NSNull(), "state": state == "datachannel" ? "opened" : state,
                      "detail": detail ?? NSNull()])
        }
    case let .dataMessage(peer, label, message):
        var fields: [String: Any] = ["event": "message", "peer": peer, "label": label, "bytes": message.byteCount]
        switch message {
        case .text(let t):
            fields["text"] = t
            if !json { say("\(peer): \(label): \(String(t.unicodeScalars.prefix(200).map { $0.value < 0x20 ? "?" : Character($0) }))") }
        case .binary(let b):
            fields["binary"] = Data(b).base64EncodedString()
            if !json { say("\(peer): \(label): \(b.count) binary bytes") }
        }
        if json { out.emit(fields) }
    case let .dataError(peer, label, reason):
        say("\(peer): data channel\(label.map { " \"\($0)\"" } ?? ""): \(reason)")
        if json { out.emit(["event": "dataError", "peer": peer, "label": label ?? NSNull(), "reason": reason]) }
    case let .dataSendResult(label, ok, detail, origin):
        if !ok { say("send on \"\(label)\" (\(origin)): not done\(detail.map { ": \($0)" } ?? "")") }
        emitResult(["event": "send", "label": label], ok: ok, detail: detail, origin: origin, json: json, out: out)
    case let .dataControl(peer, action):
        say("\(peer): control command \(action)")
        if json { out.emit(["event": "control", "peer": peer, "action": action]) }
    case let .dataSummary(peer, label, messagesSent, bytesSent, messagesReceived, bytesReceived, numbered):
        var line = "\(peer): data channel \"\(label)\": sent \(messagesSent) messages (\(bytesSent) bytes), received \(messagesReceived) (\(bytesReceived) bytes)"
        var fields: [String: Any] = ["event": "dataSummary", "peer": peer, "label": label, "messagesSent": messagesSent,
                                     "bytesSent": bytesSent, "messagesReceived": messagesReceived, "bytesReceived": bytesReceived]
        if let n = numbered {
            var numberedFields: [String: Any] = ["received": n.received, "missing": n.missing, "duplicates": n.duplicates, "outOfOrder": n.outOfOrder,
                                                 "outOfRange": n.outOfRange]
            let gaps = n.gaps()
            if !gaps.isEmpty { numberedFields["gaps"] = gaps.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" } }
            if let first = n.firstAt, let last = n.lastAt, last > first {
                numberedFields["seconds"] = ((last - first) * 10_000).rounded() / 10_000
            }
            fields["numbered"] = numberedFields
            line += "; numbered: \(n.received) received, \(n.missing) missing, \(n.duplicates) repeated, \(n.outOfOrder) out of order"
        }
        say(line)
        if json { out.emit(fields) }
    default:
        break
    }
}
