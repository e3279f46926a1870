// libsoup-3.0: HTTP and WebSocket client for the WAMP transport.
#include <libsoup/soup.h>
