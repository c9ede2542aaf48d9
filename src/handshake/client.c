/*
 * The client state machine (RFC 8446 §2, Figure 1 and §4.1.4), one function
 * per state. Each reading state: read a message or ask for more, check its
 * type, parse, consume (which adds it to the transcript), pick the next
 * state.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <string.h>

enum client_state {
    CS_SEND_CLIENT_HELLO,
    CS_READ_SERVER_HELLO,
    CS_READ_ENCRYPTED_EXTENSIONS,
    CS_READ_CERTIFICATE_REQUEST,
    CS_READ_SERVER_CERTIFICATE,
    CS_READ_SERVER_CERTIFICATE_VERIFY,
    CS_READ_SERVER_FINISHED,
    CS_SEND_END_OF_EARLY_DATA,
    CS_SEND_CLIENT_CERTIFICATE,
    CS_SEND_CLIENT_FINISHED,
    CS_DONE,
};

/*
 * RFC 9001 §4.1.4 (RFC 8446 §2): the levels each state reads and writes at. Reads: Initial until
 * the ServerHello, Handshake until the server's Finished, then 1-RTT (post-handshake messages).
 * Writes (alerts too): Initial for the ClientHello, 0-RTT while waiting for the ServerHello if
 * early data was offered (set_state), Handshake once its keys exist, 1-RTT from the server's
 * Finished on (the application keys are installed).
 */
static const struct hs_levels levels[CS_DONE + 1] = {
    [CS_SEND_CLIENT_HELLO] = {HS_INITIAL, HS_INITIAL},
    [CS_READ_SERVER_HELLO] = {HS_INITIAL, HS_INITIAL},
    [CS_READ_ENCRYPTED_EXTENSIONS] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [CS_READ_CERTIFICATE_REQUEST] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [CS_READ_SERVER_CERTIFICATE] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [CS_READ_SERVER_CERTIFICATE_VERIFY] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [CS_READ_SERVER_FINISHED] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [CS_SEND_END_OF_EARLY_DATA] = {HS_APPLICATION, HS_APPLICATION},
    [CS_SEND_CLIENT_CERTIFICATE] = {HS_APPLICATION, HS_APPLICATION},
    [CS_SEND_CLIENT_FINISHED] = {HS_APPLICATION, HS_APPLICATION},
    [CS_DONE] = {HS_APPLICATION, HS_APPLICATION},
};

/* Moves to state s and its levels; fails if input is left at the old read level (§5.1). */
static QTLS_MUST_CHECK int set_state(SSL *c, enum client_state s)
{
    struct hs_levels l = levels[s];
    if (s == CS_READ_SERVER_HELLO && c->hs->early_data_offered)
        l.write = HS_EARLY;
    return hs_set_state(c, s, l);
}

/* set_state, then w: what the state function asks of the driver. */
static enum hs_wait next(SSL *c, enum client_state s, enum hs_wait w)
{
    return set_state(c, s) ? w : HS_ERROR;
}

static void drop_key_shares(struct hs *hs)
{
    crypto_kex_key_clear(&hs->kex_key[0]);
    crypto_kex_key_clear(&hs->kex_key[1]);
    wr_reset_public(&hs->my_share);
}

/*
 * The second share: its own key pair, or, when it is the first (hybrid) share's classical
 * group, that share's classical half again (an X25519 key generation saved per handshake).
 */
static int second_key_share(struct hs *hs, size_t first_at)
{
    const struct group *g = hs->kex_group, *g2 = hs->kex_group2;
    if (g->kind != KEX_HYBRID || g->classical != g2->id)
        return crypto_kex_generate(g2, &hs->kex_key[1], &hs->my_share);
    uint8_t first[CRYPTO_KEX_MAX_SHARE]; /* a copy: my_share may move as it grows */
    size_t n = g->share_len;
    uint8_t *at = wr_at(&hs->my_share, first_at, n);
    if (at == NULL || n > sizeof(first))
        return 0;
    memcpy(first, at, n);
    return crypto_kex_reuse_classical(g, &hs->kex_key[0], first, &hs->kex_key[1], &hs->my_share);
}

/* Key pairs for g (and g2 unless NULL) and their KeyShareEntry list, in that order (§4.2.8). */
static int make_key_shares(SSL *c, const struct group *g, const struct group *g2)
{
    struct hs *hs = c->hs;
    const struct group *gs[2] = {g, g2};
    size_t first_at = 0;
    drop_key_shares(hs);
    hs->kex_group = g;
    hs->kex_group2 = g2;
    for (size_t i = 0; i < 2 && gs[i] != NULL; i++) {
        wr_u16(&hs->my_share, gs[i]->id);
        size_t ke = wr_open_vec(&hs->my_share, 2);
        if (i == 0)
            first_at = wr_len(&hs->my_share);
        if (!(i == 0 ? crypto_kex_generate(g, &hs->kex_key[0], &hs->my_share)
                     : second_key_share(hs, first_at)))
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
        wr_close_vec(&hs->my_share, ke, 2);
    }
    return wr_ok(&hs->my_share) || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
}

/*
 * The key shares of the first ClientHello: the first group configured that the security level
 * allows; when that one is post-quantum, the first classical group too, so that a server
 * without it needs no HelloRetryRequest (as OpenSSL 3.5 and the browsers send X25519MLKEM768
 * with X25519).
 */
static int first_key_shares(SSL *c)
{
    const struct group *g = NULL, *g2 = NULL;
    for (size_t i = 0; i < c->n_groups; i++) {
        const struct group *gi = seclevel_group_ok(c, c->groups[i]) ? group_by_id(c->groups[i])
                                                                   : NULL;
        if (g == NULL)
            g = gi;
        else if (gi != NULL && group_is_pq(g) && !group_is_pq(gi) && g2 == NULL)
            g2 = gi;
    }
    if (g == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR,
                         c->n_groups > 0 ? SSL_R_NO_SUITABLE_GROUPS : SSL_R_NO_SHARED_GROUPS);
    return make_key_shares(c, g, g2);
}

/* The key we made for the group the server names, NULL if we sent no share for it. */
static struct kex_key *key_share_for(struct hs *hs, uint16_t group_id)
{
    if (group_id == hs->kex_group->id)
        return &hs->kex_key[0];
    if (hs->kex_group2 != NULL && group_id == hs->kex_group2->id)
        return &hs->kex_key[1];
    return NULL;
}

/*
 * struct { ProtocolVersion legacy_version = 0x0303; Random random;
 *          opaque legacy_session_id<0..32>; CipherSuite cipher_suites<2..2^16-2>;
 *          opaque legacy_compression_methods<1..2^8-1>; Extension extensions<8..2^16-1>;
 * } ClientHello;   (§4.1.2; the session id stays empty in QUIC, RFC 9001 §8.4)
 */
static enum hs_wait do_send_client_hello(SSL *c)
{
    struct hs *hs = c->hs;
    struct wr *w = &hs->out;
    if (c->alpn_len == 0 && !c->tcp) /* RFC 9001 §8.1 */
        return hs_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_NO_APPLICATION_PROTOCOL);
    if (!hs->hrr_done) {
        if (!crypto_random(c->client_random, sizeof(c->client_random)) ||
            !crypto_random(hs->grease_seed, sizeof(hs->grease_seed)) || !first_key_shares(c))
            return HS_ERROR;
        /* §D.4: over TCP in middlebox compatibility mode, a fresh 32-byte session id */
        if (c->tcp && (c->options & SSL_OP_ENABLE_MIDDLEBOX_COMPAT)) {
            if (!crypto_random(hs->session_id, sizeof(hs->session_id)))
                return hs_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
            hs->session_id_len = sizeof(hs->session_id);
        }
    }
    if (!psk_client_prepare(c))
        return HS_ERROR;
    size_t at = msg_begin(c, ssl_encryption_initial, HT_CLIENT_HELLO);
    wr_u16(w, TLS1_2_VERSION);
    wr_bytes(w, c->client_random, sizeof(c->client_random));
    wr_u8(w, hs->session_id_len);
    wr_bytes(w, hs->session_id, hs->session_id_len);
    size_t suites = wr_open_vec(w, 2);
    if (c->grease_enabled) /* RFC 8701 §3 */
        wr_u16(w, grease_value(c, GREASE_CIPHER));
    for (size_t i = 0; i < c->suites.n; i++)
        wr_u16(w, suite_at(&c->suites, i)->tls_id);
    wr_close_vec(w, suites, 2);
    wr_u8(w, 1);
    wr_u8(w, 0);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write_client_hello(c, w)) /* the table's rows, pre_shared_key last (§4.2.11) */
        return HS_ERROR;
    wr_close_vec(w, exts, 2);
    msg_set_length(c, at); /* the binder covers the header with the full length (§4.2.11.2) */
    if (!psk_fill_binder(c, at) || !msg_end(c, at) || !psk_client_after_hello(c))
        return HS_ERROR;
    return next(c, CS_READ_SERVER_HELLO, HS_FLUSH); /* the client's first flight ends */
}

static int offered_suite(SSL *c, const SSL_CIPHER *s)
{
    for (size_t i = 0; i < c->suites.n; i++)
        if (suite_at(&c->suites, i) == s)
            return 1;
    return 0;
}

/*
 * §4.1.4: HelloRetryRequest. Switch to the server's group and send ClientHello again. The
 * cookie row kept the cookie for it; the key_share row read the group.
 */
static enum hs_wait process_hello_retry_request(SSL *c, const struct rd *whole)
{
    struct hs *hs = c->hs;
    uint16_t group_id = hs->hello.group;
    if (hs->hrr_done) /* only one HelloRetryRequest per handshake */
        return hs_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE);
    if (!hello_has(c, EXT_KEY_SHARE) && !hello_has(c, EXT_COOKIE))
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_HELLO_REQUEST);
    if (!transcript_set_hash(&hs->transcript, c->cipher->hash) ||
        !transcript_hrr_restart(&hs->transcript) || !msg_consume(c, whole))
        return HS_ERROR;
    hs->hrr_done = 1;
    hs->hrr_cipher = c->cipher;
    if (hs->early_data_offered) /* §4.2.10: the second ClientHello carries no 0-RTT */
        c->early_data_reason = ssl_early_data_hello_retry_request;
    if (hello_has(c, EXT_KEY_SHARE)) {
        /* §4.2.8: a group we support, and not one we already sent a share for. */
        int ours = 0;
        for (size_t i = 0; i < c->n_groups; i++)
            ours |= c->groups[i] == group_id && seclevel_group_ok(c, group_id);
        if (!ours || key_share_for(hs, group_id) != NULL || group_by_id(group_id) == NULL)
            return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE);
        if (!make_key_shares(c, group_by_id(group_id), NULL))
            return HS_ERROR;
    }
    if (!hs_ends_record(c))
        return HS_ERROR;
    return next(c, CS_SEND_CLIENT_HELLO, HS_CONTINUE);
}

/* §4.2.8: the server's share (the key_share row read it), in the group we offered; then keys. */
static enum hs_wait process_server_hello(SSL *c, const struct rd *whole)
{
    struct hs *hs = c->hs;
    struct rd share = hs->hello.share;
    uint16_t group_id = hs->hello.group;
    uint8_t ecdhe[CRYPTO_KEX_MAX_SECRET];
    if (!hello_has(c, EXT_KEY_SHARE))
        return hs_fail(c, SSL_AD_MISSING_EXTENSION, QTLS_R_MISSING_EXTENSION);
    struct kex_key *key = key_share_for(hs, group_id);
    if (key == NULL) /* §4.2.8: the group of a share we sent */
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE);
    size_t n = crypto_kex_derive(group_by_id(group_id), key, share.p, share.n, ecdhe,
                                 sizeof(ecdhe));
    if (n == 0 && crypto_kex_bad_share())
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
    if (n == 0)
        return hs_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    c->group_id = group_id;
    drop_key_shares(hs);
    int ok = psk_client_server_hello(c) &&
             transcript_set_hash(&hs->transcript, c->cipher->hash) && msg_consume(c, whole) &&
             set_state(c, CS_READ_ENCRYPTED_EXTENSIONS) && sec_derive_handshake(c, ecdhe, n);
    OPENSSL_cleanse(ecdhe, sizeof(ecdhe));
    return ok ? HS_CONTINUE : HS_ERROR;
}

/* §4.1.3: ServerHello and HelloRetryRequest share one structure. */
static enum hs_wait do_read_server_hello(SSL *c)
{
    struct rd body, whole, session_id, exts;
    uint16_t legacy_version, suite_id;
    uint8_t random[32], compression;
    enum hs_wait r = msg_read_expected(c, HT_SERVER_HELLO, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!rd_u16(&body, &legacy_version) || !rd_copy(&body, random, sizeof(random)) ||
        !rd_vec8(&body, &session_id) || !rd_u16(&body, &suite_id) ||
        !rd_u8(&body, &compression) || !rd_vec16(&body, &exts) || !rd_empty(&body))
        return hs_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    int is_hrr = memcmp(random, msg_hrr_random, sizeof(random)) == 0;
    if (!ext_parse(c, is_hrr ? MSG_HRR : MSG_SH, exts)) /* the rows fill hs->hello */
        return HS_ERROR;
    /* §4.2.1: TLS 1.3 is negotiated by supported_versions alone. */
    if (!hello_has(c, EXT_SUPPORTED_VERSIONS))
        return hs_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL);
    if (c->hs->hello.version != TLS1_3_VERSION || legacy_version != TLS1_2_VERSION)
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_UNSUPPORTED_PROTOCOL);
    /* §4.1.3: the echo of our legacy_session_id, and no compression */
    if (session_id.n != c->hs->session_id_len ||
        CRYPTO_memcmp(session_id.p, c->hs->session_id, session_id.n) != 0 || compression != 0)
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_DATA);
    const SSL_CIPHER *suite = suite_by_tls_id(suite_id);
    /* §4.1.4: the ServerHello must keep the suite of the HelloRetryRequest. */
    if (suite == NULL || !offered_suite(c, suite) ||
        (c->hs->hrr_cipher != NULL && c->hs->hrr_cipher != suite))
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CIPHER_RETURNED);
    c->cipher = suite;
    c->version = TLS1_3_VERSION;
    return is_hrr ? process_hello_retry_request(c, &whole) : process_server_hello(c, &whole);
}

/* §4.3.1: struct { Extension extensions<0..2^16-1>; } EncryptedExtensions; */
static enum hs_wait do_read_encrypted_extensions(SSL *c)
{
    struct rd body, whole, exts;
    enum hs_wait r = msg_read_expected(c, HT_ENCRYPTED_EXTENSIONS, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!rd_vec16(&body, &exts) || !rd_empty(&body))
        return hs_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* The rows (ALPN, SNI, transport parameters, early_data) and the application's. */
    if (!ext_parse(c, MSG_EE, exts) || !psk_client_reverify_after_encrypted_extensions(c) ||
        !msg_consume(c, &whole))
        return HS_ERROR;
    /* A resumed handshake authenticates with the PSK: no certificate messages (§2.2). */
    return next(c, c->hs->resumed ? CS_READ_SERVER_FINISHED : CS_READ_CERTIFICATE_REQUEST,
                HS_CONTINUE);
}

/* §4.3.2: optional; remembers the context and the schemes for our CertificateVerify. */
static enum hs_wait do_read_certificate_request(SSL *c)
{
    struct hs *hs = c->hs;
    struct rd body, whole, context, exts;
    uint8_t type;
    enum hs_wait r = msg_read(c, &type, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (type != HT_CERTIFICATE_REQUEST)
        return next(c, CS_READ_SERVER_CERTIFICATE, HS_CONTINUE);
    /* §4.3.2: the context is empty outside post-handshake auth, which QUIC forbids. */
    if (!rd_vec8(&body, &context) || !rd_vec16(&body, &exts) || !rd_empty(&body) ||
        !rd_empty(&context))
        return hs_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* The rows: certificate_authorities, signature_algorithms (hs->peer_sigschemes),
       compress_certificate (hs->cert_comp_tx). */
    if (!ext_parse(c, MSG_CR, exts))
        return HS_ERROR;
    wr_bytes(&hs->cert_request_context, context.p, context.n);
    if (!wr_ok(&hs->cert_request_context))
        return hs_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    hs->cert_requested = 1;
    if (!msg_consume(c, &whole))
        return HS_ERROR;
    return next(c, CS_READ_SERVER_CERTIFICATE, HS_CONTINUE);
}

/* §4.4.2: the server's chain, which may not be empty (§4.4.2.4), verified here. */
static enum hs_wait do_read_server_certificate(SSL *c)
{
    struct rd whole;
    enum hs_wait r = msg_read_certificate(c, 0, &whole); /* or CompressedCertificate */
    if (r != HS_CONTINUE)
        return r;
    if (!cert_verify_peer_chain(c, c->peer_chain) || !msg_consume(c, &whole))
        return HS_ERROR;
    return next(c, CS_READ_SERVER_CERTIFICATE_VERIFY, HS_CONTINUE);
}

/* §4.4.3: the signature over the transcript proves the certificate's key. */
static enum hs_wait do_read_server_certificate_verify(SSL *c)
{
    enum hs_wait w = msg_read_certificate_verify(c);
    if (w != HS_CONTINUE)
        return w;
    /* The certificate is proven: the status callback may judge its stapled response. */
    if (!ocsp_client_run_cb(c))
        return HS_ERROR;
    return next(c, CS_READ_SERVER_FINISHED, HS_CONTINUE);
}

/* §4.4.4: the server's Finished; then the application secrets (§7.1, RFC 9001 §4.1.4). */
static enum hs_wait do_read_server_finished(SSL *c)
{
    struct hs *hs = c->hs;
    enum hs_wait w = msg_read_finished(c, &hs->server_hs);
    if (w != HS_CONTINUE)
        return w;
    /* The server's flight is read: anything after it is post-handshake, at 1-RTT. */
    if (!set_state(c, CS_SEND_END_OF_EARLY_DATA) || !sec_derive_application(c))
        return HS_ERROR;
    return HS_CONTINUE;
}

/*
 * §4.5: over TCP, once the server accepted 0-RTT, EndOfEarlyData closes the early data, under
 * the early keys, before the client's second flight. QUIC has none (RFC 9001 §8.3).
 */
static enum hs_wait do_send_end_of_early_data(SSL *c)
{
    enum client_state after = c->hs->cert_requested ? CS_SEND_CLIENT_CERTIFICATE
                                                    : CS_SEND_CLIENT_FINISHED;
    if (!c->tcp || c->early_data_status != SSL_EARLY_DATA_ACCEPTED)
        return next(c, after, HS_CONTINUE);
    size_t at = msg_begin(c, ssl_encryption_early_data, HT_END_OF_EARLY_DATA);
    if (!msg_end(c, at))
        return HS_ERROR;
    return next(c, after, HS_CONTINUE);
}

/* §4.4.2: our certificate if we have one the server can accept, else an empty one. */
static enum hs_wait do_send_client_certificate(SSL *c)
{
    struct hs *hs = c->hs;
    uint16_t scheme = 0;
    int have;
    enum hs_wait r = msg_client_certificate(c, &hs->cert, &scheme, &have);
    if (r != HS_CONTINUE)
        return r; /* on HS_WANT_X509_LOOKUP the state stays: called again */
    int ok = msg_write_certificate(c, hs->cert_request_context.buf, hs->cert_request_context.len,
                                   have ? &hs->cert : NULL) &&
             (!have || msg_write_certificate_verify(c, hs->cert.pkey, scheme));
    if (!ok)
        return HS_ERROR;
    return next(c, CS_SEND_CLIENT_FINISHED, HS_CONTINUE);
}

/* §4.4.4: our Finished ends the handshake; resumption_master_secret follows it (§7.1). */
static enum hs_wait do_send_client_finished(SSL *c)
{
    if (!msg_write_finished(c, &c->hs->client_hs) || !sec_derive_resumption(c))
        return HS_ERROR;
    return next(c, CS_DONE, HS_DONE);
}

/* RFC 8446 Appendix A.1: the client state machine, one function per state. */
enum hs_wait client_step(SSL *c)
{
    switch ((enum client_state)c->hs->state) {
    case CS_SEND_CLIENT_HELLO:
        return do_send_client_hello(c);
    case CS_READ_SERVER_HELLO:
        return do_read_server_hello(c);
    case CS_READ_ENCRYPTED_EXTENSIONS:
        return do_read_encrypted_extensions(c);
    case CS_READ_CERTIFICATE_REQUEST:
        return do_read_certificate_request(c);
    case CS_READ_SERVER_CERTIFICATE:
        return do_read_server_certificate(c);
    case CS_READ_SERVER_CERTIFICATE_VERIFY:
        return do_read_server_certificate_verify(c);
    case CS_READ_SERVER_FINISHED:
        return do_read_server_finished(c);
    case CS_SEND_END_OF_EARLY_DATA:
        return do_send_end_of_early_data(c);
    case CS_SEND_CLIENT_CERTIFICATE:
        return do_send_client_certificate(c);
    case CS_SEND_CLIENT_FINISHED:
        return do_send_client_finished(c);
    case CS_DONE:
        return HS_DONE;
    }
    return hs_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_BAD_HANDSHAKE_STATE);
}
