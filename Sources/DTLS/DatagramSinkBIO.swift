// The datagram sink BIO: where OpenSSL writes a DTLSTransport's outgoing records (RFC 6347 §4.1), instead of a socket.
import COpenSSL

/// A BIO method whose writes each go to the owning ``DTLSTransport``'s queue of outgoing
/// datagrams (its BIO data; whole records each, which the transport sends, packed up to
/// its MTU, when OpenSSL returns); flush succeeds, other controls are unsupported.
/// Created once (thread-safe lazy global), never mutated afterwards, never freed.
nonisolated(unsafe) let datagramSinkMethod: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "peer DTLS datagram sink") else {
        return nil
    }
    BIO_meth_set_write(method) { bio, data, length in
        guard let bio, let data, length > 0, let owner = BIO_get_data(bio) else { return 0 }
        let transport = Unmanaged<DTLSTransport>.fromOpaque(owner).takeUnretainedValue()
        transport.enqueue(Array(UnsafeRawBufferPointer(start: data, count: Int(length))))
        return length
    }
    BIO_meth_set_ctrl(method) { _, command, _, _ in
        switch command {
        case BIO_CTRL_FLUSH: 1
        default: 0
        }
    }
    BIO_meth_set_create(method) { _ in 1 }
    BIO_meth_set_destroy(method) { bio in
        if let bio { BIO_set_data(bio, nil) }
        return 1
    }
    return method
}()
