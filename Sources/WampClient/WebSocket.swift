// A WebSocket client connection (RFC 6455 "The WebSocket Protocol") over libsoup-3 on
// the event loop thread: opening ws:// and wss://, text and binary messages, close codes.
import CGLib
import CSoup
import EventLoop
import Foundation
import Synchronization

/// A WebSocket client connection (RFC 6455) over libsoup-3, living on the shared
/// ``EventLoop`` thread: every libsoup call is made there and ``Event``s are
/// delivered there, in order. `ws://` and `wss://` (certificate checked against
/// the system store by default, or a private CA file, or not at all when
/// ``Options/insecure`` is set).
///
/// Thread rules: ``connect(_:loop:handler:)`` and ``send(_:)``/``close(code:reason:)``
/// may be called from any thread; they hop to the loop thread. The handler runs
/// on the loop thread and must not block. The libsoup objects and the handler are
/// confined to the loop thread (a ``LoopBound``); ``selectedProtocol`` is in a `Mutex`.
public final class WebSocket: Sendable {

    /// Connection options.
    public struct Options: Sendable {
        /// `ws://host:port/path` or `wss://…`.
        public var url: String
        /// Subprotocols offered (`Sec-WebSocket-Protocol`); the server must pick the first.
        public var protocols: [String] = ["wamp.2.json"]
        /// PEM file of a private CA to trust instead of the system store (wss only).
        public var caFile: String?
        /// Accept any server certificate (wss only). Off by default.
        public var insecure = false
        /// Interval of keep-alive pings, seconds (0 = none).
        public var keepaliveSeconds: UInt32 = 20
        /// Largest incoming message accepted, bytes; larger ones close with 1009.
        public var maxMessageBytes: UInt64 = 16 << 20
        /// Time allowed for TCP, TLS and the HTTP upgrade together, milliseconds.
        public var connectTimeoutMs: UInt32 = 10_000

        /// Options for `url` with the defaults above.
        public init(url: String) { self.url = url }
    }

    /// What the connection reports, on the loop thread.
    public enum Event: Sendable, Equatable {
        /// One complete text message.
        case text(String)
        /// One complete binary message (WAMP JSON does not use these).
        case binary([UInt8])
        /// The connection closed; `code` per RFC 6455 §7.4 (1005 when the peer gave none,
        /// 1006 when it vanished), `reason` as the peer sent it.
        case closed(code: UInt16, reason: String)
        /// libsoup reported an error on the open connection (a close follows);
        /// `code` is the RFC 6455 close code libsoup closes with for protocol errors
        /// (1002 protocol error, 1007 bad data, 1009 message too big), else nil.
        case error(code: UInt16?, message: String)
    }

    /// The libsoup objects of a connection and its handler: loop thread only (held in a
    /// ``LoopBound``).
    private final class State {
        let loop: EventLoop
        var session: UnsafeMutablePointer<SoupSession>?
        var message: OpaquePointer?
        var connection: OpaquePointer?
        var handler: (@Sendable (Event) -> Void)?
        var closedReported = false

        init(loop: EventLoop) { self.loop = loop }

        deinit {
            // Last reference (of the socket, wherever it goes): release the C objects on
            // the loop thread, where libsoup lives.
            let objects = GObjects([connection.map { UnsafeMutableRawPointer($0) }, message.map { UnsafeMutableRawPointer($0) },
                                    session.map { UnsafeMutableRawPointer($0) }].compactMap { $0 })
            let queued = loop.async { objects.unref() }
            if !queued { objects.unref() }
        }
    }

    let loop: EventLoop
    private let confined: LoopBound<State>
    private let chosenProtocol = Mutex<String?>(nil)

    /// The connection's libsoup objects and handler. Precondition: called on the loop thread.
    private var state: State { confined.value }

    /// The subprotocol the server chose (`wamp.2.json`); set on the loop thread before
    /// the connection is handed out, readable from any thread.
    public var selectedProtocol: String? { chosenProtocol.withLock { $0 } }

    private init(loop: EventLoop) {
        self.loop = loop
        confined = LoopBound(State(loop: loop), loop: loop)
    }

    /// Opens a connection and completes the HTTP upgrade.
    /// - Parameter handler: receives every ``Event`` after the connection is open.
    /// - Throws: ``WebSocketError``: a URL libsoup cannot parse, connection refused,
    ///   TLS failure, an HTTP status other than 101 (e.g. 404 for a wrong path),
    ///   the server not choosing our subprotocol, or no answer within the timeout.
    public static func connect(_ options: Options, loop: EventLoop = .shared,
                               handler: @escaping @Sendable (Event) -> Void) async throws(WebSocketError) -> WebSocket {
        let result: Result<WebSocket, WebSocketError> = await withCheckedContinuation { continuation in
            let queued = loop.async {
                open(options, loop: loop, handler: handler) { continuation.resume(returning: $0) }
            }
            if !queued { continuation.resume(returning: .failure(.failed(url: options.url, reason: "event loop stopped"))) }
        }
        return try result.get()
    }

    /// Opens a connection from the loop thread: `completion` runs on the loop thread
    /// once the upgrade succeeded or failed, before any ``Event`` of the connection is
    /// delivered, so a caller can set up its state (and send its first message) in
    /// the same loop turn. Errors as in ``connect(_:loop:handler:)``.
    public static func open(_ options: Options, loop: EventLoop = .shared,
                            handler: @escaping @Sendable (Event) -> Void,
                            completion: @escaping (Result<WebSocket, WebSocketError>) -> Void) {
        WebSocket(loop: loop).start(options, handler: handler, finish: completion)
    }

    /// Pending connect attempt: the continuation, the timer and the options. Not
    /// `Sendable`: used on the loop thread only, by libsoup's C callbacks (through an
    /// `Unmanaged` reference) and by the connect timer (through a ``LoopBound``).
    private final class Attempt {
        let socket: WebSocket
        let options: Options
        let cancellable: UnsafeMutablePointer<GCancellable>
        let finish: (Result<WebSocket, WebSocketError>) -> Void
        var timer: UInt32 = 0
        var timedOut = false
        init(socket: WebSocket, options: Options, finish: @escaping (Result<WebSocket, WebSocketError>) -> Void) {
            self.socket = socket; self.options = options; self.finish = finish
            cancellable = g_cancellable_new()
        }
        deinit { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
    }

    /// A proxy is named in the environment (`http_proxy`, `https_proxy`, `all_proxy`,
    /// either case): then libsoup's default resolver (libproxy, which reads them) is kept.
    static let proxyConfigured: Bool = {
        let env = ProcessInfo.processInfo.environment
        return ["http_proxy", "https_proxy", "all_proxy"].contains { name in
            [name, name.uppercased()].contains { !(env[$0] ?? "").isEmpty }
        }
    }()

    /// Starts the upgrade of a new socket (loop thread): `finish` runs once with the
    /// outcome, from libsoup's callback or at once when the options are unusable.
    private func start(_ options: Options, handler: @escaping @Sendable (Event) -> Void,
                       finish: @escaping (Result<WebSocket, WebSocketError>) -> Void) {
        guard let url = URL(string: options.url), let scheme = url.scheme?.lowercased(),
              scheme == "ws" || scheme == "wss", url.host != nil else {
            finish(.failure(.invalidURL(options.url))); return
        }
        guard let msg = soup_message_new("GET", options.url) else { finish(.failure(.invalidURL(options.url))); return }
        let session = soup_session_new()
        if !Self.proxyConfigured {
            // No proxy in the environment: none at all. libsoup's default resolver loads
            // GIO's proxy modules (GNOME's, through GSettings and dconf; libproxy, through
            // D-Bus): ~9 ms of every start, for desktop settings a headless agent ignores.
            soup_session_set_proxy_resolver(session, nil)
        }
        let state = self.state
        state.session = session
        state.message = msg
        state.handler = handler
        if let caFile = options.caFile {
            var error: UnsafeMutablePointer<GError>?
            guard let database = g_tls_file_database_new(caFile, &error) else {
                finish(.failure(.tls("cannot load CA file \(caFile): \(GErrorInfo(consuming: error).message)"))); return
            }
            soup_session_set_tls_database(session, database)
            g_object_unref(UnsafeMutableRawPointer(database))
        }
        if options.insecure {
            let accept: @convention(c) (OpaquePointer?, OpaquePointer?, UInt32, gpointer?) -> gboolean = { _, _, _, _ in 1 }
            g_signal_connect_data(UnsafeMutableRawPointer(msg), "accept-certificate",
                                  unsafeBitCast(accept, to: GCallback.self), nil, nil, GConnectFlags(rawValue: 0))
        }
        let attempt = Attempt(socket: self, options: options, finish: finish)
        let unmanaged = Unmanaged.passRetained(attempt)
        let timed = LoopBound(attempt, loop: loop)
        attempt.timer = loop.after(milliseconds: options.connectTimeoutMs) {
            let attempt = timed.value
            attempt.timedOut = true
            g_cancellable_cancel(attempt.cancellable)
        }
        var cProtocols: [UnsafeMutablePointer<CChar>?] = options.protocols.map { strdup($0) } + [nil]
        cProtocols.withUnsafeMutableBufferPointer { protocols in
            soup_session_websocket_connect_async(session, msg, nil, protocols.baseAddress, Int32(G_PRIORITY_DEFAULT),
                                                 attempt.cancellable, { source, result, data in
                guard let data else { return }
                let attempt = Unmanaged<Attempt>.fromOpaque(data).takeRetainedValue()
                attempt.socket.connected(OpaquePointer(source), result, attempt)
            }, unmanaged.toOpaque())
        }
        cProtocols.forEach { free($0) }
    }

    /// The upgrade finished (libsoup's callback, loop thread): keeps the connection and
    /// completes the attempt.
    private func connected(_ source: OpaquePointer?, _ result: OpaquePointer?, _ attempt: Attempt) {
        loop.cancelTimer(attempt.timer)
        let state = self.state
        var error: UnsafeMutablePointer<GError>?
        let conn = soup_session_websocket_connect_finish(state.session, result, &error)
        guard let conn else {
            attempt.finish(.failure(classify(error, attempt))); return
        }
        state.connection = conn
        let got = soup_websocket_connection_get_protocol(conn).map { String(cString: $0) }
        chosenProtocol.withLock { $0 = got }
        if let wanted = attempt.options.protocols.first, got != wanted {
            soup_websocket_connection_close(conn, UInt16(SOUP_WEBSOCKET_CLOSE_PROTOCOL_ERROR.rawValue), "subprotocol \(wanted) required")
            attempt.finish(.failure(.subprotocolRefused(offered: attempt.options.protocols, selected: got))); return
        }
        soup_websocket_connection_set_keepalive_interval(conn, attempt.options.keepaliveSeconds)
        soup_websocket_connection_set_max_incoming_payload_size(conn, guint64(attempt.options.maxMessageBytes))
        connectSignals(conn)
        attempt.finish(.success(self))
    }

    /// What a failed upgrade was, from libsoup's error and the HTTP answer (loop thread).
    private func classify(_ error: UnsafeMutablePointer<GError>?, _ attempt: Attempt) -> WebSocketError {
        let url = attempt.options.url
        let info = GErrorInfo(consuming: error)
        if attempt.timedOut { return .timeout(url: url, milliseconds: attempt.options.connectTimeoutMs) }
        if info.domain == g_io_error_quark() && info.code == Int32(G_IO_ERROR_CONNECTION_REFUSED.rawValue) {
            return .refused(url: url, reason: info.message)
        }
        if info.domain == g_tls_error_quark() { return .tls(info.message) }
        if let message = state.message, info.domain == soup_websocket_error_quark() {
            let status = Int(soup_message_get_status(message).rawValue)
            if status != 101 && status != 0 {
                let phrase = soup_message_get_reason_phrase(message).map { String(cString: $0) } ?? ""
                return .httpStatus(url: url, status: status, reason: phrase)
            }
        }
        return .failed(url: url, reason: info.message)
    }

    /// Connects libsoup's "message", "error" and "closed" signals to the handler; they
    /// hold a reference to the socket until "closed" (loop thread).
    private func connectSignals(_ conn: OpaquePointer) {
        let me = Unmanaged.passRetained(self).toOpaque()  // released by the "closed" handler's notify
        let onMessage: @convention(c) (OpaquePointer?, Int32, OpaquePointer?, gpointer?) -> Void = { _, type, bytes, data in
            guard let data, let bytes else { return }
            let socket = Unmanaged<WebSocket>.fromOpaque(data).takeUnretainedValue()
            var size: Int = 0
            let pointer = g_bytes_get_data(bytes, &size)
            let buffer = pointer.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            if type == Int32(SOUP_WEBSOCKET_DATA_TEXT.rawValue) {
                socket.state.handler?(.text(String(decoding: buffer, as: UTF8.self)))
            } else {
                socket.state.handler?(.binary(buffer))
            }
        }
        let onError: @convention(c) (OpaquePointer?, UnsafeMutablePointer<GError>?, gpointer?) -> Void = { _, error, data in
            guard let data else { return }
            let socket = Unmanaged<WebSocket>.fromOpaque(data).takeUnretainedValue()
            let text = error.map { String(cString: $0.pointee.message) } ?? "unknown"
            var code: UInt16?
            if let error, error.pointee.domain == soup_websocket_error_quark(),
               (1000...4999).contains(error.pointee.code) { code = UInt16(error.pointee.code) }
            socket.state.handler?(.error(code: code, message: text))
        }
        let onClosed: @convention(c) (OpaquePointer?, gpointer?) -> Void = { conn, data in
            guard let data else { return }
            let socket = Unmanaged<WebSocket>.fromOpaque(data).takeUnretainedValue()
            socket.reportClosed()
        }
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<WebSocket>.fromOpaque(data).release()
        }
        let instance = UnsafeMutableRawPointer(conn)
        g_signal_connect_data(instance, "message", unsafeBitCast(onMessage, to: GCallback.self), me, nil, GConnectFlags(rawValue: 0))
        g_signal_connect_data(instance, "error", unsafeBitCast(onError, to: GCallback.self), me, nil, GConnectFlags(rawValue: 0))
        g_signal_connect_data(instance, "closed", unsafeBitCast(onClosed, to: GCallback.self), me, release, GConnectFlags(rawValue: 0))
    }

    /// Reports the close once to the handler, then disconnects the signals (loop thread).
    private func reportClosed() {
        let state = self.state
        guard !state.closedReported, let connection = state.connection else { return }
        state.closedReported = true
        let code = soup_websocket_connection_get_close_code(connection)
        let reason = soup_websocket_connection_get_close_data(connection).map { String(cString: $0) } ?? ""
        let handler = state.handler
        state.handler = nil
        handler?(.closed(code: code == 0 ? 1005 : code, reason: reason))
        // Disconnect our handlers; the "closed" one's notify drops their reference to us.
        g_signal_handlers_disconnect_matched(UnsafeMutableRawPointer(connection), G_SIGNAL_MATCH_DATA, 0, 0, nil, nil,
                                             Unmanaged.passUnretained(self).toOpaque())
    }

    /// Sends one text message. Dropped when the connection is not open.
    public func send(_ text: String) {
        loop.async { [self] in
            guard let connection = state.connection,
                  soup_websocket_connection_get_state(connection) == SOUP_WEBSOCKET_STATE_OPEN else { return }
            soup_websocket_connection_send_text(connection, text)
        }
    }

    /// Starts the closing handshake with `code` (RFC 6455 §7.4.1) and `reason`;
    /// a ``Event/closed(code:reason:)`` follows when it completes.
    public func close(code: UInt16 = 1000, reason: String = "") {
        loop.async { [self] in
            guard let connection = state.connection,
                  soup_websocket_connection_get_state(connection) == SOUP_WEBSOCKET_STATE_OPEN else { return }
            soup_websocket_connection_close(connection, code, reason)
        }
    }
}

/// A GError's domain, code and message, copied out; the GError is freed.
struct GErrorInfo {
    var domain: GQuark = 0
    var code: Int32 = 0
    var message = "unknown error"

    init(consuming error: UnsafeMutablePointer<GError>?) {
        guard let error else { return }
        domain = error.pointee.domain
        code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        g_error_free(error)
    }
}

/// GObjects to unref together on the loop thread.
// @unchecked: raw GObject pointers crossing to the loop thread for their last unref; GObject reference counting is thread-safe.
private struct GObjects: @unchecked Sendable {
    let pointers: [UnsafeMutableRawPointer]
    init(_ pointers: [UnsafeMutableRawPointer]) { self.pointers = pointers }
    func unref() { pointers.forEach { g_object_unref($0) } }
}

/// Why a WebSocket connection could not be opened.
public enum WebSocketError: Error, Equatable, CustomStringConvertible {
    /// The text is not a `ws://` or `wss://` URL with a host.
    case invalidURL(String)
    /// Nothing listens at the address (TCP connection refused).
    case refused(url: String, reason: String)
    /// The TLS handshake or certificate check failed.
    case tls(String)
    /// The server answered the upgrade with HTTP `status` (e.g. 404 for a wrong path).
    case httpStatus(url: String, status: Int, reason: String)
    /// The server did not choose the subprotocol we require (`selected` nil: none).
    case subprotocolRefused(offered: [String], selected: String?)
    /// No completed upgrade within the connect timeout.
    case timeout(url: String, milliseconds: UInt32)
    /// Another failure, with libsoup's text.
    case failed(url: String, reason: String)

    public var description: String {
        switch self {
        case .invalidURL(let url): return "not a ws:// or wss:// URL: \"\(url)\""
        case let .refused(url, reason): return "connection to \(url) refused: \(reason)"
        case .tls(let reason): return "TLS failed: \(reason)"
        case let .httpStatus(url, status, reason): return "\(url) answered HTTP \(status) \(reason) instead of a WebSocket upgrade"
        case let .subprotocolRefused(offered, selected):
            return "server chose subprotocol \(selected.map { "\"\($0)\"" } ?? "none") instead of \(offered.joined(separator: ", "))"
        case let .timeout(url, ms): return "no WebSocket connection to \(url) within \(ms) ms"
        case let .failed(url, reason): return "WebSocket connection to \(url) failed: \(reason)"
        }
    }
}
