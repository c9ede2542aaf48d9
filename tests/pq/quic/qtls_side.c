/*
 * qtls_side: qtls through the quictls QUIC API (SSL_QUIC_METHOD, SSL_provide_quic_data,
 * SSL_process_quic_post_handshake) over frame.h's records: the handshake bytes qtls hands to
 * add_handshake_data go to the peer as DATA at their level, the peer's go to
 * SSL_provide_quic_data at theirs. Transport parameters (--tp, any bytes) and ALPN "h3" are
 * set; the client verifies the server's certificate against --ca for "localhost". The result
 * line (frame.h) names the group SSL_get0_group_name gives and the SHA-256 of the traffic
 * secrets set_encryption_secrets was given. Built on libqtls.a, qtls's compat headers first.
 *   qtls_side client|server --in FIFO --out FIFO [--groups LIST] [--cert PEM --key PEM]
 *             [--ca PEM] [--tp STRING] [--timeout SECONDS]
 */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "frame.h"

static struct {
    int server, out_fd;
    struct secrets sec;
    struct wire wire;
    int alert, alert_level, alerts;
    unsigned secret_calls;
} S;

static int set_secrets(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *read_secret,
                       const uint8_t *write_secret, size_t len)
{
    S.secret_calls++;
    fprintf(stderr, "qtls_side: secrets level %d%s%s (%zu bytes)\n", (int)level,
            read_secret ? " read" : "", write_secret ? " write" : "", len);
    secrets_set(&S.sec, S.server, (int)level, 0, read_secret, len);
    secrets_set(&S.sec, S.server, (int)level, 1, write_secret, len);
    return 1;
}

static int add_handshake_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                              size_t len)
{
    fprintf(stderr, "qtls_side: send level %d, %zu bytes\n", (int)level, len);
    if (S.server && level == ssl_encryption_initial)
        wire_feed(&S.wire, data, len);
    return frame_write(S.out_fd, FR_DATA, (uint8_t)level, data, len);
}

static int flush_flight(SSL *ssl) { return 1; }

static int send_alert(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert)
{
    S.alert = alert;
    S.alert_level = level;
    S.alerts++;
    return 1;
}

static const SSL_QUIC_METHOD method = {set_secrets, add_handshake_data, flush_flight, send_alert};

/* Tells the peer (an alert if the TLS sent one), prints why, returns 1. */
static int fail(const char *why, long detail)
{
    if (S.alerts > 0) {
        uint8_t a = (uint8_t)S.alert;
        frame_write(S.out_fd, FR_ALERT, (uint8_t)S.alert_level, &a, 1);
    }
    ERR_print_errors_fp(stderr);
    return side_fail("%s (%ld) alert_sent=%d", why, detail, S.alerts > 0 ? S.alert : -1);
}

int main(int argc, char **argv)
{
    struct side_opts o;
    static struct frame f;
    uint8_t peer_digest[64];
    size_t app_in = 0;
    int have_digest = 0, hs_done = 0, sent_done = 0, got_done = 0, in_fd;

    side_parse(argc, argv, "qtls", &o);
    S.server = o.server;
    S.out_fd = -1;
    SSL_CTX *ctx = side_ctx(&o, "qtls");
    if (ctx != NULL && !SSL_CTX_set_quic_method(ctx, &method)) {
        SSL_CTX_free(ctx);
        ctx = NULL;
    }
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
    if (!SSL_set_quic_transport_params(ssl, (const uint8_t *)o.tp, strlen(o.tp)))
        return fail("SSL_set_quic_transport_params", 0);
    if (!side_open(&o, &in_fd, &S.out_fd))
        return side_fail("cannot open %s / %s", o.in, o.out);

    for (;;) {
        if (!hs_done) {
            int r = SSL_do_handshake(ssl);
            if (r == 1) {
                hs_done = 1;
                fprintf(stderr, "qtls_side: handshake done\n");
            } else if (SSL_get_error(ssl, r) != SSL_ERROR_WANT_READ) {
                return fail("SSL_do_handshake", SSL_get_error(ssl, r));
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
        case FR_DATA:
            fprintf(stderr, "qtls_side: recv level %d, %u bytes\n", f.level, f.len);
            if (f.level == 3)
                app_in += f.len;
            if (!o.server && f.level == 0)
                wire_feed(&S.wire, f.data, f.len);
            if (!SSL_provide_quic_data(ssl, (OSSL_ENCRYPTION_LEVEL)f.level, f.data, f.len))
                return fail("SSL_provide_quic_data", f.level);
            if (hs_done && SSL_process_quic_post_handshake(ssl) != 1)
                return fail("SSL_process_quic_post_handshake", 0);
            break;
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

    const unsigned char *alpn = NULL;
    unsigned alpn_len = 0;
    char alpn_s[64] = "";
    const uint8_t *tp = NULL;
    size_t tp_len = 0;
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    if (alpn_len < sizeof(alpn_s))
        memcpy(alpn_s, alpn, alpn_len), alpn_s[alpn_len] = 0;
    SSL_get_peer_quic_transport_params(ssl, &tp, &tp_len);
    const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
    if (!o.server && SSL_get_verify_result(ssl) != X509_V_OK)
        return fail("the server's certificate did not verify", SSL_get_verify_result(ssl));
    side_report("qtls", &o, SSL_get0_group_name(ssl), &S.wire, c ? SSL_CIPHER_get_name(c) : NULL,
                alpn_s, tp, tp_len, &S.sec, have_digest ? peer_digest : NULL, app_in);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return 0;
}
