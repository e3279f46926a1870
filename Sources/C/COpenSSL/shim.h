// OpenSSL 3 (libssl, libcrypto): DTLS 1.2, certificates, PBKDF2 for WAMP-CRA.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
