/*
 * tests/tcp/tls_peer.c: a TLS 1.3 client or server over TCP through the public libssl API only,
 * built twice from this one source: ossl_peer with the system's libssl, qtls_peer with libqtls
 * in its place (the drop-in: the same calls, nothing else changed). tests/tcp/run.sh runs it
 * against itself, GnuTLS (gnutls_peer.c) and Go (go_peer/main.go); the command line, the data
 * flow and the result lines are common to all three (peer_common.c, tests/tcp/README.md).
 *
 * What is read from the library, and how:
 *   version, suite     SSL_get_version, SSL_CIPHER_get_name(SSL_get_current_cipher)
 *   group              SSL_get_negotiated_group, named with OBJ_nid2sn (SSL_group_to_name in
 *                      OpenSSL 3.0 gives the TLS name, "secp256r1", for the same NID)
 *   resumed, early     SSL_session_reused, SSL_get_early_data_status
 *   hrr, KeyUpdates, CertificateRequests, tickets   the message callback
 *                      (SSL_CTX_set_msg_callback: each handshake message, sent or received)
 *   alerts             the info callback (SSL_CB_READ_ALERT / SSL_CB_WRITE_ALERT)
 *   client certificate SSL_get0_peer_certificate and SSL_get_verify_result
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "peer_common.h"

struct peer_conn {
    SSL *ssl;
    struct report *r;
};

static const struct opts *opt;
static SSL_CTX *ctx;
static SSL_SESSION *saved; /* client: the newest session a ticket gave */
static struct report *cur; /* the connection the callbacks report to (one at a time) */
static int cur_conn;       /* server: its number, from 1 */

/* RFC 8446 §4.1.3: the random of a HelloRetryRequest. */
static const unsigned char hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

static void on_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                   SSL *ssl, void *arg)
{
    const unsigned char *m = buf;
    (void)version, (void)ssl, (void)arg;
    if (cur == NULL || content_type != SSL3_RT_HANDSHAKE || len < 4)
        return;
    if (opt->verbose)
        fprintf(stderr, "msg %s type %u len %zu\n", write_p ? "sent" : "received", m[0], len);
    switch (m[0]) {
    case SSL3_MT_KEY_UPDATE:
        (*(write_p ? &cur->ku_sent : &cur->ku_recv))++;
        break;
    case SSL3_MT_CERTIFICATE_REQUEST:
        (*(write_p ? &cur->certreq_sent : &cur->certreq_recv))++;
        break;
    case SSL3_MT_NEWSESSION_TICKET:
        if (!write_p)
            cur->tickets_recv++;
        break;
    case SSL3_MT_SERVER_HELLO:
        if (len >= 4 + 2 + 32 && memcmp(m + 6, hrr_random, 32) == 0)
            cur->hrr = 1;
        break;
    default:
        break;
    }
}

static void on_info(const SSL *ssl, int where, int ret)
{
    (void)ssl;
    if (cur == NULL || !(where & SSL_CB_ALERT))
        return;
    int desc = ret & 0xff;
    if (opt->verbose)
        fprintf(stderr, "alert %s %d\n", (where & SSL_CB_WRITE) ? "sent" : "received", desc);
    if (desc == SSL_AD_CLOSE_NOTIFY)
        return;
    if ((where & SSL_CB_WRITE) && cur->alert_sent < 0)
        cur->alert_sent = desc;
    if ((where & SSL_CB_READ) && cur->alert_recv < 0)
        cur->alert_recv = desc;
}

/* Client: keeps the newest session (SSL_CTX_sess_set_new_cb; 1: the reference is ours). */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    (void)ssl;
    if (saved != NULL)
        SSL_SESSION_free(saved);
    saved = sess;
    return 1;
}

/* Server, --reject-early-data-from N: from the N-th connection on, early data is refused
 * though the ticket allows it and the session resumes. (SSL_set_max_early_data(s, 0) would
 * not do: OpenSSL's server then also declines the ticket, which it issued for single use
 * against replay, and the handshake is a full one.) */
static int on_allow_early_data(SSL *ssl, void *arg)
{
    (void)ssl, (void)arg;
    return !(opt->reject_early_from > 0 && cur_conn >= opt->reject_early_from);
}

/* Fills the report from SSL_get_error and the error queue (which it empties). */
static int ssl_fail(struct peer_conn *c, int ret, const char *stage)
{
    struct report *r = c->r;
    int saved_errno = errno, e = SSL_get_error(c->ssl, ret);
    char first[300] = "";
    unsigned long code;
    const char *data;
    int flags;
    while ((code = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        char s[256];
        ERR_error_string_n(code, s, sizeof(s));
        fprintf(stderr, "error: %s%s%s\n", s, (flags & ERR_TXT_STRING) ? ": " : "",
                (flags & ERR_TXT_STRING) ? data : "");
        if (first[0] == '\0')
            snprintf(first, sizeof(first), "%s%s%s", s, (flags & ERR_TXT_STRING) ? ": " : "",
                     (flags & ERR_TXT_STRING) ? data : "");
        /* libssl names a received alert as reason SSL_AD_REASON_OFFSET + description */
        if (!ERR_SYSTEM_ERROR(code) && ERR_GET_LIB(code) == ERR_LIB_SSL && r->err_alert < 0 &&
            ERR_GET_REASON(code) >= SSL_AD_REASON_OFFSET &&
            ERR_GET_REASON(code) < SSL_AD_REASON_OFFSET + 256)
            r->err_alert = ERR_GET_REASON(code) - SSL_AD_REASON_OFFSET;
    }
    r->ok = 0;
    r->stage = stage;
    switch (e) {
    case SSL_ERROR_SSL:
        snprintf(r->err, sizeof(r->err), "%s", first[0] ? first : "SSL_ERROR_SSL, empty queue");
        break;
    case SSL_ERROR_SYSCALL:
        if (first[0])
            snprintf(r->err, sizeof(r->err), "%s", first);
        else if (saved_errno != 0)
            snprintf(r->err, sizeof(r->err), "SSL_ERROR_SYSCALL: %s", strerror(saved_errno));
        else
            snprintf(r->err, sizeof(r->err), "SSL_ERROR_SYSCALL: EOF");
        break;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        snprintf(r->err, sizeof(r->err), "timed out: nothing moved for %d s (%s)", opt->timeout,
                 first[0] ? first : "blocking socket");
        break;
    case SSL_ERROR_ZERO_RETURN:
        snprintf(r->err, sizeof(r->err), "the peer's close_notify");
        break;
    default:
        snprintf(r->err, sizeof(r->err), "SSL_get_error %d%s%s", e, first[0] ? ": " : "", first);
        break;
    }
    return -1;
}

static int setup_fail(const char *what, const char *file)
{
    fprintf(stderr, "tls_peer: %s %s failed\n", what, file ? file : "");
    ERR_print_errors_fp(stderr);
    return -1;
}

static int peer_setup(const struct opts *o)
{
    opt = o;
    ctx = SSL_CTX_new(TLS_method());
    if (ctx == NULL)
        return setup_fail("SSL_CTX_new", NULL);
    const char *cert = o->server ? o->cert : o->client_cert;
    const char *key = o->server ? o->key : o->client_key;
    if (cert != NULL) {
        if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
            return setup_fail("SSL_CTX_use_certificate_chain_file", cert);
        if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
            return setup_fail("SSL_CTX_use_PrivateKey_file", key);
        if (SSL_CTX_check_private_key(ctx) != 1)
            return setup_fail("SSL_CTX_check_private_key", key);
    }
    if (o->ca != NULL && SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1)
        return setup_fail("SSL_CTX_load_verify_locations", o->ca);
    if (!o->server)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    else if (o->post_handshake_auth) /* not in the handshake: SSL_verify_client_post_handshake */
        SSL_CTX_set_verify(ctx,
                           SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT |
                               SSL_VERIFY_POST_HANDSHAKE,
                           NULL);
    else if (o->require_client_cert)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (o->ciphersuites != NULL && SSL_CTX_set_ciphersuites(ctx, o->ciphersuites) != 1)
        return setup_fail("SSL_CTX_set_ciphersuites", o->ciphersuites);
    if (o->groups != NULL && SSL_CTX_set1_groups_list(ctx, o->groups) != 1)
        return setup_fail("SSL_CTX_set1_groups_list", o->groups);
    if (o->tls12_only && SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION) != 1)
        return setup_fail("SSL_CTX_set_max_proto_version", "TLS1_2_VERSION");
    if (o->tls13_only && SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
        return setup_fail("SSL_CTX_set_min_proto_version", "TLS1_3_VERSION");
    if (o->server) {
        static const unsigned char sid_ctx[] = "tls_peer";
        if (SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1) != 1)
            return setup_fail("SSL_CTX_set_session_id_context", NULL);
        if (o->max_early_data >= 0 &&
            SSL_CTX_set_max_early_data(ctx, (uint32_t)o->max_early_data) != 1)
            return setup_fail("SSL_CTX_set_max_early_data", NULL);
        if (o->reject_early_from > 0)
            SSL_CTX_set_allow_early_data_cb(ctx, on_allow_early_data, NULL);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
                                                SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    }
    SSL_CTX_set_msg_callback(ctx, on_msg);
    SSL_CTX_set_info_callback(ctx, on_info);
    return 0;
}

static struct peer_conn *peer_open(const struct opts *o, int fd, int conn, struct report *r)
{
    struct peer_conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->r = r;
    cur = r;
    c->ssl = SSL_new(ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, fd) != 1) {
        if (c->ssl != NULL)
            ssl_fail(c, -1, "setup");
        else
            r->ok = 0, r->stage = "setup", snprintf(r->err, sizeof(r->err), "SSL_new failed");
        SSL_free(c->ssl);
        free(c);
        cur = NULL;
        return NULL;
    }
    /* TLS_method() serves both roles; SSL_write_early_data needs the role set first */
    if (o->server)
        SSL_set_accept_state(c->ssl);
    else
        SSL_set_connect_state(c->ssl);
    if (o->server) {
        cur_conn = conn;
        return c;
    }
    if (SSL_set_tlsext_host_name(c->ssl, o->servername) != 1 ||
        SSL_set1_host(c->ssl, o->servername) != 1)
        goto err;
    if (o->post_handshake_auth)
        SSL_set_post_handshake_auth(c->ssl, 1);
    if (conn > 1) {
        if (saved == NULL) {
            r->ok = 0;
            r->stage = "session";
            snprintf(r->err, sizeof(r->err), "no session ticket came on connection %d", conn - 1);
            goto out;
        }
        if (SSL_set_session(c->ssl, saved) != 1)
            goto err;
    }
    return c;
err:
    ssl_fail(c, -1, "setup");
out:
    SSL_free(c->ssl);
    free(c);
    cur = NULL;
    return NULL;
}

static int peer_early_write(struct peer_conn *c, const unsigned char *buf, size_t n)
{
    SSL_SESSION *s = SSL_get_session(c->ssl);
    size_t written = 0;
    if (s == NULL || SSL_SESSION_get_max_early_data(s) == 0)
        return 0;
    if (SSL_write_early_data(c->ssl, buf, n, &written) != 1)
        return ssl_fail(c, -1, "early_data");
    if (written != n) {
        c->r->ok = 0;
        c->r->stage = "early_data";
        snprintf(c->r->err, sizeof(c->r->err), "SSL_write_early_data wrote %zu of %zu", written,
                 n);
        return -1;
    }
    return 1;
}

static int peer_handshake(struct peer_conn *c, struct sink *sk)
{
    int ret;
    if (!opt->server) {
        ret = SSL_connect(c->ssl);
        return ret == 1 ? 0 : ssl_fail(c, ret, "handshake");
    }
    if (opt->max_early_data >= 0) {
        unsigned char buf[PEER_CHUNK];
        for (;;) {
            size_t n = 0;
            int st = SSL_read_early_data(c->ssl, buf, sizeof(buf), &n);
            if (st == SSL_READ_EARLY_DATA_ERROR)
                return ssl_fail(c, -1, "early_data");
            if (n > 0 && sk->take(sk, buf, n) < 0)
                return -1;
            if (st == SSL_READ_EARLY_DATA_FINISH)
                break;
        }
    }
    ret = SSL_accept(c->ssl);
    return ret == 1 ? 0 : ssl_fail(c, ret, "handshake");
}

static void peer_describe(struct peer_conn *c)
{
    struct report *r = c->r;
    const SSL_CIPHER *ci = SSL_get_current_cipher(c->ssl);
    int nid = SSL_get_negotiated_group(c->ssl);
    snprintf(r->version, sizeof(r->version), "%s", SSL_get_version(c->ssl));
    snprintf(r->suite, sizeof(r->suite), "%s", ci != NULL ? SSL_CIPHER_get_name(ci) : "-");
    if (nid > 0 && (nid & TLSEXT_nid_unknown) == 0 && OBJ_nid2sn(nid) != NULL)
        snprintf(r->group, sizeof(r->group), "%s", peer_group_name(OBJ_nid2sn(nid)));
    else if (nid > 0)
        snprintf(r->group, sizeof(r->group), "0x%04x", nid & 0xffff);
    r->resumed = SSL_session_reused(c->ssl) == 1;
    switch (SSL_get_early_data_status(c->ssl)) {
    case SSL_EARLY_DATA_ACCEPTED:
        r->early = "accepted";
        break;
    case SSL_EARLY_DATA_REJECTED:
        r->early = "rejected";
        break;
    default:
        r->early = "not_sent";
        break;
    }
}

static int peer_write(struct peer_conn *c, const unsigned char *buf, size_t n)
{
    while (n > 0) {
        int ret = SSL_write(c->ssl, buf, (int)n);
        if (ret <= 0)
            return ssl_fail(c, ret, "write");
        buf += ret;
        n -= (size_t)ret;
    }
    return 0;
}

static long peer_read(struct peer_conn *c, unsigned char *buf, size_t cap)
{
    int ret = SSL_read(c->ssl, buf, (int)cap);
    if (ret > 0)
        return ret;
    if (SSL_get_error(c->ssl, ret) == SSL_ERROR_ZERO_RETURN)
        return 0;
    return ssl_fail(c, ret, "read");
}

/* Sent with the next SSL_write (SSL_key_update(3)); the driver always writes next. */
static int peer_key_update(struct peer_conn *c)
{
    return SSL_key_update(c->ssl, SSL_KEY_UPDATE_REQUESTED) == 1 ? 0
                                                                 : ssl_fail(c, -1, "key_update");
}

/* The CertificateRequest goes now (SSL_do_handshake); the client's answer is read by later
 * SSL_read calls. */
static int peer_request_client_cert(struct peer_conn *c, struct sink *sk)
{
    (void)sk;
    if (SSL_verify_client_post_handshake(c->ssl) != 1)
        return ssl_fail(c, -1, "post_handshake_auth");
    int ret = SSL_do_handshake(c->ssl);
    return ret == 1 ? 0 : ssl_fail(c, ret, "post_handshake_auth");
}

static int peer_cert_ok(struct peer_conn *c)
{
    return SSL_get0_peer_certificate(c->ssl) != NULL &&
           SSL_get_verify_result(c->ssl) == X509_V_OK;
}

static int peer_shutdown(struct peer_conn *c)
{
    int ret = SSL_shutdown(c->ssl);
    return ret >= 0 ? 0 : ssl_fail(c, ret, "shutdown");
}

static void peer_close(struct peer_conn *c)
{
    SSL_free(c->ssl);
    free(c);
    cur = NULL;
}

static const char *peer_library(void)
{
#ifdef QTLS_VERSION_STRING /* <openssl/ssl.h> is qtls's (include/compat/openssl/ssl.h) */
    return "qtls-" QTLS_VERSION_STRING;
#else
    static char v[64];
    snprintf(v, sizeof(v), "openssl-%s", OpenSSL_version(OPENSSL_VERSION_STRING));
    return v;
#endif
}

int main(int argc, char **argv)
{
    static const struct backend b = {
        .name = "tls_peer",
        .library = peer_library,
        .setup = peer_setup,
        .open = peer_open,
        .early_write = peer_early_write,
        .handshake = peer_handshake,
        .describe = peer_describe,
        .write = peer_write,
        .read = peer_read,
        .key_update = peer_key_update,
        .request_client_cert = peer_request_client_cert,
        .peer_cert_ok = peer_cert_ok,
        .shutdown = peer_shutdown,
        .close = peer_close,
    };
    int rc = peer_main(argc, argv, &b);
    SSL_SESSION_free(saved);
    SSL_CTX_free(ctx);
    return rc;
}
