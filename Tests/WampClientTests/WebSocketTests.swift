import Foundation
import Testing
import TestSupport
@testable import WampClient

/// Collects WebSocket events for a test to await.
final class EventInbox: @unchecked Sendable {
    let stream: AsyncStream<WebSocket.Event>
    let continuation: AsyncStream<WebSocket.Event>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream() }
    var handler: @Sendable (WebSocket.Event) -> Void { { [continuation] in continuation.yield($0) } }
}

@Suite struct WebSocketTests {
    @Test func helloOverOurWebSocketGetsWelcome() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        let inbox = EventInbox()
        let socket = try await WebSocket.connect(.init(url: url), handler: inbox.handler)
        #expect(socket.selectedProtocol == "wamp.2.json")
        socket.send(#"[1,"realm1",{"roles":{"subscriber":{}}}]"#)
        var iterator = inbox.stream.makeAsyncIterator()
        let first = await iterator.next()
        guard case .text(let text)? = first else { Issue.record("expected text, got \(String(describing: first))"); return }
        #expect(text.hasPrefix("[2,"))
        socket.close(code: 1000, reason: "done")
        let closed = await iterator.next()
        #expect(closed == .closed(code: 1000, reason: "done") || closed == .closed(code: 1000, reason: ""), "\(String(describing: closed))")
    }

    @Test func wrongPathIsHTTP404() async throws {
        let services = try await TestServices.shared()
        let port = try #require(services.router_port)
        let url = "ws://127.0.0.1:\(port)/no-such-path"
        await #expect(throws: WebSocketError.httpStatus(url: url, status: 404, reason: "Not Found")) {
            _ = try await WebSocket.connect(.init(url: url)) { _ in }
        }
    }

    @Test func refusedAndInvalidURLAreTyped() async throws {
        let port = try TakenPort.unused()
        let url = "ws://127.0.0.1:\(port)/ws"
        do {
            _ = try await WebSocket.connect(.init(url: url)) { _ in }
            Issue.record("connected to a closed port")
        } catch {
            guard case .refused(let u, _) = error else { Issue.record("expected refused, got \(error)"); return }
            #expect(u == url)
        }
        await #expect(throws: WebSocketError.invalidURL("http://127.0.0.1/ws")) {
            _ = try await WebSocket.connect(.init(url: "http://127.0.0.1/ws")) { _ in }
        }
    }

    @Test func subprotocolTheRouterDoesNotSpeakIsRefused() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        var options = WebSocket.Options(url: url)
        options.protocols = ["mqtt"]
        do {
            _ = try await WebSocket.connect(options) { _ in }
            Issue.record("connected with a protocol crossbar does not speak")
        } catch {
            switch error {
            case .subprotocolRefused, .httpStatus, .failed: break
            default: Issue.record("unexpected \(error)")
            }
        }
    }
}
