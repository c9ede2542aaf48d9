/*
 * The server state machine (RFC 8446 §2 and §4.1.1), one function per
 * state: ClientHello (and the second one after HelloRetryRequest), then the
 * whole server flight, then the client's Finished.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <string.h>

enum server_state {
    SS_READ_CLIENT_HELLO,
    SS_CHOOSE_CERTIFICATE,
    SS_SEND_HELLO_RETRY_REQUEST,
    SS_SEND_SERVER_HELLO,
    SS_SEND_ENCRYPTED_EXTENSIONS,
    SS_SEND_CERTIFICATE_REQUEST,
    SS_SEND_CERTIFICATE,
    SS_SEND_CERTIFICATE_VERIFY,
    SS_SEND_FINISHED,
    SS_READ_END_OF_EARLY_DATA,
    SS_READ_CLIENT_CERTIFICATE,
    SS_READ_CLIENT_CERTIFICATE_VERIFY,
    SS_READ_CLIENT_FINISHED,
    SS_DONE,
};

/*
 * RFC 9001 §4.1.4 (RFC 8446 §2): the levels each state reads and writes at. Reads: Initial until
 * the ServerHello is sent, Handshake until the client's Finished, then 1-RTT. Writes (alerts
 * too): Initial up to the ServerHello, Handshake once its keys exist, 1-RTT once our Finished is
 * sent (0.5-RTT data).
 */
static const struct hs_levels levels[SS_DONE + 1] = {
    [SS_READ_CLIENT_HELLO] = {HS_INITIAL, HS_INITIAL},
    [SS_CHOOSE_CERTIFICATE] = {HS_INITIAL, HS_INITIAL},
    [SS_SEND_HELLO_RETRY_REQUEST] = {HS_INITIAL, HS_INITIAL},
    [SS_SEND_SERVER_HELLO] = {HS_INITIAL, HS_INITIAL},
    [SS_SEND_ENCRYPTED_EXTENSIONS] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [SS_SEND_CERTIFICATE_REQUEST] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [SS_SEND_CERTIFICATE] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [SS_SEND_CERTIFICATE_VERIFY] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [SS_SEND_FINISHED] = {HS_HANDSHAKE, HS_HANDSHAKE},
    [SS_READ_END_OF_EARLY_DATA] = {HS_EARLY, HS_APPLICATION},
    [SS_READ_CLIENT_CERTIFICATE] = {HS_HANDSHAKE, HS_APPLICATION},
    [SS_READ_CLIENT_CERTIFICATE_VERIFY] = {HS_HANDSHAKE, HS_APPLICATION},
    [SS_READ_CLIENT_FINISHED] = {HS_HANDSHAKE, HS_APPLICATION},
    [SS_DONE] = {HS_APPLICATION, HS_APPLICATION},
};

/* Moves to state s and its levels; fails if input is left at the old read level (§5.1). */
static QTLS_MUST_CHECK int set_state(SSL *c, enum server_state s)
{
    return hs_set_state(c, s, levels[s]);
}

/* set_state, then w: what the state function asks of the driver. */
static enum hs_wait next(SSL *c, enum server_state s, enum hs_wait w)
{
    return set_state(c, s) ? w : HS_ERROR;
}

/*
 * Fingerprint of a ClientHello for the §4.1.2 rule that the second one
 * equals the first except for the extensions QTLS_EXTENSIONS marks (internal.h).
 */
static int fingerprint(SSL *c, const struct client_hello *ch, uint8_t out[32])
{
    struct wr w;
    struct rd list = ch->exts, body;
    uint16_t type;
    int ok;
    wr_init(&w);
    wr_bytes(&w, ch->random.p, ch->random.n);
    wr_bytes(&w, ch->session_id.p, ch->session_id.n);
    wr_u16(&w, (uint16_t)ch->suites.n);
    wr_bytes(&w, ch->suites.p, ch->suites.n);
    while (rd_u16(&list, &type) && rd_vec16(&list, &body)) {
        if (ext_may_change_after_hrr(type))
            continue;
        wr_u16(&w, type);
        wr_u16(&w, (uint16_t)body.n);
        wr_bytes(&w, body.p, body.n);
    }
    ok = wr_ok(&w) && crypto_digest(QTLS_SHA256, w.buf, w.len, out);
    wr_free(&w);
    return ok || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
}

static int parse_client_hello(SSL *c, struct rd body, struct client_hello *ch)
{
    uint8_t method;
    if (!rd_u16(&body, &ch->legacy_version) || !rd_bytes(&body, 32, &ch->random) ||
        !rd_vec8(&body, &ch->session_id) || !rd_vec16(&body, &ch->suites) ||
        !rd_vec8(&body, &ch->compression) || !rd_vec16(&body, &ch->exts) || !rd_empty(&body) ||
        ch->session_id.n > 32 || ch->suites.n == 0 || ch->suites.n % 2 != 0)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* RFC 9001 §8.4: no middlebox compatibility mode in QUIC; over TCP it is echoed (§4.1.3). */
    if (!rd_empty(&ch->session_id) && !c->tcp)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_COMPATIBILITY_MODE);
    if (!rd_empty(&ch->session_id))
        memcpy(c->hs->session_id, ch->session_id.p, ch->session_id.n);
    c->hs->session_id_len = (uint8_t)ch->session_id.n;
    /* §4.1.2: exactly the "null" compression method. */
    struct rd comp = ch->compression;
    if (!rd_u8(&comp, &method) || method != 0 || !rd_empty(&comp))
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_DATA);
    /* The rows split the extensions and hand the hello logic its part (hs->hello). */
    return ext_read_client_hello(c, ch->exts, &ch->e);
}

/* §4.2.1: the client must list TLS 1.3 in supported_versions. */
static int check_versions(SSL *c)
{
    struct rd list = c->hs->hello.versions;
    uint16_t v;
    if (!hello_has(c, EXT_SUPPORTED_VERSIONS))
        return qtls_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL);
    while (rd_u16(&list, &v))
        if (v == TLS1_3_VERSION)
            return 1;
    return qtls_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL);
}

/* Client preference unless SSL_OP_CIPHER_SERVER_PREFERENCE, as OpenSSL. */
static int choose_suite(SSL *c, struct rd suites)
{
    int server_pref = (c->options & SSL_OP_CIPHER_SERVER_PREFERENCE) != 0;
    const SSL_CIPHER *best = NULL;
    size_t best_rank = SIZE_MAX;
    uint16_t id;
    for (size_t client_rank = 0; rd_u16(&suites, &id); client_rank++) {
        for (size_t i = 0; i < c->suites.n; i++) {
            size_t rank = server_pref ? i : client_rank;
            if (suite_at(&c->suites, i)->tls_id == id && rank < best_rank) {
                best = suite_at(&c->suites, i);
                best_rank = rank;
            }
        }
    }
    if (best == NULL)
        return qtls_fail(c, SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_CIPHER);
    /* After HelloRetryRequest the suite is fixed (§4.1.4). */
    if (c->cipher != NULL && c->cipher != best)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO);
    c->cipher = best;
    return 1;
}

static int list_has_u16(struct rd list, uint16_t v)
{
    uint16_t x;
    while (rd_u16(&list, &x))
        if (x == v)
            return 1;
    return 0;
}

/* The server's group list cut into OpenSSL 3.5's tuples: [from, to) is the tuple at `from`. */
static size_t tuple_end(const SSL *c, size_t from)
{
    size_t to = from + 1;
    while (to < c->n_groups && !(c->group_tuples & (1u << to)))
        to++;
    return to;
}

/* Group gid is in our tuple [from, to) and the security level allows it. */
static int in_tuple(const SSL *c, size_t from, size_t to, uint16_t gid)
{
    for (size_t i = from; i < to; i++)
        if (c->groups[i] == gid)
            return seclevel_group_ok(c, gid);
    return 0;
}

/* The client's key share for gid, if it sent one. */
static int share_for(struct rd shares, uint16_t gid, struct rd *share)
{
    struct rd ke;
    uint16_t g;
    while (rd_u16(&shares, &g) && rd_vec16(&shares, &ke))
        if (g == gid) {
            *share = ke;
            return 1;
        }
    return 0;
}

/*
 * §4.2.8 in one tuple: a key share the client sent for a group of the tuple, in the client's
 * order (OpenSSL 3.0's rule, and 3.5's by default), or in ours when the server prefers its own.
 */
static const struct group *tuple_share(const SSL *c, size_t from, size_t to, int ours_first,
                                       struct rd *share)
{
    struct rd shares = c->hs->hello.shares, ke;
    uint16_t gid;
    for (size_t i = from; ours_first && i < to; i++)
        if (seclevel_group_ok(c, c->groups[i]) && share_for(shares, c->groups[i], share))
            return group_by_id(c->groups[i]);
    while (!ours_first && rd_u16(&shares, &gid) && rd_vec16(&shares, &ke))
        if (in_tuple(c, from, to, gid)) {
            *share = ke;
            return group_by_id(gid);
        }
    return NULL;
}

/* §4.1.4 in one tuple: a group of the tuple the client supports, for a HelloRetryRequest. */
static const struct group *tuple_retry(const SSL *c, size_t from, size_t to, int ours_first)
{
    struct rd groups = c->hs->hello.groups;
    uint16_t gid;
    for (size_t i = from; ours_first && i < to; i++)
        if (list_has_u16(groups, c->groups[i]) && seclevel_group_ok(c, c->groups[i]))
            return group_by_id(c->groups[i]);
    while (!ours_first && rd_u16(&groups, &gid))
        if (in_tuple(c, from, to, gid))
            return group_by_id(gid);
    return NULL;
}

/*
 * §4.2.7/§4.2.8, as OpenSSL chooses. Tuple by tuple (OpenSSL 3.5's '/'; a list without them is
 * one): a key share the client sent in the tuple, else a group of the tuple it supports, through
 * a HelloRetryRequest; so a hybrid the client sent a share for wins over a classical group in
 * the same tuple whatever the server's order, and a later tuple waits for the earlier ones.
 * Within a tuple the client's order decides unless SSL_OP_CIPHER_SERVER_PREFERENCE is set on
 * a list with tuples. A list without tuples keeps OpenSSL 3.0's exact rule: shares in the
 * client's order, the retry's group in ours. *share is set when a usable share exists; the
 * rows checked both lists are well formed.
 */
static int choose_group(SSL *c, struct rd *share, int *need_hrr)
{
    struct rd groups = c->hs->hello.groups, shares = c->hs->hello.shares;
    struct rd seen, ke;
    uint16_t gid;
    if (!hello_has(c, EXT_SUPPORTED_GROUPS) || !hello_has(c, EXT_KEY_SHARE))
        return qtls_fail(c, SSL_AD_MISSING_EXTENSION, QTLS_R_MISSING_EXTENSION);
    /* No group twice, each one listed in supported_groups. */
    for (seen = shares; rd_u16(&seen, &gid) && rd_vec16(&seen, &ke);) {
        struct rd rest = seen;
        uint16_t other;
        while (rd_u16(&rest, &other) && rd_vec16(&rest, &ke))
            if (other == gid)
                return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
        if (!list_has_u16(groups, gid))
            return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
    }
    int tuples = c->group_tuples != 0;
    int ours_first = tuples && (c->options & SSL_OP_CIPHER_SERVER_PREFERENCE);
    for (size_t from = 0, to; from < c->n_groups; from = to) {
        to = tuple_end(c, from);
        const struct group *g = tuple_share(c, from, to, ours_first, share);
        *need_hrr = g == NULL;
        if (g == NULL)
            g = tuple_retry(c, from, to, ours_first || !tuples);
        if (g != NULL) {
            c->hs->kex_group = g;
            return 1;
        }
    }
    return qtls_fail(c, SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_GROUPS);
}

/* A second ClientHello must answer our HelloRetryRequest exactly (§4.1.2, §4.2.8). */
static int check_second_client_hello(SSL *c, const struct client_hello *ch, int need_hrr,
                                     const struct group *hrr_group)
{
    uint8_t fp[32];
    struct rd shares = c->hs->hello.shares;
    uint16_t gid;
    struct rd ke;
    if (need_hrr || !rd_u16(&shares, &gid) ||
        !rd_vec16(&shares, &ke) || !rd_empty(&shares) || gid != hrr_group->id ||
        c->hs->kex_group != hrr_group)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
    if (hello_has(c, EXT_EARLY_DATA) || hello_has(c, EXT_COOKIE))
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO);
    if (!fingerprint(c, ch, fp))
        return 0;
    if (CRYPTO_memcmp(fp, c->hs->ch1_digest, sizeof(fp)) != 0)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO);
    return 1;
}

/* The ClientHello's share, kept until ServerHello derives the secret. */
static int keep_peer_share(SSL *c, struct rd share)
{
    struct hs *hs = c->hs;
    if (share.n != hs->kex_group->share_len)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
    wr_reset(&hs->peer_share);
    wr_bytes(&hs->peer_share, share.p, share.n);
    return wr_ok(&hs->peer_share) || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
}

/*
 * After the ClientHello (and the servername callback, which may have switched the context):
 * the certificate callback may set or change certificates, then the pair the client's
 * signature_algorithms can verify is picked (certset.c), then the OCSP status callback runs
 * for that certificate (§4.4.2.2, §4.4.2.1). A resumed handshake sends no certificate
 * (RFC 8446 §2.2), and OpenSSL runs no certificate callback then either.
 */
static enum hs_wait do_choose_certificate(SSL *c)
{
    struct hs *hs = c->hs;
    if (hs->resumed)
        return next(c, SS_SEND_SERVER_HELLO, HS_CONTINUE);
    enum hs_wait r = certset_run_cb(c);
    if (r != HS_CONTINUE) /* on retry the state stays: SSL_do_handshake runs the callback again */
        return r;
    const struct cert_set *set = certset_of(c);
    int any = 0;
    for (int i = 0; i < CERT_SLOTS; i++)
        any |= set->slot[i].cert != NULL && set->slot[i].pkey != NULL;
    if (!any)
        return hs_fail(c, SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_CERTIFICATE_SET);
    if (!certset_choose(c, set, hs->peer_sigschemes, hs->n_peer_sigschemes, &hs->cert,
                        &hs->sigscheme)) {
        if (c->alert != 0)
            return HS_ERROR;
        return hs_fail(c, SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM);
    }
    if (!ocsp_server_run_cb(c))
        return HS_ERROR;
    return next(c, SS_SEND_SERVER_HELLO, HS_CONTINUE);
}

/*
 * §4.1.2: the ClientHello, first or second; the version (§4.2.1), suite, group and key share
 * (§4.2.7, §4.2.8) are chosen here, a HelloRetryRequest decided (§4.1.4), a PSK taken (§4.2.11).
 */
static enum hs_wait do_read_client_hello(SSL *c)
{
    struct hs *hs = c->hs;
    struct rd body, whole, share = {NULL, 0};
    struct client_hello ch;
    uint8_t type;
    int need_hrr = 0;
    enum hs_wait r = msg_read(c, &type, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!msg_expect(c, type, HT_CLIENT_HELLO) || !parse_client_hello(c, body, &ch))
        return HS_ERROR;
    r = client_hello_run_cb(c, &ch);
    if (r != HS_CONTINUE)
        return r; /* on HS_WANT_CLIENT_HELLO_CB the message stays unread */
    if (!cipher_lists_keep_raw(c, ch.suites)) /* SSL_get0_raw_cipherlist, as after OpenSSL's cb */
        return HS_ERROR;
    if (!check_versions(c) || !choose_suite(c, ch.suites))
        return HS_ERROR;
    const struct group *hrr_group = hs->kex_group;
    if (!choose_group(c, &share, &need_hrr))
        return HS_ERROR;
    if (hs->hrr_done && !check_second_client_hello(c, &ch, need_hrr, hrr_group))
        return HS_ERROR;
    if (!need_hrr && !keep_peer_share(c, share))
        return HS_ERROR;
    if (!hs->hrr_done)
        memcpy(c->client_random, ch.random.p, sizeof(c->client_random));
    /*
     * SNI, ALPN, transport parameters, the CA list and the rest are decided once, on the first
     * ClientHello, as quictls does: SSL_get0_alpn_selected already answers when the
     * HelloRetryRequest is handed to add_handshake_data. The fingerprint check makes the second
     * ClientHello's the same (§4.1.2).
     */
    if (!ext_parse_client_hello(c, &ch.e, ch.exts, !hs->hrr_done) ||
        !transcript_set_hash(&hs->transcript, c->cipher->hash))
        return HS_ERROR;
    if (need_hrr) {
        if (!fingerprint(c, &ch, hs->ch1_digest))
            return HS_ERROR;
        if (!c->early_data_enabled || c->max_early_data == 0)
            c->early_data_reason = ssl_early_data_disabled;
        if (hello_has(c, EXT_EARLY_DATA)) { /* §4.2.10: no 0-RTT after HelloRetryRequest */
            c->early_data_status = SSL_EARLY_DATA_REJECTED;
            if (c->early_data_reason == ssl_early_data_unknown)
                c->early_data_reason = ssl_early_data_hello_retry_request;
        }
    } else if (!psk_server_select(c, &whole)) {
        return HS_ERROR;
    }
    if (!msg_consume(c, &whole))
        return HS_ERROR;
    c->version = TLS1_3_VERSION;
    if (!hs_ends_record(c))
        return HS_ERROR;
    return next(c, need_hrr ? SS_SEND_HELLO_RETRY_REQUEST : SS_CHOOSE_CERTIFICATE, HS_CONTINUE);
}

/* ServerHello and HelloRetryRequest: struct ServerHello (§4.1.3). */
static size_t write_server_hello_head(SSL *c, const uint8_t *random)
{
    struct wr *w = &c->hs->out;
    size_t at = msg_begin(c, ssl_encryption_initial, HT_SERVER_HELLO);
    wr_u16(w, TLS1_2_VERSION);
    wr_bytes(w, random, 32);
    wr_u8(w, c->hs->session_id_len); /* legacy_session_id_echo (empty in QUIC) */
    wr_bytes(w, c->hs->session_id, c->hs->session_id_len);
    wr_u16(w, c->cipher->tls_id);
    wr_u8(w, 0);
    return at;
}

/* §4.1.4: HelloRetryRequest names the group for the second ClientHello's key share. */
static enum hs_wait do_send_hello_retry_request(SSL *c)
{
    struct hs *hs = c->hs;
    struct wr *w = &hs->out;
    if (!transcript_hrr_restart(&hs->transcript))
        return HS_ERROR;
    size_t at = write_server_hello_head(c, msg_hrr_random);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write(c, MSG_HRR, w)) /* supported_versions, key_share's selected_group */
        return HS_ERROR;
    wr_close_vec(w, exts, 2);
    if (!msg_end(c, at))
        return HS_ERROR;
    hs->hrr_done = 1;
    return next(c, SS_READ_CLIENT_HELLO, HS_FLUSH); /* a flight of its own (§4.1.4) */
}

/* §4.1.3 with §4.2.8: our share and the (EC)DHE secret; then the handshake secrets (§7.1). */
static enum hs_wait do_send_server_hello(SSL *c)
{
    struct hs *hs = c->hs;
    struct wr *w = &hs->out;
    uint8_t random[32], ecdhe[CRYPTO_KEX_MAX_SECRET];
    if (!crypto_random(random, sizeof(random)))
        return HS_ERROR;
    wr_reset_public(&hs->my_share);
    size_t n = crypto_kex_respond(hs->kex_group, hs->peer_share.buf, hs->peer_share.len,
                                  &hs->my_share, ecdhe, sizeof(ecdhe));
    wr_free(&hs->peer_share);
    if (n == 0 && crypto_kex_bad_share())
        return hs_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE);
    if (n == 0 || !wr_ok(&hs->my_share))
        return hs_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    c->group_id = hs->kex_group->id;
    size_t at = write_server_hello_head(c, random);
    size_t exts = wr_open_vec(w, 2);
    /* supported_versions, key_share, pre_shared_key when resuming */
    int ok = ext_write(c, MSG_SH, w);
    wr_close_vec(w, exts, 2);
    /* ServerHello goes out at the initial level before the handshake keys are installed. */
    ok = ok && msg_end(c, at) && msg_flush_output(c) &&
         set_state(c, SS_SEND_ENCRYPTED_EXTENSIONS) &&
         sec_derive_handshake(c, ecdhe, n);
    OPENSSL_cleanse(ecdhe, sizeof(ecdhe));
    return ok ? HS_CONTINUE : HS_ERROR;
}

/*
 * §4.3.1, with RFC 9001 §8.2 transport parameters. Built after the handshake secrets were
 * delivered: the QUIC stack may set its parameters then.
 */
static enum hs_wait do_send_encrypted_extensions(SSL *c)
{
    struct wr *w = &c->hs->out;
    size_t at = msg_begin(c, ssl_encryption_handshake, HT_ENCRYPTED_EXTENSIONS);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write(c, MSG_EE, w)) /* the rows, then the application's */
        return HS_ERROR;
    wr_close_vec(w, exts, 2);
    if (!msg_end(c, at))
        return HS_ERROR;
    if (c->hs->resumed) /* authenticated by the PSK (§2.2) */
        return next(c, SS_SEND_FINISHED, HS_CONTINUE);
    /* SSL_VERIFY_POST_HANDSHAKE: asked later, with SSL_verify_client_post_handshake */
    if ((c->verify_mode & SSL_VERIFY_PEER) && !(c->verify_mode & SSL_VERIFY_POST_HANDSHAKE))
        return next(c, SS_SEND_CERTIFICATE_REQUEST, HS_CONTINUE);
    return next(c, SS_SEND_CERTIFICATE, HS_CONTINUE);
}

/* §4.3.2: an empty context, the schemes we accept and the CAs we name (ca_list.c). */
static enum hs_wait do_send_certificate_request(SSL *c)
{
    struct wr *w = &c->hs->out;
    size_t at = msg_begin(c, ssl_encryption_handshake, HT_CERTIFICATE_REQUEST);
    wr_u8(w, 0);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write(c, MSG_CR, w)) /* certificate_authorities, signature_algorithms,
                                     compress_certificate */
        return HS_ERROR;
    wr_close_vec(w, exts, 2);
    if (!msg_end(c, at))
        return HS_ERROR;
    c->hs->cert_requested = 1;
    return next(c, SS_SEND_CERTIFICATE, HS_CONTINUE);
}

/* §4.4.2: the chain of the pair do_choose_certificate picked. */
static enum hs_wait do_send_certificate(SSL *c)
{
    if (!msg_write_certificate(c, NULL, 0, &c->hs->cert))
        return HS_ERROR;
    return next(c, SS_SEND_CERTIFICATE_VERIFY, HS_CONTINUE);
}

/* §4.4.3: signed with the scheme chosen from the client's signature_algorithms (§4.2.3). */
static enum hs_wait do_send_certificate_verify(SSL *c)
{
    if (!msg_write_certificate_verify(c, c->hs->cert.pkey, c->hs->sigscheme))
        return HS_ERROR;
    return next(c, SS_SEND_FINISHED, HS_CONTINUE);
}

/*
 * §4.4.4: our Finished ends our flight. After it the application keys exist (§7.1); the 1-RTT
 * write key allows 0.5-RTT data.
 */
/* The client's second flight: its Certificate if we asked for one, else its Finished. */
static enum server_state after_early_data(const SSL *c)
{
    return c->hs->cert_requested ? SS_READ_CLIENT_CERTIFICATE : SS_READ_CLIENT_FINISHED;
}

static enum hs_wait do_send_finished(SSL *c)
{
    struct hs *hs = c->hs;
    if (!msg_write_finished(c, &hs->server_hs) || !msg_flush_output(c) ||
        !sec_derive_application(c))
        return HS_ERROR;
    /* The server's flight ends with its Finished; over TCP accepted early data comes next. */
    if (c->tcp && c->early_data_status == SSL_EARLY_DATA_ACCEPTED)
        return next(c, SS_READ_END_OF_EARLY_DATA, HS_FLUSH);
    return next(c, after_early_data(c), HS_FLUSH);
}

/* §4.5: over TCP the client's EndOfEarlyData (an empty body) ends its early data. */
static enum hs_wait do_read_end_of_early_data(SSL *c)
{
    struct rd body, whole;
    enum hs_wait r = msg_read_expected(c, HT_END_OF_EARLY_DATA, &body, &whole);
    if (r != HS_CONTINUE)
        return r;
    if (!rd_empty(&body))
        return hs_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!msg_consume(c, &whole))
        return HS_ERROR;
    return next(c, after_early_data(c), HS_CONTINUE);
}

/* §4.4.2: the client's chain, which may be empty (§4.4.2.4). */
static enum hs_wait do_read_client_certificate(SSL *c)
{
    struct rd whole;
    enum hs_wait r = msg_read_certificate(c, 1, &whole); /* or CompressedCertificate */
    if (r != HS_CONTINUE)
        return r;
    if (c->peer_cert == NULL) {
        if (c->verify_mode & SSL_VERIFY_FAIL_IF_NO_PEER_CERT) /* §4.4.2.4 */
            return hs_fail(c, SSL_AD_CERTIFICATE_REQUIRED,
                           SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE);
    } else if (!cert_verify_peer_chain(c, c->peer_chain)) {
        return HS_ERROR;
    }
    if (!msg_consume(c, &whole))
        return HS_ERROR;
    enum server_state to =
        c->peer_cert == NULL ? SS_READ_CLIENT_FINISHED : SS_READ_CLIENT_CERTIFICATE_VERIFY;
    return next(c, to, HS_CONTINUE);
}

/* §4.4.3: the client proves its certificate's key. */
static enum hs_wait do_read_client_certificate_verify(SSL *c)
{
    enum hs_wait w = msg_read_certificate_verify(c);
    if (w != HS_CONTINUE)
        return w;
    return next(c, SS_READ_CLIENT_FINISHED, HS_CONTINUE);
}

/* §4.4.4: the client's Finished; then resumption_master_secret (§7.1) and tickets (§4.6.1). */
static enum hs_wait do_read_client_finished(SSL *c)
{
    struct hs *hs = c->hs;
    enum hs_wait w = msg_read_finished(c, &hs->client_hs);
    if (w != HS_CONTINUE)
        return w;
    /* The client's Finished is read: anything after it is post-handshake, at 1-RTT. */
    /* No resumption secret where no ticket can ever be sent (§4.2.9, SSL_OP_NO_TICKET). */
    int tickets_possible = c->hs->psk_dhe_ke && !(c->options & SSL_OP_NO_TICKET);
    if (!set_state(c, SS_DONE) || (tickets_possible && !sec_derive_resumption(c)) ||
        !nst_server_write_tickets(c))
        return HS_ERROR;
    /*
     * SSL_new_session_ticket may ask for more tickets after the handshake (callbacks.c), so the
     * secret stays until SSL_free wipes it, as in OpenSSL; unless no ticket can ever be sent.
     */
    if (!c->tickets_allowed || (c->options & SSL_OP_NO_TICKET))
        kept_secret_wipe(&c->resumption_secret);
    return HS_DONE;
}

/* RFC 8446 Appendix A.2: the server state machine, one function per state. */
enum hs_wait server_step(SSL *c)
{
    switch ((enum server_state)c->hs->state) {
    case SS_READ_CLIENT_HELLO:
        return do_read_client_hello(c);
    case SS_CHOOSE_CERTIFICATE:
        return do_choose_certificate(c);
    case SS_SEND_HELLO_RETRY_REQUEST:
        return do_send_hello_retry_request(c);
    case SS_SEND_SERVER_HELLO:
        return do_send_server_hello(c);
    case SS_SEND_ENCRYPTED_EXTENSIONS:
        return do_send_encrypted_extensions(c);
    case SS_SEND_CERTIFICATE_REQUEST:
        return do_send_certificate_request(c);
    case SS_SEND_CERTIFICATE:
        return do_send_certificate(c);
    case SS_SEND_CERTIFICATE_VERIFY:
        return do_send_certificate_verify(c);
    case SS_SEND_FINISHED:
        return do_send_finished(c);
    case SS_READ_END_OF_EARLY_DATA:
        return do_read_end_of_early_data(c);
    case SS_READ_CLIENT_CERTIFICATE:
        return do_read_client_certificate(c);
    case SS_READ_CLIENT_CERTIFICATE_VERIFY:
        return do_read_client_certificate_verify(c);
    case SS_READ_CLIENT_FINISHED:
        return do_read_client_finished(c);
    case SS_DONE:
        return HS_DONE;
    }
    return hs_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_BAD_HANDSHAKE_STATE);
}
