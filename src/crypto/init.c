/*
 * Library initialisation (OPENSSL_init_ssl), as libssl: below everything that may be the first
 * call a program makes, a context or a session (d2i_SSL_SESSION at start-up), so that both
 * call down to it.
 */

#include "base/base.h"
#include "crypto/crypto.h"

static CRYPTO_ONCE strings_once = CRYPTO_ONCE_STATIC_INIT;

int OPENSSL_init_ssl(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings)
{
    /* As libssl: the ciphers and digests, and the configuration file unless refused. */
    opts |= OPENSSL_INIT_ADD_ALL_CIPHERS | OPENSSL_INIT_ADD_ALL_DIGESTS;
    if ((opts & OPENSSL_INIT_NO_LOAD_CONFIG) == 0)
        opts |= OPENSSL_INIT_LOAD_CONFIG;
    if (!OPENSSL_init_crypto(opts, settings))
        return 0;
    if ((opts & OPENSSL_INIT_NO_LOAD_SSL_STRINGS) == 0 &&
        !CRYPTO_THREAD_run_once(&strings_once, err_load_strings))
        return 0;
    return crypto_init(); /* raises its own error */
}

int ERR_load_SSL_strings(void)
{
    return OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, NULL);
}
