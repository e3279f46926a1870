// Where and how a WAMP session joins (WAMP Basic Profile §Session Establishment):
// the router URL and realm, authentication, TLS, time limits, message size and
// reconnecting.

/// Where and how to join.
public struct WampConfiguration: Sendable {
    /// Router URL, `ws://` or `wss://`.
    public var url: String
    /// Realm to join, e.g. "realm1".
    public var realm: String
    /// How to authenticate (anonymous by default).
    public var auth: WampAuth = .anonymous
    /// TLS: a private CA (PEM) to trust, or no certificate check at all.
    public var caFile: String?
    /// Accept any server certificate (wss only); off by default.
    public var insecure = false
    /// Time allowed for connect + HELLO … WELCOME, ms.
    public var joinTimeoutMs: UInt32 = 10_000
    /// Time allowed for each request (subscribe, publish with acknowledge, call, register), ms.
    public var requestTimeoutMs: UInt32 = 10_000
    /// Reconnect after the transport drops; nil: do not.
    public var reconnect: ReconnectPolicy? = ReconnectPolicy()
    /// Largest incoming message, bytes (default 1 MiB: signaling messages are a few KiB
    /// and an SDP is at most 256 KiB). libsoup refuses a larger one from its frame header
    /// and closes the WebSocket (1009, RFC 6455 §7.4.1), reported as
    /// ``WampStatus/disconnected(reason:)``; the session reconnects. So no more than this
    /// is ever buffered per message.
    public var maxMessageBytes: UInt64 = 1 << 20
    /// WebSocket keep-alive ping interval, seconds.
    public var keepaliveSeconds: UInt32 = 20

    /// A configuration for `url` and `realm` with the defaults above.
    public init(url: String, realm: String = "realm1", auth: WampAuth = .anonymous) {
        self.url = url; self.realm = realm; self.auth = auth
    }
}
