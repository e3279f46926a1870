// libsrtp2: SRTP/SRTCP protect and unprotect (RFC 3711, RFC 7714).
#include <srtp2/srtp.h>
