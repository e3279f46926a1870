// A router that ends a session with GOODBYE (WAMP Basic Profile §Session Closing), sent by
// the real Crossbar through its meta procedure `wamp.session.kill`.
import Foundation
import Testing
import TestSupport
@testable import WampClient

@Suite struct RouterGoodbyeTests {
    /// Kills `session` through the router's meta API with `reason`, from another session.
    static func kill(_ session: WampSession, url: String, reason: String, message: String) async throws {
        let admin = try await WampSession.join(.init(url: url))
        _ = try await admin.call("wamp.session.kill", args: [.int(Int64(session.sessionId))],
                                 kwargs: ["reason": .string(reason), "message": .string(message)])
        await admin.leave()
    }

    /// `wamp.close.killed`: the session ends in order — a `goodbye` status with the
    /// router's reason and message and no reconnect, then `closed` — and never rejoins.
    @Test func aGoodbyeEndsTheSessionWithoutReconnecting() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        var config = WampConfiguration(url: url)
        config.reconnect = ReconnectPolicy(initialDelayMs: 50, maxDelayMs: 200)
        let session = try await WampSession.join(config)
        let first = session.sessionId
        try await Self.kill(session, url: url, reason: "wamp.close.killed", message: "test says bye")
        let said = await next(session.status, within: 5)
        #expect(said == .goodbye(reason: "wamp.close.killed", message: "test says bye", reconnectInMs: nil))
        guard case let .closed(reason)? = await next(session.status, within: 2) else {
            Issue.record("no closed status after the goodbye"); return
        }
        #expect(reason.contains("wamp.close.killed"))
        // Nothing follows: no reconnect loop (the policy would retry every 50–200 ms).
        #expect(await next(session.status, within: 1.5) == nil)
        #expect(session.sessionId == first)
        await #expect(throws: WampError.self) { _ = try await session.publish(uniqueURI("after"), acknowledge: true) }
    }

    /// `wamp.close.system_shutdown`: the session says it will reconnect after the
    /// policy's longest delay, waits that long (not the 50 ms first step), then joins
    /// again with its subscription restored.
    @Test func aSystemShutdownReconnectsOnlyAfterTheLongestDelay() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        var config = WampConfiguration(url: url)
        config.reconnect = ReconnectPolicy(initialDelayMs: 50, maxDelayMs: 1_500, jitter: 0)
        let session = try await WampSession.join(config)
        let first = session.sessionId
        let topic = uniqueURI("shutdown")
        let subscription = try await session.subscribe(topic)
        let killedAt = Date()  // the goodbye comes after this, so the wait is measured from no later than it
        try await Self.kill(session, url: url, reason: "wamp.close.system_shutdown", message: "going down")
        let said = await next(session.status, within: 5)
        #expect(said == .goodbye(reason: "wamp.close.system_shutdown", message: "going down", reconnectInMs: 1_500))
        guard case let .reconnected(id)? = await next(session.status, within: 10) else {
            Issue.record("no reconnect after a system shutdown"); return
        }
        let waited = Date().timeIntervalSince(killedAt)
        print("system_shutdown: reconnected after \(Int(waited * 1000)) ms")
        // Reconnecting at once (the old behaviour) takes ~50 ms; the announced delay is 1.5 s.
        #expect(waited >= 1.45, "reconnected after \(waited) s, before the 1.5 s the goodbye announced")
        #expect(id != first && session.sessionId == id)
        let other = try await WampSession.join(.init(url: url))
        _ = try await other.publish(topic, args: ["back"], acknowledge: true)
        #expect(await next(subscription, within: 5)?.args == ["back"])
        await other.leave()
        await session.leave()
    }
}
