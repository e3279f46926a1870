import Testing
import WampClient

/// One message text that must be refused, and a fragment its reason must contain.
struct Rejection: Sendable, CustomTestStringConvertible {
    let text: String
    let reason: String
    var testDescription: String { text.count > 60 ? String(text.prefix(60)) + "…" : text }
}

@Suite struct WampMessageTests {
    /// Every message type, with and without the optional payload.
    static let samples: [WampMessage] = [
        .hello(realm: "realm1", details: ["roles": ["subscriber": [:], "publisher": [:]], "agent": "peer/0.1"]),
        .welcome(session: 9129137332, details: ["roles": ["broker": [:]], "authrole": "anonymous"]),
        .abort(details: ["message": "The realm does not exist."], reason: "wamp.error.no_such_realm"),
        .challenge(authMethod: "wampcra", extra: ["challenge": "{\"nonce\": \"LHRTC9zeOIrt_9U3\"}", "salt": "salt123",
                                                  "iterations": 100, "keylen": 32]),
        .authenticate(signature: "gir1mSx+deCDUV7wRM5SGIn/+R/ClqLZuH4m7FJeBVI=", extra: [:]),
        .goodbye(details: ["message": "The host is shutting down now."], reason: "wamp.close.system_shutdown"),
        .error(requestType: .call, request: 7814135, details: [:], error: "com.myapp.error.object_write_protected",
               args: ["Object is write protected."], kwargs: ["severity": 3]),
        .error(requestType: .subscribe, request: 713845233, details: [:], error: "wamp.error.not_authorized",
               args: nil, kwargs: nil),
        .error(requestType: .invocation, request: 1, details: [:], error: "app.error", args: [], kwargs: nil),
        .publish(request: 239714735, options: ["acknowledge": true], topic: "com.myapp.mytopic1",
                 args: ["Hello, world!"], kwargs: nil),
        .publish(request: 239714735, options: [:], topic: "com.myapp.mytopic1",
                 args: [], kwargs: ["color": "orange", "sizes": [23, 42, 7]]),
        .published(request: 239714735, publication: 4429313566),
        .subscribe(request: 713845233, options: [:], topic: "com.myapp.mytopic1"),
        .subscribe(request: 1, options: ["match": "wildcard"], topic: "com..mytopic"),
        .subscribed(request: 713845233, subscription: 5512315355),
        .unsubscribe(request: 85346237, subscription: 5512315355),
        .unsubscribed(request: 85346237),
        .event(subscription: 5512315355, publication: 4429313566, details: [:], args: nil, kwargs: nil),
        .event(subscription: 5512315355, publication: 4429313566, details: [:], args: ["Hello, world!"], kwargs: nil),
        .event(subscription: 1, publication: WampMessage.maxID, details: ["publisher": 3335656],
               args: [1, 1.5, true, false, nil, "x", [1, [2]], ["k": "v"], -7, 1e-5], kwargs: ["a": 1]),
        .call(request: 7814135, options: [:], procedure: "com.myapp.ping", args: nil, kwargs: nil),
        .call(request: 1, options: ["timeout": 1000], procedure: "com.arguments.add2", args: [23, 7], kwargs: nil),
        .result(request: 7814135, details: [:], args: [30], kwargs: nil),
        .result(request: WampMessage.maxID, details: [:], args: nil, kwargs: nil),
        .register(request: 25349185, options: [:], procedure: "com.myapp.myprocedure1"),
        .registered(request: 25349185, registration: 2103333224),
        .unregister(request: 788923562, registration: 2103333224),
        .unregistered(request: 788923562),
        .invocation(request: 6131533, registration: 9823526, details: [:], args: ["Hello, world!"], kwargs: nil),
        .invocation(request: 6131533, registration: 9823526, details: [:], args: nil, kwargs: nil),
        .yield(request: 6131533, options: [:], args: nil, kwargs: nil),
        .yield(request: 6131533, options: [:], args: ["Hello, world!"], kwargs: ["x": ["y": [nil]]]),
    ]

    @Test func samplesCoverEveryType() {
        #expect(Set(Self.samples.map(\.type)) == Set(WampMessageType.allCases))
    }

    @Test(arguments: samples) func roundTrip(_ message: WampMessage) throws {
        let text = message.serialized
        #expect(text.hasPrefix("[\(message.type.rawValue),"))
        #expect(try WampMessage(parsing: text) == message)
    }

    @Test func exactBytes() {
        #expect(WampMessage.hello(realm: "realm1", details: ["roles": ["subscriber": [:]]]).serialized
                == #"[1,"realm1",{"roles":{"subscriber":{}}}]"#)
        #expect(WampMessage.subscribe(request: 713845233, options: [:], topic: "com.myapp.mytopic1").serialized
                == #"[32,713845233,{},"com.myapp.mytopic1"]"#)
        #expect(WampMessage.error(requestType: .call, request: 7814135, details: [:],
                                  error: "com.myapp.error.object_write_protected",
                                  args: ["Object is write protected."], kwargs: ["severity": 3]).serialized
                == #"[8,48,7814135,{},"com.myapp.error.object_write_protected",["Object is write protected."],{"severity":3}]"#)
        #expect(WampMessage.yield(request: 6131533, options: [:], args: nil, kwargs: nil).serialized == "[70,6131533,{}]")
        #expect(WampMessage.result(request: WampMessage.maxID, details: [:], args: [], kwargs: nil).serialized
                == "[50,9007199254740992,{},[]]")
        #expect(WampMessage.unsubscribed(request: 85346237).serialized == "[35,85346237]")
        // Keys sorted by code point, whatever the insertion order.
        #expect(WampMessage.hello(realm: "r", details: ["b": 1, "é": 4, "a": 2, "A": 3, "z": [1.5, false]]).serialized
                == #"[1,"r",{"A":3,"a":2,"b":1,"z":[1.5,false],"é":4}]"#)
    }

    @Test func kwargsWithoutArgsWritesEmptyArgs() throws {
        let message = WampMessage.publish(request: 1, options: [:], topic: "t", args: nil, kwargs: ["a": 1])
        #expect(message.serialized == #"[16,1,{},"t",[],{"a":1}]"#)
        #expect(try WampMessage(parsing: message.serialized)
                == .publish(request: 1, options: [:], topic: "t", args: [], kwargs: ["a": 1]))
    }

    @Test func specExamples() throws {
        #expect(try WampMessage(parsing: #"[36,5512315355,4429313566,{},["Hello, world!"]]"#)
                == .event(subscription: 5512315355, publication: 4429313566, details: [:], args: ["Hello, world!"], kwargs: nil))
        #expect(try WampMessage(parsing: """
            [1, "somerealm", {
              "roles": {
                  "publisher": {},
                  "subscriber": {}
              }
            }]
            """) == .hello(realm: "somerealm", details: ["roles": ["publisher": [:], "subscriber": [:]]]))
        #expect(try WampMessage(parsing: #"[2, 9129137332, {"roles": {"broker": {}}}]"#)
                == .welcome(session: 9129137332, details: ["roles": ["broker": [:]]]))
        #expect(try WampMessage(parsing: #"[3, {"message": "The realm does not exist."}, "wamp.error.no_such_realm"]"#)
                == .abort(details: ["message": "The realm does not exist."], reason: "wamp.error.no_such_realm"))
        #expect(try WampMessage(parsing: #"[6, {}, "wamp.close.goodbye_and_out"]"#)
                == .goodbye(details: [:], reason: "wamp.close.goodbye_and_out"))
        #expect(try WampMessage(parsing: #"[32, 713845233, {}, "com.myapp.mytopic1"]"#)
                == .subscribe(request: 713845233, options: [:], topic: "com.myapp.mytopic1"))
        #expect(try WampMessage(parsing: "[33, 713845233, 5512315355]")
                == .subscribed(request: 713845233, subscription: 5512315355))
        #expect(try WampMessage(parsing: "[34, 85346237, 5512315355]")
                == .unsubscribe(request: 85346237, subscription: 5512315355))
        #expect(try WampMessage(parsing: "[35, 85346237]") == .unsubscribed(request: 85346237))
        #expect(try WampMessage(parsing: #"[16, 239714735, {}, "com.myapp.mytopic1", [], {"color": "orange", "sizes": [23, 42, 7]}]"#)
                == .publish(request: 239714735, options: [:], topic: "com.myapp.mytopic1",
                            args: [], kwargs: ["color": "orange", "sizes": [23, 42, 7]]))
        #expect(try WampMessage(parsing: "[17, 239714735, 4429313566]")
                == .published(request: 239714735, publication: 4429313566))
        #expect(try WampMessage(parsing: #"[48, 7814135, {}, "com.myapp.echo", ["Hello, world!"]]"#)
                == .call(request: 7814135, options: [:], procedure: "com.myapp.echo", args: ["Hello, world!"], kwargs: nil))
        #expect(try WampMessage(parsing: "[50, 7814135, {}, [30]]")
                == .result(request: 7814135, details: [:], args: [30], kwargs: nil))
        #expect(try WampMessage(parsing: #"[64, 25349185, {}, "com.myapp.myprocedure1"]"#)
                == .register(request: 25349185, options: [:], procedure: "com.myapp.myprocedure1"))
        #expect(try WampMessage(parsing: "[65, 25349185, 2103333224]")
                == .registered(request: 25349185, registration: 2103333224))
        #expect(try WampMessage(parsing: "[66, 788923562, 2103333224]")
                == .unregister(request: 788923562, registration: 2103333224))
        #expect(try WampMessage(parsing: "[67, 788923562]") == .unregistered(request: 788923562))
        #expect(try WampMessage(parsing: "[68, 6131533, 9823529, {}, [23, 7]]")
                == .invocation(request: 6131533, registration: 9823529, details: [:], args: [23, 7], kwargs: nil))
        #expect(try WampMessage(parsing: "[70, 6131533, {}, [30]]")
                == .yield(request: 6131533, options: [:], args: [30], kwargs: nil))
        #expect(try WampMessage(parsing: #"[8, 68, 6131533, {}, "com.myapp.error.object_write_protected", ["Object is write protected."], {"severity": 3}]"#)
                == .error(requestType: .invocation, request: 6131533, details: [:],
                          error: "com.myapp.error.object_write_protected",
                          args: ["Object is write protected."], kwargs: ["severity": 3]))
        #expect(try WampMessage(parsing: #"[4, "wampcra", {"challenge": "{}"}]"#)
                == .challenge(authMethod: "wampcra", extra: ["challenge": "{}"]))
        #expect(try WampMessage(parsing: #"[5, "", {}]"#) == .authenticate(signature: "", extra: [:]))
    }

    @Test func idBoundaries() throws {
        #expect(try WampMessage(parsing: "[35,1]") == .unsubscribed(request: 1))
        #expect(try WampMessage(parsing: "[35,9007199254740992]") == .unsubscribed(request: WampMessage.maxID))
        #expect(WampMessage.maxID == 9007199254740992)
    }

    static let rejections: [Rejection] = [
        Rejection(text: "not json", reason: "not valid JSON"),
        Rejection(text: "", reason: "not valid JSON"),
        Rejection(text: #"[1,"realm1",{},]"#, reason: "not valid JSON: trailing comma at byte offset 14"),
        Rejection(text: #"[1,"realm1",{"a":1,}]"#, reason: "trailing comma"),
        Rejection(text: #"[32,1e400,{},"t"]"#, reason: "not valid JSON: Number 1e400 is not representable"),
        Rejection(text: #"{"type":1}"#, reason: #"a WAMP message must be a JSON array, got {"type":1}"#),
        Rejection(text: "1", reason: "a WAMP message must be a JSON array, got 1"),
        Rejection(text: "[]", reason: "empty array"),
        Rejection(text: "[99,1]", reason: "unknown message type 99"),
        Rejection(text: "[300,1]", reason: "unknown message type 300"),
        Rejection(text: #"["1","realm1",{}]"#, reason: #"message type (index 0) must be an integer code, got "1""#),
        Rejection(text: #"[1.0,"realm1",{}]"#, reason: "message type (index 0) must be an integer code, got 1.0"),
        Rejection(text: #"[true,"realm1",{}]"#, reason: "message type (index 0) must be an integer code, got true"),
        Rejection(text: #"[1,"realm1"]"#, reason: "HELLO must have 3 elements, has 2"),
        Rejection(text: #"[1,"realm1",{},{}]"#, reason: "HELLO must have 3 elements, has 4"),
        Rejection(text: #"[16,1,{},"t",[],{},[]]"#, reason: "PUBLISH must have 4 to 6 elements, has 7"),
        Rejection(text: "[35]", reason: "UNSUBSCRIBED must have 2 elements, has 1"),
        Rejection(text: #"[32,0,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got 0"),
        Rejection(text: #"[32,-1,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got -1"),
        Rejection(text: #"[32,9007199254740993,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got 9007199254740993"),
        Rejection(text: #"[32,9223372036854775808,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID"),
        Rejection(text: #"[32,-9223372036854775808,{},"t"]"#, reason: "got -9223372036854775808"),
        Rejection(text: #"[32,1.5,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got 1.5"),
        Rejection(text: #"[32,1.0,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got 1.0"),
        Rejection(text: #"[32,true,{},"t"]"#, reason: "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got true"),
        Rejection(text: #"[32,"5",{},"t"]"#, reason: #"SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got "5""#),
        Rejection(text: "[2,null,{}]", reason: "WELCOME.Session (index 1) must be an ID, an integer in 1...9007199254740992, got null"),
        Rejection(text: "[33,1,false]", reason: "SUBSCRIBED.Subscription (index 2) must be an ID, an integer in 1...9007199254740992, got false"),
        Rejection(text: #"[32,1,{},"a..b"]"#, reason: ##"SUBSCRIBE.Topic (index 3) is not a valid URI (non-empty components separated by "." without white space or "#"): "a..b""##),
        Rejection(text: #"[32,1,{},"a b"]"#, reason: #"SUBSCRIBE.Topic (index 3) is not a valid URI"#),
        Rejection(text: #"[32,1,{},""]"#, reason: #"SUBSCRIBE.Topic (index 3) is not a valid URI"#),
        Rejection(text: #"[32,1,{},"a#b"]"#, reason: #"SUBSCRIBE.Topic (index 3) is not a valid URI"#),
        Rejection(text: #"[32,1,{},"com.myapp."]"#, reason: #"SUBSCRIBE.Topic (index 3) is not a valid URI"#),
        Rejection(text: #"[32,1,{"match":"wildcard"},"a b..c"]"#, reason: #"SUBSCRIBE.Topic (index 3) is not a valid URI (components separated"#),
        Rejection(text: #"[1,"realm\t1",{}]"#, reason: "HELLO.Realm (index 1) is not a valid URI"),
        Rejection(text: "[1,5,{}]", reason: "HELLO.Realm (index 1) must be a URI string, got 5"),
        Rejection(text: #"[3,{},"no such realm"]"#, reason: "ABORT.Reason (index 2) is not a valid URI"),
        Rejection(text: #"[8,48,1,{},"wamp..error"]"#, reason: "ERROR.Error (index 4) is not a valid URI"),
        Rejection(text: #"[48,1,{},".com.myapp.ping"]"#, reason: "CALL.Procedure (index 3) is not a valid URI"),
        Rejection(text: #"[32,1,[],"t"]"#, reason: "SUBSCRIBE.Options (index 2) must be a dict (JSON object), got []"),
        Rejection(text: #"[1,"realm1",null]"#, reason: "HELLO.Details (index 2) must be a dict (JSON object), got null"),
        Rejection(text: #"[36,1,2,"details"]"#, reason: #"EVENT.Details (index 3) must be a dict (JSON object), got "details""#),
        Rejection(text: #"[36,1,2,{},"args"]"#, reason: #"EVENT.Arguments (index 4) must be a list (JSON array), got "args""#),
        Rejection(text: #"[16,1,{},"t",{"a":1}]"#, reason: #"PUBLISH.Arguments (index 4) must be a list (JSON array), got {"a":1} (ArgumentsKw may only follow Arguments)"#),
        Rejection(text: #"[16,1,{},"t",[],[1]]"#, reason: "PUBLISH.ArgumentsKw (index 5) must be a dict (JSON object), got [1]"),
        Rejection(text: #"[8,2,1,{},"wamp.error.x"]"#, reason: "ERROR.REQUEST.Type (index 1) must be the type code of a request that can fail (PUBLISH 16, SUBSCRIBE 32, UNSUBSCRIBE 34, CALL 48, REGISTER 64, UNREGISTER 66, INVOCATION 68), got 2"),
        Rejection(text: #"[8,"48",1,{},"wamp.error.x"]"#, reason: #"ERROR.REQUEST.Type (index 1) must be the type code of a request that can fail"#),
        Rejection(text: #"[8,49,1,{},"wamp.error.x"]"#, reason: "got 49"),
        Rejection(text: "[4,5,{}]", reason: "CHALLENGE.AuthMethod (index 1) must be a string, got 5"),
        Rejection(text: "[5,null,{}]", reason: "AUTHENTICATE.Signature (index 1) must be a string, got null"),
        Rejection(text: String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
                  reason: "not valid JSON: Too many nested arrays or dictionaries"),
    ]

    @Test(arguments: rejections) func rejects(_ rejection: Rejection) throws {
        let error = #expect(throws: WampProtocolError.self) { try WampMessage(parsing: rejection.text) }
        let reason = try #require(error?.reason)
        #expect(reason.contains(rejection.reason), "reason was: \(reason)")
        #expect(error?.message == String(rejection.text.prefix(200)))
    }

    /// No crash and a clean error for every truncation of every sample.
    @Test func everyTruncationIsRefused() {
        for message in Self.samples {
            let text = message.serialized
            for length in 0..<text.count {
                #expect(throws: WampProtocolError.self) { try WampMessage(parsing: String(text.prefix(length))) }
            }
        }
    }

    @Test func wildcardSubscriptionsMayHaveEmptyComponents() throws {
        #expect(try WampMessage(parsing: #"[32,1,{"match":"wildcard"},"com..topic"]"#)
                == .subscribe(request: 1, options: ["match": "wildcard"], topic: "com..topic"))
        #expect(try WampMessage(parsing: #"[64,1,{"match":"wildcard"},"com.myapp..update"]"#)
                == .register(request: 1, options: ["match": "wildcard"], procedure: "com.myapp..update"))
        #expect(throws: WampProtocolError.self) { try WampMessage(parsing: #"[32,1,{"match":"prefix"},"com..topic"]"#) }
    }

    @Test func hugeButValidMessagesParse() throws {
        // 500 nested arrays inside args: with the message and the args list, 502 of
        // Foundation's 512 levels.
        let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let text = "[36,1,2,{},[\(deep)],{\"k\":\(deep)}]"
        let message = try WampMessage(parsing: text)
        guard case .event(_, _, _, let args?, let kwargs?) = message else {
            Issue.record("not an EVENT with args and kwargs: \(message)")
            return
        }
        var depth = 0
        var value = args.first
        while let inner = value?.arrayValue {
            depth += 1
            value = inner.first
        }
        #expect(depth == 500)
        #expect(kwargs["k"]?.arrayValue?.count == 1)
        #expect(message.serialized == text)

        let many = (0..<20_000).map { JSONValue.int(Int64($0) * 1_000_003) }
        let big = String(repeating: "é\"\\\n x", count: 50_000)
        let wide = WampMessage.publish(request: 1, options: [:], topic: "t", args: [.array(many), .string(big)], kwargs: nil)
        #expect(try WampMessage(parsing: wide.serialized) == wide)
    }

    @Test func errorTextIsTruncatedAndDescribed() throws {
        let text = #"[32,0,{},""# + String(repeating: "a", count: 300) + #""]"#
        let error = try #require(#expect(throws: WampProtocolError.self) { try WampMessage(parsing: text) })
        #expect(error.message.count == 200)
        #expect(error.message == String(text.prefix(200)))
        #expect(error.description == "WAMP protocol violation: \(error.reason) in \(error.message)")
        #expect(WampProtocolError(reason: "r", message: "m").description == "WAMP protocol violation: r in m")
    }

    @Test func uriRules() {
        for valid in ["a", "com.myapp.topic1", "wamp.error.not_authorized", "com.my-app.Topic_1", "é.ü", "a/b:c"] {
            #expect(isValidWampURI(valid), "\(valid)")
        }
        for invalid in ["", ".", "a.", ".a", "a..b", "a b", "a\tb", "a\nb", "a\u{A0}b", "a\u{3000}b", "a\u{1F}b", "a#b", "#"] {
            #expect(!isValidWampURI(invalid), "\(invalid)")
        }
        for valid in ["", ".", "a..b", ".a", "a.", "com..topic"] {
            #expect(isValidWampURI(valid, allowEmptyComponents: true), "\(valid)")
        }
        for invalid in ["a b..c", "a..#", "a.\n"] {
            #expect(!isValidWampURI(invalid, allowEmptyComponents: true), "\(invalid)")
        }
    }

    @Test func typeCodesAndNames() {
        #expect(WampMessageType.allCases.count == 22)
        #expect(WampMessageType.hello.name == "HELLO")
        #expect(WampMessageType.unsubscribed.name == "UNSUBSCRIBED")
        #expect(WampMessageType(rawValue: 70) == .yield)
        #expect(WampMessageType(rawValue: 7) == nil)
    }
}

@Suite struct JSONValueTests {
    @Test func stringEscaping() throws {
        #expect(JSONValue.string(#"say "hi""#).serialized == #""say \"hi\"""#)
        #expect(JSONValue.string(#"a\b"#).serialized == #""a\\b""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{8}\t\n\u{B}\u{C}\r\u{1F} \u{7F}").serialized
                == #""\u0000\u0001\b\t\n\u000b\f\r\u001f "# + "\u{7F}\"")
        #expect(JSONValue.string("é😀/中\u{2028}").serialized == "\"é😀/中\u{2028}\"")
        #expect(JSONValue.string("").serialized == #""""#)
        for s in [#"say "hi""#, #"a\b"#, "\u{0}\u{1}\u{8}\t\n\u{B}\u{C}\r\u{1F}\u{7F}", "é😀/中\u{2028}", "", "e\u{301}"] {
            #expect(try JSONValue(parsing: JSONValue.string(s).serialized) == .string(s))
        }
        #expect(try JSONValue(parsing: #""\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t""#) == .string("é😀/\"\\\u{8}\u{C}\n\r\t"))
        #expect(throws: WampProtocolError.self) { try JSONValue(parsing: #""\ud800""#) }  // lone surrogate
        #expect(throws: WampProtocolError.self) { try JSONValue(parsing: "\"a\tb\"") }  // raw control character
    }

    @Test func intDoubleBoolAreDistinctAfterParsing() throws {
        let parsed = try JSONValue(parsing: #"[1, 1.0, true, false, 0, -0, 1.5, 1e2, 1E2, null, "1", -7]"#)
        #expect(parsed == [.int(1), .double(1.0), .bool(true), .bool(false), .int(0), .int(0), .double(1.5),
                           .double(100), .double(100), .null, .string("1"), .int(-7)])
        let one = try JSONValue(parsing: "1"), yes = try JSONValue(parsing: "true"), float = try JSONValue(parsing: "1.0")
        #expect(one.intValue == 1 && one.boolValue == nil && one.doubleValue == 1.0)
        #expect(yes.boolValue == true && yes.intValue == nil && yes.doubleValue == nil)
        #expect(float.intValue == nil && float.doubleValue == 1.0 && float.boolValue == nil)
        #expect(try JSONValue(parsing: "false").boolValue == false)
        #expect(try JSONValue(parsing: "0").boolValue == nil)
    }

    @Test(arguments: [
        ("9223372036854775807", JSONValue.int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("-1000000000000000000", .int(-1_000_000_000_000_000_000)),
        ("-999999999999999999", .int(-999_999_999_999_999_999)),
        ("9007199254740993", .int(9_007_199_254_740_993)),
        ("9223372036854775808", .double(9223372036854775808.0)),
        ("18446744073709551616", .double(18446744073709551616.0)),
        ("-9223372036854775809", .double(-9223372036854775809.0)),
        ("0.30000000000000004", .double(0.30000000000000004)),
        ("1.0000000000000002", .double(1.0000000000000002)),
        ("1234567890123456.0", .double(1234567890123456.0)),
        ("9007199254740992.0", .double(9007199254740992.0)),
        ("1.2345678901234568e+16", .double(1.2345678901234568e16)),
        ("-1.2345678901234568e+18", .double(-1.2345678901234568e18)),
        ("5e-324", .double(Double.leastNonzeroMagnitude)),
        ("1e-400", .double(0)),
    ])
    func numbersAtTheEdges(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test(arguments: [0.1, 1.0, -0.0, 1e-5, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 1e16, 12345678901234567.0,
                      0.30000000000000004, -1.2345678901234568e18, 1234567890123456.7, 9007199254740992.0, -2.5e-300])
    func doublesRoundTrip(_ d: Double) throws {
        #expect(try JSONValue(parsing: JSONValue.double(d).serialized) == .double(d))
    }

    @Test(arguments: [Int64.max, .min, -1_000_000_000_000_000_000, 0, -1, 1 << 53])
    func intsRoundTrip(_ i: Int64) throws {
        #expect(try JSONValue(parsing: JSONValue.int(i).serialized) == .int(i))
    }

    @Test func nonFiniteDoublesAreWrittenAsNull() {
        #expect(JSONValue.double(.nan).serialized == "null")
        #expect(JSONValue.array([.double(.infinity), .double(-.infinity)]).serialized == "[null,null]")
    }

    @Test func literalSyntax() throws {
        let v: JSONValue = ["a": 1, "b": [true, nil, 2.5, "s"], "c": [:], "d": []]
        #expect(v == .object(["a": .int(1), "b": .array([.bool(true), .null, .double(2.5), .string("s")]),
                              "c": .object([:]), "d": .array([])]))
        #expect(v["a"]?.intValue == 1)
        #expect(v["a"]?.doubleValue == 1.0)
        #expect(v["b"]?.arrayValue?.count == 4)
        #expect(v["b"]?.arrayValue?[1].isNull == true)
        #expect(v["c"]?.objectValue?.isEmpty == true)
        #expect(v["zz"] == nil)
        #expect(JSONValue.int(1)["a"] == nil)
        #expect(v.serialized == #"{"a":1,"b":[true,null,2.5,"s"],"c":{},"d":[]}"#)
        #expect(v.description == v.serialized)
        #expect(try JSONValue(parsing: v.serialized) == v)
        let s: JSONValue = "text"
        #expect(s.stringValue == "text" && s.intValue == nil)
    }

    @Test func fragmentsAndWhitespace() throws {
        #expect(try JSONValue(parsing: " \n\t42\r\n") == .int(42))
        #expect(try JSONValue(parsing: #""x""#) == .string("x"))
        #expect(try JSONValue(parsing: "null") == .null)
        #expect(try JSONValue(parsing: #"["a,]", "b,}"]"#) == ["a,]", "b,}"])
        #expect(try JSONValue(parsing: #"{"a":1,"a":2}"#) == ["a": 2])
    }

    @Test(arguments: ["[1,]", #"{"a":1,}"#, "[1 ,\n ]", "", "[", "[1] x", "{a:1}", "['a']", "[+1]", "[.5]", "[01]",
                      "[NaN]", "[Infinity]", "[1]//", "tru"])
    func invalidJSONIsRefused(_ text: String) throws {
        let error = #expect(throws: WampProtocolError.self) { try JSONValue(parsing: text) }
        #expect(error?.reason.hasPrefix("not valid JSON") == true, "\(String(describing: error))")
    }
}
