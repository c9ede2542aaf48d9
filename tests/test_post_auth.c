/*
 * Post-handshake client authentication (RFC 8446 §4.6.2, handshake/post_auth.c): an in-process
 * client and server over a BIO pair, through the public API, with OpenSSL 3.0's answers (its
 * SSL_verify_client_post_handshake checks, in order; its alerts and reasons). Two internals
 * stand in for a misbehaving peer: pha_free (a client that never offered post_handshake_auth,
 * so that a request reaches it unsolicited) and pha_test_corrupt_secret (a client whose Finished
 * is wrong). QUIC has no post-handshake authentication (RFC 9001 §4.4): its refusals are here
 * too, over the mock QUIC transport. Certificates come from $QTLS_CERTS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "internal.h"
#include "base/base.h"
#include "handshake/handshake.h"
#include "mock_quic.h"

#define MAX_ROUNDS 64
#define CR_CONTEXT_LEN 32 /* OpenSSL's and qtls's certificate_request_context */

/* The handshake messages one side's message callback saw: type, direction, the first bytes. */
#define SEEN_HEAD 2048 /* a whole ClientHello, post-quantum key share included */
struct seen {
    int n;
    struct {
        int sent;
        uint8_t type;
        size_t len;
        uint8_t head[SEEN_HEAD];
    } m[32];
};

struct fx {
    SSL_CTX *cctx, *sctx;
    SSL *c, *s;
    struct seen cseen, sseen;
    struct mock_pair q; /* the QUIC tests' */
};

static int new_sessions;

static int count_session(SSL *ssl, SSL_SESSION *sess)
{
    new_sessions++;
    return 0;
}

static void record_message(int write_p, int version, int content_type, const void *buf,
                           size_t len, SSL *ssl, void *arg)
{
    struct seen *s = arg;
    if (content_type != SSL3_RT_HANDSHAKE || len < 4 || s->n >= 32)
        return;
    s->m[s->n].sent = write_p;
    s->m[s->n].type = ((const uint8_t *)buf)[0];
    s->m[s->n].len = len;
    memcpy(s->m[s->n].head, buf, len < SEEN_HEAD ? len : SEEN_HEAD);
    s->n++;
}

/* The last message of `type` seen in this direction, or NULL. */
static const uint8_t *last_seen(const struct seen *s, int sent, uint8_t type, size_t *len)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (s->m[i].sent == sent && s->m[i].type == type) {
            *len = s->m[i].len;
            return s->m[i].head;
        }
    return NULL;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    new_sessions = 0;
    f->sctx = SSL_CTX_new(TLS_server_method());
    f->cctx = SSL_CTX_new(TLS_client_method());
    assert_true(f->sctx != NULL && f->cctx != NULL);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->sctx, mock_cert_path("ecdsa256.pem")),
                     1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->sctx, mock_cert_path("ecdsa256.key"),
                                                 SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    SSL_CTX_set_post_handshake_auth(f->cctx, 1);
    SSL_CTX_set_session_cache_mode(f->cctx, SSL_SESS_CACHE_CLIENT);
    SSL_CTX_sess_set_new_cb(f->cctx, count_session);
    ERR_clear_error();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    SSL_free(f->c);
    SSL_free(f->s);
    mock_pair_free(&f->q);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    free(f);
    ERR_clear_error();
    return 0;
}

static void use_client_cert(SSL_CTX *ctx)
{
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM), 1);
}

/* Both ends over one BIO pair, each message seen recorded. */
static void connect_pair(struct fx *f)
{
    BIO *cb, *sb;
    assert_int_equal(BIO_new_bio_pair(&cb, 0, &sb, 0), 1);
    f->c = SSL_new(f->cctx);
    f->s = SSL_new(f->sctx);
    assert_true(f->c != NULL && f->s != NULL);
    SSL_set_bio(f->c, cb, cb);
    SSL_set_bio(f->s, sb, sb);
    SSL_set_connect_state(f->c);
    SSL_set_accept_state(f->s);
    SSL_set_msg_callback(f->c, record_message);
    SSL_set_msg_callback_arg(f->c, &f->cseen);
    SSL_set_msg_callback(f->s, record_message);
    SSL_set_msg_callback_arg(f->s, &f->sseen);
}

/* One SSL_read on a side that expects no data: -1 and WANT_READ (all it had was processed). */
static void read_wants_read(SSL *ssl)
{
    unsigned char buf[64];
    ERR_clear_error();
    int r = SSL_read(ssl, buf, sizeof(buf));
    if (r != -1 || SSL_get_error(ssl, r) != SSL_ERROR_WANT_READ)
        ERR_print_errors_fp(stderr);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(ssl, r), SSL_ERROR_WANT_READ);
}

/* One SSL_read that fails with an alert, sent or received: SSL_ERROR_SSL with this reason. */
static void read_fails(SSL *ssl, int reason)
{
    unsigned char buf[64];
    ERR_clear_error();
    int r = SSL_read(ssl, buf, sizeof(buf));
    assert_true(r <= 0);
    assert_int_equal(SSL_get_error(ssl, r), SSL_ERROR_SSL);
    unsigned long e = ERR_peek_error();
    if (ERR_GET_REASON(e) != reason)
        ERR_print_errors_fp(stderr);
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), reason);
    ERR_clear_error();
}

/* The handshake of the pair connect_pair made, then the client takes the server's tickets. */
static void run_handshake(struct fx *f)
{
    int cdone = 0, sdone = 0;
    for (int i = 0; i < MAX_ROUNDS && !(cdone && sdone); i++) {
        cdone = cdone || SSL_do_handshake(f->c) == 1;
        sdone = sdone || SSL_do_handshake(f->s) == 1;
    }
    assert_true(cdone && sdone);
    read_wants_read(f->c);
    assert_int_equal(new_sessions, 2);
    ERR_clear_error();
}

static void handshake(struct fx *f)
{
    connect_pair(f);
    run_handshake(f);
}

/* The server asks; its SSL_do_handshake sends the CertificateRequest. */
static void request(struct fx *f)
{
    assert_int_equal(SSL_verify_client_post_handshake(f->s), 1);
    assert_int_equal(SSL_in_init(f->s), 1);
    assert_int_equal(SSL_is_init_finished(f->s), 0);
    assert_int_equal(SSL_do_handshake(f->s), 1);
    assert_int_equal(SSL_in_init(f->s), 0);
}

static void assert_refused(SSL *s, int reason)
{
    ERR_clear_error();
    assert_int_equal(SSL_verify_client_post_handshake(s), 0);
    unsigned long e = ERR_get_error();
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), reason);
    assert_int_equal(ERR_get_error(), 0);
}

/* ------------------------------------------------------------------ */
/* Success                                                             */
/* ------------------------------------------------------------------ */

/* The ClientHello the server read offers post_handshake_auth: 1 empty, 0 absent, -1 not empty. */
static int offers_pha(const struct seen *seen)
{
    size_t len = 0;
    const uint8_t *ch = last_seen(seen, 0, SSL3_MT_CLIENT_HELLO, &len);
    struct rd r, skip, exts, body;
    uint16_t t;
    assert_true(ch != NULL && len <= SEEN_HEAD);
    rd_init(&r, ch + 4, len - 4);
    assert_true(rd_bytes(&r, 2 + 32, &skip) && rd_vec8(&r, &skip) && rd_vec16(&r, &skip) &&
                rd_vec8(&r, &skip) && rd_vec16(&r, &exts));
    while (rd_u16(&exts, &t) && rd_vec16(&exts, &body))
        if (t == TLSEXT_TYPE_post_handshake_auth)
            return rd_empty(&body) ? 1 : -1;
    return 0;
}

/* §4.2.6: offered, empty, only when asked for; a server may only ask a client that offered. */
static void client_hello_offers_post_handshake_auth_only_when_set(void **state)
{
    struct fx *f = *state;
    handshake(f);
    assert_int_equal(offers_pha(&f->sseen), 1);
    SSL_free(f->c);
    SSL_free(f->s);
    memset(&f->sseen, 0, sizeof(f->sseen));
    new_sessions = 0;
    connect_pair(f);
    SSL_set_post_handshake_auth(f->c, 0); /* the connection's setting over the context's */
    run_handshake(f);
    assert_int_equal(offers_pha(&f->sseen), 0);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    assert_refused(f->s, SSL_R_EXTENSION_NOT_RECEIVED);
}

/* The whole exchange: certificate, CertificateVerify, Finished, then two tickets. */
static void certificate_is_verified_and_new_tickets_follow(void **state)
{
    struct fx *f = *state;
    size_t len = 0, clen = 0;
    use_client_cert(f->cctx);
    handshake(f);
    assert_null(SSL_get0_peer_certificate(f->s));
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_wants_read(f->c); /* reads the request, answers */
    assert_int_equal(SSL_in_init(f->c), 0);
    read_wants_read(f->s); /* reads the answer, sends tickets */
    assert_non_null(SSL_get0_peer_certificate(f->s));
    assert_int_equal(SSL_get_verify_result(f->s), X509_V_OK);
    assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(f->s)), 0); /* the server's view */
    read_wants_read(f->c);
    assert_int_equal(new_sessions, 4);

    /* §4.3.2: a 32-byte random context, which the client's Certificate echoes */
    const uint8_t *cr = last_seen(&f->cseen, 0, SSL3_MT_CERTIFICATE_REQUEST, &len);
    const uint8_t *ct = last_seen(&f->cseen, 1, SSL3_MT_CERTIFICATE, &clen);
    assert_true(cr != NULL && ct != NULL);
    assert_int_equal(cr[4], CR_CONTEXT_LEN);
    assert_int_equal(ct[4], CR_CONTEXT_LEN);
    assert_memory_equal(cr + 5, ct + 5, CR_CONTEXT_LEN);
    assert_non_null(last_seen(&f->cseen, 1, SSL3_MT_CERTIFICATE_VERIFY, &len));
    assert_non_null(last_seen(&f->sseen, 0, SSL3_MT_FINISHED, &len));

    /* Application data goes on both ways, and a second request is answered as well. */
    unsigned char buf[8];
    assert_int_equal(SSL_write(f->c, "ping", 4), 4);
    assert_int_equal(SSL_read(f->s, buf, sizeof(buf)), 4);
    assert_int_equal(SSL_write(f->s, "pong", 4), 4);
    assert_int_equal(SSL_read(f->c, buf, sizeof(buf)), 4);
    request(f);
    read_wants_read(f->c);
    read_wants_read(f->s);
    read_wants_read(f->c);
    assert_int_equal(new_sessions, 6);
    const uint8_t *cr2 = last_seen(&f->cseen, 0, SSL3_MT_CERTIFICATE_REQUEST, &len);
    assert_memory_not_equal(cr + 5, cr2 + 5, CR_CONTEXT_LEN); /* §4.3.2: unique per request */
}

static int client_cert_cb(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
    BIO *b = BIO_new_file(mock_cert_path("client.pem"), "r");
    *x509 = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    b = BIO_new_file(mock_cert_path("client.key"), "r");
    *pkey = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    return 1;
}

/* The certificate is chosen as for a handshake request: SSL_CTX_set_client_cert_cb's. */
static void client_cert_callback_answers_the_request(void **state)
{
    struct fx *f = *state;
    SSL_CTX_set_client_cert_cb(f->cctx, client_cert_cb);
    handshake(f);
    SSL_set_verify(f->s, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    request(f);
    read_wants_read(f->c);
    read_wants_read(f->s);
    assert_non_null(SSL_get0_peer_certificate(f->s));
    assert_int_equal(SSL_get_verify_result(f->s), X509_V_OK);
}

/* Without a certificate the client answers with an empty one, and no CertificateVerify. */
static void empty_certificate_is_accepted_without_fail_if_no_peer_cert(void **state)
{
    struct fx *f = *state;
    size_t len = 0;
    handshake(f);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_wants_read(f->c);
    read_wants_read(f->s);
    assert_null(SSL_get0_peer_certificate(f->s));
    assert_null(last_seen(&f->cseen, 1, SSL3_MT_CERTIFICATE_VERIFY, &len));
    read_wants_read(f->c);
    assert_int_equal(new_sessions, 4);
}

/* RFC 8879: a request that offers compress_certificate is answered with a compressed one. */
static void compressed_certificate_answers_a_request_that_offers_it(void **state)
{
    struct fx *f = *state;
    size_t len = 0;
    int zlib[] = {TLSEXT_comp_cert_zlib};
    assert_int_equal(SSL_CTX_set1_cert_comp_preference(f->cctx, zlib, 1), 1);
    assert_int_equal(SSL_CTX_set1_cert_comp_preference(f->sctx, zlib, 1), 1);
    use_client_cert(f->cctx);
    handshake(f);
    assert_int_equal(SSL_get_negotiated_client_cert_comp(f->s), 0);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_wants_read(f->c);
    read_wants_read(f->s);
    assert_non_null(SSL_get0_peer_certificate(f->s));
    assert_int_equal(SSL_get_negotiated_client_cert_comp(f->s), TLSEXT_comp_cert_zlib);
    assert_int_equal(SSL_get_negotiated_client_cert_comp(f->c), TLSEXT_comp_cert_zlib);
    assert_non_null(last_seen(&f->cseen, 1, HT_COMPRESSED_CERTIFICATE, &len));
}

/* ------------------------------------------------------------------ */
/* SSL_verify_client_post_handshake's refusals, in OpenSSL 3.0's order  */
/* ------------------------------------------------------------------ */

static void verify_client_post_handshake_refusals(void **state)
{
    struct fx *f = *state;
    use_client_cert(f->cctx);
    connect_pair(f);
    assert_refused(f->s, SSL_R_WRONG_SSL_VERSION); /* nothing negotiated yet */
    run_handshake(f);
    assert_refused(f->c, SSL_R_NOT_SERVER);
    assert_refused(f->s, SSL_R_INVALID_CONFIG); /* SSL_VERIFY_PEER is not set */
    SSL_set_verify(f->s, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, NULL);
    assert_int_equal(SSL_verify_client_post_handshake(f->s), 1);
    assert_refused(f->s, SSL_R_STILL_IN_INIT); /* not sent yet: in init, as OpenSSL */
    assert_int_equal(SSL_do_handshake(f->s), 1);
    assert_refused(f->s, SSL_R_REQUEST_SENT);
    read_wants_read(f->c);
    read_wants_read(f->s);
    assert_non_null(SSL_get0_peer_certificate(f->s));
    assert_refused(f->s, SSL_R_INVALID_CONFIG); /* SSL_VERIFY_CLIENT_ONCE: asked once */
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_verify_client_post_handshake(f->s), 1);
}

/* ------------------------------------------------------------------ */
/* Bad input: the right alert, a clear error, nothing left behind       */
/* ------------------------------------------------------------------ */

/* §4.6.2: a client that did not offer post_handshake_auth takes a request as unexpected. */
static void unsolicited_certificate_request_is_unexpected_message(void **state)
{
    struct fx *f = *state;
    handshake(f);
    pha_free(f->c); /* this client never offered it, as far as it knows */
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_fails(f->c, SSL_R_UNEXPECTED_MESSAGE);
    read_fails(f->s, SSL_R_SSLV3_ALERT_UNEXPECTED_MESSAGE);
}

/* §4.4.4: a Finished that does not verify is decrypt_error; no certificate is kept. */
static void bad_finished_is_decrypt_error(void **state)
{
    struct fx *f = *state;
    use_client_cert(f->cctx);
    handshake(f);
    pha_test_corrupt_secret(f->c);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_wants_read(f->c);
    read_fails(f->s, SSL_R_DIGEST_CHECK_FAILED);
    assert_int_equal(new_sessions, 2); /* no tickets for a failed exchange */
    read_fails(f->c, SSL_R_TLSV1_ALERT_DECRYPT_ERROR);
    unsigned char buf[4];
    assert_true(SSL_write(f->s, "x", 1) <= 0); /* the connection is over */
    assert_true(SSL_read(f->s, buf, sizeof(buf)) <= 0);
}

/* §4.4.2.4: an empty Certificate under SSL_VERIFY_FAIL_IF_NO_PEER_CERT: certificate_required. */
static void empty_certificate_with_fail_if_no_peer_cert_is_certificate_required(void **state)
{
    struct fx *f = *state;
    handshake(f);
    SSL_set_verify(f->s, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    request(f);
    read_wants_read(f->c);
    read_fails(f->s, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE);
    read_fails(f->c, SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED);
}

/* A certificate the server cannot verify is refused as in the handshake (cert.c). */
static void unverifiable_certificate_is_refused(void **state)
{
    struct fx *f = *state;
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("other-leaf.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("other-leaf.key"),
                                                 SSL_FILETYPE_PEM), 1);
    handshake(f);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    request(f);
    read_wants_read(f->c);
    read_fails(f->s, SSL_R_CERTIFICATE_VERIFY_FAILED);
    assert_int_not_equal(SSL_get_verify_result(f->s), X509_V_OK);
}

/* ------------------------------------------------------------------ */
/* QUIC: none of it (RFC 9001 §4.4)                                     */
/* ------------------------------------------------------------------ */

static void quic_pair(struct fx *f)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    assert_true(cctx != NULL && sctx != NULL);
    SSL_CTX_set_post_handshake_auth(cctx, 1);
    assert_true(mock_pair_init(&f->q, cctx, sctx));
    SSL_CTX_free(cctx); /* the connections hold their references */
    SSL_CTX_free(sctx);
}

/* The server may not ask; a request that comes anyway is unexpected_message at the client. */
static void request_in_quic_is_refused(void **state)
{
    struct fx *f = *state;
    quic_pair(f);
    assert_true(mock_handshake(&f->q, 0));
    SSL_set_verify(f->q.server.ssl, SSL_VERIFY_PEER, NULL);
    assert_refused(f->q.server.ssl, QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC);

    /* CertificateRequest: a context, signature_algorithms (ecdsa_secp256r1_sha256) */
    static const uint8_t cr[] = {
        SSL3_MT_CERTIFICATE_REQUEST, 0, 0, 15, 4, 1, 2, 3, 4, 0, 8, 0, 13, 0, 4, 0, 2, 4, 3,
    };
    SSL *c = f->q.client.ssl;
    ERR_clear_error();
    assert_int_equal(SSL_provide_quic_data(c, ssl_encryption_application, cr, sizeof(cr)), 1);
    assert_int_equal(SSL_process_quic_post_handshake(c), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_UNEXPECTED_MESSAGE);
    assert_int_equal(f->q.client.alert, SSL_AD_UNEXPECTED_MESSAGE);
}

/* The client's ClientHello with post_handshake_auth appended (its last extension is not the
   pre_shared_key one: a first connection). */
static size_t client_hello_with_pha(struct fx *f, const uint8_t *body, size_t body_len,
                                    uint8_t *out, size_t cap)
{
    struct mock_side *cs = &f->q.client;
    assert_int_equal(SSL_do_handshake(cs->ssl), -1);
    size_t n = cs->out_len[ssl_encryption_initial];
    assert_true(n + 4 + body_len <= cap);
    memcpy(out, cs->out[ssl_encryption_initial], n);
    struct rd r, skip;
    rd_init(&r, out + 4, n - 4);
    assert_true(rd_bytes(&r, 2 + 32, &skip) && rd_vec8(&r, &skip) && rd_vec16(&r, &skip) &&
                rd_vec8(&r, &skip));
    size_t exts_at = n - r.n; /* the extensions' length */
    size_t add = 4 + body_len, exts_len = (size_t)out[exts_at] << 8 | out[exts_at + 1];
    out[n] = 0;
    out[n + 1] = TLSEXT_TYPE_post_handshake_auth;
    out[n + 2] = 0;
    out[n + 3] = (uint8_t)body_len;
    if (body_len > 0)
        memcpy(out + n + 4, body, body_len);
    exts_len += add;
    out[exts_at] = (uint8_t)(exts_len >> 8);
    out[exts_at + 1] = (uint8_t)exts_len;
    size_t msg_len = n + add - 4;
    out[1] = (uint8_t)(msg_len >> 16);
    out[2] = (uint8_t)(msg_len >> 8);
    out[3] = (uint8_t)msg_len;
    return n + add;
}

/* §4.2.6: the extension is empty; a body is decode_error (OpenSSL's reason), even in QUIC. */
static void post_handshake_auth_with_a_body_is_decode_error(void **state)
{
    struct fx *f = *state;
    uint8_t ch[4096];
    quic_pair(f);
    size_t n = client_hello_with_pha(f, (const uint8_t *)"x", 1, ch, sizeof(ch));
    SSL *s = f->q.server.ssl;
    ERR_clear_error();
    assert_int_equal(SSL_provide_quic_data(s, ssl_encryption_initial, ch, n), 1);
    assert_int_equal(SSL_do_handshake(s), -1);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_POST_HANDSHAKE_AUTH_ENCODING_ERR);
    assert_int_equal(f->q.server.alert, SSL_AD_DECODE_ERROR);
}

/* A QUIC client must not offer it; a QUIC server ignores the offer and never asks. */
static void post_handshake_auth_offered_in_quic_is_ignored(void **state)
{
    struct fx *f = *state;
    uint8_t ch[4096];
    quic_pair(f);
    size_t n = client_hello_with_pha(f, (const uint8_t *)"", 0, ch, sizeof(ch));
    SSL *s = f->q.server.ssl;
    ERR_clear_error();
    assert_int_equal(SSL_provide_quic_data(s, ssl_encryption_initial, ch, n), 1);
    int r = SSL_do_handshake(s);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(s, r), SSL_ERROR_WANT_READ); /* its flight is out */
    assert_int_equal(f->q.server.alert, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(client_hello_offers_post_handshake_auth_only_when_set),
        T(certificate_is_verified_and_new_tickets_follow),
        T(client_cert_callback_answers_the_request),
        T(empty_certificate_is_accepted_without_fail_if_no_peer_cert),
        T(compressed_certificate_answers_a_request_that_offers_it),
        T(verify_client_post_handshake_refusals),
        T(unsolicited_certificate_request_is_unexpected_message),
        T(bad_finished_is_decrypt_error),
        T(empty_certificate_with_fail_if_no_peer_cert_is_certificate_required),
        T(unverifiable_certificate_is_refused),
        T(request_in_quic_is_refused),
        T(post_handshake_auth_with_a_body_is_decode_error),
        T(post_handshake_auth_offered_in_quic_is_ignored),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
