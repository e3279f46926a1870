// W3C RTCRtpTransceiver: one m-section's sender and receiver, its negotiated mid and direction.
import Foundation
import Media
import SDP
import Synchronization

/// W3C `RTCRtpTransceiver`: one m-section's sender and receiver.
public final class RtpTransceiver: Sendable {
    /// `.audio` or `.video`.
    public let kind: MediaKind
    /// What we want (W3C `[[Direction]]`), the negotiated mid, direction and payload type
    /// (set by negotiation), read from any thread.
    private let negotiated: Mutex<(direction: Direction, mid: String?, currentDirection: Direction?, payloadType: Int?)>
    let sender: RtpSender
    let receiver: RtpReceiver
    /// Told when ``direction`` changes (the connection checks whether negotiation is needed).
    private let directionChanged: @Sendable () -> Void

    /// A transceiver of `kind` asking for `direction`, with its sender and receiver;
    /// `directionChanged` is called after each change of ``direction``.
    init(kind: MediaKind, direction: Direction, sender: RtpSender, receiver: RtpReceiver,
         directionChanged: @escaping @Sendable () -> Void = {}) {
        self.kind = kind
        negotiated = Mutex((direction, nil, nil, nil))
        self.sender = sender
        self.receiver = receiver
        self.directionChanged = directionChanged
    }

    /// Makes the sender's next video frame a key frame (W3C `RTCRtpSender.generateKeyFrame`);
    /// nothing for audio.
    public func generateKeyFrame() { if kind == .video { sender.generateKeyFrame() } }

    /// Plays `hz` on the sender's tone source (audio); false when it sends no tone.
    public func setToneFrequency(_ hz: Double) -> Bool { kind == .audio && sender.setToneFrequency(hz) }

    /// Sets the sender's VP8 target bitrate, kbit/s; false for audio.
    public func setBitrate(kbps: Int) -> Bool { sender.setBitrate(kbps: kbps) }

    /// The direction we want (W3C `RTCRtpTransceiver.direction`): sendrecv, sendonly,
    /// recvonly or inactive. Setting a new one takes effect through the next offer or
    /// answer; the connection then emits ``PeerConnectionEvent/negotiationNeeded``.
    public var direction: Direction {
        get { negotiated.withLock { $0.direction } }
        set {
            let changed = negotiated.withLock { n -> Bool in
                defer { n.direction = newValue }
                return n.direction != newValue
            }
            if changed { directionChanged() }
        }
    }
    /// True once its m-section was stopped (port 0) and its sender and receiver closed
    /// (W3C `[[Stopped]]`).
    var isStopped: Bool {
        get { stopped.withLock { $0.stopped } }
        set { stopped.withLock { $0.stopped = newValue } }
    }
    /// True once ``stop()`` was called (W3C `[[Stopping]]`): the next offer stops its
    /// m-section (port 0), and an answer gives it none.
    public var isStopping: Bool { stopped.withLock { $0.stopping } }
    private let stopped = Mutex((stopping: false, stopped: false))

    /// W3C `RTCRtpTransceiver.stop()`: sends nothing from now on (the sender's thread ends)
    /// and asks for a renegotiation (``PeerConnectionEvent/negotiationNeeded``) whose offer
    /// stops the m-section (port 0, RFC 8829 §5.2.2); when its answer is applied the
    /// receiver closes its files, complete. It cannot be undone; the section may later be
    /// recycled for a new track with a new mid.
    public func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s.stopping = true }
            return !s.stopping
        }
        guard first else { return }
        sender.stop()
        directionChanged()
    }
    /// The payload type negotiated for what we send (nil before negotiation).
    public internal(set) var payloadType: Int? {
        get { negotiated.withLock { $0.payloadType } }
        set { negotiated.withLock { $0.payloadType = newValue } }
    }

    /// The negotiated mid; nil before negotiation.
    public internal(set) var mid: String? {
        get { negotiated.withLock { $0.mid } }
        set { negotiated.withLock { $0.mid = newValue } }
    }
    /// The negotiated direction from our side; nil before negotiation, `.inactive` when rejected.
    public internal(set) var currentDirection: Direction? {
        get { negotiated.withLock { $0.currentDirection } }
        set { negotiated.withLock { $0.currentDirection = newValue } }
    }
    /// The SSRC we send with.
    public var ssrc: UInt32 { sender.ssrc }
    /// Stops sending on this transceiver (as W3C `sender.replaceTrack(null)` and then
    /// `stop()`): no more media goes out and the sender's thread ends; it cannot be
    /// restarted. What was sent stays in its statistics. Waits for that thread to finish
    /// the frame it is on.
    public func stopSending() { sender.stop() }
    /// The frame numbers read from the markers of decoded remote video frames, in
    /// arrival order (empty unless the remote sends the test pattern and decoding is on).
    public func receivedFrameMarkers() -> [Int] { receiver.markers() }
}
