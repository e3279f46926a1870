import Foundation
import Testing
import TestSupport
@testable import WampClient

@Suite struct ReconnectTests {
    /// The router is killed and started again on the same port while a session is
    /// joined: the session comes back by itself, reports it, and its subscription
    /// receives a new event.
    @Test func sessionComesBackAfterTheRouterRestarts() async throws {
        let dir = TestServices.temporaryDirectory("reconnect")
        defer {
            try? TestServices.stop(dir: dir)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let first = try TestServices.start(dir: dir, ["--only", "router"])
        let url = try #require(first.router_url), port = try #require(first.router_port)
        var config = WampConfiguration(url: url)
        config.reconnect = ReconnectPolicy(initialDelayMs: 200, maxDelayMs: 1_000, maxAttempts: 60)
        let session = try await WampSession.join(config)
        let firstSession = session.sessionId
        let topic = uniqueURI("reconnect")
        let subscription = try await session.subscribe(topic)

        try TestServices.stop(dir: dir)
        let dropped = await next(session.status, within: 10)
        guard case .disconnected? = dropped else { Issue.record("expected disconnected, got \(String(describing: dropped))"); return }

        _ = try TestServices.start(dir: dir, ["--only", "router", "--router-port", "\(port)"])
        var reconnected: UInt64?
        var iterator = session.status.makeAsyncIterator()
        let deadline = Date().addingTimeInterval(30)
        while reconnected == nil, Date() < deadline {
            switch await iterator.next() {
            case .reconnected(let id)?: reconnected = id
            case .reconnectFailed?: continue
            default: break
            }
        }
        let newSession = try #require(reconnected)
        #expect(newSession != firstSession)
        #expect(session.sessionId == newSession)

        let publisher = try await WampSession.join(.init(url: url))
        _ = try await publisher.publish(topic, args: ["after restart"], acknowledge: true)
        let event = await next(subscription, within: 5)
        #expect(event?.args == ["after restart"])
        await publisher.leave()
        await session.leave()
    }
}
