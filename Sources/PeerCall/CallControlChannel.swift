// CallControlChannel: the `control` data channel of shared/PROTOCOL.md ("Control messages over a data channel") — one JSON command per message, each answered on the channel.
import Foundation
import PeerAgent

extension CallRun {
    /// A message on a channel labelled `control`: a command carried out and answered with
    /// `{"result": "ok"|"error", "action", "id", "reason"}` — `ping` at once with
    /// `{"action": "pong", "id"}`, a renegotiating command (hold, unhold, video, audio)
    /// when its answer is applied (or with `error` when it is refused, rolled back or
    /// times out), `tone` (what our tone source plays) and `bitrate` (our VP8 target) at
    /// once, an unsupported one with reason `unsupported`. A message that is not
    /// such JSON gets `error` naming what is wrong; the call goes on.
    func control(_ message: DataChannelMessage, on ch: DataChannel, link: CallLink) async -> CallResult? {
        guard case .text(let text) = message,
              let fields = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            reply(on: ch, link: link, ok: false, action: nil, id: nil,
                  reason: "not a JSON object: \(ControlCommandError.quote(message.preview))")
            return nil
        }
        let id = fields["id"]
        // A reply to our own command (`result`, or `pong`): delivered as a message, not run.
        if fields["result"] != nil || fields["action"] as? String == "pong" { return nil }
        guard let action = fields["action"] as? String else {
            reply(on: ch, link: link, ok: false, action: nil, id: id, reason: "no \"action\" string; expected e.g. {\"action\":\"hold\"}")
            return nil
        }
        onEvent(.dataControl(peer: link.peer, action: action))
        let renegotiating: CallAction?
        switch action {
        case "ping":
            var pong: [String: Any] = ["action": "pong"]
            if let id { pong["id"] = id }
            if let data = try? JSONSerialization.data(withJSONObject: pong, options: [.sortedKeys]) {
                send(.text(String(decoding: data, as: UTF8.self)), on: ch, link: link, origin: "control")
            }
            return nil
        case "hold": renegotiating = .hold
        case "unhold": renegotiating = .unhold
        case "video", "audio":
            guard let on = fields["on"] as? Bool else {
                reply(on: ch, link: link, ok: false, action: action, id: id, reason: "no \"on\" true or false")
                return nil
            }
            renegotiating = action == "video" ? (on ? .videoOn : .videoOff) : (on ? .audioOn : .audioOff)
        case "keyframe":
            let video = link.pc.allTransceivers.filter { $0.kind == .video && $0.currentDirection?.sends == true }
            video.forEach { $0.generateKeyFrame() }
            reply(on: ch, link: link, ok: !video.isEmpty, action: action, id: id, reason: video.isEmpty ? "no video is being sent" : nil)
            return nil
        case "hangup":
            reply(on: ch, link: link, ok: true, action: action, id: id, reason: nil)
            return await act(.hangup, origin: "datachannel")
        case "tone":
            guard let hz = (fields["hz"] as? NSNumber)?.doubleValue, (20...20_000).contains(hz) else {
                reply(on: ch, link: link, ok: false, action: action, id: id, reason: "no \"hz\" number in 20…20000")
                return nil
            }
            let done = link.pc.allTransceivers.filter { $0.kind == .audio }.map { $0.setToneFrequency(hz) }.contains(true)
            reply(on: ch, link: link, ok: done, action: action, id: id, reason: done ? nil : "unsupported")
            return nil
        case "bitrate":
            guard let kbps = (fields["kbps"] as? NSNumber)?.intValue, (30...50_000).contains(kbps) else {
                reply(on: ch, link: link, ok: false, action: action, id: id, reason: "no \"kbps\" number in 30…50000")
                return nil
            }
            let done = link.pc.allTransceivers.filter { $0.kind == .video }.map { $0.setBitrate(kbps: kbps) }.contains(true)
            reply(on: ch, link: link, ok: done, action: action, id: id, reason: done ? nil : "unsupported")
            return nil
        default:
            reply(on: ch, link: link, ok: false, action: action, id: id, reason: "unknown action \(ControlCommandError.quote(action))")
            return nil
        }
        guard let renegotiating else { return nil }
        let (result, refusal) = await perform(renegotiating, origin: "datachannel")
        if let refusal {
            reply(on: ch, link: link, ok: false, action: action, id: id, reason: refusal)
        } else {
            link.data.pendingControl.append((ch, action, id))
        }
        return result
    }

    /// Answers the control commands waiting on `link`'s renegotiation: `ok` once its
    /// answer is applied, `error` with `reason` when it did not happen.
    func answerPendingControl(_ link: CallLink, ok: Bool, reason: String?) {
        let pending = link.data.pendingControl
        link.data.pendingControl = []
        for p in pending { reply(on: p.channel, link: link, ok: ok, action: p.action, id: p.id, reason: reason) }
    }

    /// `{"result": …, "action": …, "id": …, "reason": …}` on `ch` (absent fields left out).
    private func reply(on ch: DataChannel, link: CallLink, ok: Bool, action: String?, id: Any?, reason: String?) {
        var fields: [String: Any] = ["result": ok ? "ok" : "error"]
        if let action { fields["action"] = action }
        if let id { fields["id"] = id }
        if let reason { fields["reason"] = reason }
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        send(.text(String(decoding: data, as: UTF8.self)), on: ch, link: link, origin: "control")
    }
}

extension DataChannelMessage {
    /// The text, or for binary how many bytes: for error messages.
    var preview: String {
        switch self {
        case .text(let t): t
        case .binary(let b): "<\(b.count) binary bytes>"
        }
    }
}
