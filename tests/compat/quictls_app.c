/*
 * A small program written for quictls, not for qtls: it knows only <openssl/...> headers,
 * detects the QUIC API the way quictls consumers do (OPENSSL_INFO_QUIC), and runs a QUIC
 * handshake between two SSL objects in memory through SSL_QUIC_METHOD and
 * SSL_provide_quic_data, with a certificate it makes with libcrypto. tests/compat/run.sh
 * builds it against a `make install-compat` prefix with nothing but that prefix's pkg-config
 * files or -I/-L/-lssl/-lcrypto, the way an unmodified build system would, and runs it.
 * Exit status 0 and one line "quictls_app: ok ..." when the handshake completed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* quictls declares these two in tls1.h and sslerr.h, which some sources include alone */
#include <openssl/tls1.h>
#ifndef TLSEXT_TYPE_quic_transport_parameters
#error "<openssl/tls1.h> has no TLSEXT_TYPE_quic_transport_parameters"
#endif
#include <openssl/sslerr.h>
#ifndef SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION
#error "<openssl/sslerr.h> has no SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION"
#endif

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#ifndef OPENSSL_INFO_QUIC
#error "not a quictls-style <openssl/ssl.h>: no OPENSSL_INFO_QUIC"
#endif

#define LEVELS 4

struct side {
    const char *name;
    SSL *ssl;
    struct side *peer;
    uint8_t *out[LEVELS]; /* handshake bytes written at each level, not yet delivered */
    size_t out_len[LEVELS];
    uint8_t rsecret[LEVELS][64], wsecret[LEVELS][64];
    size_t secret_len[LEVELS];
    int alert;
};

static struct side *side_of(SSL *ssl)
{
    return SSL_get_app_data(ssl);
}

static int set_secrets(SSL *ssl, enum ssl_encryption_level_t level, const uint8_t *read_secret,
                       const uint8_t *write_secret, size_t secret_len)
{
    struct side *s = side_of(ssl);
    if (secret_len > 64)
        return 0;
    if (read_secret != NULL)
        memcpy(s->rsecret[level], read_secret, secret_len);
    if (write_secret != NULL)
        memcpy(s->wsecret[level], write_secret, secret_len);
    s->secret_len[level] = secret_len;
    return 1;
}

static int add_data(SSL *ssl, enum ssl_encryption_level_t level, const uint8_t *data, size_t len)
{
    struct side *s = side_of(ssl);
    uint8_t *p = realloc(s->out[level], s->out_len[level] + len);
    if (p == NULL)
        return 0;
    memcpy(p + s->out_len[level], data, len);
    s->out[level] = p;
    s->out_len[level] += len;
    return 1;
}

static int flush(SSL *ssl)
{
    return 1;
}

static int send_alert(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert)
{
    side_of(ssl)->alert = alert;
    return 1;
}

/* Positional, as quictls consumers write it. */
static const SSL_QUIC_METHOD quic_method = {set_secrets, add_data, flush, send_alert};

static int fail(const char *what)
{
    fprintf(stderr, "quictls_app: %s\n", what);
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

/* Moves what `from` wrote to `to`, level by level; 0 when the peer refuses it. */
static int deliver(struct side *from)
{
    for (int l = 0; l < LEVELS; l++) {
        if (from->out_len[l] == 0)
            continue;
        int ok = SSL_provide_quic_data(from->peer->ssl, (enum ssl_encryption_level_t)l,
                                       from->out[l], from->out_len[l]);
        free(from->out[l]);
        from->out[l] = NULL;
        from->out_len[l] = 0;
        if (!ok)
            return 0;
    }
    return 1;
}

static int step(struct side *s)
{
    int r = SSL_do_handshake(s->ssl);
    if (r <= 0 && SSL_get_error(s->ssl, r) != SSL_ERROR_WANT_READ)
        return 0;
    return 1;
}

int main(void)
{
    const char *info = OPENSSL_info(OPENSSL_INFO_QUIC);
    if (info == NULL)
        return fail("OPENSSL_info(OPENSSL_INFO_QUIC) is NULL: not a QUIC-capable libssl");

    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    if (!make_cert(&key, &cert))
        return fail("making the certificate");

    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    if (sctx == NULL || cctx == NULL)
        return fail("SSL_CTX_new");
    SSL_CTX_set_min_proto_version(sctx, TLS1_3_VERSION);
    SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION);
    if (SSL_CTX_use_certificate(sctx, cert) != 1 || SSL_CTX_use_PrivateKey(sctx, key) != 1)
        return fail("server certificate");
    SSL_CTX_set_alpn_select_cb(sctx, alpn_select, NULL);
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert) != 1)
        return fail("client trust store");
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);

    struct side client = {.name = "client"}, server = {.name = "server"};
    client.peer = &server;
    server.peer = &client;
    client.ssl = SSL_new(cctx);
    server.ssl = SSL_new(sctx);
    if (client.ssl == NULL || server.ssl == NULL)
        return fail("SSL_new");
    static const unsigned char alpn[] = {2, 'h', '3'};
    static const uint8_t ctp[] = "client transport parameters", stp[] = "server tp";
    SSL_set_app_data(client.ssl, &client);
    SSL_set_app_data(server.ssl, &server);
    if (!SSL_set_quic_method(client.ssl, &quic_method) ||
        !SSL_set_quic_method(server.ssl, &quic_method) ||
        !SSL_set_quic_transport_params(client.ssl, ctp, sizeof(ctp)) ||
        !SSL_set_quic_transport_params(server.ssl, stp, sizeof(stp)) ||
        SSL_set_alpn_protos(client.ssl, alpn, sizeof(alpn)) != 0 ||
        !SSL_set_tlsext_host_name(client.ssl, "localhost") ||
        !SSL_set1_host(client.ssl, "localhost"))
        return fail("setting up the SSL objects");
    SSL_set_connect_state(client.ssl);
    SSL_set_accept_state(server.ssl);

    for (int round = 0; round < 10 && !(SSL_is_init_finished(client.ssl) &&
                                        SSL_is_init_finished(server.ssl));
         round++) {
        if (!step(&client) || !deliver(&client) || !step(&server) || !deliver(&server))
            return fail("handshake failed");
    }
    if (!SSL_is_init_finished(client.ssl) || !SSL_is_init_finished(server.ssl))
        return fail("handshake did not finish");
    if (SSL_process_quic_post_handshake(client.ssl) != 1)
        return fail("post-handshake messages");

    const uint8_t *peer_tp;
    size_t peer_tp_len;
    SSL_get_peer_quic_transport_params(client.ssl, &peer_tp, &peer_tp_len);
    int app = ssl_encryption_application;
    if (peer_tp_len != sizeof(stp) || memcmp(peer_tp, stp, sizeof(stp)) != 0)
        return fail("the client did not get the server's transport parameters");
    if (client.secret_len[app] == 0 || client.secret_len[app] != server.secret_len[app] ||
        memcmp(client.wsecret[app], server.rsecret[app], client.secret_len[app]) != 0)
        return fail("the 1-RTT secrets differ");
    if (SSL_get_verify_result(client.ssl) != X509_V_OK)
        return fail("the server certificate did not verify");

    printf("quictls_app: ok, %s, %s, OPENSSL_info(OPENSSL_INFO_QUIC) = \"%s\"\n",
           SSL_get_version(client.ssl), SSL_CIPHER_get_name(SSL_get_current_cipher(client.ssl)),
           info);
    SSL_free(client.ssl);
    SSL_free(server.ssl);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    X509_free(cert);
    EVP_PKEY_free(key);
    return 0;
}
