/*
 * h3common.c: the parts of the HTTP/3 example client and server that do not
 * depend on the role (see h3common.h).
 */
#include "h3common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

int h3_verbose;
const char *h3_prog = "h3";

static FILE *keylog_file;

void h3_err(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", h3_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void h3_err_ssl(const char *fmt, ...)
{
    va_list ap;
    char buf[256];
    unsigned long e;
    fprintf(stderr, "%s: ", h3_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    while ((e = ERR_get_error()) != 0) {
        ERR_error_string_n(e, buf, sizeof(buf));
        fprintf(stderr, "\n    %s", buf);
    }
    fputc('\n', stderr);
}

uint64_t h3_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NGTCP2_SECONDS + (uint64_t)ts.tv_nsec;
}

double h3_ms(uint64_t ns)
{
    return (double)ns / NGTCP2_MILLISECONDS;
}

/* ----------------------------------------------------------------- addresses */

int h3_resolve(const char *host, const char *port, int passive, struct h3_addr *out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    int rv = getaddrinfo(host, port, &hints, &res);
    if (rv != 0) {
        h3_err("bad address %s port %s: %s", host ? host : "(any)", port,
               rv == EAI_SYSTEM ? strerror(errno) : gai_strerror(rv));
        return -1;
    }
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

const char *h3_addr_str(const struct h3_addr *a, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN], serv[8];
    if (getnameinfo((const struct sockaddr *)&a->ss, a->len, host, sizeof(host), serv,
                    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, len, "(unknown address)");
    } else if (a->ss.ss_family == AF_INET6) {
        snprintf(buf, len, "[%s]:%s", host, serv);
    } else {
        snprintf(buf, len, "%s:%s", host, serv);
    }
    return buf;
}

int h3_is_ip_literal(const char *host)
{
    uint8_t tmp[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, tmp) == 1 || inet_pton(AF_INET6, host, tmp) == 1;
}

/* ----------------------------------------------------------------- TLS */

static void keylog_line(const SSL *ssl, const char *line)
{
    (void)ssl;
    if (keylog_file != NULL) {
        fprintf(keylog_file, "%s\n", line);
        fflush(keylog_file);
    }
}

static int keylog_setup(SSL_CTX *ctx)
{
    const char *path = getenv("SSLKEYLOGFILE");
    if (path == NULL || *path == '\0')
        return 0;
    if (keylog_file == NULL) {
        keylog_file = fopen(path, "a");
        if (keylog_file == NULL) {
            h3_err("SSLKEYLOGFILE=%s: %s", path, strerror(errno));
            return -1;
        }
    }
    SSL_CTX_set_keylog_callback(ctx, keylog_line);
    return 0;
}

void h3_keylog_close(void)
{
    if (keylog_file != NULL)
        fclose(keylog_file);
    keylog_file = NULL;
}

static int load_own_cert(SSL_CTX *ctx, const char *cert, const char *key)
{
    if (key == NULL)
        key = cert;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        h3_err_ssl("cannot use certificate %s", cert);
        return -1;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        h3_err_ssl("cannot use private key %s", key);
        return -1;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        h3_err_ssl("private key %s does not match certificate %s", key, cert);
        return -1;
    }
    return 0;
}

/* --cert-compression=LIST: RFC 8879 algorithm names, separated by commas or colons. */
static int set_cert_compression(SSL_CTX *ctx, const char *list)
{
    static const char *const names[] = {"zlib", "brotli", "zstd"};
    int algs[8];
    size_t n = 0;
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",:");
        int alg = 0;
        for (int i = 0; i < 3; i++)
            if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
                alg = i + 1; /* TLSEXT_comp_cert_zlib, _brotli, _zstd */
        if (alg == 0 || n == sizeof(algs) / sizeof(algs[0])) {
            h3_err("--cert-compression=%s: want a list of zlib, brotli and zstd", list);
            return -1;
        }
        algs[n++] = alg;
        p += len;
        if (*p != '\0')
            p++;
    }
    if (SSL_CTX_set1_cert_comp_preference(ctx, algs, n) != 1) {
        h3_err_ssl("--cert-compression=%s", list);
        return -1;
    }
    return 0;
}

int h3_tls_setup(SSL_CTX *ctx, const struct h3_tls_opts *o)
{
    if (o->cert_compression != NULL && set_cert_compression(ctx, o->cert_compression) != 0)
        return -1;
    if (o->ciphers != NULL && SSL_CTX_set_ciphersuites(ctx, o->ciphers) != 1) {
        h3_err_ssl("--ciphers=%s: no TLS 1.3 cipher suite in that list is supported",
                   o->ciphers);
        return -1;
    }
    if (o->groups != NULL && SSL_CTX_set1_groups_list(ctx, o->groups) != 1) {
        h3_err_ssl("--groups=%s: not a list of supported groups (X25519, P-256, P-384, X448)",
                   o->groups);
        return -1;
    }
    if (o->cert != NULL && load_own_cert(ctx, o->cert, o->key) != 0)
        return -1;
    if (o->ca != NULL) {
        if (SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1) {
            h3_err_ssl("cannot load CA certificates from %s", o->ca);
            return -1;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        h3_err_ssl("cannot load the system's CA certificates");
        return -1;
    }
    return keylog_setup(ctx);
}

uint8_t *h3_read_file(const char *path, size_t max, size_t *len)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EFBIG;
        close(fd);
        return NULL;
    }
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) {
            free(buf);
            buf = NULL;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return buf;
}

/* ----------------------------------------------------------------- a connection */

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct h3_peer *)ref->user_data)->conn;
}

int h3_peer_init(struct h3_peer *p, int is_server, int fd)
{
    memset(p, 0, sizeof(*p));
    p->conn_ref.get_conn = get_conn;
    p->conn_ref.user_data = p;
    p->fd = fd;
    p->is_server = is_server;
    p->hellos.type = is_server ? 1 : 2; /* ClientHello, ServerHello (HRR is one too) */
    p->started = h3_now();
    ngtcp2_connection_close_error_default(&p->last_error);
    if (RAND_bytes(p->reset_secret, sizeof(p->reset_secret)) != 1) {
        h3_err_ssl("RAND_bytes failed");
        return -1;
    }
    return 0;
}

void h3_peer_free(struct h3_peer *p)
{
    nghttp3_conn_del(p->h3);
    ngtcp2_conn_del(p->conn);
    SSL_free(p->ssl);
    if (p->qlog != NULL)
        fclose(p->qlog);
    p->h3 = NULL;
    p->conn = NULL;
    p->ssl = NULL;
    p->qlog = NULL;
}

/* Handshake message headers in order, however the stream is cut into pieces. */
static void count_messages(struct h3_msg_count *m, const uint8_t *data, size_t len)
{
    while (len > 0) {
        if (m->left > 0) {
            size_t n = len < m->left ? len : m->left;
            m->left -= (uint32_t)n;
            data += n;
            len -= n;
            continue;
        }
        m->hdr[m->hdrlen++] = *data++;
        len--;
        if (m->hdrlen == 4) {
            m->count += m->hdr[0] == m->type;
            m->left = (uint32_t)m->hdr[1] << 16 | (uint32_t)m->hdr[2] << 8 | m->hdr[3];
            m->hdrlen = 0;
        }
    }
}

static int recv_crypto_data(ngtcp2_conn *conn, ngtcp2_crypto_level level, uint64_t offset,
                            const uint8_t *data, size_t len, void *user_data)
{
    struct h3_peer *p = user_data;
    if (level == NGTCP2_CRYPTO_LEVEL_INITIAL)
        count_messages(&p->hellos, data, len);
    return ngtcp2_crypto_recv_crypto_data_cb(conn, level, offset, data, len, user_data);
}

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    if (RAND_bytes(dest, (int)len) != 1)
        memset(dest, 0, len); /* only used for padding and probe data */
}

static int get_new_connection_id(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token,
                                 size_t cidlen, void *user_data)
{
    struct h3_peer *p = user_data;
    (void)conn;
    if (RAND_bytes(cid->data, (int)cidlen) != 1)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = cidlen;
    if (ngtcp2_crypto_generate_stateless_reset_token(token, p->reset_secret,
                                                     sizeof(p->reset_secret), cid) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int set_h3_error(struct h3_peer *p, const char *what, int rv)
{
    h3_err("%s: %s", what, nghttp3_strerror(rv));
    ngtcp2_connection_close_error_set_application_error(
        &p->last_error, nghttp3_err_infer_quic_app_error_code(rv), NULL, 0);
    return NGTCP2_ERR_CALLBACK_FAILURE;
}

static int acked_stream_data_offset(ngtcp2_conn *conn, int64_t stream_id, uint64_t offset,
                                    uint64_t datalen, void *user_data, void *stream_user_data)
{
    struct h3_peer *p = user_data;
    (void)conn, (void)offset, (void)stream_user_data;
    if (p->h3 == NULL)
        return 0;
    int rv = nghttp3_conn_add_ack_offset(p->h3, stream_id, datalen);
    return rv == 0 ? 0 : set_h3_error(p, "nghttp3_conn_add_ack_offset", rv);
}

static int stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
                        uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    struct h3_peer *p = user_data;
    (void)stream_user_data;
    if (p->h3 == NULL)
        return 0;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        app_error_code = NGHTTP3_H3_NO_ERROR;
    int rv = nghttp3_conn_close_stream(p->h3, stream_id, app_error_code);
    if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND) {
        /* Opened by the peer, closed before any data: give the credit back. */
        if (!ngtcp2_is_bidi_stream(stream_id) && !ngtcp2_conn_is_local_stream(conn, stream_id))
            ngtcp2_conn_extend_max_streams_uni(conn, 1);
        return 0;
    }
    return rv == 0 ? 0 : set_h3_error(p, "nghttp3_conn_close_stream", rv);
}

static int shutdown_read(struct h3_peer *p, int64_t stream_id)
{
    if (p->h3 == NULL)
        return 0;
    int rv = nghttp3_conn_shutdown_stream_read(p->h3, stream_id);
    return rv == 0 ? 0 : set_h3_error(p, "nghttp3_conn_shutdown_stream_read", rv);
}

static int stream_reset(ngtcp2_conn *conn, int64_t stream_id, uint64_t final_size,
                        uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    (void)conn, (void)final_size, (void)app_error_code, (void)stream_user_data;
    return shutdown_read(user_data, stream_id);
}

static int stream_stop_sending(ngtcp2_conn *conn, int64_t stream_id, uint64_t app_error_code,
                               void *user_data, void *stream_user_data)
{
    (void)conn, (void)app_error_code, (void)stream_user_data;
    return shutdown_read(user_data, stream_id);
}

static int extend_max_stream_data(ngtcp2_conn *conn, int64_t stream_id, uint64_t max_data,
                                  void *user_data, void *stream_user_data)
{
    struct h3_peer *p = user_data;
    (void)conn, (void)max_data, (void)stream_user_data;
    if (p->h3 == NULL)
        return 0;
    int rv = nghttp3_conn_unblock_stream(p->h3, stream_id);
    return rv == 0 ? 0 : set_h3_error(p, "nghttp3_conn_unblock_stream", rv);
}

int h3_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id, uint64_t offset,
                        const uint8_t *data, size_t len, void *user_data,
                        void *stream_user_data)
{
    struct h3_peer *p = user_data;
    (void)conn, (void)offset, (void)stream_user_data;
    if (p->h3 == NULL) {
        h3_consume(p, stream_id, len);
        return 0;
    }
    nghttp3_ssize n = nghttp3_conn_read_stream(p->h3, stream_id, data, len,
                                               flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0)
        return set_h3_error(p, "nghttp3_conn_read_stream", (int)n);
    h3_consume(p, stream_id, (size_t)n);
    return 0;
}

void h3_callbacks_common(ngtcp2_callbacks *cb)
{
    memset(cb, 0, sizeof(*cb));
    cb->recv_crypto_data = recv_crypto_data;
    cb->encrypt = ngtcp2_crypto_encrypt_cb;
    cb->decrypt = ngtcp2_crypto_decrypt_cb;
    cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb->recv_stream_data = h3_recv_stream_data;
    cb->acked_stream_data_offset = acked_stream_data_offset;
    cb->stream_close = stream_close;
    cb->rand = rand_cb;
    cb->get_new_connection_id = get_new_connection_id;
    cb->update_key = ngtcp2_crypto_update_key_cb;
    cb->stream_reset = stream_reset;
    cb->extend_max_stream_data = extend_max_stream_data;
    cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb->stream_stop_sending = stream_stop_sending;
    cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
}

/*
 * ngtcp2 0.12 has no getter for the CONNECTION_CLOSE a peer sent, but logs
 * every frame it receives. The line for that frame reads
 *   "... frm rx <pkn> <type> CONNECTION_CLOSE(0x1c) error_code=NAME(0x12a)
 *    frame_type=0 reason_len=N reason=[...]".
 */
static void note_peer_close(struct h3_peer *p, const char *line)
{
    const char *t = strstr(line, "CONNECTION_CLOSE(0x");
    const char *e = strstr(line, "error_code=");
    if (strstr(line, " frm rx ") == NULL || t == NULL || e == NULL || p->peer_close.seen)
        return;
    const char *paren = strstr(e, "(0x"); /* after the name, which may be "(unknown)" */
    if (paren == NULL)
        return;
    p->peer_close.seen = 1;
    p->peer_close.app = strtoul(t + strlen("CONNECTION_CLOSE(0x"), NULL, 16) == 0x1d;
    p->peer_close.code = strtoull(paren + 3, NULL, 16);
    const char *r = strstr(line, "reason=[");
    const char *end = strrchr(line, ']');
    if (r != NULL && end != NULL && end > r + 8)
        snprintf(p->peer_close.reason, sizeof(p->peer_close.reason), "%.*s",
                 (int)(end - (r + 8)), r + 8);
}

static void log_printf(void *user_data, const char *fmt, ...)
{
    va_list ap;
    if (h3_verbose) {
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    if (strstr(fmt, "CONNECTION_CLOSE(") == NULL)
        return;
    char line[512];
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    note_peer_close(user_data, line);
}

static void qlog_write(void *user_data, uint32_t flags, const void *data, size_t len)
{
    struct h3_peer *p = user_data;
    if (p->qlog == NULL)
        return;
    fwrite(data, 1, len, p->qlog);
    if (flags & NGTCP2_QLOG_WRITE_FLAG_FIN)
        fflush(p->qlog);
}

int h3_qlog_open(struct h3_peer *p, const char *path)
{
    p->qlog = fopen(path, "w");
    if (p->qlog == NULL) {
        h3_err("cannot write qlog file %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void h3_settings_common(struct h3_peer *p, ngtcp2_settings *s)
{
    ngtcp2_settings_default(s);
    s->initial_ts = h3_now();
    s->log_printf = log_printf;
    if (p->qlog != NULL)
        s->qlog.write = qlog_write;
}

void h3_params_common(ngtcp2_transport_params *tp, uint64_t idle_timeout)
{
    ngtcp2_transport_params_default(tp);
    tp->initial_max_stream_data_bidi_local = 1024 * 1024;
    tp->initial_max_stream_data_bidi_remote = 256 * 1024;
    tp->initial_max_stream_data_uni = 256 * 1024;
    tp->initial_max_data = 4 * 1024 * 1024;
    tp->initial_max_streams_uni = 3;
    tp->max_idle_timeout = idle_timeout;
    tp->active_connection_id_limit = 7;
}

int h3_bind_streams(struct h3_peer *p)
{
    int64_t ctrl, qenc, qdec;
    int rv;
    if ((rv = ngtcp2_conn_open_uni_stream(p->conn, &ctrl, NULL)) != 0 ||
        (rv = ngtcp2_conn_open_uni_stream(p->conn, &qenc, NULL)) != 0 ||
        (rv = ngtcp2_conn_open_uni_stream(p->conn, &qdec, NULL)) != 0) {
        h3_err("the peer allows fewer than the 3 unidirectional streams HTTP/3 needs: %s",
               ngtcp2_strerror(rv));
        return -1;
    }
    if ((rv = nghttp3_conn_bind_control_stream(p->h3, ctrl)) != 0 ||
        (rv = nghttp3_conn_bind_qpack_streams(p->h3, qenc, qdec)) != 0) {
        h3_err("nghttp3 stream binding: %s", nghttp3_strerror(rv));
        return -1;
    }
    return 0;
}

void h3_consume(struct h3_peer *p, int64_t stream_id, size_t n)
{
    ngtcp2_conn_extend_max_stream_offset(p->conn, stream_id, n);
    ngtcp2_conn_extend_max_offset(p->conn, n);
}

static int set_ngtcp2_error(struct h3_peer *p, int rv)
{
    if (p->last_error.error_code != 0)
        return rv; /* a callback already chose the code */
    if (rv == NGTCP2_ERR_CRYPTO)
        ngtcp2_connection_close_error_set_transport_error_tls_alert(
            &p->last_error, ngtcp2_conn_get_tls_alert(p->conn), NULL, 0);
    else
        ngtcp2_connection_close_error_set_transport_error_liberr(&p->last_error, rv, NULL, 0);
    return rv;
}

int h3_read_pkt(struct h3_peer *p, const struct h3_addr *from, const uint8_t *data, size_t len)
{
    ngtcp2_path path = {
        .local = {(struct sockaddr *)&p->local.ss, p->local.len},
        .remote = {(struct sockaddr *)&from->ss, from->len},
    };
    ngtcp2_pkt_info pi = {0};
    int rv = ngtcp2_conn_read_pkt(p->conn, &path, &pi, data, len, h3_now());
    return rv == 0 ? 0 : set_ngtcp2_error(p, rv);
}

int h3_handle_expiry(struct h3_peer *p)
{
    int rv = ngtcp2_conn_handle_expiry(p->conn, h3_now());
    return rv == 0 ? 0 : set_ngtcp2_error(p, rv);
}

int h3_poll_timeout(struct h3_peer *p)
{
    uint64_t expiry = ngtcp2_conn_get_expiry(p->conn), now = h3_now();
    if (expiry == UINT64_MAX)
        return -1;
    if (expiry <= now)
        return 0;
    uint64_t ms = (expiry - now + NGTCP2_MILLISECONDS - 1) / NGTCP2_MILLISECONDS;
    return ms > 60000 ? 60000 : (int)ms;
}

int h3_send(struct h3_peer *p, const ngtcp2_addr *to, const uint8_t *data, size_t len)
{
    ssize_t n;
    do {
        n = sendto(p->fd, data, len, 0, to->addr, to->addrlen);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : 0;
}

/* One round of nghttp3 -> ngtcp2. 1: a packet is in buf (*pktlen), 0: nothing to send. */
static int write_one(struct h3_peer *p, ngtcp2_path_storage *ps, uint8_t *buf, size_t max,
                     size_t *pktlen, uint64_t ts)
{
    for (;;) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        if (p->h3 != NULL && ngtcp2_conn_get_max_data_left(p->conn) > 0) {
            nvec = nghttp3_conn_writev_stream(p->h3, &sid, &fin, vec, 16);
            if (nvec < 0) {
                set_h3_error(p, "nghttp3_conn_writev_stream", (int)nvec);
                return (int)nvec;
            }
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize ndata = -1;
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(p->conn, &ps->path, &pi, buf, max, &ndata,
                                                   flags, sid, (const ngtcp2_vec *)vec,
                                                   (size_t)nvec, ts);
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(p->h3, sid);
            continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(p->h3, sid);
            continue;
        }
        if (ndata >= 0) {
            int rv = nghttp3_conn_add_write_offset(p->h3, sid, (size_t)ndata);
            if (rv != 0) {
                set_h3_error(p, "nghttp3_conn_add_write_offset", rv);
                return rv;
            }
        }
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        if (n < 0)
            return set_ngtcp2_error(p, (int)n);
        *pktlen = (size_t)n;
        return n > 0;
    }
}

int h3_write(struct h3_peer *p)
{
    uint8_t buf[H3_MAX_UDP];
    ngtcp2_path_storage ps;
    size_t max = ngtcp2_conn_get_max_tx_udp_payload_size(p->conn);
    uint64_t ts = h3_now();
    if (max > sizeof(buf))
        max = sizeof(buf);
    size_t quantum = ngtcp2_conn_get_send_quantum(p->conn) / max;
    if (quantum == 0)
        quantum = 1;
    ngtcp2_path_storage_zero(&ps);
    for (size_t sent = 0; sent < quantum; sent++) {
        size_t len = 0;
        int rv = write_one(p, &ps, buf, max, &len, ts);
        if (rv <= 0) {
            if (rv == 0)
                ngtcp2_conn_update_pkt_tx_time(p->conn, ts);
            return rv;
        }
        if (h3_send(p, &ps.path.remote, buf, len) != 0)
            return H3_ERR_SOCKET;
    }
    ngtcp2_conn_update_pkt_tx_time(p->conn, ts);
    return 0;
}

size_t h3_write_close(struct h3_peer *p, uint8_t *buf, size_t len)
{
    ngtcp2_path_storage ps;
    ngtcp2_pkt_info pi;
    if (p->conn == NULL || ngtcp2_conn_is_in_closing_period(p->conn) ||
        ngtcp2_conn_is_in_draining_period(p->conn))
        return 0;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_ssize n = ngtcp2_conn_write_connection_close(p->conn, &ps.path, &pi, buf, len,
                                                        &p->last_error, h3_now());
    return n > 0 ? (size_t)n : 0;
}

/* ----------------------------------------------------------------- reporting */

void h3_summarize(struct h3_peer *p, int early_attempted, struct h3_summary *s)
{
    const SSL_CIPHER *c = SSL_get_current_cipher(p->ssl);
    const unsigned char *alpn = NULL;
    unsigned int alpnlen = 0;
    int nid = SSL_get_negotiated_group(p->ssl);
    const char *group = nid > 0 ? SSL_group_to_name(p->ssl, nid) : NULL;

    memset(s, 0, sizeof(*s));
    snprintf(s->kind, sizeof(s->kind), "%s", SSL_session_reused(p->ssl) ? "resumed" : "full");
    snprintf(s->suite, sizeof(s->suite), "%s", c != NULL ? SSL_CIPHER_get_name(c) : "-");
    snprintf(s->group, sizeof(s->group), "%s", group != NULL ? group : "-");
    SSL_get0_alpn_selected(p->ssl, &alpn, &alpnlen);
    snprintf(s->alpn, sizeof(s->alpn), "%.*s", alpn != NULL ? (int)alpnlen : 1,
             alpn != NULL ? (const char *)alpn : "-");
    switch (SSL_get_early_data_status(p->ssl)) {
    case SSL_EARLY_DATA_ACCEPTED:
        snprintf(s->early, sizeof(s->early), "accepted");
        break;
    case SSL_EARLY_DATA_REJECTED:
        snprintf(s->early, sizeof(s->early), "rejected");
        break;
    default:
        snprintf(s->early, sizeof(s->early), "%s", early_attempted ? "rejected" : "none");
    }
    s->hrr = p->hellos.count >= 2;
}

static const char *transport_code_name(uint64_t code)
{
    static const char *const names[] = {
        "NO_ERROR", "INTERNAL_ERROR", "CONNECTION_REFUSED", "FLOW_CONTROL_ERROR",
        "STREAM_LIMIT_ERROR", "STREAM_STATE_ERROR", "FINAL_SIZE_ERROR", "FRAME_ENCODING_ERROR",
        "TRANSPORT_PARAMETER_ERROR", "CONNECTION_ID_LIMIT_ERROR", "PROTOCOL_VIOLATION",
        "INVALID_TOKEN", "APPLICATION_ERROR", "CRYPTO_BUFFER_EXCEEDED", "KEY_UPDATE_ERROR",
        "AEAD_LIMIT_REACHED", "NO_VIABLE_PATH",
    };
    return code < sizeof(names) / sizeof(names[0]) ? names[code] : "unknown error";
}

static const char *h3_code_name(uint64_t code)
{
    static const char *const names[] = {
        "H3_NO_ERROR", "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR",
        "H3_STREAM_CREATION_ERROR", "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED",
        "H3_FRAME_ERROR", "H3_EXCESSIVE_LOAD", "H3_ID_ERROR", "H3_SETTINGS_ERROR",
        "H3_MISSING_SETTINGS", "H3_REQUEST_REJECTED", "H3_REQUEST_CANCELLED",
        "H3_REQUEST_INCOMPLETE", "H3_MESSAGE_ERROR", "H3_CONNECT_ERROR", "H3_VERSION_FALLBACK",
    };
    if (code >= 0x100 && code - 0x100 < sizeof(names) / sizeof(names[0]))
        return names[code - 0x100];
    return "application error";
}

void h3_describe_code(uint64_t code, int app, char *buf, size_t len)
{
    if (app)
        snprintf(buf, len, "%s (0x%llx)", h3_code_name(code), (unsigned long long)code);
    else if (code >= NGTCP2_CRYPTO_ERROR && code <= NGTCP2_CRYPTO_ERROR + 0xff)
        snprintf(buf, len, "CRYPTO_ERROR 0x%llx (TLS alert %u: %s)", (unsigned long long)code,
                 (unsigned)(code & 0xff), SSL_alert_desc_string_long((int)(code & 0xff)));
    else
        snprintf(buf, len, "%s (0x%llx)", transport_code_name(code), (unsigned long long)code);
}

static void describe_peer_close(struct h3_peer *p, char *buf, size_t len)
{
    const char *who = p->is_server ? "the client" : "the server";
    const struct h3_peer_close *c = &p->peer_close;
    char what[160];
    if (!c->seen) {
        snprintf(buf, len, "%s closed the connection", who);
        return;
    }
    if (!c->app && c->code >= NGTCP2_CRYPTO_ERROR && c->code <= NGTCP2_CRYPTO_ERROR + 0xff) {
        snprintf(buf, len, "TLS handshake failed: %s sent alert %u (%s)%s%s", who,
                 (unsigned)(c->code & 0xff), SSL_alert_desc_string_long((int)(c->code & 0xff)),
                 c->reason[0] ? ": " : "", c->reason);
        return;
    }
    h3_describe_code(c->code, c->app, what, sizeof(what));
    snprintf(buf, len, "%s closed the connection with %s%s%s", who, what,
             c->reason[0] ? ": " : "", c->reason);
}

static void describe_local_tls(struct h3_peer *p, char *buf, size_t len)
{
    uint8_t alert = ngtcp2_conn_get_tls_alert(p->conn);
    long verify = p->ssl != NULL ? SSL_get_verify_result(p->ssl) : X509_V_OK;
    char detail[256] = "";
    unsigned long e = ERR_peek_last_error();
    if (verify != X509_V_OK)
        snprintf(detail, sizeof(detail), ": certificate verification failed: %s",
                 X509_verify_cert_error_string(verify));
    else if (e != 0)
        snprintf(detail, sizeof(detail), ": %s", ERR_reason_error_string(e));
    snprintf(buf, len, "TLS handshake failed: we sent alert %u (%s)%s", alert,
             SSL_alert_desc_string_long(alert), detail);
}

void h3_describe_failure(struct h3_peer *p, int rv, char *buf, size_t len)
{
    switch (rv) {
    case NGTCP2_ERR_DRAINING:
    case NGTCP2_ERR_CLOSING:
        describe_peer_close(p, buf, len);
        break;
    case NGTCP2_ERR_CRYPTO:
        describe_local_tls(p, buf, len);
        break;
    case NGTCP2_ERR_HANDSHAKE_TIMEOUT:
        snprintf(buf, len, "timed out: the QUIC handshake did not complete%s",
                 p->is_server ? "" : " (is a QUIC server listening there?)");
        break;
    case NGTCP2_ERR_IDLE_CLOSE:
        if (!ngtcp2_conn_get_handshake_completed(p->conn))
            snprintf(buf, len, "timed out: no answer to the QUIC handshake%s",
                     p->is_server ? "" : " (is a QUIC server listening there?)");
        else
            snprintf(buf, len, "idle timeout: nothing heard from %s",
                     p->is_server ? "the client" : "the server");
        break;
    case H3_ERR_SOCKET:
        if (errno == ECONNREFUSED)
            snprintf(buf, len, "connection refused: nothing listens on that UDP port");
        else
            snprintf(buf, len, "cannot send: %s", strerror(errno));
        break;
    default:
        if (p->peer_close.seen)
            describe_peer_close(p, buf, len);
        else if (rv <= NGTCP2_ERR_INVALID_ARGUMENT && rv >= NGTCP2_ERR_CALLBACK_FAILURE)
            snprintf(buf, len, "QUIC error: %s", ngtcp2_strerror(rv));
        else
            snprintf(buf, len, "HTTP/3 error: %s", nghttp3_strerror(rv));
    }
}
