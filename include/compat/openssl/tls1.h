/*
 * quictls's <openssl/tls1.h>: the system OpenSSL 3 header plus the QUIC transport-parameter
 * extension codepoints quictls defines there, for sources that include <openssl/tls1.h> without
 * <openssl/ssl.h>. The definitions are token for token those of qtls/quic.h, so that both may
 * be seen in one translation unit.
 */
#ifndef QTLS_COMPAT_OPENSSL_TLS1_H
#define QTLS_COMPAT_OPENSSL_TLS1_H
#include_next <openssl/tls1.h>
#define TLSEXT_TYPE_quic_transport_parameters_draft 0xffa5
#define TLSEXT_TYPE_quic_transport_parameters 0x0039
#endif
