import Foundation
import Testing
import TestSupport
@testable import WampClient

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ReconnectTests {
    /// The router is killed (SIGKILL: no GOODBYE, no close frame) and started again on
    /// the same port while a session is joined: the session comes back by itself,
    /// reports it, its subscription receives a new event and its procedure answers again.
    @Test func sessionComesBackAfterTheRouterIsKilledAndRestarted() async throws {
        let dir = TestServices.temporaryDirectory("reconnect")
        defer {
            try? TestServices.stopBlocking(dir: dir)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let first = try await TestServices.start(dir: dir, ["--only", "router"])
        let url = try #require(first.router_url), port = try #require(first.router_port)
        let routerGroup = try #require(first.router_pid)
        var config = WampConfiguration(url: url)
        config.reconnect = ReconnectPolicy(initialDelayMs: 200, maxDelayMs: 1_000, maxAttempts: 60)
        let session = try await WampSession.join(config)
        let firstSession = session.sessionId
        let topic = uniqueURI("reconnect"), procedure = uniqueURI("echo")
        let subscription = try await session.subscribe(topic)
        try await session.register(procedure) { WampResult(args: $0.args) }

        #expect(kill(-routerGroup, SIGKILL) == 0)
        let dropped = await next(session.status, within: 10)
        guard case .disconnected? = dropped else { Issue.record("expected disconnected, got \(String(describing: dropped))"); return }
        try await TestServices.stop(dir: dir)  // reaps what is left of the killed router

        _ = try await TestServices.start(dir: dir, ["--only", "router", "--router-port", "\(port)"])
        var reconnected: UInt64?
        var restoreFailures: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while reconnected == nil, Date() < deadline {
            switch await next(session.status, within: deadline.timeIntervalSinceNow) {
            case .reconnected(let id)?: reconnected = id
            case .restoreFailed(let uri, _)?: restoreFailures.append(uri)
            case .reconnectFailed?: continue
            case let other: Issue.record("unexpected status \(String(describing: other))"); return
            }
        }
        let newSession = try #require(reconnected)
        #expect(newSession != firstSession)
        #expect(session.sessionId == newSession)
        #expect(restoreFailures.isEmpty)

        let other = try await WampSession.join(.init(url: url))
        _ = try await other.publish(topic, args: ["after restart"], acknowledge: true)
        #expect(await next(subscription, within: 5)?.args == ["after restart"])
        #expect(try await other.call(procedure, args: ["still here"]).args == ["still here"])
        await other.leave()
        await session.leave()
    }
}
