import Foundation
import Testing
import TestSupport
@testable import WampClient

@Suite struct LibSoupTests {
    @Test func libsoupIsThree() {
        let parts = LibSoup.version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect(parts[0] == 3)
    }
}

@Suite struct RouterTests {
    /// Until the project's own WAMP client exists, `scripts/services wamp-hello`
    /// (a minimal WebSocket client) sends HELLO; we check the WELCOME it got.
    @Test func routerAnswersHelloWithWelcomeOnRealm1() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        #expect(services.realm == "realm1")
        let run = try await TestServices.run(TestServices.script, ["wamp-hello", url, "realm1"])
        #expect(run.status == 0, "\(run.stderr)")
        let message = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [Any])
        #expect(message.count == 3)
        #expect(message.first as? Int == 2)  // WELCOME
        let session = try #require(message[1] as? Int)
        #expect(session >= 1 && session <= 1 << 53)
        let details = try #require(message[2] as? [String: Any])
        #expect(details["authrole"] as? String == "anonymous")
        #expect((details["roles"] as? [String: Any])?["broker"] != nil)
    }

    @Test func helloOnAnUnknownRealmIsNotWelcomed() async throws {
        let services = try await TestServices.shared()
        let url = try #require(services.router_url)
        let run = try await TestServices.run(TestServices.script, ["wamp-hello", url, "no.such.realm"])
        #expect(run.status == 1)
        #expect(run.stdout.hasPrefix("[3,"))  // ABORT
    }
}
