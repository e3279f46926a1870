import Foundation
import Testing
import TestSupport
@testable import WampClient

/// A unique topic/procedure URI per test run, so suites can share one router.
func uniqueURI(_ name: String) -> String { "com.peer.test.\(name).\(UInt32.random(in: 0...UInt32.max))" }

/// Waits for the next element of `sequence` at most `seconds`; nil on timeout or end.
func next<S: AsyncSequence & Sendable>(_ sequence: S, within seconds: Double) async -> S.Element? where S.Element: Sendable {
    await withTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            var iterator = sequence.makeAsyncIterator()
            return try? await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

@Suite struct WampSessionTests {
    func anonymous() async throws -> WampConfiguration {
        WampConfiguration(url: try #require(try await TestServices.shared().router_url))
    }

    @Test func publishSubscribeRoundTripWithArgsKwargsAndAcknowledge() async throws {
        let a = try await WampSession.join(try await anonymous())
        let b = try await WampSession.join(try await anonymous())
        #expect(a.sessionId != b.sessionId && a.sessionId >= 1)
        #expect(a.welcomeDetails["authrole"] == "anonymous")
        let topic = uniqueURI("pubsub")
        let subscription = try await a.subscribe(topic)
        let publication = try await b.publish(topic, args: [1, "two", 3.5, true, nil, ["k": [1, 2]]],
                                              kwargs: ["name": "peer", "n": 42], acknowledge: true)
        let event = try #require(await next(subscription, within: 5))
        #expect(event.publication == publication)
        #expect(event.args == [1, "two", 3.5, true, nil, ["k": [1, 2]]])
        #expect(event.kwargs == ["name": "peer", "n": 42])
        await a.leave()
        await b.leave()
    }

    @Test func excludeMeIsHonoured() async throws {
        let a = try await WampSession.join(try await anonymous())
        let topic = uniqueURI("exclude")
        let subscription = try await a.subscribe(topic)
        _ = try await a.publish(topic, args: ["excluded"], acknowledge: true)
        _ = try await a.publish(topic, args: ["included"], acknowledge: true, excludeMe: false)
        let event = try #require(await next(subscription, within: 5))
        #expect(event.args == ["included"])  // the first, excluded, publication never arrived
        await a.leave()
    }

    @Test func rpcRoundTripAndTypedErrors() async throws {
        let callee = try await WampSession.join(try await anonymous())
        let caller = try await WampSession.join(try await anonymous())
        let add = uniqueURI("add"), fail = uniqueURI("fail")
        try await callee.register(add) { invocation in
            let sum = invocation.args.compactMap(\.intValue).reduce(0, +)
            return WampResult(args: [.int(sum)], kwargs: ["by": "peer"])
        }
        try await callee.register(fail) { invocation in
            throw WampError.application(error: "com.peer.error.refused", args: ["no", invocation.args.first ?? nil], kwargs: ["code": 7])
        }
        let result = try await caller.call(add, args: [2, 3, 37])
        #expect(result == WampResult(args: [42], kwargs: ["by": "peer"]))
        await #expect(throws: WampError.application(error: "com.peer.error.refused", args: ["no", 9], kwargs: ["code": 7])) {
            _ = try await caller.call(fail, args: [9])
        }
        do {
            _ = try await caller.call(uniqueURI("nobody"))
            Issue.record("a call to an unregistered procedure succeeded")
        } catch {
            guard case .application(let uri, _, _) = error else { Issue.record("\(error)"); return }
            #expect(uri == "wamp.error.no_such_procedure")
        }
        await callee.leave()
        await caller.leave()
    }

    @Test func wampCRAPlainAndSaltedAndTicket() async throws {
        let s = try await TestServices.shared()
        let cra = try #require(s.router_cra_url), ticketURL = try #require(s.router_ticket_url)
        let plain = try await WampSession.join(.init(url: cra, auth: .cra(authid: try #require(s.cra_user), secret: try #require(s.cra_secret))))
        #expect(plain.welcomeDetails["authid"]?.stringValue == s.cra_user)
        #expect(plain.welcomeDetails["authmethod"] == "wampcra")
        let saltedURL = try #require(s.router_cra_salted_url)
        let salted = try await WampSession.join(.init(url: saltedURL, auth: .cra(authid: try #require(s.cra_salted_user),
                                                                           secret: try #require(s.cra_salted_secret))))
        #expect(salted.welcomeDetails["authid"]?.stringValue == s.cra_salted_user)
        let ticket = try await WampSession.join(.init(url: ticketURL, auth: .ticket(authid: try #require(s.ticket_user), ticket: try #require(s.ticket))))
        #expect(ticket.welcomeDetails["authmethod"] == "ticket")
        for session in [plain, salted, ticket] { await session.leave() }
    }

    @Test func wrongSecretsAreTypedAuthenticationErrors() async throws {
        let s = try await TestServices.shared()
        let cra = try #require(s.router_cra_url), ticketURL = try #require(s.router_ticket_url)
        for config in [
            WampConfiguration(url: cra, auth: .cra(authid: try #require(s.cra_user), secret: "wrong")),
            WampConfiguration(url: try #require(s.router_cra_salted_url), auth: .cra(authid: try #require(s.cra_salted_user), secret: "wrong")),
            WampConfiguration(url: ticketURL, auth: .ticket(authid: try #require(s.ticket_user), ticket: "wrong")),
        ] {
            do {
                _ = try await WampSession.join(config)
                Issue.record("joined with a wrong secret: \(config.auth)")
            } catch {
                guard case let .authenticationFailed(reason, message) = error else { Issue.record("\(error)"); continue }
                #expect(reason.hasPrefix("wamp.error."), "\(reason)")
                #expect(message?.isEmpty == false, "the router's reason text is carried")
            }
        }
    }

    @Test func wrongRealmUnreachableAndWrongPathAreClearErrors() async throws {
        let s = try await TestServices.shared()
        let url = try #require(s.router_url)
        do {
            _ = try await WampSession.join(.init(url: url, realm: "no.such.realm"))
            Issue.record("joined a realm that does not exist")
        } catch {
            guard case .aborted(let reason, _) = error else { Issue.record("\(error)"); return }
            #expect(reason == "wamp.error.no_such_realm")
        }
        let port = try TakenPort.unused()
        let start = Date()
        do {
            _ = try await WampSession.join(.init(url: "ws://127.0.0.1:\(port)/ws"))
            Issue.record("joined a closed port")
        } catch {
            guard case .connect(.refused) = error else { Issue.record("\(error)"); return }
        }
        #expect(Date().timeIntervalSince(start) < 5)
        let wrongPath = "ws://127.0.0.1:\(try #require(s.router_port))/nope"
        await #expect(throws: WampError.connect(.httpStatus(url: wrongPath, status: 404, reason: "Not Found"))) {
            _ = try await WampSession.join(.init(url: wrongPath))
        }
    }
}

/// The hostile WebSocket server of Support/hostile_ws.py, one per test, stopped by pid.
final class HostileServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let lock = NSLock()
    private var output: [String] = []

    init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/hostile_ws.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let reader = out.fileHandleForReading
        var line = Data()
        while let byte = try reader.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { process.terminate(); throw POSIXError(.EIO) }
        self.port = port
        // Collect the server's report of what the client sent, in the background.
        Thread { [weak self] in
            while case let data = reader.availableData, !data.isEmpty {  // blocks until some bytes or EOF
                let text = String(decoding: data, as: UTF8.self)
                self?.lock.withLock { self?.output.append(text) }
            }
        }.start()
    }

    func url(_ path: String) -> String { "ws://127.0.0.1:\(port)/\(path)" }

    /// What the server has reported so far.
    var reported: String { lock.withLock { output.joined() } }

    /// Waits up to `seconds` for the server to report a message from the client containing `text`.
    func clientSent(_ text: String, within seconds: Double = 3) async -> Bool {
        await eventually(within: seconds) { reported.contains(text) }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite struct HostileRouterTests {
    func join(_ server: HostileServer, _ path: String) async -> WampError? {
        var config = WampConfiguration(url: server.url(path))
        config.joinTimeoutMs = 5_000
        config.maxMessageBytes = 1 << 20
        do {
            let session = try await WampSession.join(config)
            await session.leave()
            return nil
        } catch {
            return error
        }
    }

    @Test func eachMisbehaviourYieldsItsSpecificError() async throws {
        let server = try HostileServer()
        let start = Date()
        guard case .protocolViolation(let e)? = await join(server, "nonjson") else { Issue.record("nonjson"); return }
        #expect(e.reason.lowercased().contains("json"), "\(e)")
        // The spec's answer to a protocol violation: ABORT, then close.
        #expect(await server.clientSent("got nonjson [3,"), "\(server.reported)")
        #expect(await server.clientSent("wamp.error.protocol_violation"))
        guard case .protocolViolation(let e2)? = await join(server, "arity") else { Issue.record("arity"); return }
        #expect(e2.message.contains("[2"), "\(e2)")
        guard case .protocolViolation(let e3)? = await join(server, "negative-id") else { Issue.record("negative-id"); return }
        #expect(e3.message.contains("-5"), "\(e3)")
        guard case .protocolViolation(let e4)? = await join(server, "binary") else { Issue.record("binary"); return }
        #expect(e4.reason.contains("binary"))
        let huge = await join(server, "huge")
        guard case .connectionClosed(let code, let reason)? = huge else { Issue.record("huge: \(String(describing: huge))"); return }
        #expect(code == 1009, "\(reason)")
        let mid = await join(server, "midhandshake")
        guard case .connect(.failed(let url, _))? = mid else { Issue.record("midhandshake: \(String(describing: mid))"); return }
        #expect(url == server.url("midhandshake"))
        let noProtocol = await join(server, "nosubprotocol")
        #expect(noProtocol == .connect(.subprotocolRefused(offered: ["wamp.2.json"], selected: nil)), "\(String(describing: noProtocol))")
        // No hang: each of the seven joins ends by itself (5 s join timeout at worst, 35 s);
        // alone this takes 0.1 s, but the parallel test phase on 2 cores took it to 21 s.
        #expect(Date().timeIntervalSince(start) < 45, "no hang")
    }

    @Test func aBrokenMessageAfterJoiningIsAnsweredWithAbortAndReportedAsADisconnect() async throws {
        let server = try HostileServer()
        var config = WampConfiguration(url: server.url("welcome-then-garbage"))
        config.reconnect = nil
        let session = try await WampSession.join(config)
        #expect(session.sessionId == 1234)
        let status = await next(session.status, within: 5)
        guard case .disconnected(let reason)? = status else { Issue.record("\(String(describing: status))"); return }
        #expect(reason.contains("protocol violation"), "\(reason)")
        #expect(await server.clientSent("got welcome-then-garbage [3,"))
        await session.leave()
    }
}

@Suite struct OversizedMessageTests {
    /// A router that sends a 16 MiB EVENT after WELCOME: with the default limit (1 MiB)
    /// libsoup refuses it from the frame header, before the payload is read, closes the
    /// WebSocket (1009, message too big), and the session says why.
    @Test func aSixteenMegabyteMessageIsRefusedFromItsHeader() async throws {
        let server = try HostileServer()
        var config = WampConfiguration(url: server.url("welcome-then-16mb"))
        #expect(config.maxMessageBytes == 1 << 20)
        config.reconnect = nil
        let session = try await WampSession.join(config)
        let status = await next(session.status, within: 10)
        guard case .disconnected(let reason)? = status else { Issue.record("\(String(describing: status))"); return }
        print("16 MiB message: \(reason)")
        #expect(reason.contains("larger than configured max-incoming-payload-size"), "\(reason)")
        await session.leave()
    }
}

@Suite struct SecureWebSocketTests {
    @Test func wssWithThePrivateCAJoins() async throws {
        let s = try await TestServices.shared()
        var config = WampConfiguration(url: try #require(s.router_wss_url))
        let ca = try #require(s.router_ca_file)
        config.caFile = ca
        let session = try await WampSession.join(config)
        #expect(session.sessionId >= 1)
        let topic = uniqueURI("tls")
        let subscription = try await session.subscribe(topic)
        _ = try await session.publish(topic, args: ["over TLS"], acknowledge: true, excludeMe: false)
        #expect(await next(subscription, within: 5)?.args == ["over TLS"])
        await session.leave()
    }

    @Test func wssWithoutTrustingThePrivateCAIsATLSError() async throws {
        let s = try await TestServices.shared()
        let url = try #require(s.router_wss_url)
        do {
            _ = try await WampSession.join(WampConfiguration(url: url))
            Issue.record("joined over TLS with a certificate the system store does not trust")
        } catch {
            guard case .connect(.tls(let reason)) = error else { Issue.record("\(error)"); return }
            #expect(!reason.isEmpty)
        }
    }

    @Test func wssInsecureSwitchAcceptsAnyCertificate() async throws {
        let s = try await TestServices.shared()
        var config = WampConfiguration(url: try #require(s.router_wss_url))
        config.insecure = true
        let session = try await WampSession.join(config)
        #expect(session.sessionId >= 1)
        await session.leave()
    }

    @Test func aMissingCAFileIsATLSErrorNamingIt() async throws {
        let s = try await TestServices.shared()
        var config = WampConfiguration(url: try #require(s.router_wss_url))
        config.caFile = "/nonexistent/ca.pem"
        do {
            _ = try await WampSession.join(config)
            Issue.record("joined with a CA file that does not exist")
        } catch {
            guard case .connect(.tls(let reason)) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("/nonexistent/ca.pem"))
        }
    }
}
