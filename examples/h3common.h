/*
 * h3common: what the HTTP/3 example client (h3client.c) and server
 * (h3server.c) share. Both run ngtcp2 0.12 + nghttp3 0.8 over UDP with qtls
 * as the TLS stack, through the ngtcp2 crypto backend on qtls
 * (<qtls/ngtcp2_crypto_qtls.h>).
 *
 * Each connection, on either side, starts with a struct h3_peer: the ngtcp2
 * and nghttp3 connections, the SSL, the socket and what is known about how
 * the connection went. The ngtcp2 and nghttp3 callbacks the two sides have
 * in common take that struct as their user data.
 */
#ifndef QTLS_EXAMPLES_H3COMMON_H
#define QTLS_EXAMPLES_H3COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <openssl/ssl.h>
#include <qtls/ngtcp2_crypto_qtls.h>

#define H3_ALPN "\x02h3"
/* Largest UDP payload either side sends or expects. */
#define H3_MAX_UDP 1452
/* Length of the connection IDs the server chooses. */
#define H3_SERVER_CIDLEN 18

/* Set by -v: ngtcp2's own debug log goes to stderr. */
extern int h3_verbose;
/* The program's name, at the start of every error message. */
extern const char *h3_prog;

/* Errors and notes on stderr, prefixed with the program's name. */
void h3_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ... followed by what libcrypto/qtls left in the error queue, if anything. */
void h3_err_ssl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t h3_now(void); /* CLOCK_MONOTONIC, nanoseconds */
double h3_ms(uint64_t ns);

/* ----------------------------------------------------------------- addresses */

struct h3_addr {
    struct sockaddr_storage ss;
    socklen_t len;
};

/* Resolves HOST and PORT for UDP (passive: for bind). Prints why not. */
int h3_resolve(const char *host, const char *port, int passive, struct h3_addr *out);
/* "127.0.0.1:4433" or "[::1]:4433". */
const char *h3_addr_str(const struct h3_addr *a, char *buf, size_t len);
int h3_is_ip_literal(const char *host);

/* ----------------------------------------------------------------- TLS */

struct h3_tls_opts {
    const char *ciphers; /* TLS 1.3 suites, OpenSSL syntax; NULL: qtls's default */
    const char *groups;  /* key exchange groups, e.g. "X25519:P-256"; NULL: default */
    const char *cert;    /* our certificate chain (PEM) */
    const char *key;     /* its private key (PEM) */
    const char *ca;      /* trust anchors for the peer's certificate; NULL: system's */
    const char *cert_compression; /* "zlib,brotli,zstd" by preference (RFC 8879); NULL: off */
};

/*
 * Applies the options to a context the crypto backend has configured, and
 * logs secrets to $SSLKEYLOGFILE when it is set. Prints what failed.
 */
int h3_tls_setup(SSL_CTX *ctx, const struct h3_tls_opts *o);
void h3_keylog_close(void);

/* Reads/writes a whole file; NULL/-1 with errno. */
uint8_t *h3_read_file(const char *path, size_t max, size_t *len);

/* ----------------------------------------------------------------- a connection */

/* Counts the handshake messages of one type in a CRYPTO stream (to see HRRs). */
struct h3_msg_count {
    uint8_t hdr[4];
    size_t hdrlen;
    uint32_t left; /* body bytes of the current message still to come */
    uint8_t type;  /* the type counted */
    unsigned count;
};

/* What the peer put in the CONNECTION_CLOSE it sent, if it sent one. */
struct h3_peer_close {
    int seen;
    int app; /* 1: application close (0x1d) */
    uint64_t code;
    char reason[128];
};

struct h3_peer {
    ngtcp2_crypto_conn_ref conn_ref; /* the SSL's app data: get_conn gives conn */
    ngtcp2_conn *conn;
    nghttp3_conn *h3;
    SSL *ssl;
    int fd;
    int is_server;
    struct h3_addr local, remote;
    ngtcp2_connection_close_error last_error; /* what we send when we close */
    struct h3_peer_close peer_close;
    struct h3_msg_count hellos; /* ClientHellos (server) or ServerHellos (client) */
    FILE *qlog;
    uint8_t reset_secret[32]; /* stateless reset tokens */
    uint64_t started, handshake_done; /* h3_now() */
};

/* Sets up the parts of a peer that do not depend on its role. */
int h3_peer_init(struct h3_peer *p, int is_server, int fd);
/* Frees the ngtcp2/nghttp3 connections, the SSL and the qlog file. */
void h3_peer_free(struct h3_peer *p);

/* The callbacks both roles use; the caller adds its own. */
void h3_callbacks_common(ngtcp2_callbacks *cb);
/* The common recv_stream_data callback: stream data into nghttp3. */
int h3_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id, uint64_t offset,
                        const uint8_t *data, size_t len, void *user_data,
                        void *stream_user_data);
/* The ngtcp2 settings both roles use: initial time, logging, qlog (if open). */
void h3_settings_common(struct h3_peer *p, ngtcp2_settings *s);
/* Transport parameters both roles offer. */
void h3_params_common(ngtcp2_transport_params *tp, uint64_t idle_timeout);
/* Opens PATH for qlog output (qvis reads it). */
int h3_qlog_open(struct h3_peer *p, const char *path);

/* nghttp3: opens and binds the control and QPACK streams. */
int h3_bind_streams(struct h3_peer *p);
/* Gives back flow control for N bytes the application has consumed. */
void h3_consume(struct h3_peer *p, int64_t stream_id, size_t n);

/*
 * Feeds one datagram to ngtcp2. On an error, last_error is set for the
 * CONNECTION_CLOSE (unless the connection is already draining) and the
 * ngtcp2 error is returned.
 */
int h3_read_pkt(struct h3_peer *p, const struct h3_addr *from, const uint8_t *data, size_t len);
/* Expiry timer. 0, or an ngtcp2 error (last_error set). */
int h3_handle_expiry(struct h3_peer *p);
/* Milliseconds poll() may sleep before this connection's next timer. */
int h3_poll_timeout(struct h3_peer *p);

/*
 * Sends everything ngtcp2 and nghttp3 have ready (up to the send quantum).
 * 0, or a negative ngtcp2/nghttp3 error with last_error set, or
 * H3_ERR_SOCKET when the socket failed (errno says why).
 */
#define H3_ERR_SOCKET (-100000)
int h3_write(struct h3_peer *p);
/* Sends one datagram to the peer. 0, or -1 with errno. */
int h3_send(struct h3_peer *p, const ngtcp2_addr *to, const uint8_t *data, size_t len);
/* Writes a CONNECTION_CLOSE carrying last_error into buf. Length, or 0 if none. */
size_t h3_write_close(struct h3_peer *p, uint8_t *buf, size_t len);

/* ----------------------------------------------------------------- reporting */

struct h3_summary {
    char kind[16];  /* "full" or "resumed" */
    char suite[48]; /* IANA-style name as qtls reports it */
    char group[24];
    char alpn[24];
    char early[16]; /* "accepted", "rejected" or "none" */
    int hrr;
};

/* What the handshake negotiated, once it is complete. */
void h3_summarize(struct h3_peer *p, int early_attempted, struct h3_summary *s);

/*
 * Why the connection failed, in words, from the ngtcp2 error (rv), what the
 * peer said and what TLS recorded: "TLS handshake failed: the server sent
 * alert 42 (bad certificate)".
 */
void h3_describe_failure(struct h3_peer *p, int rv, char *buf, size_t len);
/* A QUIC transport error code in words ("CRYPTO_ERROR (TLS alert 40: handshake failure)"). */
void h3_describe_code(uint64_t code, int app, char *buf, size_t len);

#endif
