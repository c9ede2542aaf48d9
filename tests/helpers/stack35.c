/* The OpenSSL 3.5-API test stack (stack35.h). */
#include "stack35.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int append(uint8_t **buf, size_t *len, const uint8_t *p, size_t n)
{
    uint8_t *b = realloc(*buf, *len + n);
    if (b == NULL)
        return 0;
    memcpy(b + *len, p, n);
    *buf = b;
    *len += n;
    return 1;
}

/* Appends a token to s->events unless it repeats the last one. */
static void event(struct stack35 *s, const char *tok)
{
    size_t at = strlen(s->events), n = strlen(tok);
    if (at >= n && strcmp(s->events + at - n, tok) == 0 && (at == n || s->events[at - n - 1] == ' '))
        return;
    snprintf(s->events + at, sizeof(s->events) - at, "%s%s", at ? " " : "", tok);
}

static int crypto_send(SSL *ssl, const unsigned char *buf, size_t len, size_t *consumed,
                       void *arg)
{
    struct stack35 *s = arg;
    size_t n = s->send_max != 0 && s->send_max < len ? s->send_max : len;
    if (s->send_zero_first && s->send_calls++ % 2 == 0)
        n = 0; /* the stream's buffer is full: nothing taken this time */
    if (n > 0) {
        char tok[8];
        snprintf(tok, sizeof(tok), "s%u", s->tx_level);
        event(s, tok);
    }
    /* No CRYPTO frame rides in 0-RTT packets (RFC 9001 §4.1.4): a second ClientHello after a
       HelloRetryRequest, sent once the 0-RTT key was yielded, goes in Initial packets. */
    uint32_t level = s->tx_level == OSSL_RECORD_PROTECTION_LEVEL_EARLY
                         ? OSSL_RECORD_PROTECTION_LEVEL_NONE
                         : s->tx_level;
    if (!append(&s->out[level], &s->out_len[level], buf, n))
        return 0;
    *consumed = n;
    return 1;
}

static int crypto_recv_rcd(SSL *ssl, const unsigned char **buf, size_t *bytes_read, void *arg)
{
    struct stack35 *s = arg;
    uint32_t l = s->rx_level; /* 0-RTT carries no CRYPTO data: asked there, it has none */
    if (s->record_out) {
        s->release_errors++;
        return 0;
    }
    size_t avail = s->in_len[l] - s->in_off[l];
    size_t n = s->record_max != 0 && s->record_max < avail ? s->record_max : avail;
    *buf = n > 0 ? s->in[l] + s->in_off[l] : NULL;
    *bytes_read = n;
    if (n > 0) {
        s->record_out = 1;
        s->record_len = n;
    }
    return 1;
}

static int crypto_release_rcd(SSL *ssl, size_t bytes_read, void *arg)
{
    struct stack35 *s = arg;
    uint32_t l = s->rx_level; /* 0-RTT carries no CRYPTO data: asked there, it has none */
    if (!s->record_out || bytes_read != s->record_len) {
        s->release_errors++;
        return 0;
    }
    s->in_off[l] += bytes_read;
    s->record_out = 0;
    return 1;
}

static int yield_secret(SSL *ssl, uint32_t level, int direction, const unsigned char *secret,
                        size_t len, void *arg)
{
    struct stack35 *s = arg;
    if (++s->yield_calls == s->fail_yield_call)
        return 0;
    if (level < 1 || level > 3 || len > 64 || (direction != 0 && direction != 1))
        return 0;
    size_t at = strlen(s->yields);
    snprintf(s->yields + at, sizeof(s->yields) - at, "%s%c%u", at ? " " : "",
             direction ? 'w' : 'r', level);
    char tok[8];
    snprintf(tok, sizeof(tok), "%c%u", direction ? 'w' : 'r', level);
    event(s, tok);
    if (direction && level == OSSL_RECORD_PROTECTION_LEVEL_HANDSHAKE && s->tp_in_yield != NULL &&
        !SSL_set_quic_tls_transport_params(ssl, (const unsigned char *)s->tp_in_yield,
                                           strlen(s->tp_in_yield)))
        return 0;
    if (direction) {
        memcpy(s->write_secret[level], secret, len);
        s->write_len[level] = len;
        s->tx_level = level;
    } else {
        memcpy(s->read_secret[level], secret, len);
        s->read_len[level] = len;
        s->rx_level = level;
    }
    return 1;
}

static int got_transport_params(SSL *ssl, const unsigned char *params, size_t len, void *arg)
{
    struct stack35 *s = arg;
    if (len > sizeof(s->peer_tp))
        return 0;
    memcpy(s->peer_tp, params, len);
    s->peer_tp_len = len;
    s->got_tp_calls++;
    if (s->tp_in_got_tp != NULL)
        return SSL_set_quic_tls_transport_params(ssl, (const unsigned char *)s->tp_in_got_tp,
                                                 strlen(s->tp_in_got_tp));
    return 1;
}

static int alert(SSL *ssl, unsigned char code, void *arg)
{
    struct stack35 *s = arg;
    s->alert = code;
    s->alerts++;
    return 1;
}

const OSSL_DISPATCH stack35_dispatch[] = {
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND, (void (*)(void))crypto_send},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD, (void (*)(void))crypto_recv_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD, (void (*)(void))crypto_release_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET, (void (*)(void))yield_secret},
    {OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS, (void (*)(void))got_transport_params},
    {OSSL_FUNC_SSL_QUIC_TLS_ALERT, (void (*)(void))alert},
    {0, NULL},
};

int stack35_init(struct stack35 *s, SSL_CTX *ctx, int server, const char *tp)
{
    memset(s, 0, sizeof(*s));
    s->ssl = SSL_new(ctx);
    if (s->ssl == NULL)
        return 0;
    if (server)
        SSL_set_accept_state(s->ssl);
    else
        SSL_set_connect_state(s->ssl);
    if (!SSL_set_quic_tls_cbs(s->ssl, stack35_dispatch, s))
        return 0;
    return tp == NULL ||
           SSL_set_quic_tls_transport_params(s->ssl, (const unsigned char *)tp, strlen(tp));
}

void stack35_free(struct stack35 *s)
{
    SSL_free(s->ssl);
    for (int l = 0; l < 4; l++) {
        free(s->out[l]);
        free(s->in[l]);
    }
    memset(s, 0, sizeof(*s));
}

int stack35_to_stack35(struct stack35 *from, struct stack35 *to)
{
    for (int l = 0; l < 4; l++) {
        if (from->out_len[l] > 0 &&
            !append(&to->in[l], &to->in_len[l], from->out[l], from->out_len[l]))
            return 0;
        free(from->out[l]);
        from->out[l] = NULL;
        from->out_len[l] = 0;
    }
    return 1;
}

int stack35_to_mock(struct stack35 *from, struct mock_side *to)
{
    for (int l = 0; l < 4; l++) {
        if (from->out_len[l] > 0 &&
            !SSL_provide_quic_data(to->ssl, (OSSL_ENCRYPTION_LEVEL)l, from->out[l],
                                   from->out_len[l]))
            return 0;
        free(from->out[l]);
        from->out[l] = NULL;
        from->out_len[l] = 0;
    }
    return 1;
}

int mock_to_stack35(struct mock_side *from, struct stack35 *to)
{
    for (int l = 0; l < 4; l++) {
        if (from->out_len[l] > 0 &&
            !append(&to->in[l], &to->in_len[l], from->out[l], from->out_len[l]))
            return 0;
        free(from->out[l]);
        from->out[l] = NULL;
        from->out_len[l] = 0;
    }
    return 1;
}

int stack35_step(struct stack35 *s)
{
    if (!SSL_is_init_finished(s->ssl)) {
        int r;
        /* A crypto_send that took less than offered: 3.5 returns SSL_ERROR_WANT_WRITE and
           resends the rest on the next call, which a stack makes once it has room. */
        while ((r = SSL_do_handshake(s->ssl)) != 1 &&
               SSL_get_error(s->ssl, r) == SSL_ERROR_WANT_WRITE && s->want_writes < 1000000)
            s->want_writes++;
        if (r != 1)
            return SSL_get_error(s->ssl, r) == SSL_ERROR_WANT_READ ? 0 : -1;
    }
    /* As the 3.5 page asks: SSL_read whenever CRYPTO data may have come after the handshake. */
    int r = SSL_read(s->ssl, NULL, 0);
    return r <= 0 && SSL_get_error(s->ssl, r) == SSL_ERROR_WANT_READ ? 1 : -1;
}

static int mock_step(struct mock_side *m)
{
    if (SSL_is_init_finished(m->ssl))
        return SSL_process_quic_post_handshake(m->ssl) == 1 ? 1 : -1;
    int r = SSL_do_handshake(m->ssl);
    if (r == 1)
        return 1;
    return SSL_get_error(m->ssl, r) == SSL_ERROR_WANT_READ ? 0 : -1;
}

int stack35_handshake(struct stack35 *c, struct stack35 *s)
{
    for (int round = 0; round < 16; round++) {
        int rc = stack35_step(c);
        if (rc < 0 || !stack35_to_stack35(c, s))
            return 0;
        int rs = stack35_step(s);
        if (rs < 0 || !stack35_to_stack35(s, c))
            return 0;
        /* done once the client has also read what the server sent last (tickets) */
        if (rc == 1 && rs == 1 && stack35_step(c) == 1)
            return 1;
    }
    return 0;
}

int stack35_handshake_mock(struct stack35 *a, struct mock_side *m, int a_is_client)
{
    for (int round = 0; round < 16; round++) {
        int ra, rm;
        if (a_is_client) {
            ra = stack35_step(a);
            if (ra < 0 || !stack35_to_mock(a, m))
                return 0;
            rm = mock_step(m);
            if (rm < 0 || !mock_to_stack35(m, a))
                return 0;
            if (ra == 1 && rm == 1 && stack35_step(a) == 1)
                return 1;
        } else {
            rm = mock_step(m);
            if (rm < 0 || !mock_to_stack35(m, a))
                return 0;
            ra = stack35_step(a);
            if (ra < 0 || !stack35_to_mock(a, m))
                return 0;
            if (ra == 1 && rm == 1 && mock_step(m) == 1)
                return 1;
        }
    }
    return 0;
}

SSL_CTX *stack35_client_ctx(void)
{
    SSL_CTX *ctx = mock_client_ctx();
    if (ctx != NULL)
        SSL_CTX_set_quic_method(ctx, NULL);
    return ctx;
}

SSL_CTX *stack35_server_ctx(const char *cert)
{
    SSL_CTX *ctx = mock_server_ctx(cert);
    if (ctx != NULL)
        SSL_CTX_set_quic_method(ctx, NULL);
    return ctx;
}
