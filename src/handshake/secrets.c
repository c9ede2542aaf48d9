/*
 * The connection's key schedule (RFC 8446 §7.1): each stage's secrets
 * derived from the transcript, written to the key log, delivered to the QUIC
 * stack for their level (RFC 9001 §4.1.4) and wiped once passed on; the PSK
 * binders (§4.2.11.2) and the exporter (§7.5).
 *
 * Layer: below the state machines (client.c, server.c, resumption.c), which
 * call it at each key change; it calls only the pure key schedule
 * (keysched.c), crypto.c and the QUIC glue (quic.c), never back up.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <stdio.h>

/* NSS key log format: LABEL <client_random> <secret>, both in hex. */
static void keylog(SSL *c, const char *label, const struct secret *s)
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

static int internal_error(SSL *c)
{
    return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
}

/* Delivers a level's pair of secrets from this endpoint's point of view. */
static int deliver(SSL *c, OSSL_ENCRYPTION_LEVEL level, const struct secret *client,
                   const struct secret *server)
{
    return c->server ? quic_set_secrets(c, level, client, server)
                     : quic_set_secrets(c, level, server, client);
}

/* Early Secret = HKDF-Extract(0, PSK) for the PSK offered or accepted (§7.1). */
int sec_set_psk(SSL *c, enum qtls_hash h, const struct secret *psk)
{
    if (!ks_early_secret(h, psk->b, psk->len, &c->hs->early_secret))
        return internal_error(c);
    return 1;
}

/*
 * §4.2.11.2: the binder over Transcript-Hash(messages so far, partial ClientHello), the
 * partial ClientHello being `len` bytes at `partial` (up to the binders list).
 */
int sec_psk_binder(SSL *c, enum qtls_hash h, const uint8_t *partial, size_t len, uint8_t *out)
{
    struct hs *hs = c->hs;
    uint8_t thash[EVP_MAX_MD_SIZE];
    if (!transcript_hash_with(&hs->transcript, h, partial, len, thash) ||
        !ks_psk_binder(h, &hs->early_secret, thash, out))
        return internal_error(c);
    return 1;
}

/*
 * client_early_traffic_secret = Derive-Secret(Early Secret, "c e traffic", ClientHello), the
 * ClientHello being the transcript plus `ch` (the server has not consumed it yet). The client
 * writes 0-RTT with it, the server reads (RFC 9001 §4.1.4); it is wiped once delivered.
 */
int sec_derive_early(SSL *c, const uint8_t *ch, size_t ch_len)
{
    struct hs *hs = c->hs;
    uint8_t thash[EVP_MAX_MD_SIZE];
    if (!transcript_hash_with(&hs->transcript, c->cipher->hash, ch, ch_len, thash) ||
        !ks_derive_secret(c->cipher->hash, &hs->early_secret, "c e traffic", thash,
                          &hs->client_early))
        return internal_error(c);
    keylog(c, "CLIENT_EARLY_TRAFFIC_SECRET", &hs->client_early);
    int ok = c->server ? quic_set_secrets(c, ssl_encryption_early_data, &hs->client_early, NULL)
                       : quic_set_secrets(c, ssl_encryption_early_data, NULL, &hs->client_early);
    if (ok)
        secret_wipe(&hs->client_early);
    return ok;
}

/* §7.1: handshake secret and the two handshake traffic secrets (through ServerHello). */
int sec_derive_handshake(SSL *c, const uint8_t *ecdhe, size_t ecdhe_len)
{
    struct hs *hs = c->hs;
    enum qtls_hash h = c->cipher->hash;
    uint8_t thash[EVP_MAX_MD_SIZE];
    /* A full handshake's Early Secret is HKDF-Extract(0, zeros): a constant (keysched.c). */
    int ok = hs->early_secret.len == 0
                 ? ks_handshake_secret_without_psk(h, ecdhe, ecdhe_len, &hs->handshake_secret)
                 : ks_next_stage(h, &hs->early_secret, ecdhe, ecdhe_len, &hs->handshake_secret);
    if (!ok ||
        !transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(h, &hs->handshake_secret, "c hs traffic", thash, &hs->client_hs) ||
        !ks_derive_secret(h, &hs->handshake_secret, "s hs traffic", thash, &hs->server_hs))
        return internal_error(c);
    secret_wipe(&hs->early_secret);
    keylog(c, "CLIENT_HANDSHAKE_TRAFFIC_SECRET", &hs->client_hs);
    keylog(c, "SERVER_HANDSHAKE_TRAFFIC_SECRET", &hs->server_hs);
    return deliver(c, ssl_encryption_handshake, &hs->client_hs, &hs->server_hs);
}

/* §7.1: master secret, application traffic and exporter secrets (through server Finished). */
int sec_derive_application(SSL *c)
{
    struct hs *hs = c->hs;
    enum qtls_hash h = c->cipher->hash;
    uint8_t thash[EVP_MAX_MD_SIZE];
    struct secret exporter;
    if (!ks_next_stage(h, &hs->handshake_secret, NULL, 0, &hs->master_secret) ||
        !transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(h, &hs->master_secret, "c ap traffic", thash, &hs->client_ap) ||
        !ks_derive_secret(h, &hs->master_secret, "s ap traffic", thash, &hs->server_ap) ||
        !ks_derive_secret(h, &hs->master_secret, "exp master", thash, &exporter))
        return internal_error(c);
    secret_wipe(&hs->handshake_secret);
    keylog(c, "CLIENT_TRAFFIC_SECRET_0", &hs->client_ap);
    keylog(c, "SERVER_TRAFFIC_SECRET_0", &hs->server_ap);
    keylog(c, "EXPORTER_SECRET", &exporter);
    secret_keep(&c->exporter_secret, &exporter);
    secret_wipe(&exporter);
    int ok = deliver(c, ssl_encryption_application, &hs->client_ap, &hs->server_ap);
    /* QUIC derives later generations itself ("quic ku"); we keep no traffic secret. */
    secret_wipe(&hs->client_ap);
    secret_wipe(&hs->server_ap);
    return ok;
}

/* §7.1: resumption_master_secret (through client Finished), for tickets. */
int sec_derive_resumption(SSL *c)
{
    struct hs *hs = c->hs;
    uint8_t thash[EVP_MAX_MD_SIZE];
    struct secret res;
    if (!transcript_hash(&hs->transcript, thash) ||
        !ks_derive_secret(c->cipher->hash, &hs->master_secret, "res master", thash, &res))
        return internal_error(c);
    secret_wipe(&hs->master_secret);
    secret_keep(&c->resumption_secret, &res);
    secret_wipe(&res);
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
    uint8_t chash[EVP_MAX_MD_SIZE], tmp[EVP_MAX_MD_SIZE];
    struct secret derived, exporter;
    if (!use_context)
        contextlen = 0;
    secret_unkeep(&exporter, &s->exporter_secret);
    int ok = ks_expand_label_n(h, &exporter, (const uint8_t *)label, llen, crypto_empty_hash(h),
                               hl, tmp, hl) &&
             crypto_digest(h, context, contextlen, chash);
    secret_wipe(&exporter);
    if (ok) {
        secret_set(&derived, tmp, hl);
        ok = ks_expand_label(h, &derived, "exporter", chash, hl, out, olen);
        secret_wipe(&derived);
    }
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return ok;
}
