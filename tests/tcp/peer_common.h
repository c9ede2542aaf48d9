/*
 * The part of the TCP interop peers (tests/tcp/) that is not TLS: the command line, the
 * sockets, the data pattern, the data flow and the result lines. Each C peer supplies a
 * struct backend over its TLS library (tls_peer.c: libssl, or libqtls in its place;
 * gnutls_peer.c: GnuTLS); tests/tcp/go_peer/main.go does the same in Go. The command line
 * and the output are described in tests/tcp/README.md.
 */
#ifndef TCP_PEER_COMMON_H
#define TCP_PEER_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define PEER_CHUNK 16384       /* bytes per write: one full TLS record */
#define PEER_EARLY_CHUNK 4096  /* bytes per early-data write: several records */

struct opts {
    int server;
    /* server */
    int port, connections, echo, require_client_cert, close_first;
    long long max_early_data;  /* -1: not given (the server reads no early data) */
    int reject_early_from;     /* connections from this one on get max early data 0 */
    long long expect_in;       /* -1: any; otherwise the bytes the server must receive */
    /* client */
    const char *connect, *connect2, *servername, *client_cert, *client_key;
    int expect_echo, resume, wait_close;
    long long early_data, expect;
    /* both */
    const char *cert, *key, *ca, *ciphersuites, *groups;
    int post_handshake_auth, tls12_only, tls13_only, timeout, verbose;
    long long send, key_update_after;
    int key_updates;
};

/* What one connection saw; -1 in an int field means "not known" and prints as n/a. */
struct report {
    int ok;
    const char *stage;          /* where it failed */
    char err[400];              /* why, in the library's words */
    char version[24], suite[64], group[24];
    int hrr, resumed;
    const char *early;          /* not_sent, accepted, rejected */
    long long early_bytes;      /* client: written as early data; server: read as early data */
    long long bytes_in, bytes_out;
    int ku_sent, ku_recv, certreq_sent, certreq_recv, tickets_recv;
    const char *client_cert;    /* server: none, handshake, post_handshake; client: "-" */
    int close_sent, close_recv; /* close_notify */
    int alert_sent, alert_recv; /* first non-close_notify alert, -1 if none */
    int err_alert;              /* an alert named by the error (library-specific), -1 if none */
};

struct peer_conn;

/* Data read outside the normal read path (server: early data, application data that
 * arrived during post-handshake authentication) goes to this, which verifies it. */
struct sink {
    int (*take)(struct sink *s, const unsigned char *buf, size_t n);
};

struct backend {
    const char *name;
    const char *(*library)(void);
    /* Contexts and credentials for the whole run; 0 or -1 (message on stderr). */
    int (*setup)(const struct opts *o);
    /* A TLS connection over the connected socket fd, the conn-th of this run (from 1). */
    struct peer_conn *(*open)(const struct opts *o, int fd, int conn, struct report *r);
    /* Client, before the handshake: sends early data. 1: sent; 0: the session allows none
     * (or there is no session), nothing sent; -1: failure (in r). */
    int (*early_write)(struct peer_conn *c, const unsigned char *buf, size_t n);
    /* The handshake; a server passes the early data it reads to sk. 0 or -1. */
    int (*handshake)(struct peer_conn *c, struct sink *sk);
    /* Fills version, suite, group, resumed, early, hrr after the handshake. */
    void (*describe)(struct peer_conn *c);
    int (*write)(struct peer_conn *c, const unsigned char *buf, size_t n);
    /* > 0: bytes; 0: the peer's close_notify; -1: failure (in r). */
    long (*read)(struct peer_conn *c, unsigned char *buf, size_t cap);
    /* A KeyUpdate with update_requested. 0 or -1. */
    int (*key_update)(struct peer_conn *c);
    /* Server: post-handshake CertificateRequest. 0 or -1; data read meanwhile goes to sk. */
    int (*request_client_cert)(struct peer_conn *c, struct sink *sk);
    /* Server: 1 if the client presented a certificate that verified. */
    int (*peer_cert_ok)(struct peer_conn *c);
    /* Sends close_notify. 0 or -1. */
    int (*shutdown)(struct peer_conn *c);
    /* Frees the connection (the client keeps its session for the next one). */
    void (*close)(struct peer_conn *c);
};

/* main() of a peer: parses the command line and runs the role. Returns the exit status. */
int peer_main(int argc, char **argv, const struct backend *b);

/* Canonical group names: X25519, X448, P-256, P-384, P-521, or the library's. */
const char *peer_group_name(const char *name);

#endif
