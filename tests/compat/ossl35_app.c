/*
 * A small program written for OpenSSL 3.5's third-party QUIC TLS API, not for qtls: it knows
 * only <openssl/...> headers and runs a QUIC handshake between two SSL objects in memory
 * through SSL_set_quic_tls_cbs (an OSSL_DISPATCH table of crypto_send, crypto_recv_rcd,
 * crypto_release_rcd, yield_secret, got_transport_params and alert) and
 * SSL_set_quic_tls_transport_params, with a certificate it makes with libcrypto.
 * tests/compat/run.sh builds it against a `make install-compat` prefix the way an unmodified
 * build system would, and runs it. Exit status 0 and one line "ossl35_app: ok ..." when the
 * handshake completed, the 1-RTT secrets agree and the transport parameters crossed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#ifndef OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND
#error "<openssl/core_dispatch.h> has no OpenSSL 3.5 QUIC TLS dispatch ids"
#endif

#define LEVELS 4 /* OSSL_RECORD_PROTECTION_LEVEL_NONE .. _APPLICATION */

struct side {
    SSL *ssl;
    uint32_t tx_level, rx_level; /* set by yield_secret */
    uint8_t *in[LEVELS];         /* CRYPTO data the peer sent, per level */
    size_t in_len[LEVELS], in_off[LEVELS];
    size_t record_len; /* handed out by crypto_recv_rcd, not yet released */
    uint8_t rsecret[LEVELS][64], wsecret[LEVELS][64];
    size_t rlen[LEVELS], wlen[LEVELS];
    uint8_t peer_tp[64];
    size_t peer_tp_len;
    int alert;
    struct side *peer;
};

static int crypto_send(SSL *ssl, const unsigned char *buf, size_t len, size_t *consumed,
                       void *arg)
{
    struct side *peer = ((struct side *)arg)->peer;
    uint32_t l = ((struct side *)arg)->tx_level;
    uint8_t *p = realloc(peer->in[l], peer->in_len[l] + len);
    if (p == NULL)
        return 0;
    memcpy(p + peer->in_len[l], buf, len);
    peer->in[l] = p;
    peer->in_len[l] += len;
    *consumed = len;
    return 1;
}

static int crypto_recv_rcd(SSL *ssl, const unsigned char **buf, size_t *bytes_read, void *arg)
{
    struct side *s = arg;
    uint32_t l = s->rx_level;
    s->record_len = s->in_len[l] - s->in_off[l];
    *buf = s->record_len > 0 ? s->in[l] + s->in_off[l] : NULL;
    *bytes_read = s->record_len;
    return 1;
}

static int crypto_release_rcd(SSL *ssl, size_t bytes_read, void *arg)
{
    struct side *s = arg;
    if (bytes_read != s->record_len)
        return 0;
    s->in_off[s->rx_level] += bytes_read;
    s->record_len = 0;
    return 1;
}

static int yield_secret(SSL *ssl, uint32_t level, int direction, const unsigned char *secret,
                        size_t len, void *arg)
{
    struct side *s = arg;
    if (level >= LEVELS || len > 64)
        return 0;
    if (direction) {
        memcpy(s->wsecret[level], secret, len);
        s->wlen[level] = len;
        s->tx_level = level;
    } else {
        memcpy(s->rsecret[level], secret, len);
        s->rlen[level] = len;
        s->rx_level = level;
    }
    return 1;
}

static int got_transport_params(SSL *ssl, const unsigned char *params, size_t len, void *arg)
{
    struct side *s = arg;
    if (len > sizeof(s->peer_tp))
        return 0;
    memcpy(s->peer_tp, params, len);
    s->peer_tp_len = len;
    return 1;
}

static int alert(SSL *ssl, unsigned char code, void *arg)
{
    ((struct side *)arg)->alert = code;
    return 1;
}

static const OSSL_DISPATCH quic_tls[] = {
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND, (void (*)(void))crypto_send},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD, (void (*)(void))crypto_recv_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD, (void (*)(void))crypto_release_rcd},
    {OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET, (void (*)(void))yield_secret},
    {OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS, (void (*)(void))got_transport_params},
    {OSSL_FUNC_SSL_QUIC_TLS_ALERT, (void (*)(void))alert},
    OSSL_DISPATCH_END};

static int fail(const char *what)
{
    fprintf(stderr, "ossl35_app: %s\n", what);
    ERR_print_errors_fp(stderr);
    return 1;
}

/* A self-signed P-256 certificate for "localhost". */
static int make_cert(EVP_PKEY **key, X509 **cert)
{
    *key = EVP_EC_gen("P-256");
    *cert = X509_new();
    if (*key == NULL || *cert == NULL)
        return 0;
    X509_NAME *name = X509_get_subject_name(*cert);
    return X509_set_version(*cert, 2) && ASN1_INTEGER_set(X509_get_serialNumber(*cert), 1) &&
           X509_gmtime_adj(X509_getm_notBefore(*cert), -60) &&
           X509_gmtime_adj(X509_getm_notAfter(*cert), 3600) &&
           X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost",
                                      -1, -1, 0) &&
           X509_set_issuer_name(*cert, name) && X509_set_pubkey(*cert, *key) &&
           X509_sign(*cert, *key, EVP_sha256()) > 0;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, h3, sizeof(h3), in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* One SSL_do_handshake; 0 if it failed other than by wanting more data. */
static int step(struct side *s)
{
    int r = SSL_do_handshake(s->ssl);
    return r == 1 || SSL_get_error(s->ssl, r) == SSL_ERROR_WANT_READ;
}

int main(void)
{
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    if (!make_cert(&key, &cert))
        return fail("making the certificate");
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    if (sctx == NULL || cctx == NULL)
        return fail("SSL_CTX_new");
    if (SSL_CTX_use_certificate(sctx, cert) != 1 || SSL_CTX_use_PrivateKey(sctx, key) != 1)
        return fail("server certificate");
    SSL_CTX_set_alpn_select_cb(sctx, alpn_select, NULL);
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert) != 1)
        return fail("client trust store");
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);

    struct side client = {0}, server = {0};
    client.peer = &server;
    server.peer = &client;
    client.ssl = SSL_new(cctx);
    server.ssl = SSL_new(sctx);
    if (client.ssl == NULL || server.ssl == NULL)
        return fail("SSL_new");
    static const unsigned char alpn[] = {2, 'h', '3'};
    static const uint8_t ctp[] = "client transport parameters", stp[] = "server tp";
    SSL_set_connect_state(client.ssl);
    SSL_set_accept_state(server.ssl);
    if (!SSL_set_quic_tls_cbs(client.ssl, quic_tls, &client) ||
        !SSL_set_quic_tls_cbs(server.ssl, quic_tls, &server) ||
        !SSL_set_quic_tls_transport_params(client.ssl, ctp, sizeof(ctp)) ||
        !SSL_set_quic_tls_transport_params(server.ssl, stp, sizeof(stp)) ||
        SSL_set_alpn_protos(client.ssl, alpn, sizeof(alpn)) != 0 ||
        !SSL_set_tlsext_host_name(client.ssl, "localhost") ||
        !SSL_set1_host(client.ssl, "localhost"))
        return fail("setting up the SSL objects");

    for (int round = 0; round < 10 && !(SSL_is_init_finished(client.ssl) &&
                                        SSL_is_init_finished(server.ssl));
         round++) {
        if (!step(&client) || !step(&server))
            return fail("handshake failed");
    }
    if (!SSL_is_init_finished(client.ssl) || !SSL_is_init_finished(server.ssl))
        return fail("handshake did not finish");
    /* The server's tickets: read the way a 3.5 stack does, with SSL_read after the handshake. */
    unsigned char byte;
    int r = SSL_read(client.ssl, &byte, 1);
    if (r > 0 || SSL_get_error(client.ssl, r) != SSL_ERROR_WANT_READ)
        return fail("post-handshake messages");

    int app = OSSL_RECORD_PROTECTION_LEVEL_APPLICATION;
    if (client.peer_tp_len != sizeof(stp) || memcmp(client.peer_tp, stp, sizeof(stp)) != 0 ||
        server.peer_tp_len != sizeof(ctp) || memcmp(server.peer_tp, ctp, sizeof(ctp)) != 0)
        return fail("the transport parameters did not cross");
    if (client.wlen[app] == 0 || client.wlen[app] != server.rlen[app] ||
        memcmp(client.wsecret[app], server.rsecret[app], client.wlen[app]) != 0 ||
        client.rlen[app] != server.wlen[app] ||
        memcmp(client.rsecret[app], server.wsecret[app], client.rlen[app]) != 0)
        return fail("the 1-RTT secrets differ");
    if (client.alert != 0 || server.alert != 0)
        return fail("an alert was sent");
    if (SSL_get_verify_result(client.ssl) != X509_V_OK)
        return fail("the server certificate did not verify");
    /* OpenSSL 3.2's group name, which 3.5 programs (ngtcp2's examples) print: both sides on
       their defaults agree on X25519MLKEM768, as two OpenSSL 3.5s do. */
    const char *group = SSL_get0_group_name(client.ssl);
    if (group == NULL || strcmp(group, "X25519MLKEM768") != 0)
        return fail("SSL_get0_group_name did not name X25519MLKEM768");

    printf("ossl35_app: ok, %s, %s, %s\n", SSL_get_version(client.ssl),
           SSL_CIPHER_get_name(SSL_get_current_cipher(client.ssl)), group);
    SSL_free(client.ssl);
    SSL_free(server.ssl);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    X509_free(cert);
    EVP_PKEY_free(key);
    for (int l = 0; l < LEVELS; l++) {
        free(client.in[l]);
        free(server.in[l]);
    }
    return 0;
}
