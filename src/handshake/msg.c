/*
 * Handshake message framing over the QUIC glue, and the messages both sides
 * send and check the same way: Certificate, CertificateVerify, Finished
 * (RFC 8446 §4.4), in the handshake and in post-handshake authentication
 * (§4.6.2, post_auth.c). The struct hs these messages are written from is
 * freed here, below both its makers (handshake.c, post_auth.c).
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <string.h>

void hs_free(SSL *c)
{
    struct hs *hs = c->hs;
    if (hs == NULL)
        return;
    transcript_free(&hs->transcript);
    wr_free(&hs->out);
    wr_free(&hs->cookie);
    wr_free(&hs->peer_share);
    wr_free(&hs->cert_request_context);
    crypto_kex_key_clear(&hs->kex_key[0]);
    crypto_kex_key_clear(&hs->kex_key[1]);
    wr_free_public(&hs->my_share);
    cert_cfg_free(&hs->cert);
    OPENSSL_clear_free(hs, sizeof(*hs)); /* wipes every secret in it */
    c->hs = NULL;
}

/* ---- output ---- */

size_t msg_begin(SSL *c, OSSL_ENCRYPTION_LEVEL level, uint8_t type)
{
    struct hs *hs = c->hs;
    /* Messages of one level are packed together; a new level hands the old ones over. */
    if (hs->out.len > 0 && hs->out_level != level && !msg_flush_output(c))
        wr_fail(&hs->out);
    hs->out_level = level;
    size_t at = hs->out.len;
    wr_u8(&hs->out, type);
    wr_open_vec(&hs->out, 3);
    return at;
}

/* The message header: HandshakeType msg_type; uint24 length (RFC 8446 §4). */
void msg_set_length(SSL *c, size_t at) { wr_close_vec(&c->hs->out, at + 1, 3); }

int msg_end(SSL *c, size_t at)
{
    struct wr *out = &c->hs->out;
    msg_set_length(c, at);
    if (!wr_ok(out))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    /* §4.4.1: a transcript holds handshake messages; a NewSessionTicket is none (OpenSSL's
       ssl3_do_write leaves it out), so the server's ends with the client's Finished, where
       post-handshake authentication's transcript starts (post_auth.c). */
    int in_transcript = out->buf[at] != HT_NEW_SESSION_TICKET;
    if (in_transcript && !transcript_add(&c->hs->transcript, out->buf + at, out->len - at))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    cb_handshake_message(c, 1, out->buf + at, out->len - at);
    return 1;
}

int msg_flush_output(SSL *c)
{
    struct hs *hs = c->hs;
    if (hs->out.len == 0)
        return 1;
    int ok = quic_add_handshake_data(c, hs->out_level, hs->out.buf, hs->out.len);
    wr_reset(&hs->out);
    hs->flight_pending = 1;
    return ok;
}

int msg_end_flight(SSL *c)
{
    if (!msg_flush_output(c))
        return 0;
    if (c->hs->flight_pending) {
        c->hs->flight_pending = 0;
        return quic_flush_flight(c);
    }
    return 1;
}

const uint8_t msg_hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

/* ---- input ---- */

enum hs_wait msg_read(SSL *c, uint8_t *type, struct rd *body, struct rd *whole)
{
    int r = quic_peek_message(c, whole);
    if (r <= 0)
        return r == 0 ? HS_WANT_MESSAGE : HS_ERROR;
    struct rd m = *whole;
    if (!rd_u8(&m, type) || !rd_vec24(&m, body))
        return HS_ERROR; /* cannot happen: quic_peek_message returns whole messages */
    /* RFC 9001 §6: QUIC updates keys itself; a KeyUpdate message is a violation. */
    if (*type == HT_KEY_UPDATE)
        return hs_fail(c, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED);
    return HS_CONTINUE;
}

int msg_consume(SSL *c, const struct rd *whole)
{
    if (!transcript_add(&c->hs->transcript, whole->p, whole->n))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    cb_handshake_message(c, 0, whole->p, whole->n);
    quic_consume_message(c, whole->n);
    return 1;
}

int msg_expect(SSL *c, uint8_t type, uint8_t want)
{
    if (type != want)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE);
    return 1;
}

enum hs_wait msg_read_expected(SSL *c, uint8_t want, struct rd *body, struct rd *whole)
{
    uint8_t type;
    enum hs_wait r = msg_read(c, &type, body, whole);
    if (r != HS_CONTINUE)
        return r;
    return msg_expect(c, type, want) ? HS_CONTINUE : HS_ERROR;
}

/* §4.4.3: the peer's CertificateVerify over the transcript so far, with c->peer_cert's key. */
enum hs_wait msg_read_certificate_verify(SSL *c)
{
    struct rd body, whole;
    uint8_t thash[EVP_MAX_MD_SIZE];
    enum hs_wait r = msg_read_expected(c, HT_CERTIFICATE_VERIFY, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!cert_check_signing_usage(c, c->peer_cert))
        return HS_ERROR;
    if (!transcript_hash(&c->hs->transcript, thash) ||
        !msg_check_certificate_verify(c, body, X509_get0_pubkey(c->peer_cert), thash) ||
        !msg_consume(c, &whole))
        return HS_ERROR;
    return HS_CONTINUE;
}

/* §4.4.4: the peer's Finished, keyed by its handshake traffic secret `base`. */
enum hs_wait msg_read_finished(SSL *c, const struct secret *base)
{
    struct rd body, whole;
    uint8_t thash[EVP_MAX_MD_SIZE];
    enum hs_wait r = msg_read_expected(c, HT_FINISHED, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!transcript_hash(&c->hs->transcript, thash) || !msg_check_finished(c, body, base, thash) ||
        !msg_consume(c, &whole))
        return HS_ERROR;
    return HS_CONTINUE;
}

/* §4.6.2: the authentication messages go at the handshake level in the handshake, at the
   application level after it (post-handshake authentication). */
static OSSL_ENCRYPTION_LEVEL auth_level(const SSL *c)
{
    return c->phase == PHASE_DONE ? ssl_encryption_application : ssl_encryption_handshake;
}

/* ---- Certificate (§4.4.2) ---- */

static void write_cert_entry(SSL *c, struct wr *w, X509 *x, int is_leaf)
{
    cert_write_der(w, x);
    size_t exts = wr_open_vec(w, 2);
    if (is_leaf && !ext_write(c, MSG_CT, w)) /* the rows' (status_request, SCT list) */
        wr_fail(w);
    wr_close_vec(w, exts, 2);
}

/*
 * struct { opaque certificate_request_context<0..2^8-1>;
 *          CertificateEntry certificate_list<0..2^24-1>; } Certificate;
 */
static void write_certificate_body(SSL *c, struct wr *w, const uint8_t *context,
                                   size_t context_len, const struct cert_cfg *cc)
{
    size_t ctx_at = wr_open_vec(w, 1);
    wr_bytes(w, context, context_len);
    wr_close_vec(w, ctx_at, 1);
    size_t list = wr_open_vec(w, 3);
    if (cc != NULL && cc->cert != NULL) {
        write_cert_entry(c, w, cc->cert, 1);
        for (int i = 0; cc->chain != NULL && i < sk_X509_num(cc->chain); i++)
            write_cert_entry(c, w, sk_X509_value(cc->chain, i), 0);
    }
    wr_close_vec(w, list, 3);
}

/* RFC 8879 §4: the Certificate body compressed with the algorithm the peer accepted. */
static int write_compressed_certificate(SSL *c, const uint8_t *context, size_t context_len,
                                        const struct cert_cfg *cc)
{
    struct wr plain;
    wr_init(&plain);
    write_certificate_body(c, &plain, context, context_len, cc);
    size_t at = msg_begin(c, auth_level(c), HT_COMPRESSED_CERTIFICATE);
    int ok = wr_ok(&plain) || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    ok = ok && cert_comp_write_body(c, c->hs->cert_comp_tx, plain.buf, plain.len, &c->hs->out);
    wr_free(&plain);
    return ok && msg_end(c, at);
}

int msg_write_certificate(SSL *c, const uint8_t *context, size_t context_len,
                          const struct cert_cfg *cc)
{
    /* An empty list goes out as it is: there is nothing to compress. */
    if (c->hs->cert_comp_tx != 0 && cc != NULL && cc->cert != NULL)
        return write_compressed_certificate(c, context, context_len, cc);
    size_t at = msg_begin(c, auth_level(c), HT_CERTIFICATE);
    write_certificate_body(c, &c->hs->out, context, context_len, cc);
    return msg_end(c, at);
}

static int parse_cert_entry(SSL *c, struct rd *list, STACK_OF(X509) *chain)
{
    struct rd data, exts;
    if (!rd_vec24(list, &data) || !rd_vec16(list, &exts) || rd_empty(&data))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* The rows' (a stapled OCSP response, an SCT list: only what we offered). */
    c->hs->cert_entry_is_leaf = sk_X509_num(chain) == 0;
    if (!ext_parse(c, MSG_CT, exts))
        return 0;
    X509 *x = cert_decode(c->ctx, data.p, data.n);
    if (x == NULL)
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DATA);
    if (!sk_X509_push(chain, x)) {
        X509_free(x);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    }
    return 1;
}

int msg_parse_certificate(SSL *c, struct rd body, int allow_empty)
{
    struct rd context, list;
    struct hs *hs = c->hs;
    if (!rd_vec8(&body, &context) || !rd_vec24(&body, &list) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* The context echoes the CertificateRequest's (empty for a server). */
    const uint8_t *want = c->server ? hs->cert_request_context.buf : NULL;
    size_t want_len = c->server ? hs->cert_request_context.len : 0;
    if (context.n != want_len || (want_len > 0 && memcmp(context.p, want, want_len) != 0))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_BAD_DATA);
    if (rd_empty(&list)) {
        if (!allow_empty) /* §4.4.2.4 */
            return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_BAD_DATA);
        return 1;
    }
    STACK_OF(X509) *chain = sk_X509_new_null();
    if (chain == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    while (!rd_empty(&list)) {
        if (!parse_cert_entry(c, &list, chain)) {
            sk_X509_pop_free(chain, X509_free);
            return 0;
        }
    }
    cert_verified_detach(c);
    sk_X509_pop_free(c->peer_chain, X509_free);
    X509_free(c->peer_cert);
    c->peer_chain = chain;
    c->peer_cert = sk_X509_value(chain, 0);
    X509_up_ref(c->peer_cert);
    return 1;
}

enum hs_wait msg_read_certificate(SSL *c, int allow_empty, struct rd *whole)
{
    uint8_t type;
    struct rd body, plain_body;
    enum hs_wait r = msg_read(c, &type, &body, whole);
    if (r != HS_CONTINUE)
        return r;
    if (type == HT_CERTIFICATE)
        return msg_parse_certificate(c, body, allow_empty) ? HS_CONTINUE : HS_ERROR;
    /* Only after we sent compress_certificate (RFC 8879 §3). */
    if (type != HT_COMPRESSED_CERTIFICATE || !c->hs->cert_comp_offered)
        return msg_expect(c, type, HT_CERTIFICATE) ? HS_CONTINUE : HS_ERROR;
    struct wr plain;
    wr_init(&plain);
    int ok = cert_comp_read_body(c, body, &plain);
    if (ok) {
        rd_init(&plain_body, plain.buf, plain.len);
        ok = msg_parse_certificate(c, plain_body, allow_empty);
    }
    wr_free(&plain);
    return ok ? HS_CONTINUE : HS_ERROR;
}

/*
 * §4.4.2.3: the pair a client answers a CertificateRequest with (references in *out), in the
 * handshake or after it (§4.6.2): the certificate callback runs first and may set one; then a
 * configured pair the server's signature_algorithms allow (certset.c); else
 * SSL_CTX_set_client_cert_cb's. HS_CONTINUE with *have (*out and *scheme set) or not (no
 * certificate), HS_ERROR (alert set), or HS_WANT_X509_LOOKUP: the certificate callback asked to
 * be called again.
 */
enum hs_wait msg_client_certificate(SSL *c, struct cert_cfg *out, uint16_t *scheme, int *have)
{
    struct hs *hs = c->hs;
    *have = 0;
    enum hs_wait r = certset_run_cb(c);
    if (r != HS_CONTINUE)
        return r;
    if (certset_choose(c, certset_of(c), hs->peer_sigschemes, hs->n_peer_sigschemes, out, scheme)) {
        *have = 1;
        return HS_CONTINUE;
    }
    if (c->alert != 0)
        return HS_ERROR;
    SSL_CTX *ctx = c->ctx;
    if (ctx->client_cert_cb == NULL || ctx->client_cert_cb(c, &out->cert, &out->pkey) != 1)
        return HS_CONTINUE;
    if (out->cert == NULL || out->pkey == NULL || !X509_check_private_key(out->cert, out->pkey)) {
        ERR_clear_error(); /* an unusable answer means no certificate, as in OpenSSL */
        return HS_CONTINUE;
    }
    *have = sigalgs_choose_scheme(out->pkey, hs->peer_sigschemes, hs->n_peer_sigschemes, scheme);
    return HS_CONTINUE;
}

/* ---- CertificateVerify (§4.4.3) ---- */

/* 64 spaces, the context string, a zero byte, then the transcript hash. */
static size_t signed_content(SSL *c, int by_server, const uint8_t *thash, uint8_t *out)
{
    static const char server_ctx[] = "TLS 1.3, server CertificateVerify";
    static const char client_ctx[] = "TLS 1.3, client CertificateVerify";
    const char *label = by_server ? server_ctx : client_ctx;
    size_t hl = crypto_hash_len(c->cipher->hash);
    memset(out, 0x20, 64);
    memcpy(out + 64, label, sizeof(server_ctx)); /* includes the zero byte */
    memcpy(out + 64 + sizeof(server_ctx), thash, hl);
    return 64 + sizeof(server_ctx) + hl;
}

#define QTLS_TBS_MAX (64 + 34 + EVP_MAX_MD_SIZE)

int msg_write_certificate_verify(SSL *c, EVP_PKEY *key, uint16_t scheme)
{
    uint8_t thash[EVP_MAX_MD_SIZE], tbs[QTLS_TBS_MAX];
    struct wr *w = &c->hs->out;
    if (!transcript_hash(&c->hs->transcript, thash))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    size_t tbs_len = signed_content(c, c->server, thash, tbs);
    size_t at = msg_begin(c, auth_level(c), HT_CERTIFICATE_VERIFY);
    wr_u16(w, scheme);
    c->own_sigscheme = scheme;
    size_t sig = wr_open_vec(w, 2);
    if (!crypto_sign(key, sigscheme_by_id(scheme), tbs, tbs_len, w))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    wr_close_vec(w, sig, 2);
    return msg_end(c, at);
}

/* Only schemes we offered (sigalgs.c), valid in TLS 1.3, for this key type and curve. */
static int scheme_acceptable(SSL *c, uint16_t id, EVP_PKEY *key)
{
    const struct sigscheme *s = sigscheme_by_id(id);
    return sigalgs_we_accept(c, id) && s != NULL && s->tls13_ok && crypto_key_matches_scheme(key, s);
}

int msg_check_certificate_verify(SSL *c, struct rd body, EVP_PKEY *key, const uint8_t *thash)
{
    uint16_t scheme;
    struct rd sig;
    uint8_t tbs[QTLS_TBS_MAX];
    if (!rd_u16(&body, &scheme) || !rd_vec16(&body, &sig) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!scheme_acceptable(c, scheme, key))
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_SIGNATURE_TYPE);
    size_t tbs_len = signed_content(c, !c->server, thash, tbs);
    if (!crypto_verify(key, sigscheme_by_id(scheme), tbs, tbs_len, sig.p, sig.n))
        return qtls_fail(c, SSL_AD_DECRYPT_ERROR, SSL_R_BAD_SIGNATURE);
    c->peer_sigscheme = scheme;
    return 1;
}

/* ---- Finished (§4.4.4) ---- */

int msg_write_finished(SSL *c, const struct secret *base)
{
    uint8_t thash[EVP_MAX_MD_SIZE], verify[EVP_MAX_MD_SIZE];
    enum qtls_hash h = c->cipher->hash;
    if (!transcript_hash(&c->hs->transcript, thash) || !ks_finished(h, base, thash, verify))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    size_t at = msg_begin(c, auth_level(c), HT_FINISHED);
    wr_bytes(&c->hs->out, verify, crypto_hash_len(h));
    OPENSSL_cleanse(verify, sizeof(verify));
    return msg_end(c, at);
}

int msg_check_finished(SSL *c, struct rd body, const struct secret *base, const uint8_t *thash)
{
    uint8_t want[EVP_MAX_MD_SIZE];
    enum qtls_hash h = c->cipher->hash;
    size_t hl = crypto_hash_len(h);
    /* A verify_data of the wrong length cannot match: the same failure as a wrong one. */
    if (body.n != hl)
        return qtls_fail(c, SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED);
    if (!ks_finished(h, base, thash, want))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    int same = crypto_mac_equal(want, body.p, hl);
    OPENSSL_cleanse(want, sizeof(want));
    if (!same)
        return qtls_fail(c, SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED);
    return 1;
}
