/*
 * h3server: serves a directory over HTTP/3 on a UDP port, with ngtcp2 +
 * nghttp3 on qtls.
 *
 *   h3server [options] ADDRESS PORT KEY CERT
 *
 * One UDP socket, any number of connections, one ppoll() loop. Prints
 * "listening on ADDRESS:PORT" once ready (PORT 0 picks a free port), a line
 * per handshake (what was negotiated) and per request. Tickets are issued
 * for resumption, and 0-RTT requests are served unless --no-early-data.
 * Run with --help for the options.
 */
#include "h3common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#define MAX_FILE (256u << 20)

struct options {
    struct h3_tls_opts tls;
    const char *addr, *port, *root, *qlog_dir, *ticket_keys, *ocsp_file;
    int verify_client, no_early_data, quiet;
    double idle_timeout; /* seconds */
};

struct stream {
    struct stream *next;
    int64_t id;
    char method[16], path[2048];
    int early; /* the request came in 0-RTT */
    int status;
    uint8_t *body;
    size_t len;
    char clen[24];
};

struct server;

struct sconn {
    struct h3_peer peer; /* first: the ngtcp2/nghttp3 user data */
    struct sconn *next;
    struct server *srv;
    unsigned id;
    ngtcp2_cid odcid; /* the client's first Destination Connection ID */
    struct stream *streams;
    int in_early;     /* the stream data being read came in 0-RTT */
    uint64_t closing; /* closing or draining: forget the connection at this time */
    uint8_t closebuf[H3_MAX_UDP];
    size_t closelen;
};

struct server {
    int fd;
    struct h3_addr local;
    SSL_CTX *ctx;
    const struct options *opt;
    struct sconn *conns;
    unsigned next_id;
    unsigned char *ocsp; /* --ocsp: the DER response stapled for clients that ask */
    long ocsp_len;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void conn_log(struct sconn *sc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void conn_log(struct sconn *sc, const char *fmt, ...)
{
    char addr[64];
    va_list ap;
    printf("conn %u %s: ", sc->id, h3_addr_str(&sc->peer.remote, addr, sizeof(addr)));
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* ----------------------------------------------------------------- responses */

static const char *content_type(const char *path)
{
    static const char *const types[][2] = {
        {".html", "text/html"}, {".txt", "text/plain"}, {".css", "text/css"},
        {".js", "text/javascript"}, {".json", "application/json"}, {".png", "image/png"},
        {".jpg", "image/jpeg"}, {".svg", "image/svg+xml"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i][0]) == 0)
            return types[i][1];
    return "application/octet-stream";
}

static nghttp3_ssize read_body(nghttp3_conn *conn, int64_t stream_id, nghttp3_vec *vec,
                               size_t veccnt, uint32_t *pflags, void *conn_user_data,
                               void *stream_user_data)
{
    struct stream *st = stream_user_data;
    (void)conn, (void)stream_id, (void)veccnt, (void)conn_user_data;
    vec[0].base = st->body;
    vec[0].len = st->len;
    *pflags |= NGHTTP3_DATA_FLAG_EOF;
    return st->len > 0 ? 1 : 0;
}

/* A path inside the served directory, or -1 for one that climbs out of it. */
static int local_path(const struct sconn *sc, const char *path, char *out, size_t len)
{
    size_t plen = strcspn(path, "?#");
    if (path[0] != '/' || memmem(path, plen, "/..", 3) != NULL || memchr(path, '\\', plen))
        return -1;
    int n = snprintf(out, len, "%s%.*s%s", sc->srv->opt->root, (int)plen, path,
                     path[plen - 1] == '/' ? "index.html" : "");
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* A short text/plain page for an error status. */
static void error_page(struct stream *st, int status, const char *text)
{
    st->status = status;
    st->body = (uint8_t *)strdup(text);
    st->len = st->body != NULL ? strlen(text) : 0;
}

/* The response to a request: the file it names, or an error page. */
static void load_body(struct sconn *sc, struct stream *st)
{
    char file[PATH_MAX];
    if (strcmp(st->method, "GET") != 0 && strcmp(st->method, "HEAD") != 0)
        error_page(st, 405, "405 Method Not Allowed\n");
    else if (local_path(sc, st->path, file, sizeof(file)) != 0)
        error_page(st, 400, "400 Bad Request\n");
    else if ((st->body = h3_read_file(file, MAX_FILE, &st->len)) != NULL)
        st->status = 200;
    else if (errno == ENOENT || errno == EISDIR || errno == ENOTDIR || errno == EACCES)
        error_page(st, 404, "404 Not Found\n");
    else
        error_page(st, 500, "500 Internal Server Error\n");
    snprintf(st->clen, sizeof(st->clen), "%zu", st->len);
}

static nghttp3_nv make_nv(const char *name, const char *value)
{
    return (nghttp3_nv){(uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value),
                        NGHTTP3_NV_FLAG_NONE};
}

static int respond(struct sconn *sc, struct stream *st)
{
    char status[8];
    load_body(sc, st);
    snprintf(status, sizeof(status), "%d", st->status);
    nghttp3_nv nva[] = {
        make_nv(":status", status),
        make_nv("server", "qtls-h3server"),
        make_nv("content-length", st->clen),
        make_nv("content-type", st->status == 200 ? content_type(st->path) : "text/plain"),
    };
    nghttp3_data_reader dr = {.read_data = read_body};
    int head = strcmp(st->method, "HEAD") == 0;
    int rv = nghttp3_conn_submit_response(sc->peer.h3, st->id, nva, sizeof(nva) / sizeof(nva[0]),
                                          head ? NULL : &dr);
    if (rv != 0) {
        h3_err("nghttp3_conn_submit_response: %s", nghttp3_strerror(rv));
        return -1;
    }
    if (!sc->srv->opt->quiet)
        conn_log(sc, "%s %s -> %d, %zu bytes%s", st->method, st->path, st->status, st->len,
                 st->early ? " (request in 0-RTT)" : "");
    return 0;
}

/* ----------------------------------------------------------------- HTTP/3 callbacks */

static void free_stream(struct sconn *sc, struct stream *st)
{
    for (struct stream **pp = &sc->streams; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    }
    free(st->body);
    free(st);
}

static int begin_headers(nghttp3_conn *conn, int64_t stream_id, void *conn_user_data,
                         void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)stream_user_data;
    struct stream *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    st->id = stream_id;
    st->early = sc->in_early;
    st->next = sc->streams;
    sc->streams = st;
    return nghttp3_conn_set_stream_user_data(conn, stream_id, st) == 0
               ? 0
               : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int recv_header(nghttp3_conn *conn, int64_t stream_id, int32_t token, nghttp3_rcbuf *name,
                       nghttp3_rcbuf *value, uint8_t flags, void *conn_user_data,
                       void *stream_user_data)
{
    struct stream *st = stream_user_data;
    nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
    (void)conn, (void)stream_id, (void)name, (void)flags, (void)conn_user_data;
    if (token == NGHTTP3_QPACK_TOKEN__METHOD)
        snprintf(st->method, sizeof(st->method), "%.*s", (int)v.len, (const char *)v.base);
    else if (token == NGHTTP3_QPACK_TOKEN__PATH)
        snprintf(st->path, sizeof(st->path), "%.*s", (int)v.len, (const char *)v.base);
    return 0;
}

static int end_stream(nghttp3_conn *conn, int64_t stream_id, void *conn_user_data,
                      void *stream_user_data)
{
    (void)conn, (void)stream_id;
    if (stream_user_data == NULL) /* no request headers: nothing to answer */
        return 0;
    return respond(conn_user_data, stream_user_data) == 0 ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int recv_data(nghttp3_conn *conn, int64_t stream_id, const uint8_t *data, size_t len,
                     void *conn_user_data, void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)conn, (void)data, (void)stream_user_data;
    h3_consume(&sc->peer, stream_id, len); /* request bodies are not used */
    return 0;
}

static int deferred_consume(nghttp3_conn *conn, int64_t stream_id, size_t consumed,
                            void *conn_user_data, void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)conn, (void)stream_user_data;
    h3_consume(&sc->peer, stream_id, consumed);
    return 0;
}

static int http_stream_close(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                             void *conn_user_data, void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)conn, (void)app_error_code;
    if (stream_user_data != NULL)
        free_stream(sc, stream_user_data);
    if (ngtcp2_is_bidi_stream(stream_id))
        ngtcp2_conn_extend_max_streams_bidi(sc->peer.conn, 1);
    return 0;
}

static int stop_sending(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                        void *conn_user_data, void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)conn, (void)stream_user_data;
    ngtcp2_conn_shutdown_stream_read(sc->peer.conn, stream_id, app_error_code);
    return 0;
}

static int reset_stream(nghttp3_conn *conn, int64_t stream_id, uint64_t app_error_code,
                        void *conn_user_data, void *stream_user_data)
{
    struct sconn *sc = conn_user_data;
    (void)conn, (void)stream_user_data;
    ngtcp2_conn_shutdown_stream_write(sc->peer.conn, stream_id, app_error_code);
    return 0;
}

static int setup_http(struct sconn *sc)
{
    nghttp3_callbacks cb = {
        .stream_close = http_stream_close,
        .recv_data = recv_data,
        .deferred_consume = deferred_consume,
        .begin_headers = begin_headers,
        .recv_header = recv_header,
        .stop_sending = stop_sending,
        .end_stream = end_stream,
        .reset_stream = reset_stream,
    };
    nghttp3_settings settings;
    if (sc->peer.h3 != NULL)
        return 0;
    nghttp3_settings_default(&settings);
    settings.qpack_max_dtable_capacity = 4096;
    settings.qpack_blocked_streams = 100;
    int rv = nghttp3_conn_server_new(&sc->peer.h3, &cb, &settings, nghttp3_mem_default(), sc);
    if (rv != 0) {
        h3_err("nghttp3_conn_server_new: %s", nghttp3_strerror(rv));
        return -1;
    }
    const ngtcp2_transport_params *tp = ngtcp2_conn_get_local_transport_params(sc->peer.conn);
    nghttp3_conn_set_max_client_streams_bidi(sc->peer.h3, tp->initial_max_streams_bidi);
    return h3_bind_streams(&sc->peer);
}

/* ----------------------------------------------------------------- ngtcp2 callbacks */

static void log_handshake(struct sconn *sc)
{
    struct h3_summary s;
    char cert[256] = "none";
    X509 *x = SSL_get1_peer_certificate(sc->peer.ssl);
    if (x != NULL) {
        X509_NAME_oneline(X509_get_subject_name(x), cert, sizeof(cert));
        X509_free(x);
    }
    h3_summarize(&sc->peer, 0, &s);
    conn_log(sc, "%s handshake, %s, %s, ALPN %s, HRR %s, 0-RTT %s, client certificate %s, "
             "%.1f ms", s.kind, s.suite, s.group, s.alpn, s.hrr ? "yes" : "no", s.early, cert,
             h3_ms(sc->peer.handshake_done - sc->peer.started));
}

static int handshake_completed(ngtcp2_conn *conn, void *user_data)
{
    struct sconn *sc = user_data;
    (void)conn;
    sc->peer.handshake_done = h3_now();
    if (!sc->srv->opt->quiet)
        log_handshake(sc);
    return 0;
}

static int recv_tx_key(ngtcp2_conn *conn, ngtcp2_crypto_level level, void *user_data)
{
    (void)conn;
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION)
        return 0;
    return setup_http(user_data) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int extend_max_remote_streams_bidi(ngtcp2_conn *conn, uint64_t max_streams,
                                          void *user_data)
{
    struct sconn *sc = user_data;
    (void)conn;
    if (sc->peer.h3 != NULL)
        nghttp3_conn_set_max_client_streams_bidi(sc->peer.h3, max_streams);
    return 0;
}

static int recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
                            uint64_t offset, const uint8_t *data, size_t len, void *user_data,
                            void *stream_user_data)
{
    struct sconn *sc = user_data;
    sc->in_early = (flags & NGTCP2_STREAM_DATA_FLAG_EARLY) != 0;
    int rv = h3_recv_stream_data(conn, flags, stream_id, offset, data, len, user_data,
                                 stream_user_data);
    sc->in_early = 0;
    return rv;
}

/* ----------------------------------------------------------------- connections */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl, (void)arg;
    for (const unsigned char *p = in; p + 1 + *p <= in + inlen; p += 1 + *p) {
        if (*p == 2 && memcmp(p + 1, "h3", 2) == 0) {
            *out = p + 1;
            *outlen = 2;
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
}

/*
 * --ticket-keys=FILE: the session ticket key (name, AES-256-CBC key, HMAC
 * key: 80 bytes) lives in FILE, made on first use, so that tickets, and
 * 0-RTT with them, survive a restart. Without it qtls keeps its own keys in
 * memory. (A restarted server's 0-RTT replay filter starts empty.)
 */
static struct {
    uint8_t name[16], aes[32], hmac[32];
} ticket_key;

static int ticket_key_cb(SSL *ssl, unsigned char name[16], unsigned char *iv,
                         EVP_CIPHER_CTX *cc, EVP_MAC_CTX *hc, int enc)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, ticket_key.hmac, 32),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    (void)ssl;
    if (enc) {
        memcpy(name, ticket_key.name, sizeof(ticket_key.name));
        if (RAND_bytes(iv, 16) != 1 ||
            !EVP_EncryptInit_ex(cc, EVP_aes_256_cbc(), NULL, ticket_key.aes, iv))
            return -1;
    } else {
        if (memcmp(name, ticket_key.name, sizeof(ticket_key.name)) != 0)
            return 0; /* another key's ticket: a full handshake */
        if (!EVP_DecryptInit_ex(cc, EVP_aes_256_cbc(), NULL, ticket_key.aes, iv))
            return -1;
    }
    return EVP_MAC_CTX_set_params(hc, params) ? 1 : -1;
}

static int make_ticket_keys(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || RAND_bytes((uint8_t *)&ticket_key, sizeof(ticket_key)) != 1 ||
        write(fd, &ticket_key, sizeof(ticket_key)) != (ssize_t)sizeof(ticket_key)) {
        h3_err("cannot create ticket key file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return close(fd);
}

static int ticket_keys_init(SSL_CTX *ctx, const char *path)
{
    size_t len;
    uint8_t *data = h3_read_file(path, sizeof(ticket_key), &len);
    if (data == NULL && errno == ENOENT) {
        if (make_ticket_keys(path) != 0)
            return -1;
    } else if (data == NULL || len != sizeof(ticket_key)) {
        h3_err("%s: want a ticket key file of %zu bytes", path, sizeof(ticket_key));
        free(data);
        return -1;
    } else {
        memcpy(&ticket_key, data, sizeof(ticket_key));
        free(data);
    }
    if (SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb) != 1) {
        h3_err_ssl("SSL_CTX_set_tlsext_ticket_key_evp_cb failed");
        return -1;
    }
    return 0;
}

/* SSL_CTX_set_tlsext_status_cb, server side: staple --ocsp's response (the SSL frees its copy). */
static int ocsp_staple(SSL *ssl, void *arg)
{
    struct server *s = arg;
    unsigned char *copy = OPENSSL_memdup(s->ocsp, (size_t)s->ocsp_len);
    if (copy == NULL || !SSL_set_tlsext_status_ocsp_resp(ssl, copy, s->ocsp_len)) {
        OPENSSL_free(copy);
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;
}

/* Reads --ocsp's DER OCSP response and staples it from then on. */
static int ocsp_init(struct server *s, const char *path)
{
    BIO *in = BIO_new_file(path, "rb");
    OCSP_RESPONSE *resp = in != NULL ? d2i_OCSP_RESPONSE_bio(in, NULL) : NULL;
    int len = resp != NULL ? i2d_OCSP_RESPONSE(resp, &s->ocsp) : -1;
    OCSP_RESPONSE_free(resp);
    BIO_free(in);
    if (len <= 0) {
        h3_err_ssl("--ocsp=%s: not a DER OCSP response", path);
        return -1;
    }
    s->ocsp_len = len;
    if (!SSL_CTX_set_tlsext_status_cb(s->ctx, ocsp_staple) ||
        !SSL_CTX_set_tlsext_status_arg(s->ctx, s)) {
        h3_err_ssl("cannot set the OCSP status callback");
        return -1;
    }
    return 0;
}

static int tls_init(struct server *s)
{
    const struct options *o = s->opt;
    static const unsigned char sid_ctx[] = "qtls h3server";
    s->ctx = SSL_CTX_new(TLS_server_method());
    if (s->ctx == NULL || ngtcp2_crypto_qtls_configure_server_context(s->ctx) != 0) {
        h3_err_ssl("cannot set up a TLS server context");
        return -1;
    }
    if (h3_tls_setup(s->ctx, &o->tls) != 0)
        return -1;
    SSL_CTX_set_alpn_select_cb(s->ctx, alpn_select, NULL);
    SSL_CTX_set_session_id_context(s->ctx, sid_ctx, sizeof(sid_ctx) - 1);
    if (!o->no_early_data)
        SSL_CTX_set_max_early_data(s->ctx, UINT32_MAX);
    if (o->verify_client)
        SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (o->ticket_keys != NULL && ticket_keys_init(s->ctx, o->ticket_keys) != 0)
        return -1;
    if (o->ocsp_file != NULL && ocsp_init(s, o->ocsp_file) != 0)
        return -1;
    return 0;
}

/*
 * What 0-RTT depends on besides the ticket (RFC 9001 §4.6.3): a ticket from
 * a server with other limits must not carry early data here.
 */
static int early_data_context(SSL *ssl, const ngtcp2_transport_params *tp)
{
    char ctx[160];
    int n = snprintf(ctx, sizeof(ctx), "qtls-h3server h3 %llu %llu %llu %llu %llu %llu",
                     (unsigned long long)tp->initial_max_data,
                     (unsigned long long)tp->initial_max_stream_data_bidi_local,
                     (unsigned long long)tp->initial_max_stream_data_bidi_remote,
                     (unsigned long long)tp->initial_max_stream_data_uni,
                     (unsigned long long)tp->initial_max_streams_bidi,
                     (unsigned long long)tp->initial_max_streams_uni);
    return SSL_set_quic_early_data_context(ssl, (const uint8_t *)ctx, (size_t)n);
}

static int conn_tls(struct sconn *sc, const ngtcp2_transport_params *tp)
{
    SSL *ssl = sc->peer.ssl = SSL_new(sc->srv->ctx);
    if (ssl == NULL) {
        h3_err_ssl("SSL_new failed");
        return -1;
    }
    SSL_set_app_data(ssl, &sc->peer.conn_ref);
    SSL_set_accept_state(ssl);
    if (!sc->srv->opt->no_early_data) {
        SSL_set_quic_early_data_enabled(ssl, 1);
        if (!early_data_context(ssl, tp)) {
            h3_err_ssl("SSL_set_quic_early_data_context failed");
            return -1;
        }
    }
    return 0;
}

static void cid_hex(const ngtcp2_cid *cid, char *out)
{
    for (size_t i = 0; i < cid->datalen; i++)
        sprintf(out + 2 * i, "%02x", cid->data[i]);
    out[2 * cid->datalen] = '\0';
}

static int conn_qlog(struct sconn *sc)
{
    char path[PATH_MAX], hex[2 * NGTCP2_MAX_CIDLEN + 1];
    if (sc->srv->opt->qlog_dir == NULL)
        return 0;
    cid_hex(&sc->odcid, hex);
    snprintf(path, sizeof(path), "%s/%s.sqlog", sc->srv->opt->qlog_dir, hex);
    return h3_qlog_open(&sc->peer, path);
}

static int conn_quic(struct sconn *sc, const ngtcp2_pkt_hd *hd)
{
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_cid scid = {.datalen = H3_SERVER_CIDLEN};
    const struct options *o = sc->srv->opt;
    ngtcp2_path path = {
        .local = {(struct sockaddr *)&sc->peer.local.ss, sc->peer.local.len},
        .remote = {(struct sockaddr *)&sc->peer.remote.ss, sc->peer.remote.len},
    };
    h3_callbacks_common(&cb);
    cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
    cb.handshake_completed = handshake_completed;
    cb.recv_tx_key = recv_tx_key;
    cb.extend_max_remote_streams_bidi = extend_max_remote_streams_bidi;
    cb.recv_stream_data = recv_stream_data;

    if (conn_qlog(sc) != 0)
        return -1;
    h3_settings_common(&sc->peer, &settings);
    settings.qlog.odcid = hd->dcid;
    h3_params_common(&params, (uint64_t)(o->idle_timeout * NGTCP2_SECONDS));
    params.initial_max_streams_bidi = 100;
    params.original_dcid = hd->dcid;
    params.stateless_reset_token_present = 1;
    if (RAND_bytes(scid.data, (int)scid.datalen) != 1 ||
        RAND_bytes(params.stateless_reset_token, NGTCP2_STATELESS_RESET_TOKENLEN) != 1) {
        h3_err_ssl("RAND_bytes failed");
        return -1;
    }
    if (conn_tls(sc, &params) != 0)
        return -1;
    int rv = ngtcp2_conn_server_new(&sc->peer.conn, &hd->scid, &scid, &path, hd->version, &cb,
                                    &settings, &params, NULL, sc);
    if (rv != 0) {
        h3_err("ngtcp2_conn_server_new: %s", ngtcp2_strerror(rv));
        return -1;
    }
    ngtcp2_conn_set_tls_native_handle(sc->peer.conn, sc->peer.ssl);
    return 0;
}

static void conn_free(struct sconn *sc)
{
    while (sc->streams != NULL)
        free_stream(sc, sc->streams);
    h3_peer_free(&sc->peer);
    free(sc);
}

static void conn_remove(struct server *s, struct sconn *sc)
{
    for (struct sconn **pp = &s->conns; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == sc) {
            *pp = sc->next;
            break;
        }
    }
    conn_free(sc);
}

/* A new connection for a client's first Initial packet; NULL to drop the packet. */
static struct sconn *conn_accept(struct server *s, const struct h3_addr *from,
                                 const uint8_t *pkt, size_t len)
{
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, pkt, len) != 0)
        return NULL;
    struct sconn *sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        return NULL;
    if (h3_peer_init(&sc->peer, 1, s->fd) != 0) {
        free(sc);
        return NULL;
    }
    sc->srv = s;
    sc->id = ++s->next_id;
    sc->odcid = hd.dcid;
    sc->peer.local = s->local;
    sc->peer.remote = *from;
    if (conn_quic(sc, &hd) != 0) {
        conn_free(sc);
        return NULL;
    }
    sc->next = s->conns;
    s->conns = sc;
    return sc;
}

static int cid_eq(const ngtcp2_cid *cid, const uint8_t *data, size_t len)
{
    return cid->datalen == len && memcmp(cid->data, data, len) == 0;
}

static struct sconn *conn_find(struct server *s, const uint8_t *dcid, size_t dcidlen)
{
    ngtcp2_cid scids[16];
    for (struct sconn *sc = s->conns; sc != NULL; sc = sc->next) {
        if (cid_eq(&sc->odcid, dcid, dcidlen))
            return sc;
        size_t n = ngtcp2_conn_get_num_scid(sc->peer.conn);
        if (n > sizeof(scids) / sizeof(scids[0]))
            continue;
        ngtcp2_conn_get_scid(sc->peer.conn, scids);
        for (size_t i = 0; i < n; i++)
            if (cid_eq(&scids[i], dcid, dcidlen))
                return sc;
    }
    return NULL;
}

static uint64_t close_period(struct sconn *sc)
{
    return h3_now() + 3 * ngtcp2_conn_get_pto(sc->peer.conn);
}

/* The connection failed or the peer closed it: say why, then close or drain. */
static void conn_end(struct server *s, struct sconn *sc, int rv)
{
    char why[512];
    if (rv == NGTCP2_ERR_DRAINING && sc->peer.peer_close.seen && sc->peer.peer_close.app &&
        sc->peer.peer_close.code == NGHTTP3_H3_NO_ERROR) {
        if (!s->opt->quiet)
            conn_log(sc, "closed by the client");
    } else if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        if (!s->opt->quiet)
            conn_log(sc, "idle timeout, closed");
    } else {
        h3_describe_failure(&sc->peer, rv, why, sizeof(why));
        conn_log(sc, "%s", why);
    }
    if (rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_DROP_CONN || rv == H3_ERR_SOCKET) {
        conn_remove(s, sc);
        return;
    }
    sc->closelen = h3_write_close(&sc->peer, sc->closebuf, sizeof(sc->closebuf));
    if (sc->closelen > 0)
        h3_send(&sc->peer, &ngtcp2_conn_get_path(sc->peer.conn)->remote, sc->closebuf,
                sc->closelen);
    sc->closing = close_period(sc);
}

static void send_version_negotiation(struct server *s, const struct h3_addr *to,
                                     const ngtcp2_version_cid *vc)
{
    uint8_t buf[256];
    const uint32_t versions[] = {NGTCP2_PROTO_VER_V1};
    ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(
        buf, sizeof(buf), (uint8_t)(rand() & 0x7f), vc->scid, vc->scidlen, vc->dcid,
        vc->dcidlen, versions, 1);
    if (n > 0)
        sendto(s->fd, buf, (size_t)n, 0, (const struct sockaddr *)&to->ss, to->len);
}

static void on_packet(struct server *s, const struct h3_addr *from, const uint8_t *pkt,
                      size_t len)
{
    ngtcp2_version_cid vc;
    int rv = ngtcp2_pkt_decode_version_cid(&vc, pkt, len, H3_SERVER_CIDLEN);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        send_version_negotiation(s, from, &vc);
        return;
    }
    if (rv != 0)
        return;
    struct sconn *sc = conn_find(s, vc.dcid, vc.dcidlen);
    if (sc == NULL && (sc = conn_accept(s, from, pkt, len)) == NULL)
        return;
    if (sc->closing) { /* closing: repeat the CONNECTION_CLOSE; draining: stay silent */
        if (sc->closelen > 0)
            h3_send(&sc->peer, &ngtcp2_conn_get_path(sc->peer.conn)->remote, sc->closebuf,
                    sc->closelen);
        return;
    }
    rv = h3_read_pkt(&sc->peer, from, pkt, len);
    if (rv == 0)
        rv = h3_write(&sc->peer);
    if (rv != 0)
        conn_end(s, sc, rv);
}

/* ----------------------------------------------------------------- the loop */

static void read_packets(struct server *s)
{
    uint8_t buf[65536];
    for (int i = 0; i < 64; i++) {
        struct h3_addr from = {.len = sizeof(from.ss)};
        ssize_t n = recvfrom(s->fd, buf, sizeof(buf), MSG_DONTWAIT,
                             (struct sockaddr *)&from.ss, &from.len);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                h3_err("recvfrom: %s", strerror(errno));
            return;
        }
        on_packet(s, &from, buf, (size_t)n);
    }
}

/* Timers of every connection; returns how long poll() may sleep. */
static int handle_timers(struct server *s)
{
    int wait = 1000;
    struct sconn *next;
    for (struct sconn *sc = s->conns; sc != NULL; sc = next) {
        uint64_t now = h3_now();
        next = sc->next;
        if (sc->closing) {
            if (now >= sc->closing) {
                conn_remove(s, sc);
                continue;
            }
            int ms = (int)((sc->closing - now) / NGTCP2_MILLISECONDS) + 1;
            wait = ms < wait ? ms : wait;
            continue;
        }
        if (ngtcp2_conn_get_expiry(sc->peer.conn) <= now) {
            int rv = h3_handle_expiry(&sc->peer);
            if (rv == 0)
                rv = h3_write(&sc->peer);
            if (rv != 0) {
                conn_end(s, sc, rv);
                continue;
            }
        }
        int t = h3_poll_timeout(&sc->peer);
        if (t >= 0 && t < wait)
            wait = t;
    }
    return wait;
}

/*
 * SIGINT and SIGTERM are blocked except inside ppoll(), so one that comes after the loop's
 * check wakes the wait at once instead of being slept through until the next timer (up to
 * a second).
 */
static int serve(struct server *s)
{
    sigset_t stops, in_wait;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &stops, &in_wait) != 0) {
        h3_err("sigprocmask: %s", strerror(errno));
        return -1;
    }
    while (!stop) {
        struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
        int wait = handle_timers(s);
        struct timespec ts = {.tv_sec = wait / 1000, .tv_nsec = (long)(wait % 1000) * 1000000};
        if (ppoll(&pfd, 1, &ts, &in_wait) < 0 && errno != EINTR) {
            h3_err("ppoll: %s", strerror(errno));
            return -1;
        }
        if (pfd.revents & POLLIN)
            read_packets(s);
    }
    return 0;
}

static int socket_init(struct server *s)
{
    char addr[64];
    struct h3_addr a;
    if (h3_resolve(s->opt->addr, s->opt->port, 1, &a) != 0)
        return -1;
    s->fd = socket(a.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
    if (s->fd < 0) {
        h3_err("socket: %s", strerror(errno));
        return -1;
    }
    if (bind(s->fd, (struct sockaddr *)&a.ss, a.len) != 0) {
        h3_err("cannot listen on UDP %s: %s", h3_addr_str(&a, addr, sizeof(addr)),
               strerror(errno));
        return -1;
    }
    s->local.len = sizeof(s->local.ss);
    getsockname(s->fd, (struct sockaddr *)&s->local.ss, &s->local.len);
    return 0;
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: h3server [options] ADDRESS PORT KEY CERT\n"
        "Serves a directory over HTTP/3 on UDP ADDRESS:PORT (PORT 0: any free port) with\n"
        "the private key KEY and certificate chain CERT (PEM). Prints \"listening on\n"
        "ADDRESS:PORT\", then a line per handshake and per request.\n"
        "  --dir=DIR          directory to serve (default: the current one)\n"
        "  --verify-client    require a client certificate, verified against --ca\n"
        "  --ca=FILE          CA certificates for client certificates (default: system's)\n"
        "  --no-early-data    accept no 0-RTT (resumption still works)\n"
        "  --ticket-keys=FILE keep the session ticket key in FILE (made if missing), so\n"
        "                     sessions and 0-RTT survive a restart\n"
        "  --ocsp=FILE        staple this DER OCSP response for clients that ask\n"
        "  --groups=LIST      key exchange groups by preference, e.g. P-256:X25519\n"
        "  --ciphers=LIST     TLS 1.3 suites, e.g. TLS_CHACHA20_POLY1305_SHA256\n"
        "  --cert-compression=LIST  compress the certificate for clients that accept it\n"
        "                     (RFC 8879), by preference: zlib,brotli,zstd\n"
        "  --qlog-dir=DIR     write a qlog trace per connection, DIR/<ODCID>.sqlog (qvis)\n"
        "  --timeout=SECONDS  idle timeout of a connection (default 30)\n"
        "  -q, --quiet        log only failed connections\n"
        "  -v, --verbose      ngtcp2's debug log on stderr\n"
        "SSLKEYLOGFILE=FILE in the environment appends the TLS secrets to FILE.\n"
        "Stops on SIGINT or SIGTERM.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
    enum { DIR_ = 256, VERIFY, CA, NO_EARLY, TICKET_KEYS, GROUPS, CIPHERS, QLOG_DIR, TIMEOUT,
           OCSP, CERT_COMP };
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, DIR_},
        {"verify-client", no_argument, NULL, VERIFY},
        {"ca", required_argument, NULL, CA},
        {"no-early-data", no_argument, NULL, NO_EARLY},
        {"ticket-keys", required_argument, NULL, TICKET_KEYS},
        {"ocsp", required_argument, NULL, OCSP},
        {"groups", required_argument, NULL, GROUPS},
        {"ciphers", required_argument, NULL, CIPHERS},
        {"cert-compression", required_argument, NULL, CERT_COMP},
        {"qlog-dir", required_argument, NULL, QLOG_DIR},
        {"timeout", required_argument, NULL, TIMEOUT},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    char *end;
    o->root = ".";
    o->idle_timeout = 30;
    while ((ch = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case DIR_: o->root = optarg; break;
        case VERIFY: o->verify_client = 1; break;
        case CA: o->tls.ca = optarg; break;
        case NO_EARLY: o->no_early_data = 1; break;
        case TICKET_KEYS: o->ticket_keys = optarg; break;
        case OCSP: o->ocsp_file = optarg; break;
        case GROUPS: o->tls.groups = optarg; break;
        case CIPHERS: o->tls.ciphers = optarg; break;
        case CERT_COMP: o->tls.cert_compression = optarg; break;
        case QLOG_DIR: o->qlog_dir = optarg; break;
        case TIMEOUT:
            o->idle_timeout = strtod(optarg, &end);
            if (*end != '\0' || !(o->idle_timeout > 0 && o->idle_timeout < 86400)) {
                h3_err("--timeout=%s: want seconds, more than 0 and less than a day", optarg);
                return -1;
            }
            break;
        case 'q': o->quiet = 1; break;
        case 'v': h3_verbose = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (argc - optind != 4) {
        usage(stderr);
        return -1;
    }
    o->addr = argv[optind];
    o->port = argv[optind + 1];
    o->tls.key = argv[optind + 2];
    o->tls.cert = argv[optind + 3];
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt = {0};
    struct server s = {.fd = -1, .opt = &opt};
    char addr[64];
    struct sigaction sa = {.sa_handler = on_signal};
    h3_prog = "h3server";
    if (parse_args(argc, argv, &opt) != 0)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (access(opt.root, R_OK | X_OK) != 0) {
        h3_err("cannot serve %s: %s", opt.root, strerror(errno));
        return 1;
    }
    int rv = 1;
    if (tls_init(&s) == 0 && socket_init(&s) == 0) {
        printf("listening on %s\n", h3_addr_str(&s.local, addr, sizeof(addr)));
        rv = serve(&s) == 0 ? 0 : 1;
    }
    while (s.conns != NULL)
        conn_remove(&s, s.conns);
    SSL_CTX_free(s.ctx);
    OPENSSL_free(s.ocsp);
    if (s.fd >= 0)
        close(s.fd);
    h3_keylog_close();
    return rv;
}
