/*
 * The handshake driver: runs the client or server state functions, hands
 * flights to the QUIC stack, sends the one fatal alert on failure; and the
 * key-schedule steps both sides share, with secret delivery and key logging.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int hs_start(SSL *c)
{
    if (!crypto_init())
        return 0;
    /* QUIC negotiates TLS 1.3 only (RFC 9001 §4.2): bounds or options without it cannot work. */
    if ((c->max_version != 0 && c->max_version < TLS1_3_VERSION) ||
        c->min_version > TLS1_3_VERSION || (c->options & SSL_OP_NO_TLSv1_3) != 0) {
        qtls_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE);
        ERR_add_error_data(1, "QUIC needs TLS 1.3, which the protocol bounds or "
                              "SSL_OP_NO_TLSv1_3 exclude");
        return 0;
    }
    c->hs = OPENSSL_zalloc(sizeof(*c->hs));
    if (c->hs == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    transcript_init(&c->hs->transcript);
    c->phase = PHASE_HANDSHAKE;
    return 1;
}

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
    EVP_PKEY_free(hs->kex_key);
    cert_cfg_free(&hs->cert);
    OPENSSL_clear_free(hs, sizeof(*hs)); /* wipes every secret in it */
    c->hs = NULL;
}

/* Hands the packed output over and ends the flight if anything was written. */
static int end_flight(SSL *c)
{
    if (!msg_flush_output(c))
        return 0;
    if (c->hs->flight_pending) {
        c->hs->flight_pending = 0;
        return quic_flush_flight(c);
    }
    return 1;
}

static int fail_handshake(SSL *c)
{
    if (c->alert == 0)
        qtls_set_alert(c, SSL_AD_INTERNAL_ERROR);
    if (ERR_peek_error() == 0)
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
    quic_send_pending_alert(c);
    c->phase = PHASE_FAILED;
    hs_free(c);
    return -1;
}

static int drive_handshake(SSL *s);

int SSL_do_handshake(SSL *s)
{
    s->want_read = 0;
    s->want_client_hello_cb = 0;
    s->want_x509_lookup = 0;
    if (s->quic_method == NULL) {
        /* With BIOs set and no QUIC method the caller wants TLS over TCP (compat_tcp.c). */
        ERR_raise(ERR_LIB_SSL, s->rbio != NULL || s->wbio != NULL
                                   ? QTLS_R_TLS_OVER_TCP_UNSUPPORTED
                                   : QTLS_R_NO_QUIC_METHOD);
        return -1;
    }
    if (s->phase == PHASE_DONE) /* after the handshake: tickets SSL_new_session_ticket queued */
        return cb_send_queued_tickets(s) ? 1 : -1;
    /* A stale error from the caller would turn want-read into SSL_ERROR_SSL (as in libssl). */
    ERR_clear_error();
    if (s->phase == PHASE_FAILED) {
        ERR_raise(ERR_LIB_SSL, QTLS_R_HANDSHAKE_FAILED_BEFORE);
        return -1;
    }
    int ret = drive_handshake(s);
    /* OpenSSL's state machine reports every exit, want-read included. */
    cb_info(s, s->server ? SSL_CB_ACCEPT_EXIT : SSL_CB_CONNECT_EXIT, ret);
    return ret;
}

static int drive_handshake(SSL *s)
{
    if (s->phase == PHASE_BEFORE) {
        cb_info(s, SSL_CB_HANDSHAKE_START, 1);
        if (!hs_start(s))
            return fail_handshake(s);
    }
    for (;;) {
        enum hs_wait w = s->server ? server_step(s) : client_step(s);
        switch (w) {
        case HS_CONTINUE:
            continue;
        case HS_WANT_MESSAGE:
            if (!end_flight(s))
                return fail_handshake(s);
            s->want_read = 1;
            return -1;
        case HS_WANT_CLIENT_HELLO_CB:
            s->want_client_hello_cb = 1;
            return -1;
        case HS_WANT_X509_LOOKUP: /* the certificate callback asked to be called again */
            s->want_x509_lookup = 1;
            return -1;
        case HS_DONE:
            if (!end_flight(s))
                return fail_handshake(s);
            s->phase = PHASE_DONE;
            s->read_level = s->write_level = ssl_encryption_application;
            hs_free(s);
            cb_info(s, SSL_CB_HANDSHAKE_DONE, 1);
            return 1;
        case HS_ERROR:
        default:
            return fail_handshake(s);
        }
    }
}

int SSL_connect(SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        s->server = 0;
    return SSL_do_handshake(s);
}

int SSL_accept(SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        s->server = 1;
    return SSL_do_handshake(s);
}

/* ---- key schedule steps ---- */

/* NSS key log format: LABEL <client_random> <secret>, both in hex. */
void hs_keylog(SSL *c, const char *label, const struct secret *s)
{
    SSL_CTX_keylog_cb_func cb = c->ctx->keylog_cb;
    char line[64 + 1 + 64 + 1 + 2 * EVP_MAX_MD_SIZE + 1];
    if (cb == NULL)
        return;
    size_t n = (size_t)snprintf(line, sizeof(line), "%s ", label);
    for (size_t i = 0; i < sizeof(c->client_random); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%02x", c->client_random[i]);
    line[n++] = ' ';
    for (size_t i = 0; i < s->len; i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%02x", s->b[i]);
    cb(c, line);
    OPENSSL_cleanse(line, sizeof(line));
}

/* Delivers a level's pair of secrets from this endpoint's point of view. */
static int deliver(SSL *c, OSSL_ENCRYPTION_LEVEL level, const struct secret *client,
                   const struct secret *server)
{
    return c->server ? quic_set_secrets(c, level, client, server)
                     : quic_set_secrets(c, level, server, client);
}

/* RFC 8446 §7.1: handshake secret and the two handshake traffic secrets (through ServerHello). */
int hs_derive_handshake_secrets(SSL *c, const uint8_t *ecdhe, size_t ecdhe_len)
{
    struct hs *hs = c->hs;
    enum qtls_hash h = c->cipher->hash;
    uint8_t thash[EVP_MAX_MD_SIZE];
    if (hs->early_secret.len == 0 && !ks_early_secret(h, NULL, 0, &hs->early_secret))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    if (!ks_next_stage(h, &hs->early_secret, ecdhe, ecdhe_len, &hs->handshake_secret) ||
        !transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(h, &hs->handshake_secret, "c hs traffic", thash, &hs->client_hs) ||
        !ks_derive_secret(h, &hs->handshake_secret, "s hs traffic", thash, &hs->server_hs))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    secret_wipe(&hs->early_secret);
    hs_keylog(c, "CLIENT_HANDSHAKE_TRAFFIC_SECRET", &hs->client_hs);
    hs_keylog(c, "SERVER_HANDSHAKE_TRAFFIC_SECRET", &hs->server_hs);
    return deliver(c, ssl_encryption_handshake, &hs->client_hs, &hs->server_hs);
}

/* Master secret, application traffic and exporter secrets (through server Finished). */
int hs_derive_application_secrets(SSL *c)
{
    struct hs *hs = c->hs;
    enum qtls_hash h = c->cipher->hash;
    uint8_t thash[EVP_MAX_MD_SIZE];
    if (!ks_next_stage(h, &hs->handshake_secret, NULL, 0, &hs->master_secret) ||
        !transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(h, &hs->master_secret, "c ap traffic", thash, &hs->client_ap) ||
        !ks_derive_secret(h, &hs->master_secret, "s ap traffic", thash, &hs->server_ap) ||
        !ks_derive_secret(h, &hs->master_secret, "exp master", thash, &c->exporter_secret))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    secret_wipe(&hs->handshake_secret);
    hs_keylog(c, "CLIENT_TRAFFIC_SECRET_0", &hs->client_ap);
    hs_keylog(c, "SERVER_TRAFFIC_SECRET_0", &hs->server_ap);
    hs_keylog(c, "EXPORTER_SECRET", &c->exporter_secret);
    int ok = deliver(c, ssl_encryption_application, &hs->client_ap, &hs->server_ap);
    /* QUIC derives later generations itself ("quic ku"); we keep no traffic secret. */
    secret_wipe(&hs->client_ap);
    secret_wipe(&hs->server_ap);
    return ok;
}

/* resumption_master_secret (through client Finished), for tickets. */
int hs_derive_resumption_secret(SSL *c)
{
    struct hs *hs = c->hs;
    uint8_t thash[EVP_MAX_MD_SIZE];
    if (!transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(c->cipher->hash, &hs->master_secret, "res master", thash,
                          &c->resumption_secret))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    secret_wipe(&hs->master_secret);
    return 1;
}

/*
 * RFC 8446 §7.5: TLS-Exporter(label, context, length) =
 *   HKDF-Expand-Label(Derive-Secret(exporter_master_secret, label, ""),
 *                     "exporter", Hash(context), length)
 * A missing context hashes as an empty one in TLS 1.3.
 */
int SSL_export_keying_material(SSL *s, unsigned char *out, size_t olen, const char *label,
                               size_t llen, const unsigned char *context, size_t contextlen,
                               int use_context)
{
    if (s->phase != PHASE_DONE || s->cipher == NULL || s->exporter_secret.len == 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_HANDSHAKE_STATE);
        return 0;
    }
    enum qtls_hash h = s->cipher->hash;
    size_t hl = crypto_hash_len(h);
    uint8_t empty[EVP_MAX_MD_SIZE], chash[EVP_MAX_MD_SIZE], tmp[EVP_MAX_MD_SIZE];
    struct secret derived;
    if (!use_context)
        contextlen = 0;
    int ok = crypto_digest(h, NULL, 0, empty) &&
             ks_expand_label_n(h, &s->exporter_secret, (const uint8_t *)label, llen, empty, hl,
                               tmp, hl) &&
             crypto_digest(h, context, contextlen, chash);
    if (ok) {
        secret_set(&derived, tmp, hl);
        ok = ks_expand_label(h, &derived, "exporter", chash, hl, out, olen);
        secret_wipe(&derived);
    }
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return ok;
}

/* ---- after the handshake ---- */

/* One post-handshake message; the caller has read it. */
static int post_handshake_message(SSL *c, uint8_t type, struct rd body)
{
    if (type == HT_NEW_SESSION_TICKET && !c->server)
        return psk_client_process_ticket(c, body);
    return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE);
}

int SSL_process_quic_post_handshake(SSL *ssl)
{
    if (ssl->quic_method == NULL || ssl->phase != PHASE_DONE) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    struct rd m, body;
    uint8_t type;
    /* Every whole message queued, not just one (quictls/openssl#7). */
    while (quic_peek_message(ssl, &m) == 1) {
        struct rd w = m;
        if (!rd_u8(&w, &type) || !rd_vec24(&w, &body))
            break;
        if (type == HT_KEY_UPDATE) {
            qtls_fail(ssl, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED);
            break;
        }
        if (!post_handshake_message(ssl, type, body))
            break;
        cb_handshake_message(ssl, 0, m.p, m.n);
        quic_consume_message(ssl, m.n);
    }
    if (ssl->alert != 0) {
        quic_send_pending_alert(ssl);
        ssl->phase = PHASE_FAILED;
        return 0;
    }
    return 1;
}
