// libnice (pkg-config nice): ICE agent, RFC 8445.
#include <nice/agent.h>
#include <nice/nice-version.h>
#include <nice/debug.h>
#include <nice/interfaces.h>
#include <stun/usages/ice.h>
