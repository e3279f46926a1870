// libogg: Ogg pages for the Ogg Opus writer (RFC 3533, RFC 7845).
#include <ogg/ogg.h>
