/*
 * api/: libssl's surface that is not a single concern below: contexts (ctx.c), connections
 * (ssl.c), SSL_CONF (conf.c), the record-layer calls (compat_tcp.c) and OpenSSL 3.5's QUIC API
 * (quic_tls35.c), a second front door beside transport/quic.c.
 */
#ifndef QTLS_API_H
#define QTLS_API_H

#include "internal.h"

/* quic_tls35.c: OpenSSL 3.5's third-party QUIC API over the same engine. */
/* SSL_read and friends on a 3.5-API connection: drives the handshake or reads post-handshake
   messages; always <= 0 (SSL_get_error: SSL_ERROR_WANT_READ when all was processed). */
int tls35_read(SSL *s);
void tls35_free(SSL *s);

/* tcp.c: frees the connection's record layer and BIOs (SSL_free). */
void tcp_free(SSL *s);
/* tcp.c: SSL_shutdown over TCP (close_notify both ways). */
int tcp_shutdown(SSL *s);

/* A min/max protocol version bound OpenSSL's TLS_method accepts (0 = no bound). */
int proto_version_valid(long v);
/* Replaces *dst with a copy of the ALPN list (NULL/0 clears): 0 on success, 1 on failure. */
int alpn_replace(uint8_t **dst, size_t *dst_len, const uint8_t *p, size_t n);

#endif
