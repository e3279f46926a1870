// libusrsctp: SCTP (RFC 9260) in user land, AF_CONN mode (packets to and from our DTLS association, RFC 8261).
#include <usrsctp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Swift cannot fill the flexible array of struct sctp_reset_streams: reset `count`
// outgoing streams of the one association of `sock` (RFC 6525 §5.1.2). 0, or -1 with errno.
static inline int peer_sctp_reset_outgoing(struct socket *sock, const uint16_t *streams, uint16_t count) {
    size_t size = sizeof(struct sctp_reset_streams) + sizeof(uint16_t) * count;
    struct sctp_reset_streams *request = calloc(1, size);
    if (request == NULL) { errno = ENOMEM; return -1; }
    request->srs_assoc_id = SCTP_ALL_ASSOC;
    request->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    request->srs_number_streams = count;
    memcpy(request->srs_stream_list, streams, sizeof(uint16_t) * count);
    int result = usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_RESET_STREAMS, request, (socklen_t)size);
    free(request);
    return result;
}

// The receive callback's flags (MSG_EOR is the platform's, 0x80 on Linux).
enum { PEER_SCTP_MSG_EOR = MSG_EOR, PEER_SCTP_MSG_NOTIFICATION = MSG_NOTIFICATION };

// CRC32c (Castagnoli; RFC 9260 §6.8 and Appendix A) of `length` bytes, returned as
// usrsctp_crc32c returns it (the final value, to be stored in host order: on a little-endian
// machine its bytes are the checksum field as sent). With the CPU's crc32 instruction
// (x86-64 SSE 4.2) where there is one, 8 bytes a step; else libusrsctp's own table code.
#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static inline uint32_t peer_sctp_crc32c_sse42(const uint8_t *bytes, size_t length) {
    uint64_t crc = 0xFFFFFFFFu;
    for (; length >= 8; bytes += 8, length -= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        crc = __builtin_ia32_crc32di(crc, word);
    }
    uint32_t c = (uint32_t)crc;
    for (; length > 0; bytes++, length--) c = __builtin_ia32_crc32qi(c, *bytes);
    return ~c;
}
#endif

static inline uint32_t peer_sctp_crc32c(const void *bytes, size_t length) {
#if defined(__x86_64__) && (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    if (__builtin_cpu_supports("sse4.2")) return peer_sctp_crc32c_sse42((const uint8_t *)bytes, length);
#endif
    return usrsctp_crc32c((void *)bytes, length);
}

// The CRC32c libusrsctp itself computes (to check the one above against).
static inline uint32_t peer_sctp_crc32c_usrsctp(const void *bytes, size_t length) {
    return usrsctp_crc32c((void *)bytes, length);
}

// The last errno (Swift reads `errno` through Glibc, but one include keeps this module whole).
static inline int peer_sctp_errno(void) { return errno; }
