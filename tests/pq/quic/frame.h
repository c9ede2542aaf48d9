/*
 * tests/pq/quic: what a QUIC stack would carry in CRYPTO frames, between two processes over a
 * pair of FIFOs (qtls and OpenSSL 3.5's libssl define the same symbols, so they cannot share a
 * process). A record is
 *
 *     u8 kind, u8 level, u32 length (big endian), length bytes
 *
 * kind DATA       handshake bytes at that encryption level (0 initial, 2 handshake,
 *                 3 application: quictls's, OpenSSL 3.5's and Go's numbering alike; no CRYPTO
 *                 data travels at 1, 0-RTT)
 *      DIGEST     SHA-256 of the sender's 1-RTT client secret, then of its 1-RTT server secret
 *                 (64 bytes): the receiver compares them with its own (peer_digest=match)
 *      DONE       the sender's handshake is complete and everything it had to send was sent
 *                 (a server's tickets come before it)
 *      ALERT      the sender's TLS failed with this alert (1 byte; level as the TLS gave it);
 *                 the sender exits after it
 *
 * A side ends once it has sent DONE and read the peer's: the client has then processed the
 * server's post-handshake messages, which come before the server's DONE.
 *
 * Shared by qtls_side.c (libqtls) and ossl35_side.c (OpenSSL 3.5's libssl): the command line,
 * the framing, the ServerHello read off the wire (the group of its key share, whether a
 * HelloRetryRequest came first) and the result line:
 *
 *   result ok impl=I role=R group=G wire_group=G hrr=N suite=S alpn=A tp=OURS peer_tp=THEIRS
 *       c_hs=H s_hs=H c_ap=H s_ap=H peer_digest=match app_in=N
 *
 * (one line; H the SHA-256 of a traffic secret in hex, N the bytes of DATA received at the
 * application level: a server's tickets) or "result fail WHY", exit status 1.
 */
#ifndef QTLS_PQ_QUIC_FRAME_H
#define QTLS_PQ_QUIC_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum { FR_DATA = 1, FR_DONE = 2, FR_ALERT = 3, FR_DIGEST = 4 };

struct frame {
    uint8_t kind, level;
    uint32_t len;
    uint8_t data[65536]; /* handshake flights are far smaller; longer records are refused */
};

struct side_opts {
    int server;
    const char *in, *out; /* FIFOs: the peer's records come in on `in` */
    const char *groups;   /* NULL: the library's default */
    const char *cert, *key, *ca;
    const char *tp; /* our transport parameters (any bytes; default "tp-IMPL-ROLE") */
    int timeout;    /* seconds to wait for a record */
};

/* Parses "client|server --in F --out F [--groups L] [--cert F --key F] [--ca F] [--tp S]
   [--timeout S]"; exits with status 2 on a bad command line. */
void side_parse(int argc, char **argv, const char *impl, struct side_opts *o);
/* Opens the FIFOs in the order that cannot deadlock (the server reads first, the client
   writes first): 1 or 0. */
int side_open(const struct side_opts *o, int *in_fd, int *out_fd);

int frame_write(int fd, uint8_t kind, uint8_t level, const void *p, size_t len);
/* 1 a record, 0 end of file, -1 error or no record within timeout_s */
int frame_read(int fd, struct frame *f, int timeout_s);

/* What both sides record: the traffic secrets they were given, per level (0..3). */
struct secrets {
    uint8_t client[4][64], server[4][64];
    size_t client_len[4], server_len[4];
};
void secrets_set(struct secrets *s, int server_role, int level, int write, const uint8_t *p,
                 size_t len);
/* SHA-256 of the 1-RTT client secret, then of the server's: 1, or 0 if either is missing. */
int secrets_ap_digest(const struct secrets *s, uint8_t out[64]);

/* The ServerHello, read from the initial-level bytes the server sent. */
struct wire {
    uint8_t buf[8192];
    size_t len;
    int hrr;   /* a HelloRetryRequest came first */
    int group; /* the final ServerHello's key share group (0 if not seen) */
};
void wire_feed(struct wire *w, const uint8_t *p, size_t n);

const char *group_name(int id); /* OpenSSL 3.5's spelling, or 0xNNNN in a static buffer */

/* Prints the result line (see above) and returns 0; peer_digest NULL if none came. */
int side_report(const char *impl, const struct side_opts *o, const char *group,
                const struct wire *w, const char *suite, const char *alpn, const uint8_t *peer_tp,
                size_t peer_tp_len, const struct secrets *s, const uint8_t *peer_digest,
                size_t app_in);
/*
 * The context both sides configure alike (frame.c is built with each side's libssl headers):
 * TLS 1.3, the groups asked for, ALPN "h3"; a server's certificate, a client's trust anchor
 * with SSL_VERIFY_PEER. NULL on failure (printed). The side adds its QUIC interface.
 */
typedef struct ssl_ctx_st SSL_CTX;
SSL_CTX *side_ctx(const struct side_opts *o, const char *impl);
/* Prints "result fail WHY" and returns 1. */
int side_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
