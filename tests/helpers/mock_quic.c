/* The in-memory QUIC transport of mock_quic.h. */
#include "mock_quic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

static struct mock_side *side_of(SSL *ssl) { return SSL_get_app_data(ssl); }

static int set_secrets(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *read_secret,
                       const uint8_t *write_secret, size_t len)
{
    struct mock_side *s = side_of(ssl);
    s->secret_calls++;
    if (s->fail_secret_call != 0 && s->secret_calls == s->fail_secret_call)
        return 0;
    if (len > sizeof(s->read_secret[0]))
        return 0;
    const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
    s->cipher_id_at_secret[level] = c != NULL ? SSL_CIPHER_get_id(c) : 0;
    s->secret_len[level] = len;
    if (read_secret != NULL) {
        memcpy(s->read_secret[level], read_secret, len);
        s->have_read[level] = 1;
    }
    if (write_secret != NULL) {
        memcpy(s->write_secret[level], write_secret, len);
        s->have_write[level] = 1;
    }
    if (s->on_secret != NULL)
        s->on_secret(s, level);
    return 1;
}

static int add_handshake_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                              size_t len)
{
    struct mock_side *s = side_of(ssl);
    s->add_calls++;
    if (s->fail_add_call != 0 && s->add_calls == s->fail_add_call)
        return 0;
    if (s->add_calls == 1) {
        const unsigned char *alpn;
        unsigned int alpn_len;
        const uint8_t *tp;
        size_t tp_len;
        SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
        SSL_get_peer_quic_transport_params(ssl, &tp, &tp_len);
        s->saw_alpn_at_first_add = alpn_len > 0;
        s->saw_peer_tp_at_first_add = tp_len > 0;
    }
    /* A level's write secret is installed before any data at that level (except initial). */
    if (level != ssl_encryption_initial && !s->have_write[level])
        return 0;
    uint8_t *nb = realloc(s->out[level], s->out_len[level] + len);
    if (nb == NULL)
        return 0;
    memcpy(nb + s->out_len[level], data, len);
    s->out[level] = nb;
    s->out_len[level] += len;
    return 1;
}

static int flush_flight(SSL *ssl)
{
    side_of(ssl)->flushes++;
    return 1;
}

static int send_alert(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert)
{
    struct mock_side *s = side_of(ssl);
    s->alert = alert;
    s->alert_level = level;
    s->alerts_sent++;
    return 1;
}

const SSL_QUIC_METHOD mock_quic_method = {set_secrets, add_handshake_data, flush_flight,
                                          send_alert};

const char *mock_cert_path(const char *name)
{
    static char buf[8][512];
    static int next;
    const char *dir = getenv("QTLS_CERTS");
    char *out = buf[next++ % 8];
    snprintf(out, sizeof(buf[0]), "%s/%s", dir != NULL ? dir : "build/certs", name);
    return out;
}

SSL_CTX *mock_client_ctx(void)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || !SSL_CTX_set_quic_method(ctx, &mock_quic_method) ||
        SSL_CTX_set_alpn_protos(ctx, h3, sizeof(h3)) != 0 ||
        !SSL_CTX_load_verify_locations(ctx, mock_cert_path("ca.pem"), NULL)) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int select_h3(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    if (SSL_select_next_proto((unsigned char **)out, outlen, h3, sizeof(h3), in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    return SSL_TLSEXT_ERR_OK;
}

SSL_CTX *mock_server_ctx(const char *cert)
{
    char pem[64], key[64];
    snprintf(pem, sizeof(pem), "%s.pem", cert);
    snprintf(key, sizeof(key), "%s.key", cert);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || !SSL_CTX_set_quic_method(ctx, &mock_quic_method) ||
        SSL_CTX_use_certificate_chain_file(ctx, mock_cert_path(pem)) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path(key), SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_alpn_select_cb(ctx, select_h3, NULL);
    return ctx;
}

int mock_pair_init(struct mock_pair *p, SSL_CTX *cctx, SSL_CTX *sctx)
{
    memset(p, 0, sizeof(*p));
    p->client.ssl = SSL_new(cctx);
    p->server.ssl = SSL_new(sctx);
    if (p->client.ssl == NULL || p->server.ssl == NULL)
        return 0;
    SSL_set_app_data(p->client.ssl, &p->client);
    SSL_set_app_data(p->server.ssl, &p->server);
    SSL_set_connect_state(p->client.ssl);
    SSL_set_accept_state(p->server.ssl);
    return SSL_set_quic_transport_params(p->client.ssl, (const uint8_t *)"client-tp", 9) &&
           SSL_set_quic_transport_params(p->server.ssl, (const uint8_t *)"server-tp", 9);
}

void mock_pair_free(struct mock_pair *p)
{
    struct mock_side *sides[2] = {&p->client, &p->server};
    for (int i = 0; i < 2; i++) {
        SSL_free(sides[i]->ssl);
        for (int l = 0; l < 4; l++)
            free(sides[i]->out[l]);
    }
    memset(p, 0, sizeof(*p));
}

int mock_deliver(struct mock_side *from, struct mock_side *to, long chunk)
{
    for (int l = 0; l < 4; l++) {
        size_t off = 0, len = from->out_len[l];
        while (off < len) {
            size_t n = len - off;
            if (chunk > 0 && (size_t)chunk < n)
                n = (size_t)chunk;
            else if (chunk < 0)
                n = 1 + (size_t)rand() % (n < 700 ? n : 700);
            if (!SSL_provide_quic_data(to->ssl, (OSSL_ENCRYPTION_LEVEL)l, from->out[l] + off, n))
                return 0;
            off += n;
        }
        free(from->out[l]);
        from->out[l] = NULL;
        from->out_len[l] = 0;
    }
    return 1;
}

/* One SSL_do_handshake: 1 done, 0 wants more, -1 failed. */
static int step(struct mock_side *s)
{
    if (SSL_is_init_finished(s->ssl))
        return 1;
    int r = SSL_do_handshake(s->ssl);
    if (r == 1)
        return 1;
    return SSL_get_error(s->ssl, r) == SSL_ERROR_WANT_READ ? 0 : -1;
}

int mock_handshake(struct mock_pair *p, long chunk)
{
    for (int round = 0; round < 16; round++) {
        int c = step(&p->client);
        if (c < 0 || !mock_deliver(&p->client, &p->server, chunk))
            return 0;
        int s = step(&p->server);
        if (s < 0 || !mock_deliver(&p->server, &p->client, chunk))
            return 0;
        /* Like ngtcp2: post-handshake messages (tickets) are processed after each read. */
        if (c == 1 && s == 1 && SSL_is_init_finished(p->client.ssl))
            return SSL_process_quic_post_handshake(p->client.ssl) == 1;
    }
    return 0;
}

int mock_first_ssl_reason(void)
{
    unsigned long e;
    const char *file, *func, *data;
    int line, flags;
    for (int i = 0; (e = ERR_peek_error_all(&file, &line, &func, &data, &flags)) != 0; i++) {
        if (ERR_GET_LIB(e) == ERR_LIB_SSL)
            return ERR_GET_REASON(e);
        break;
    }
    return e != 0 ? (int)ERR_GET_REASON(e) : 0;
}
