// W3C RTCRtpTransceiver: one m-section's sender and receiver, its negotiated mid and direction.
import Foundation
import Media
import SDP
import Synchronization

/// W3C `RTCRtpTransceiver`: one m-section's sender and receiver.
public final class RtpTransceiver: Sendable {
    /// `.audio` or `.video`.
    public let kind: MediaKind
    /// The direction we asked for.
    public let direction: Direction
    /// The negotiated mid and direction (set by negotiation, read from any thread).
    private let negotiated = Mutex<(mid: String?, currentDirection: Direction?)>((nil, nil))
    let sender: RtpSender
    let receiver: RtpReceiver

    /// A transceiver of `kind` asking for `direction`, with its sender and receiver.
    init(kind: MediaKind, direction: Direction, sender: RtpSender, receiver: RtpReceiver) {
        self.kind = kind
        self.direction = direction
        self.sender = sender
        self.receiver = receiver
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
