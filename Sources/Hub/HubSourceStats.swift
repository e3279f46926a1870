// HubSourceStats: what one shared source of the media hub did — frames produced, encodes, file reads, key-frame requests merged and forced, hops onto loops.

/// The counters of one shared source (``MediaHub/stats``), read without waiting for its thread.
public struct HubSourceStats: Sendable, Equatable {
    /// The source.
    public var spec: HubSourceSpec
    /// Subscriptions to it now.
    public var subscribers = 0
    /// Event loops they live on.
    public var loops = 0
    /// Shared frames made (each packetized once), and the key frames among them (video).
    public var framesProduced = 0, keyFramesProduced = 0
    /// Frames (or audio blocks) encoded — once per frame, whatever the subscriber count —
    /// and the seconds encoding took.
    public var framesEncoded = 0
    /// Seconds spent in the encoder.
    public var encodeSeconds = 0.0
    /// Frames (or Opus packets) read from a file: once per frame for all subscribers.
    public var framesRead = 0
    /// Payload bytes of the shared frames made (each held once).
    public var payloadBytes = 0
    /// The merged and rate-limited key-frame requests (``KeyframeRequestGate``).
    public var keyframeRequests = KeyframeRequestGate.Counts()
    /// PLI/FIR received for a file passed through, which no encoder can serve.
    public var unserviceableKeyframeRequests = 0
    /// Hops onto subscribers' loops (one per frame and loop).
    public var hops = 0
    /// Frames not handed to a loop that was too far behind.
    public var framesDroppedForSlowLoops = 0
    /// Why the source stopped producing (a file error, its end), nil while it runs.
    public var failure: String?

    /// All zero for `spec`.
    public init(spec: HubSourceSpec) { self.spec = spec }
}
