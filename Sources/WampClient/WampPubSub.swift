// Publish & subscribe of a WAMP session (WAMP Basic Profile §Publish & Subscribe:
// SUBSCRIBE/SUBSCRIBED, UNSUBSCRIBE/UNSUBSCRIBED, PUBLISH/PUBLISHED, EVENT): the
// subscriptions that survive reconnects and the events they deliver.
import Synchronization

/// An event received on a subscription (EVENT, WAMP Basic Profile §Publish & Subscribe).
public struct WampEvent: Sendable, Equatable {
    /// The router's publication id.
    public var publication: UInt64
    /// Positional payload (empty when the publisher sent none).
    public var args: [JSONValue]
    /// Keyword payload (empty when the publisher sent none).
    public var kwargs: WampDict
    /// EVENT details (e.g. `topic` for pattern subscriptions).
    public var details: WampDict
}

/// A live subscription: an `AsyncSequence` of ``WampEvent``s that survives reconnects.
/// One consumer; at most 10 000 unread events are kept (the oldest are dropped);
/// cancelling the consuming task ends the sequence.
public final class WampSubscription: AsyncSequence, Sendable {
    /// What the sequence yields.
    public typealias Element = WampEvent
    /// The topic URI.
    public let topic: String
    /// The router's subscription id; changes on a reconnect (set on the loop thread).
    var id: UInt64 {
        get { routerId.load(ordering: .relaxed) }
        set { routerId.store(newValue, ordering: .relaxed) }
    }
    private let routerId: Atomic<UInt64>
    let stream: AsyncStream<WampEvent>
    let continuation: AsyncStream<WampEvent>.Continuation

    init(topic: String, id: UInt64) {
        self.topic = topic
        self.routerId = Atomic(id)
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// The iterator over received events.
    public func makeAsyncIterator() -> AsyncStream<WampEvent>.Iterator { stream.makeAsyncIterator() }
}

extension WampSession {
    /// Subscribes to `topic` and returns the event sequence.
    /// - Throws: ``WampError/application(error:args:kwargs:)`` when the router refuses
    ///   (e.g. `wamp.error.not_authorized`), ``WampError/notJoined(reason:)``, timeout.
    public func subscribe(_ topic: String) async throws(WampError) -> WampSubscription {
        let id: UInt64 = try await request(timeoutName: "SUBSCRIBE \(topic)") { id, k in
            (.subscribe(request: id, options: [:], topic: topic), .subscribe([], topic, k))
        }
        let found = loop.sync { state.subscriptions.last { $0.id == id && $0.topic == topic } }
        guard let found else { throw .notJoined(reason: "subscription \(id) vanished") }
        return found
    }

    /// Ends a subscription: its event sequence finishes, and UNSUBSCRIBE goes to the
    /// router once no other subscription of this session shares the router's id.
    public func unsubscribe(_ subscription: WampSubscription) async throws(WampError) {
        let (sid, shared) = loop.sync {
            let state = self.state
            state.subscriptions.removeAll { $0 === subscription }
            subscription.continuation.finish()
            return (subscription.id, state.subscriptions.contains { $0.id == subscription.id })
        }
        guard !shared else { return }
        let _: Void = try await request(timeoutName: "UNSUBSCRIBE \(subscription.topic)") { id, k in
            (.unsubscribe(request: id, subscription: sid), .unsubscribe(k))
        }
    }

    /// Publishes to `topic`. With `acknowledge` waits for PUBLISHED and returns the
    /// publication id; else returns nil at once. `excludeMe` false delivers the event
    /// to this session too (WAMP's default is to exclude the publisher).
    public func publish(_ topic: String, args: [JSONValue] = [], kwargs: WampDict = [:],
                        acknowledge: Bool = false, excludeMe: Bool = true) async throws(WampError) -> UInt64? {
        var options: WampDict = [:]
        if acknowledge { options["acknowledge"] = .bool(true) }
        if !excludeMe { options["exclude_me"] = .bool(false) }
        let publishOptions = options
        let message = { @Sendable (id: UInt64) in
            WampMessage.publish(request: id, options: publishOptions, topic: topic, args: args.isEmpty && kwargs.isEmpty ? nil : args,
                                kwargs: kwargs.isEmpty ? nil : kwargs)
        }
        if acknowledge {
            return try await request(timeoutName: "PUBLISH \(topic)") { id, k in (message(id), .publish(k)) }
        }
        let sent: Bool = loop.sync {
            guard state.joined else { return false }
            send(message(takeRequestId()))
            return true
        }
        guard sent else { throw .notJoined(reason: "cannot publish to \(topic)") }
        return nil
    }

    // MARK: answers from the router (loop thread)

    /// SUBSCRIBED: a new subscription joins ``subscriptions``; a re-subscription after a
    /// reconnect gives the router's new id to the ones it restores.
    func subscribed(request: UInt64, subscription: UInt64) {
        guard case let .subscribe(existing, topic, k)? = state.pending.removeValue(forKey: request) else { return }
        if existing.isEmpty {
            state.subscriptions.append(WampSubscription(topic: topic, id: subscription))
        } else {
            existing.forEach { $0.id = subscription }
        }
        k(.success(subscription))
    }

    /// PUBLISHED: an acknowledged publication's id.
    func published(request: UInt64, publication: UInt64) {
        guard case let .publish(k)? = state.pending.removeValue(forKey: request) else { return }
        k(.success(publication))
    }

    /// UNSUBSCRIBED.
    func unsubscribed(request: UInt64) {
        guard case let .unsubscribe(k)? = state.pending.removeValue(forKey: request) else { return }
        k(.success(()))
    }

    /// EVENT: goes to every subscription with the router's `subscription` id.
    func deliver(_ event: WampEvent, subscription: UInt64) {
        for s in state.subscriptions where s.id == subscription { s.continuation.yield(event) }
    }
}
