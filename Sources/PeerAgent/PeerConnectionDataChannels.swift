// PeerConnection's data channels: W3C createDataChannel over the connection's SCTP transport (RFC 8831, SDP RFC 8841).

extension PeerConnection {
    /// Makes a data channel (W3C `createDataChannel`). Before the first offer it puts a data
    /// section (`m=application … webrtc-datachannel`) in it; later, when no data section is
    /// negotiated yet, it raises ``PeerConnectionEvent/negotiationNeeded``. The channel
    /// opens (``DataChannelEvent/state(_:_:)`` `open`) once the association is up and the
    /// peer acknowledged the DATA_CHANNEL_OPEN sent to it (or sent on the channel, RFC 8832
    /// §6); a negotiated one (`options.negotiated`, no DCEP) once the association is up.
    /// Until then it is `connecting` and ``DataChannel/send(_:)`` refuses.
    /// - Throws: ``DataChannelError/invalidOptions(_:)`` naming the option (label or
    ///   protocol over 65,535 bytes, both `maxRetransmits` and `maxPacketLifeTime`,
    ///   `negotiated` without an id, an id over 1,023 or in use).
    @discardableResult
    public func createDataChannel(_ label: String, options: DataChannelInit = DataChannelInit()) throws(DataChannelError) -> DataChannel {
        let channel = try sctp.createChannel(label: label, options: options)
        updateNegotiationNeeded()
        return channel
    }
}
