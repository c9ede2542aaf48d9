/*
 * quictls's <openssl/sslerr.h>: the system OpenSSL 3 header plus quictls's two QUIC reason
 * codes (nginx detects the quictls API by the second). Token for token those of qtls/quic.h,
 * so that both may be seen in one translation unit.
 */
#ifndef QTLS_COMPAT_OPENSSL_SSLERR_H
#define QTLS_COMPAT_OPENSSL_SSLERR_H
#include_next <openssl/sslerr.h>
#define SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED 800
#define SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION 801
/* OpenSSL 3.5's, token for token as in qtls/quic_tls35.h */
#ifndef SSL_R_MISSING_QUIC_TLS_FUNCTIONS
#define SSL_R_MISSING_QUIC_TLS_FUNCTIONS 423
#endif
#endif
