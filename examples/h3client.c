/*
 * h3client: fetches URLs over HTTP/3 with ngtcp2 + nghttp3 on qtls, and
 * prints each response's status, headers and body size.
 *
 *   h3client [options] https://HOST[:PORT]/PATH...
 *
 * All URLs go to the first URL's HOST:PORT over one QUIC connection. With
 * --session=FILE, the TLS session the server hands out is kept in FILE (PEM,
 * with the server's QUIC transport parameters), and the next run resumes it
 * and sends its requests as 0-RTT. Run with --help for the options.
 */
#include "h3common.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#define TP_PEM_NAME "QUIC TRANSPORT PARAMETERS"

struct options {
    struct h3_tls_opts tls;
    const char *session_file, *qlog_file, *output_dir, *sni;
    int insecure, no_early_data, quiet, ocsp, no_grease;
    double timeout; /* seconds */
};

struct request {
    const char *url;
    char host[256], port[8], authority[300], path[2048];
    int64_t stream_id; /* -1 until submitted */
    int status;
    char *headers; /* "  name: value\n" lines */
    size_t hlen;
    uint64_t body;
    FILE *out;
    int done;
    uint64_t reset_code; /* the stream closed without a complete response */
    int reset;
};

struct client {
    struct h3_peer peer; /* first: the ngtcp2/nghttp3 user data */
    SSL_CTX *ctx;
    const struct options *opt;
    struct request *reqs;
    size_t nreqs, ndone;
    int early;          /* requests sent as 0-RTT */
    int ticket_saved;   /* a session went to --session's file */
    uint64_t all_done;  /* h3_now() when the last response ended */
    struct h3_summary hs;
    const char *ocsp;   /* --ocsp: the stapled response's verdict for the leaf */
    const char *cert_comp; /* the algorithm the server's certificate came in, or "none" */
};

/* ----------------------------------------------------------------- URLs */

static int parse_url(struct request *r, const char *url)
{
    const char *p = url, *slash, *colon;
    r->url = url;
    r->stream_id = -1;
    if (strncmp(p, "https://", 8) != 0) {
        h3_err("%s: only https:// URLs can be fetched over HTTP/3", url);
        return -1;
    }
    p += 8;
    slash = strchr(p, '/');
    if (slash == NULL)
        slash = p + strlen(p);
    size_t authlen = (size_t)(slash - p);
    if (authlen == 0 || authlen >= sizeof(r->authority)) {
        h3_err("%s: no host in the URL", url);
        return -1;
    }
    snprintf(r->authority, sizeof(r->authority), "%.*s", (int)authlen, p);
    snprintf(r->path, sizeof(r->path), "%s", *slash ? slash : "/");
    if (r->authority[0] == '[') { /* [v6]:port */
        char *close = strchr(r->authority, ']');
        if (close == NULL) {
            h3_err("%s: unterminated [IPv6 address]", url);
            return -1;
        }
        snprintf(r->host, sizeof(r->host), "%.*s", (int)(close - r->authority - 1),
                 r->authority + 1);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strrchr(r->authority, ':');
        snprintf(r->host, sizeof(r->host), "%.*s",
                 (int)(colon ? (size_t)(colon - r->authority) : strlen(r->authority)),
                 r->authority);
    }
    snprintf(r->port, sizeof(r->port), "%s", colon ? colon + 1 : "443");
    return 0;
}

/* ----------------------------------------------------------------- session file */

static struct client *client_of(SSL *ssl)
{
    ngtcp2_crypto_conn_ref *ref = SSL_get_app_data(ssl);
    return ref->user_data;
}

/* PEM SSL SESSION, then the server's transport parameters (for 0-RTT). */
static int save_session(struct client *c, SSL_SESSION *sess)
{
    const char *path = c->opt->session_file;
    char tmp[PATH_MAX];
    uint8_t tp[512];
    ngtcp2_ssize tplen = ngtcp2_encode_transport_params(
        tp, sizeof(tp), NGTCP2_TRANSPORT_PARAMS_TYPE_ENCRYPTED_EXTENSIONS,
        ngtcp2_conn_get_remote_transport_params(c->peer.conn));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    BIO *b = BIO_new_file(tmp, "w");
    int ok = b != NULL && tplen > 0 && PEM_write_bio_SSL_SESSION(b, sess) &&
             PEM_write_bio(b, TP_PEM_NAME, "", tp, tplen) > 0;
    if (b != NULL && BIO_free(b) != 1)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        h3_err_ssl("cannot write the session to %s", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct client *c = client_of(ssl);
    if (save_session(c, sess) == 0)
        c->ticket_saved = 1;
    return 0; /* we keep no reference */
}

/* The PEM block named NAME in TEXT, as a memory BIO. */
static BIO *pem_block(const char *text, const char *name)
{
    char begin[96], end[96];
    snprintf(begin, sizeof(begin), "-----BEGIN %s-----", name);
    snprintf(end, sizeof(end), "-----END %s-----", name);
    const char *b = strstr(text, begin);
    const char *e = b != NULL ? strstr(b, end) : NULL;
    if (e == NULL)
        return NULL;
    return BIO_new_mem_buf(b, (int)(e + strlen(end) - b));
}

static SSL_SESSION *read_session_block(const char *text)
{
    BIO *b = pem_block(text, "SSL SESSION PARAMETERS");
    SSL_SESSION *s = b != NULL ? PEM_read_bio_SSL_SESSION(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    return s;
}

static int read_tp_block(const char *text, ngtcp2_transport_params *tp)
{
    BIO *b = pem_block(text, TP_PEM_NAME);
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long len = 0;
    int ok = b != NULL && PEM_read_bio(b, &name, &header, &data, &len) == 1 &&
             ngtcp2_decode_transport_params(tp, NGTCP2_TRANSPORT_PARAMS_TYPE_ENCRYPTED_EXTENSIONS,
                                            data, (size_t)len) == 0;
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    BIO_free(b);
    return ok ? 0 : -1;
}

/*
 * Offers the stored session, if there is one. Returns 1 when 0-RTT can be
 * used (tp then holds the server's remembered transport parameters).
 */
static int load_session(struct client *c, ngtcp2_transport_params *tp)
{
    const char *path = c->opt->session_file;
    size_t len;
    char *text = (char *)h3_read_file(path, 1 << 20, &len);
    if (text == NULL) {
        if (errno != ENOENT)
            h3_err("cannot read session file %s: %s; full handshake", path, strerror(errno));
        return 0;
    }
    text[len] = '\0';
    SSL_SESSION *s = read_session_block(text);
    int early = 0;
    if (s == NULL) {
        h3_err_ssl("%s holds no TLS session; full handshake", path);
    } else if (!SSL_set_session(c->peer.ssl, s)) {
        h3_err_ssl("cannot resume the session in %s; full handshake", path);
    } else if (!c->opt->no_early_data && SSL_SESSION_get_max_early_data(s) > 0) {
        if (read_tp_block(text, tp) == 0)
            early = 1;
        else
            h3_err("%s has no usable QUIC transport parameters; resuming without 0-RTT", path);
    }
    SSL_SESSION_free(s);
    free(text);
    return early;
}

/* ----------------------------------------------------------------- HTTP/3 */

static struct client *client_of_h3(void *conn_user_data)
{
    return conn_user_data;
}

static void add_header(struct request *r, const nghttp3_vec *n, const nghttp3_vec *v)
{
    size_t add = n->len + v->len + 6;
    char *h = realloc(r->headers, r->hlen + add + 1);
    if (h == NULL)
        return;
    r->headers = h;
    r->hlen += (size_t)snprintf(h + r->hlen, add + 1, "  %.*s: %.*s\n", (int)n->len,
                                (const char *)n->base, (int)v->len, (const char *)v->base);
}

static int recv_header(nghttp3_conn *conn, int64_t stream_id, int32_t token, nghttp3_rcbuf *name,
                       nghttp3_rcbuf *value, uint8_t flags, void *conn_user_data,
                       void *stream_user_data)
{
    struct request *r = stream_user_data;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    (void)conn, (void)stream_id, (void)flags, (void)conn_user_data;
    if (token == NGHTTP3_QPACK_TOKEN__STATUS && v.len == 3)
        r->status = atoi((const char *)v.base);
    add_header(r, &n, &v);
    return 0;
}

static int recv_data(nghttp3_conn *conn, int64_t stream_id, const uint8_t *data, size_t len,
                     void *conn_user_data, void *stream_user_data)
{
    struct client *c = client_of_h3(conn_user_data);
    struct request *r = stream_user_data;
    (void)conn;
    r->body += len;
    if (r->out != NULL && fwrite(data, 1, len, r->out) != len) {
        h3_err("cannot save the body of %s: %s", r->url, strerror(errno));
        fclose(r->out);
        r->out = NULL;
    }
    h3_consume(&c->peer, stream_id, len);
    return 0;
}

static int deferred_consume(nghttp3_conn *conn, int64_t stream_id, size_t consumed,
                            void *conn_user_data, void *stream_user_data)
{
    (void)conn, (void)stream_user_data;
    h3_consume(&client_of_h3(conn_user_data)->peer, stream_id, consumed);
    return 0;
}

static void request_finished(struct client *c, struct request *r)
{
    if (r->done)
        return;
    r->done = 1;
    if (++c->ndone == c->nreqs)
        c->all_done = h3_now();
}

static int end_stream(nghttp3_conn *conn, int64_t stream_id, void *conn_user_data,
                      void *stream_user_data)
{
    (void)conn, (void)stream_id;
    request_finished(client_of_h3(conn_user_data), stream_user_data);
    return 0;
}

static int http_stream_close(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                             void *conn_user_data, void *stream_user_data)
{
    struct request *r = stream_user_data;
    (void)conn, (void)stream_id;
    if (r == NULL || r->done)
        return 0;
    r->reset = 1;
    r->reset_code = app_error_code;
    request_finished(client_of_h3(conn_user_data), r);
    return 0;
}

static int stop_sending(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                        void *conn_user_data, void *stream_user_data)
{
    (void)conn, (void)stream_user_data;
    ngtcp2_conn_shutdown_stream_read(client_of_h3(conn_user_data)->peer.conn, stream_id,
                                     app_error_code);
    return 0;
}

static int reset_stream(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                        void *conn_user_data, void *stream_user_data)
{
    (void)conn, (void)stream_user_data;
    ngtcp2_conn_shutdown_stream_write(client_of_h3(conn_user_data)->peer.conn, stream_id,
                                      app_error_code);
    return 0;
}

static int setup_http(struct client *c)
{
    nghttp3_callbacks cb = {
        .stream_close = http_stream_close,
        .recv_data = recv_data,
        .deferred_consume = deferred_consume,
        .recv_header = recv_header,
        .stop_sending = stop_sending,
        .end_stream = end_stream,
        .reset_stream = reset_stream,
    };
    nghttp3_settings settings;
    if (c->peer.h3 != NULL)
        return 0;
    nghttp3_settings_default(&settings);
    settings.qpack_max_dtable_capacity = 4096;
    settings.qpack_blocked_streams = 100;
    int rv = nghttp3_conn_client_new(&c->peer.h3, &cb, &settings, nghttp3_mem_default(), c);
    if (rv != 0) {
        h3_err("nghttp3_conn_client_new: %s", nghttp3_strerror(rv));
        return -1;
    }
    return h3_bind_streams(&c->peer);
}

static nghttp3_nv make_nv(const char *name, const char *value)
{
    return (nghttp3_nv){(uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value),
                        NGHTTP3_NV_FLAG_NONE};
}

/* Opens a stream for every request not yet sent, as far as stream credit goes. */
static int submit_requests(struct client *c)
{
    if (c->peer.h3 == NULL)
        return 0;
    for (size_t i = 0; i < c->nreqs; i++) {
        struct request *r = &c->reqs[i];
        if (r->stream_id >= 0 || r->done)
            continue;
        if (ngtcp2_conn_open_bidi_stream(c->peer.conn, &r->stream_id, r) != 0) {
            r->stream_id = -1; /* no credit yet: extend_max_local_streams_bidi comes back */
            return 0;
        }
        nghttp3_nv nva[] = {
            make_nv(":method", "GET"),      make_nv(":scheme", "https"),
            make_nv(":authority", r->authority), make_nv(":path", r->path),
            make_nv("user-agent", "qtls-h3client"),
        };
        int rv = nghttp3_conn_submit_request(c->peer.h3, r->stream_id, nva,
                                             sizeof(nva) / sizeof(nva[0]), NULL, r);
        if (rv != 0) {
            h3_err("nghttp3_conn_submit_request: %s", nghttp3_strerror(rv));
            return -1;
        }
    }
    return 0;
}

/* After 0-RTT was refused: forget what was sent, start over on 1-RTT. */
static void reset_requests(struct client *c)
{
    nghttp3_conn_del(c->peer.h3);
    c->peer.h3 = NULL;
    c->ndone = 0;
    for (size_t i = 0; i < c->nreqs; i++) {
        struct request *r = &c->reqs[i];
        r->stream_id = -1;
        r->status = 0;
        r->body = 0;
        r->done = r->reset = 0;
        r->hlen = 0;
        if (r->out != NULL && (fflush(r->out) != 0 || ftruncate(fileno(r->out), 0) != 0 ||
                               fseek(r->out, 0, SEEK_SET) != 0))
            h3_err("cannot restart the download of %s: %s", r->url, strerror(errno));
    }
}

/* ----------------------------------------------------------------- ngtcp2 callbacks */

static int handshake_completed(ngtcp2_conn *conn, void *user_data)
{
    struct client *c = user_data;
    c->peer.handshake_done = h3_now();
    if (c->early && SSL_get_early_data_status(c->peer.ssl) != SSL_EARLY_DATA_ACCEPTED) {
        /* Backends that learn of the refusal only now: resend on 1-RTT. */
        int rv = ngtcp2_conn_early_data_rejected(conn);
        if (rv != 0) {
            h3_err("ngtcp2_conn_early_data_rejected: %s", ngtcp2_strerror(rv));
            return NGTCP2_ERR_CALLBACK_FAILURE;
        }
        if (setup_http(c) != 0 || submit_requests(c) != 0)
            return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    h3_summarize(&c->peer, c->early, &c->hs);
    static const char *const comp[] = {"none", "zlib", "brotli", "zstd"};
    int alg = SSL_get_negotiated_server_cert_comp(c->peer.ssl);
    c->cert_comp = alg >= 0 && alg < 4 ? comp[alg] : "unknown";
    if (!c->opt->quiet) {
        char addr[64];
        printf("connected to %s: %s handshake, %s, %s, ALPN %s, HRR %s, 0-RTT %s, %.1f ms\n",
               h3_addr_str(&c->peer.remote, addr, sizeof(addr)), c->hs.kind, c->hs.suite,
               c->hs.group, c->hs.alpn, c->hs.hrr ? "yes" : "no", c->hs.early,
               h3_ms(c->peer.handshake_done - c->peer.started));
    }
    return 0;
}

static int recv_rx_key(ngtcp2_conn *conn, ngtcp2_crypto_level level, void *user_data)
{
    struct client *c = user_data;
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION)
        return 0;
    if (c->early && !ngtcp2_conn_get_early_data_rejected(conn))
        return 0; /* 0-RTT's streams carry on, unless handshake_completed says otherwise */
    return setup_http(c) == 0 && submit_requests(c) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int extend_max_local_streams_bidi(ngtcp2_conn *conn, uint64_t max_streams,
                                         void *user_data)
{
    (void)conn, (void)max_streams;
    return submit_requests(user_data) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int early_data_rejected(ngtcp2_conn *conn, void *user_data)
{
    struct client *c = user_data;
    (void)conn;
    if (!c->opt->quiet)
        printf("0-RTT refused by the server: sending the requests again\n");
    reset_requests(c);
    return 0;
}

/* ----------------------------------------------------------------- OCSP stapling */

/* The certificate that issued `leaf`: in the peer's chain or in the trust store. */
static X509 *find_issuer(X509_STORE *store, X509 *leaf, STACK_OF(X509) *chain)
{
    X509 *issuer = NULL;
    X509_STORE_CTX *sc = X509_STORE_CTX_new();
    if (sc != NULL && X509_STORE_CTX_init(sc, store, leaf, chain) == 1 &&
        X509_STORE_CTX_get1_issuer(&issuer, sc, leaf) != 1)
        issuer = NULL;
    X509_STORE_CTX_free(sc);
    return issuer;
}

/*
 * The verdict on a stapled response: "good", "revoked" or "unknown" for the leaf when the
 * response is signed by its issuer (or a responder it delegated to) and current; else NULL.
 */
static const char *ocsp_verdict(SSL *ssl, const unsigned char *der, long len)
{
    OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &der, len);
    OCSP_BASICRESP *basic = NULL;
    OCSP_CERTID *id = NULL;
    X509 *issuer = NULL, *leaf = SSL_get0_peer_certificate(ssl);
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    X509_STORE *store = SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl));
    ASN1_GENERALIZEDTIME *this_update, *next_update;
    int status, reason;
    const char *verdict = NULL;
    if (resp != NULL && leaf != NULL &&
        OCSP_response_status(resp) == OCSP_RESPONSE_STATUS_SUCCESSFUL &&
        (basic = OCSP_response_get1_basic(resp)) != NULL &&
        OCSP_basic_verify(basic, chain, store, 0) == 1 &&
        (issuer = find_issuer(store, leaf, chain)) != NULL &&
        (id = OCSP_cert_to_id(NULL, leaf, issuer)) != NULL &&
        OCSP_resp_find_status(basic, id, &status, &reason, NULL, &this_update, &next_update) &&
        OCSP_check_validity(this_update, next_update, 300, -1))
        verdict = OCSP_cert_status_str(status);
    OCSP_CERTID_free(id);
    X509_free(issuer);
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(resp);
    return verdict;
}

/* SSL_CTX_set_tlsext_status_cb: runs once the server's certificate is proven. */
static int ocsp_status_cb(SSL *ssl, void *arg)
{
    struct client *c = arg;
    const unsigned char *der;
    long len = SSL_get_tlsext_status_ocsp_resp(ssl, &der);
    if (len <= 0 || der == NULL) {
        c->ocsp = "none";
        return 1; /* stapling is optional for the server */
    }
    c->ocsp = ocsp_verdict(ssl, der, len);
    if (c->ocsp == NULL) {
        h3_err_ssl("the stapled OCSP response does not verify");
        c->ocsp = "invalid";
        return 0; /* bad_certificate_status_response */
    }
    return strcmp(c->ocsp, "revoked") != 0;
}

/* ----------------------------------------------------------------- set-up */

static int tls_init(struct client *c, const char *host)
{
    const struct options *o = c->opt;
    const char *name = o->sni != NULL ? o->sni : host;
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (c->ctx == NULL || ngtcp2_crypto_qtls_configure_client_context(c->ctx) != 0) {
        h3_err_ssl("cannot set up a TLS client context");
        return -1;
    }
    if (h3_tls_setup(c->ctx, &o->tls) != 0)
        return -1;
    SSL_CTX_set_verify(c->ctx, o->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    /* RFC 8701: GREASE keeps servers' extension points open; off by default in qtls. */
    SSL_CTX_set_grease_enabled(c->ctx, !o->no_grease);
    if (o->session_file != NULL) {
        SSL_CTX_set_session_cache_mode(c->ctx,
                                       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
        SSL_CTX_sess_set_new_cb(c->ctx, new_session);
    }
    if (o->ocsp && (!SSL_CTX_set_tlsext_status_type(c->ctx, TLSEXT_STATUSTYPE_ocsp) ||
                    !SSL_CTX_set_tlsext_status_cb(c->ctx, ocsp_status_cb) ||
                    !SSL_CTX_set_tlsext_status_arg(c->ctx, c))) {
        h3_err_ssl("cannot request OCSP stapling");
        return -1;
    }
    SSL *ssl = c->peer.ssl = SSL_new(c->ctx);
    if (ssl == NULL) {
        h3_err_ssl("SSL_new failed");
        return -1;
    }
    SSL_set_app_data(ssl, &c->peer.conn_ref);
    SSL_set_connect_state(ssl);
    SSL_set_quic_use_legacy_codepoint(ssl, 0);
    if (SSL_set_alpn_protos(ssl, (const uint8_t *)H3_ALPN, sizeof(H3_ALPN) - 1) != 0 ||
        (!h3_is_ip_literal(name) && !SSL_set_tlsext_host_name(ssl, name)) ||
        (!o->insecure && !SSL_set1_host(ssl, name))) {
        h3_err_ssl("cannot set ALPN, server name or host check for %s", name);
        return -1;
    }
    return 0;
}

static int socket_init(struct client *c, const struct request *r)
{
    char addr[64];
    if (h3_resolve(r->host, r->port, 0, &c->peer.remote) != 0)
        return -1;
    int fd = socket(c->peer.remote.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
    if (fd < 0) {
        h3_err("socket: %s", strerror(errno));
        return -1;
    }
    c->peer.fd = fd;
    /* Connected, so that an ICMP "port unreachable" comes back as ECONNREFUSED. */
    c->peer.local.len = sizeof(c->peer.local.ss);
    if (connect(fd, (struct sockaddr *)&c->peer.remote.ss, c->peer.remote.len) != 0 ||
        getsockname(fd, (struct sockaddr *)&c->peer.local.ss, &c->peer.local.len) != 0) {
        h3_err("cannot reach %s: %s", h3_addr_str(&c->peer.remote, addr, sizeof(addr)),
               strerror(errno));
        return -1;
    }
    return 0;
}

static int quic_init(struct client *c)
{
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_cid dcid = {.datalen = 18}, scid = {.datalen = 16};
    ngtcp2_path path = {
        .local = {(struct sockaddr *)&c->peer.local.ss, c->peer.local.len},
        .remote = {(struct sockaddr *)&c->peer.remote.ss, c->peer.remote.len},
    };
    if (RAND_bytes(dcid.data, (int)dcid.datalen) != 1 ||
        RAND_bytes(scid.data, (int)scid.datalen) != 1) {
        h3_err_ssl("RAND_bytes failed");
        return -1;
    }
    h3_callbacks_common(&cb);
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
    cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
    cb.handshake_completed = handshake_completed;
    cb.extend_max_local_streams_bidi = extend_max_local_streams_bidi;
    cb.recv_rx_key = recv_rx_key;
    cb.early_data_rejected = early_data_rejected;

    if (c->opt->qlog_file != NULL && h3_qlog_open(&c->peer, c->opt->qlog_file) != 0)
        return -1;
    h3_settings_common(&c->peer, &settings);
    settings.handshake_timeout = (uint64_t)(c->opt->timeout * NGTCP2_SECONDS);
    h3_params_common(&params, (uint64_t)(c->opt->timeout * NGTCP2_SECONDS));
    params.initial_max_streams_bidi = 0; /* the server opens none */

    int rv = ngtcp2_conn_client_new(&c->peer.conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1,
                                    &cb, &settings, &params, NULL, c);
    if (rv != 0) {
        h3_err("ngtcp2_conn_client_new: %s", ngtcp2_strerror(rv));
        return -1;
    }
    ngtcp2_conn_set_tls_native_handle(c->peer.conn, c->peer.ssl);
    return 0;
}

/* With a resumable session and its transport parameters: send the requests as 0-RTT. */
static int start_early(struct client *c)
{
    ngtcp2_transport_params tp;
    if (c->opt->session_file == NULL || !load_session(c, &tp))
        return 0;
    ngtcp2_conn_set_early_remote_transport_params(c->peer.conn, &tp);
    SSL_set_quic_early_data_enabled(c->peer.ssl, 1);
    c->early = 1;
    return setup_http(c) == 0 && submit_requests(c) == 0 ? 0 : -1;
}

static int open_outputs(struct client *c)
{
    const char *dir = c->opt->output_dir;
    if (dir == NULL)
        return 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        h3_err("cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < c->nreqs; i++) {
        struct request *r = &c->reqs[i];
        char path[PATH_MAX];
        const char *base = strrchr(r->path, '/') + 1; /* paths start with '/' */
        size_t baselen = strcspn(base, "?#");
        snprintf(path, sizeof(path), "%s/%.*s", dir, (int)baselen,
                 baselen ? base : "index.html");
        r->out = fopen(path, "w");
        if (r->out == NULL) {
            h3_err("cannot write %s: %s", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- the loop */

static int read_packets(struct client *c)
{
    uint8_t buf[65536];
    for (;;) {
        struct h3_addr from = {.len = sizeof(from.ss)};
        ssize_t n = recvfrom(c->peer.fd, buf, sizeof(buf), MSG_DONTWAIT,
                             (struct sockaddr *)&from.ss, &from.len);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return H3_ERR_SOCKET;
        }
        int rv = h3_read_pkt(&c->peer, &from, buf, (size_t)n);
        if (rv != 0)
            return rv;
    }
}

/* Done: every response is in, and the ticket too if it is wanted (1 s at most). */
static int finished(struct client *c)
{
    if (c->ndone < c->nreqs || c->nreqs == 0)
        return 0;
    if (c->opt->session_file == NULL || c->ticket_saved)
        return 1;
    return h3_now() - c->all_done > NGTCP2_SECONDS;
}

#define H3_ERR_DEADLINE (-100001)

static int run(struct client *c)
{
    uint64_t deadline = c->peer.started + (uint64_t)(c->opt->timeout * NGTCP2_SECONDS);
    int rv = h3_write(&c->peer);
    while (rv == 0 && !finished(c)) {
        int wait = h3_poll_timeout(&c->peer);
        uint64_t now = h3_now();
        if (now >= deadline)
            return H3_ERR_DEADLINE;
        int left = (int)((deadline - now) / NGTCP2_MILLISECONDS) + 1;
        if (wait < 0 || wait > left)
            wait = left;
        if (c->ndone == c->nreqs && (wait < 0 || wait > 50))
            wait = 50; /* waiting only for the ticket */
        struct pollfd pfd = {.fd = c->peer.fd, .events = POLLIN};
        if (poll(&pfd, 1, wait) < 0 && errno != EINTR) {
            h3_err("poll: %s", strerror(errno));
            return H3_ERR_SOCKET;
        }
        if (pfd.revents & (POLLIN | POLLERR))
            rv = read_packets(c);
        if (rv == 0 && ngtcp2_conn_get_expiry(c->peer.conn) <= h3_now())
            rv = h3_handle_expiry(&c->peer);
        if (rv == 0)
            rv = h3_write(&c->peer);
    }
    return rv;
}

/* A graceful end: CONNECTION_CLOSE with H3_NO_ERROR (or the error chosen). */
static void close_connection(struct client *c, int graceful)
{
    uint8_t buf[H3_MAX_UDP];
    if (graceful)
        ngtcp2_connection_close_error_set_application_error(&c->peer.last_error,
                                                            NGHTTP3_H3_NO_ERROR, NULL, 0);
    size_t n = h3_write_close(&c->peer, buf, sizeof(buf));
    if (n > 0)
        h3_send(&c->peer, &ngtcp2_conn_get_path(c->peer.conn)->remote, buf, n);
}

static void report_failure(struct client *c, int rv)
{
    char why[512], addr[64];
    h3_addr_str(&c->peer.remote, addr, sizeof(addr));
    if (rv == H3_ERR_DEADLINE) {
        if (!ngtcp2_conn_get_handshake_completed(c->peer.conn))
            h3_err("%s: timed out after %g s: no QUIC handshake completed (is a QUIC server "
                   "listening there?)", addr, c->opt->timeout);
        else
            h3_err("%s: timed out after %g s: %zu of %zu responses complete", addr,
                   c->opt->timeout, c->ndone, c->nreqs);
        return;
    }
    h3_describe_failure(&c->peer, rv, why, sizeof(why));
    h3_err("%s: %s", addr, why);
}

/* The responses, and whether each one arrived whole (quiet if the connection failed). */
static int print_responses(struct client *c, int failed)
{
    int ok = 1;
    for (size_t i = 0; i < c->nreqs; i++) {
        struct request *r = &c->reqs[i];
        if (!c->opt->quiet && (r->done || r->hlen > 0))
            printf("%s\n%.*s  body: %llu bytes%s\n", r->url, (int)r->hlen,
                   r->headers ? r->headers : "", (unsigned long long)r->body,
                   r->done ? "" : " (incomplete)");
        if (failed) {
            ok = 0;
        } else if (r->reset) {
            char code[96];
            h3_describe_code(r->reset_code, 1, code, sizeof(code));
            h3_err("%s: the stream was reset with %s", r->url, code);
            ok = 0;
        } else if (!r->done) {
            h3_err("%s: no complete response", r->url);
            ok = 0;
        }
    }
    return ok;
}

static void print_summary(struct client *c)
{
    uint64_t bytes = 0, end = h3_now();
    for (size_t i = 0; i < c->nreqs; i++)
        bytes += c->reqs[i].body;
    printf("summary: handshake=%s suite=%s group=%s alpn=%s hrr=%s early_data=%s "
           "responses=%zu/%zu bytes=%llu handshake_ms=%.1f total_ms=%.1f",
           c->hs.kind, c->hs.suite, c->hs.group, c->hs.alpn, c->hs.hrr ? "yes" : "no",
           c->hs.early, c->ndone, c->nreqs, (unsigned long long)bytes,
           h3_ms(c->peer.handshake_done - c->peer.started), h3_ms(end - c->peer.started));
    if (c->opt->ocsp) /* only with --ocsp, so the line is unchanged without it */
        printf(" ocsp=%s", c->ocsp != NULL ? c->ocsp : "not-run");
    if (c->opt->tls.cert_compression != NULL) /* likewise */
        printf(" cert_compression=%s", c->cert_comp != NULL ? c->cert_comp : "not-run");
    printf("\n");
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: h3client [options] URL...\n"
        "Fetches each URL (https://HOST[:PORT]/PATH, all on the first URL's HOST:PORT) over\n"
        "one HTTP/3 connection and prints its status, response headers and body size.\n"
        "  --ca=FILE          trust these CA certificates (default: the system's)\n"
        "  --insecure         do not verify the server's certificate\n"
        "  --sni=NAME         server name to send and to check the certificate against\n"
        "                     (default: the URL's host; an IP address is checked as such)\n"
        "  --cert=FILE        client certificate chain (PEM), sent when the server asks\n"
        "  --key=FILE         its private key (default: in the --cert file)\n"
        "  --session=FILE     resume the TLS session kept in FILE and keep the new one\n"
        "                     there (PEM, with the QUIC transport parameters 0-RTT needs)\n"
        "  --no-early-data    resume without sending the requests as 0-RTT\n"
        "  --no-grease        send no GREASE values (RFC 8701; sent by default)\n"
        "  --ocsp             ask for a stapled OCSP response, verify it, fail if it is\n"
        "                     invalid or says revoked; the summary gets ocsp=good|none|...\n"
        "  --groups=LIST      key exchange groups by preference, e.g. X25519:P-256\n"
        "  --ciphers=LIST     TLS 1.3 suites, e.g. TLS_CHACHA20_POLY1305_SHA256\n"
        "  --cert-compression=LIST  accept a compressed server certificate (RFC 8879), with\n"
        "                     these algorithms by preference: zlib,brotli,zstd\n"
        "  --qlog=FILE        write a qlog trace of the connection (for qvis)\n"
        "  --output=DIR       save each body in DIR, named after the path's last part\n"
        "  --timeout=SECONDS  give up after this long (default 10)\n"
        "  -q, --quiet        print only the summary line and errors\n"
        "  -v, --verbose      ngtcp2's debug log on stderr\n"
        "SSLKEYLOGFILE=FILE in the environment appends the TLS secrets to FILE.\n"
        "Prints a last line \"summary: handshake=full|resumed suite=... group=... alpn=...\n"
        "hrr=yes|no early_data=accepted|rejected|none responses=N/N bytes=N ...\".\n"
        "Exit status: 0 when every response arrived complete, 1 otherwise, 2 on bad usage.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
    enum { CA = 256, INSECURE, SNI, CERT, KEY, SESSION, NO_EARLY, NO_GREASE, GROUPS, CIPHERS, QLOG,
           OUTPUT, TIMEOUT, OCSP, CERT_COMP };
    static const struct option longopts[] = {
        {"ca", required_argument, NULL, CA},
        {"insecure", no_argument, NULL, INSECURE},
        {"sni", required_argument, NULL, SNI},
        {"cert", required_argument, NULL, CERT},
        {"key", required_argument, NULL, KEY},
        {"session", required_argument, NULL, SESSION},
        {"no-early-data", no_argument, NULL, NO_EARLY},
        {"no-grease", no_argument, NULL, NO_GREASE},
        {"ocsp", no_argument, NULL, OCSP},
        {"groups", required_argument, NULL, GROUPS},
        {"ciphers", required_argument, NULL, CIPHERS},
        {"cert-compression", required_argument, NULL, CERT_COMP},
        {"qlog", required_argument, NULL, QLOG},
        {"output", required_argument, NULL, OUTPUT},
        {"timeout", required_argument, NULL, TIMEOUT},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    char *end;
    o->timeout = 10;
    while ((ch = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case CA: o->tls.ca = optarg; break;
        case INSECURE: o->insecure = 1; break;
        case SNI: o->sni = optarg; break;
        case CERT: o->tls.cert = optarg; break;
        case KEY: o->tls.key = optarg; break;
        case SESSION: o->session_file = optarg; break;
        case NO_EARLY: o->no_early_data = 1; break;
        case NO_GREASE: o->no_grease = 1; break;
        case OCSP: o->ocsp = 1; break;
        case GROUPS: o->tls.groups = optarg; break;
        case CIPHERS: o->tls.ciphers = optarg; break;
        case CERT_COMP: o->tls.cert_compression = optarg; break;
        case QLOG: o->qlog_file = optarg; break;
        case OUTPUT: o->output_dir = optarg; break;
        case TIMEOUT:
            o->timeout = strtod(optarg, &end);
            if (*end != '\0' || !(o->timeout > 0 && o->timeout < 3600)) {
                h3_err("--timeout=%s: want seconds, more than 0 and less than 3600", optarg);
                return -1;
            }
            break;
        case 'q': o->quiet = 1; break;
        case 'v': h3_verbose = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return -1;
    }
    if (o->tls.key != NULL && o->tls.cert == NULL) {
        h3_err("--key needs --cert");
        return -1;
    }
    return 0;
}

static void client_free(struct client *c)
{
    for (size_t i = 0; i < c->nreqs; i++) {
        free(c->reqs[i].headers);
        if (c->reqs[i].out != NULL)
            fclose(c->reqs[i].out);
    }
    free(c->reqs);
    h3_peer_free(&c->peer);
    SSL_CTX_free(c->ctx);
    if (c->peer.fd >= 0)
        close(c->peer.fd);
    h3_keylog_close();
}

int main(int argc, char **argv)
{
    struct options opt = {0};
    struct client c;
    h3_prog = "h3client";
    if (parse_args(argc, argv, &opt) != 0)
        return 2;
    if (h3_peer_init(&c.peer, 0, -1) != 0)
        return 1;
    c.ctx = NULL;
    c.opt = &opt;
    c.nreqs = (size_t)(argc - optind);
    c.ndone = 0;
    c.early = c.ticket_saved = 0;
    c.all_done = 0;
    memset(&c.hs, 0, sizeof(c.hs));
    c.reqs = calloc(c.nreqs, sizeof(*c.reqs));
    if (c.reqs == NULL)
        return 1;
    for (size_t i = 0; i < c.nreqs; i++) {
        if (parse_url(&c.reqs[i], argv[optind + (int)i]) != 0) {
            client_free(&c);
            return 2;
        }
    }

    int rv = -1, ok = 0;
    if (socket_init(&c, &c.reqs[0]) == 0 && tls_init(&c, c.reqs[0].host) == 0 &&
        open_outputs(&c) == 0 && quic_init(&c) == 0 && start_early(&c) == 0) {
        rv = run(&c);
        if (rv != 0)
            report_failure(&c, rv);
        close_connection(&c, rv == 0);
        ok = print_responses(&c, rv != 0) && rv == 0;
        if (c.peer.handshake_done != 0)
            print_summary(&c);
    }
    client_free(&c);
    return ok ? 0 : 1;
}
