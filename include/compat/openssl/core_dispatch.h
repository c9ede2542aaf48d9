/*
 * OpenSSL 3.5's <openssl/core_dispatch.h> for the system's 3.0: the system header, then the
 * OSSL_FUNC_SSL_QUIC_TLS_* ids and callback types of SSL_set_quic_tls_cbs that 3.5 added there.
 */
#ifndef QTLS_COMPAT_OPENSSL_CORE_DISPATCH_H
#define QTLS_COMPAT_OPENSSL_CORE_DISPATCH_H
#include_next <openssl/core_dispatch.h>
#include <qtls/quic_tls35_dispatch.h>
#endif
