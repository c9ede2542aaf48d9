/*
 * ossl35_side: OpenSSL 3.5's libssl through its own API for third-party QUIC stacks
 * (SSL_set_quic_tls_cbs, SSL_set_quic_tls_transport_params), over frame.h's records, driven
 * as ngtcp2's ossl backend and tests/helpers/stack35.c drive it: crypto_send's bytes go out as
 * DATA at the newest write level yield_secret gave (0-RTT's carry no CRYPTO data: initial),
 * and the peer's DATA are kept per level and handed to crypto_recv_rcd at the newest read level
 * yielded, one record at a time, released before the next. After the handshake SSL_read is
 * called whenever data came, for the post-handshake messages (tickets). Same command line and
 * result line as qtls_side (frame.h): the group SSL_get0_group_name gives, the SHA-256 of the
 * yielded secrets. Built with 3.5's headers and linked against its libssl (-rpath).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "frame.h"

#if OPENSSL_VERSION_NUMBER < 0x30500000L
#error "ossl35_side needs OpenSSL 3.5's headers (-I build/ossl35/include)"
#endif

static struct {
    int server, out_fd;
    uint32_t rx_level, tx_level;
    uint8_t *in[4];
    size_t in_len[4], in_off[4];
    int record_out;
    size_t record_len;
    struct secrets sec;
    struct wire wire;
    uint8_t peer_tp[1024];
    size_t peer_tp_len;
    int alert, alerts, cb_error;
} S;

static int crypto_send(SSL *ssl, const unsigned char *buf, size_t len, size_t *consumed,
                       void *arg)
{
    uint32_t level = S.tx_level == OSSL_RECORD_PROTECTION_LEVEL_EARLY
                         ? OSSL_RECORD_PROTECTION_LEVEL_NONE
                         : S.tx_level;
    fprintf(stderr, "ossl35_side: send level %u, %zu bytes\n", level, len);
    if (S.server && level == OSSL_RECORD_PROTECTION_LEVEL_NONE)
        wire_feed(&S.wire, buf, len);
    if (!frame_write(S.out_fd, FR_DATA, (uint8_t)level, buf, len))
        return 0;
    *consumed = len;
    return 1;
}

static int crypto_recv_rcd(SSL *ssl, const unsigned char **buf, size_t *bytes_read, void *arg)
{
    uint32_t l = S.rx_level;
    if (S.record_out) {
        S.cb_error = 1;
        return 0;
    }
    size_t n = S.in_len[l] - S.in_off[l];
    *buf = n > 0 ? S.in[l] + S.in_off[l] : NULL;
    *bytes_read = n;
    if (n > 0) {
        S.record_out = 1;
        S.record_len = n;
    }
    return 1;
}

static int crypto_release_rcd(SSL *ssl, size_t bytes_read, void *arg)
{
    if (!S.record_out || bytes_read != S.record_len) {
        S.cb_error = 1;
        return 0;
    }
    S.in_off[S.rx_level] += bytes_read;
    S.record_out = 0;
    return 1;
}

static int yield_secret(SSL *ssl, uint32_t level, int direction, const unsigned char *secret,
                        size_t len, void *arg)
{
    fprintf(stderr, "ossl35_side: yield level %u %s (%zu bytes)\n", level,
            direction ? "write" : "read", len);
    if (level < 1 || level > 3 || len > 64)
        return 0;
    secrets_set(&S.sec, S.server, (int)level, direction, secret, len);
    if (direction)
        S.tx_level = level;
    else
        S.rx_level = level;
    return 1;
}

static int got_transport_params(SSL *ssl, const unsigned char *params, size_t len, void *arg)
{
    if (len > sizeof(S.peer_tp))
        return 0;
    memcpy(S.peer_tp, params, len);
    S.peer_tp_len = len;
    return 1;
}

static int alert(SSL *ssl, unsigned char code, void *arg)
{
    S.alert = code;
    S.alerts++;
    return 1;
}

static const OSSL_DISPATCH dispatch[] = {
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND, (void (*)(void))crypto_send},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD, (void (*)(void))crypto_recv_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD, (void (*)(void))crypto_release_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET, (void (*)(void))yield_secret},
    {OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS, (void (*)(void))got_transport_params},
    {OSSL_FUNC_SSL_QUIC_TLS_ALERT, (void (*)(void))alert},
    {0, NULL},
};

static int fail(const char *why, long detail)
{
    if (S.alerts > 0) {
        uint8_t a = (uint8_t)S.alert;
        frame_write(S.out_fd, FR_ALERT, (uint8_t)S.tx_level, &a, 1);
    }
    ERR_print_errors_fp(stderr);
    return side_fail("%s (%ld) alert_sent=%d%s", why, detail, S.alerts > 0 ? S.alert : -1,
                     S.cb_error ? " (crypto_recv_rcd/release_rcd misused)" : "");
}

/* SSL_do_handshake until done (1) or it wants data (0); -1 failed */
static int handshake(SSL *ssl)
{
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    return SSL_get_error(ssl, r) == SSL_ERROR_WANT_READ ? 0 : -1;
}

/* After the handshake, as SSL_set_quic_tls_cbs(3) asks: SSL_read for post-handshake data. */
static int post_handshake(SSL *ssl)
{
    unsigned char b[1];
    size_t n = 0;
    if (SSL_read_ex(ssl, b, sizeof(b), &n) == 1)
        return 0; /* no application data travels here */
    return SSL_get_error(ssl, 0) == SSL_ERROR_WANT_READ;
}

int main(int argc, char **argv)
{
    struct side_opts o;
    static struct frame f;
    uint8_t peer_digest[64];
    size_t app_in = 0;
    int have_digest = 0, hs_done = 0, sent_done = 0, got_done = 0, in_fd;

    side_parse(argc, argv, "ossl35", &o);
    S.server = o.server;
    S.out_fd = -1;
    SSL_CTX *ctx = side_ctx(&o, "ossl35");
    SSL *ssl = ctx != NULL ? SSL_new(ctx) : NULL;
    if (ssl == NULL)
        return fail("setting up the context", 0);
    if (o.server) {
        SSL_set_accept_state(ssl);
    } else {
        SSL_set_connect_state(ssl);
        if (SSL_set_tlsext_host_name(ssl, "localhost") != 1 || SSL_set1_host(ssl, "localhost") != 1)
            return fail("SSL_set1_host", 0);
    }
    if (!SSL_set_quic_tls_cbs(ssl, dispatch, NULL))
        return fail("SSL_set_quic_tls_cbs", 0);
    if (!SSL_set_quic_tls_transport_params(ssl, (const unsigned char *)o.tp, strlen(o.tp)))
        return fail("SSL_set_quic_tls_transport_params", 0);
    if (!side_open(&o, &in_fd, &S.out_fd))
        return side_fail("cannot open %s / %s", o.in, o.out);

    for (;;) {
        if (!hs_done) {
            int r = handshake(ssl);
            if (r < 0)
                return fail("SSL_do_handshake", 0);
            if (r == 1) {
                hs_done = 1;
                fprintf(stderr, "ossl35_side: handshake done\n");
                if (!post_handshake(ssl))
                    return fail("SSL_read after the handshake", 0);
            }
        }
        if (hs_done && !sent_done) {
            uint8_t d[64];
            if (!secrets_ap_digest(&S.sec, d))
                return fail("handshake done without both 1-RTT secrets", 0);
            if (!frame_write(S.out_fd, FR_DIGEST, 3, d, sizeof(d)) ||
                !frame_write(S.out_fd, FR_DONE, 3, NULL, 0))
                return fail("writing to the peer", 0);
            sent_done = 1;
        }
        if (sent_done && got_done)
            break;
        int r = frame_read(in_fd, &f, o.timeout);
        if (r == 0)
            return fail("the peer closed before its DONE", 0);
        if (r < 0)
            return fail("reading from the peer", 0);
        switch (f.kind) {
        case FR_DATA: {
            fprintf(stderr, "ossl35_side: recv level %d, %u bytes\n", f.level, f.len);
            if (f.level == 3)
                app_in += f.len;
            if (!o.server && f.level == 0)
                wire_feed(&S.wire, f.data, f.len);
            uint8_t *nb = realloc(S.in[f.level], S.in_len[f.level] + f.len);
            if (nb == NULL)
                return fail("out of memory", 0);
            memcpy(nb + S.in_len[f.level], f.data, f.len);
            S.in[f.level] = nb;
            S.in_len[f.level] += f.len;
            if (hs_done && !post_handshake(ssl))
                return fail("SSL_read after the handshake", 0);
            break;
        }
        case FR_DIGEST:
            if (f.len != sizeof(peer_digest))
                return fail("a DIGEST record of the wrong size", f.len);
            memcpy(peer_digest, f.data, sizeof(peer_digest));
            have_digest = 1;
            break;
        case FR_ALERT:
            return fail("the peer's TLS failed with alert", f.len == 1 ? f.data[0] : -1);
        case FR_DONE:
            got_done = 1;
            break;
        default:
            return fail("a record of unknown kind", f.kind);
        }
    }
    for (int l = 0; l < 4; l++)
        if (S.in_off[l] != S.in_len[l])
            return fail("data left unread at level", l);

    const unsigned char *alpn = NULL;
    unsigned alpn_len = 0;
    char alpn_s[64] = "";
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    if (alpn_len < sizeof(alpn_s))
        memcpy(alpn_s, alpn, alpn_len), alpn_s[alpn_len] = 0;
    const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
    if (!o.server && SSL_get_verify_result(ssl) != X509_V_OK)
        return fail("the server's certificate did not verify", SSL_get_verify_result(ssl));
    side_report("ossl35", &o, SSL_get0_group_name(ssl), &S.wire,
                c ? SSL_CIPHER_get_name(c) : NULL, alpn_s, S.peer_tp, S.peer_tp_len, &S.sec,
                have_digest ? peer_digest : NULL, app_in);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return 0;
}
