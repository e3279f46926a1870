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

// The last errno (Swift reads `errno` through Glibc, but one include keeps this module whole).
static inline int peer_sctp_errno(void) { return errno; }
