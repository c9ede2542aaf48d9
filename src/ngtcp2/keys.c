/*
 * libqtls_ngtcp2: packet-protection keys (RFC 9001 §5, §6) and installing
 * them in an ngtcp2 connection, per the contracts of ngtcp2 0.12's
 * ngtcp2_crypto.h.
 *
 * Versions are those ngtcp2 0.12.1 speaks: QUIC v1 (RFC 9001), the QUIC v2
 * draft (draft-ietf-quic-v2-01, 0x709a50c4: its own salt and "quicv2 "
 * labels), and the QUIC drafts 29..32 (draft-ietf-quic-tls-29 salt).
 */
#include <string.h>

#include <openssl/crypto.h>

#include "backend.h"

/* ---- Version-specific constants ---- */

/* RFC 9001 §5.2 */
static const uint8_t salt_v1[] = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
                                  0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};
/* draft-ietf-quic-v2-01 §3.3.1 */
static const uint8_t salt_v2_draft[] = {0xa7, 0x07, 0xc2, 0x03, 0xa5, 0x9b, 0x47,
                                        0x18, 0x4a, 0x1d, 0x62, 0xca, 0x57, 0x04,
                                        0x06, 0xea, 0x7a, 0xe3, 0xe5, 0xd3};
/* draft-ietf-quic-tls-29 §5.2 */
static const uint8_t salt_draft[] = {0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97,
                                     0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99};

struct qn_labels {
    const char *key, *iv, *hp;
};

static const struct qn_labels labels_v1 = {"quic key", "quic iv", "quic hp"};
static const struct qn_labels labels_v2_draft = {"quicv2 key", "quicv2 iv", "quicv2 hp"};

static const struct qn_labels *labels_for(uint32_t version)
{
    return version == NGTCP2_PROTO_VER_V2_DRAFT ? &labels_v2_draft : &labels_v1;
}

/* ---- Secrets and keys ---- */

int ngtcp2_crypto_derive_initial_secrets(uint32_t version, uint8_t *rx_secret, uint8_t *tx_secret,
                                         uint8_t *initial_secret, const ngtcp2_cid *client_dcid,
                                         ngtcp2_crypto_side side)
{
    uint8_t buf[NGTCP2_CRYPTO_INITIAL_SECRETLEN];
    const uint8_t *salt = salt_draft;
    ngtcp2_crypto_ctx ctx;
    uint8_t *client, *server;
    int rv;

    if (version == NGTCP2_PROTO_VER_V1)
        salt = salt_v1;
    else if (version == NGTCP2_PROTO_VER_V2_DRAFT)
        salt = salt_v2_draft;
    if (initial_secret == NULL)
        initial_secret = buf;
    client = side == NGTCP2_CRYPTO_SIDE_CLIENT ? tx_secret : rx_secret;
    server = side == NGTCP2_CRYPTO_SIDE_CLIENT ? rx_secret : tx_secret;
    ngtcp2_crypto_ctx_initial(&ctx);

    /* initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id) */
    rv = ngtcp2_crypto_hkdf_extract(initial_secret, &ctx.md, client_dcid->data,
                                    client_dcid->datalen, salt, sizeof(salt_v1));
    if (rv == 0)
        rv = qn_expand_label(client, NGTCP2_CRYPTO_INITIAL_SECRETLEN, &ctx.md, initial_secret,
                             NGTCP2_CRYPTO_INITIAL_SECRETLEN, "client in");
    if (rv == 0)
        rv = qn_expand_label(server, NGTCP2_CRYPTO_INITIAL_SECRETLEN, &ctx.md, initial_secret,
                             NGTCP2_CRYPTO_INITIAL_SECRETLEN, "server in");
    OPENSSL_cleanse(buf, sizeof(buf));
    return rv;
}

size_t ngtcp2_crypto_packet_protection_ivlen(const ngtcp2_crypto_aead *aead)
{
    /* RFC 9001 §5.3: the IV is as long as the AEAD nonce, and at least 8 bytes. */
    size_t n = ngtcp2_crypto_aead_noncelen(aead);
    return n < 8 ? 8 : n;
}

int ngtcp2_crypto_derive_packet_protection_key(uint8_t *key, uint8_t *iv, uint8_t *hp,
                                               uint32_t version, const ngtcp2_crypto_aead *aead,
                                               const ngtcp2_crypto_md *md, const uint8_t *secret,
                                               size_t secretlen)
{
    const struct qn_labels *l = labels_for(version);
    size_t keylen = ngtcp2_crypto_aead_keylen(aead);
    size_t ivlen = ngtcp2_crypto_packet_protection_ivlen(aead);

    if (keylen == 0)
        return -1;
    if (qn_expand_label(key, keylen, md, secret, secretlen, l->key) != 0 ||
        qn_expand_label(iv, ivlen, md, secret, secretlen, l->iv) != 0)
        return -1;
    /* The header-protection key is as long as the packet key (§5.4.3, §5.4.4). */
    if (hp != NULL && qn_expand_label(hp, keylen, md, secret, secretlen, l->hp) != 0)
        return -1;
    return 0;
}

/*
 * ngtcp2 0.12.1 uses "quic ku" for every version, the v2 draft included, so
 * this does too: a key update with an ngtcp2 0.12 peer would fail otherwise.
 */
int ngtcp2_crypto_update_traffic_secret(uint8_t *dest, const ngtcp2_crypto_md *md,
                                        const uint8_t *secret, size_t secretlen)
{
    return qn_expand_label(dest, secretlen, md, secret, secretlen, "quic ku");
}

/* ---- Handshake, 0-RTT and 1-RTT keys from TLS secrets ---- */

/*
 * The crypto context for `level`, set in the connection on first use, and
 * the QUIC version its keys are for. NULL if the SSL has no QUIC suite.
 */
static const ngtcp2_crypto_ctx *level_ctx(ngtcp2_conn *conn, ngtcp2_crypto_level level,
                                          uint32_t *version)
{
    void *tls = ngtcp2_conn_get_tls_native_handle(conn);
    const ngtcp2_crypto_ctx *ctx;
    ngtcp2_crypto_ctx c;

    if (level == NGTCP2_CRYPTO_LEVEL_EARLY) {
        ngtcp2_conn_set_early_crypto_ctx(conn, ngtcp2_crypto_ctx_tls_early(&c, tls));
        ctx = ngtcp2_conn_get_early_crypto_ctx(conn);
        *version = ngtcp2_conn_get_client_chosen_version(conn);
    } else {
        /* The server learns the negotiated version from the client's transport parameters,
         * which qtls has parsed by the time it gives the Handshake secrets. */
        if (level == NGTCP2_CRYPTO_LEVEL_HANDSHAKE && ngtcp2_conn_is_server(conn) &&
            ngtcp2_conn_get_negotiated_version(conn) == 0 &&
            ngtcp2_crypto_set_remote_transport_params(conn, tls) != 0)
            return NULL;
        ctx = ngtcp2_conn_get_crypto_ctx(conn);
        if (ctx->aead.native_handle == NULL) {
            ngtcp2_conn_set_crypto_ctx(conn, ngtcp2_crypto_ctx_tls(&c, tls));
            ctx = ngtcp2_conn_get_crypto_ctx(conn);
        }
        *version = ngtcp2_conn_get_negotiated_version(conn);
    }
    return ctx->aead.native_handle != NULL && ctx->hp.native_handle != NULL ? ctx : NULL;
}

static int install_rx(ngtcp2_conn *conn, ngtcp2_crypto_level level, const uint8_t *secret,
                      size_t secretlen, const ngtcp2_crypto_aead_ctx *aead_ctx,
                      const uint8_t *iv, size_t ivlen, const ngtcp2_crypto_cipher_ctx *hp_ctx)
{
    switch (level) {
    case NGTCP2_CRYPTO_LEVEL_EARLY:
        return ngtcp2_conn_install_early_key(conn, aead_ctx, iv, ivlen, hp_ctx);
    case NGTCP2_CRYPTO_LEVEL_HANDSHAKE:
        return ngtcp2_conn_install_rx_handshake_key(conn, aead_ctx, iv, ivlen, hp_ctx);
    case NGTCP2_CRYPTO_LEVEL_APPLICATION:
        /* The client has the server's transport parameters once EncryptedExtensions is read. */
        if (!ngtcp2_conn_is_server(conn) &&
            ngtcp2_crypto_set_remote_transport_params(conn,
                                                      ngtcp2_conn_get_tls_native_handle(conn)))
            return -1;
        return ngtcp2_conn_install_rx_key(conn, secret, secretlen, aead_ctx, iv, ivlen, hp_ctx);
    default:
        return -1;
    }
}

static int install_tx(ngtcp2_conn *conn, ngtcp2_crypto_level level, const uint8_t *secret,
                      size_t secretlen, const ngtcp2_crypto_aead_ctx *aead_ctx,
                      const uint8_t *iv, size_t ivlen, const ngtcp2_crypto_cipher_ctx *hp_ctx)
{
    switch (level) {
    case NGTCP2_CRYPTO_LEVEL_EARLY:
        return ngtcp2_conn_install_early_key(conn, aead_ctx, iv, ivlen, hp_ctx);
    case NGTCP2_CRYPTO_LEVEL_HANDSHAKE:
        if (ngtcp2_conn_install_tx_handshake_key(conn, aead_ctx, iv, ivlen, hp_ctx) != 0)
            return -1;
        /* The server's parameters go into EncryptedExtensions, built after this callback;
         * once installed, the contexts belong to the connection even if this fails. */
        return ngtcp2_conn_is_server(conn) && qn_set_local_transport_params(conn) != 0 ? 1 : 0;
    case NGTCP2_CRYPTO_LEVEL_APPLICATION:
        return ngtcp2_conn_install_tx_key(conn, secret, secretlen, aead_ctx, iv, ivlen, hp_ctx);
    default:
        return -1;
    }
}

/*
 * Derives key, IV and header-protection key from a TLS traffic secret and
 * installs them for one direction. install() returns 0, a negative value if
 * nothing was installed (the contexts are freed here), or a positive one if
 * the keys were installed but a later step failed.
 */
static int derive_and_install(ngtcp2_conn *conn, int tx, uint8_t *key, uint8_t *iv, uint8_t *hp,
                              ngtcp2_crypto_level level, const uint8_t *secret, size_t secretlen)
{
    uint8_t keybuf[QN_MAX_KEY_LEN], ivbuf[QTLS_QUIC_IV_LEN], hpbuf[QN_MAX_KEY_LEN];
    ngtcp2_crypto_aead_ctx aead_ctx = {0};
    ngtcp2_crypto_cipher_ctx hp_ctx = {0};
    const ngtcp2_crypto_ctx *ctx;
    uint32_t version;
    size_t ivlen;
    int rv = -1;

    /* 0-RTT keys are only for the client to seal and the server to open. */
    if (level == NGTCP2_CRYPTO_LEVEL_EARLY && (ngtcp2_conn_is_server(conn) != 0) == tx)
        return 0;
    if (secret == NULL || secretlen == 0 || secretlen > QN_MAX_SECRET_LEN ||
        (ctx = level_ctx(conn, level, &version)) == NULL)
        return -1;
    key = key != NULL ? key : keybuf;
    iv = iv != NULL ? iv : ivbuf;
    hp = hp != NULL ? hp : hpbuf;
    ivlen = ngtcp2_crypto_packet_protection_ivlen(&ctx->aead);

    if (ngtcp2_crypto_derive_packet_protection_key(key, iv, hp, version, &ctx->aead, &ctx->md,
                                                   secret, secretlen) == 0 &&
        ngtcp2_crypto_aead_ctx_encrypt_init(&aead_ctx, &ctx->aead, key, ivlen) == 0 &&
        ngtcp2_crypto_cipher_ctx_encrypt_init(&hp_ctx, &ctx->hp, hp) == 0) {
        rv = tx ? install_tx(conn, level, secret, secretlen, &aead_ctx, iv, ivlen, &hp_ctx)
                : install_rx(conn, level, secret, secretlen, &aead_ctx, iv, ivlen, &hp_ctx);
    }
    if (rv < 0) {
        qn_cipher_ctx_clear(&hp_ctx);
        qn_aead_ctx_clear(&aead_ctx);
    }
    OPENSSL_cleanse(keybuf, sizeof(keybuf));
    OPENSSL_cleanse(ivbuf, sizeof(ivbuf));
    OPENSSL_cleanse(hpbuf, sizeof(hpbuf));
    return rv == 0 ? 0 : -1;
}

int ngtcp2_crypto_derive_and_install_rx_key(ngtcp2_conn *conn, uint8_t *key, uint8_t *iv,
                                            uint8_t *hp, ngtcp2_crypto_level level,
                                            const uint8_t *secret, size_t secretlen)
{
    return derive_and_install(conn, 0, key, iv, hp, level, secret, secretlen);
}

int ngtcp2_crypto_derive_and_install_tx_key(ngtcp2_conn *conn, uint8_t *key, uint8_t *iv,
                                            uint8_t *hp, ngtcp2_crypto_level level,
                                            const uint8_t *secret, size_t secretlen)
{
    return derive_and_install(conn, 1, key, iv, hp, level, secret, secretlen);
}

/* ---- Initial keys (RFC 9001 §5.2) ---- */

struct initial_keys {
    uint8_t rx_secret[NGTCP2_CRYPTO_INITIAL_SECRETLEN], tx_secret[NGTCP2_CRYPTO_INITIAL_SECRETLEN];
    uint8_t initial_secret[NGTCP2_CRYPTO_INITIAL_SECRETLEN];
    uint8_t rx_key[NGTCP2_CRYPTO_INITIAL_KEYLEN], rx_iv[NGTCP2_CRYPTO_INITIAL_IVLEN];
    uint8_t rx_hp[NGTCP2_CRYPTO_INITIAL_KEYLEN];
    uint8_t tx_key[NGTCP2_CRYPTO_INITIAL_KEYLEN], tx_iv[NGTCP2_CRYPTO_INITIAL_IVLEN];
    uint8_t tx_hp[NGTCP2_CRYPTO_INITIAL_KEYLEN];
};

struct initial_ctxs {
    ngtcp2_crypto_aead_ctx rx_aead, tx_aead;
    ngtcp2_crypto_cipher_ctx rx_hp, tx_hp;
};

/* Both directions' Initial secrets and keys, and contexts keyed with them. */
static int initial_derive(ngtcp2_conn *conn, const ngtcp2_crypto_ctx *ctx, uint32_t version,
                          const ngtcp2_cid *client_dcid, struct initial_keys *k,
                          struct initial_ctxs *c)
{
    ngtcp2_crypto_side side =
        ngtcp2_conn_is_server(conn) ? NGTCP2_CRYPTO_SIDE_SERVER : NGTCP2_CRYPTO_SIDE_CLIENT;

    memset(c, 0, sizeof(*c));
    if (client_dcid == NULL ||
        ngtcp2_crypto_derive_initial_secrets(version, k->rx_secret, k->tx_secret,
                                             k->initial_secret, client_dcid, side) != 0 ||
        ngtcp2_crypto_derive_packet_protection_key(k->rx_key, k->rx_iv, k->rx_hp, version,
                                                   &ctx->aead, &ctx->md, k->rx_secret,
                                                   sizeof(k->rx_secret)) != 0 ||
        ngtcp2_crypto_derive_packet_protection_key(k->tx_key, k->tx_iv, k->tx_hp, version,
                                                   &ctx->aead, &ctx->md, k->tx_secret,
                                                   sizeof(k->tx_secret)) != 0)
        return -1;
    if (ngtcp2_crypto_aead_ctx_decrypt_init(&c->rx_aead, &ctx->aead, k->rx_key,
                                            NGTCP2_CRYPTO_INITIAL_IVLEN) != 0 ||
        ngtcp2_crypto_cipher_ctx_encrypt_init(&c->rx_hp, &ctx->hp, k->rx_hp) != 0 ||
        ngtcp2_crypto_aead_ctx_encrypt_init(&c->tx_aead, &ctx->aead, k->tx_key,
                                            NGTCP2_CRYPTO_INITIAL_IVLEN) != 0 ||
        ngtcp2_crypto_cipher_ctx_encrypt_init(&c->tx_hp, &ctx->hp, k->tx_hp) != 0)
        return -1;
    return 0;
}

static void initial_ctxs_clear(struct initial_ctxs *c)
{
    qn_aead_ctx_clear(&c->rx_aead);
    qn_aead_ctx_clear(&c->tx_aead);
    qn_cipher_ctx_clear(&c->rx_hp);
    qn_cipher_ctx_clear(&c->tx_hp);
}

static void copy_out(uint8_t *dest, const uint8_t *src, size_t len)
{
    if (dest != NULL)
        memcpy(dest, src, len);
}

/* Hands the derived values to the caller's buffers that are not NULL, then wipes them. */
static void initial_keys_out(struct initial_keys *k, uint8_t *rx_secret, uint8_t *tx_secret,
                             uint8_t *initial_secret, uint8_t *rx_key, uint8_t *rx_iv,
                             uint8_t *rx_hp_key, uint8_t *tx_key, uint8_t *tx_iv,
                             uint8_t *tx_hp_key)
{
    copy_out(rx_secret, k->rx_secret, sizeof(k->rx_secret));
    copy_out(tx_secret, k->tx_secret, sizeof(k->tx_secret));
    copy_out(initial_secret, k->initial_secret, sizeof(k->initial_secret));
    copy_out(rx_key, k->rx_key, sizeof(k->rx_key));
    copy_out(rx_iv, k->rx_iv, sizeof(k->rx_iv));
    copy_out(rx_hp_key, k->rx_hp, sizeof(k->rx_hp));
    copy_out(tx_key, k->tx_key, sizeof(k->tx_key));
    copy_out(tx_iv, k->tx_iv, sizeof(k->tx_iv));
    copy_out(tx_hp_key, k->tx_hp, sizeof(k->tx_hp));
    OPENSSL_cleanse(k, sizeof(*k));
}

/* RFC 9001 §5.8 (v1), draft-ietf-quic-v2-01 §3.3.3, draft-ietf-quic-tls-29 §5.8. */
int qn_retry_aead_ctx(ngtcp2_crypto_aead_ctx *aead_ctx, ngtcp2_crypto_aead *aead,
                      uint32_t version)
{
    const char *key = NGTCP2_RETRY_KEY_DRAFT;
    if (version == NGTCP2_PROTO_VER_V1)
        key = NGTCP2_RETRY_KEY_V1;
    else if (version == NGTCP2_PROTO_VER_V2_DRAFT)
        key = NGTCP2_RETRY_KEY_V2_DRAFT;
    ngtcp2_crypto_aead_retry(aead);
    return ngtcp2_crypto_aead_ctx_encrypt_init(aead_ctx, aead, (const uint8_t *)key,
                                               QTLS_QUIC_IV_LEN);
}

int ngtcp2_crypto_derive_and_install_initial_key(ngtcp2_conn *conn, uint8_t *rx_secret,
                                                 uint8_t *tx_secret, uint8_t *initial_secret,
                                                 uint8_t *rx_key, uint8_t *rx_iv,
                                                 uint8_t *rx_hp_key, uint8_t *tx_key,
                                                 uint8_t *tx_iv, uint8_t *tx_hp_key,
                                                 uint32_t version, const ngtcp2_cid *client_dcid)
{
    struct initial_keys k;
    struct initial_ctxs c;
    ngtcp2_crypto_aead retry_aead;
    ngtcp2_crypto_aead_ctx retry_ctx = {0};
    ngtcp2_crypto_ctx ctx;
    int rv = -1;

    ngtcp2_crypto_ctx_initial(&ctx);
    ngtcp2_conn_set_initial_crypto_ctx(conn, &ctx);
    if (initial_derive(conn, &ctx, version, client_dcid, &k, &c) != 0)
        goto fail;
    /* A client checks the Retry Integrity Tag of a Retry it may yet receive (only one). */
    if (!ngtcp2_conn_is_server(conn) && !ngtcp2_conn_after_retry(conn) &&
        qn_retry_aead_ctx(&retry_ctx, &retry_aead, version) != 0)
        goto fail;
    if (ngtcp2_conn_install_initial_key(conn, &c.rx_aead, k.rx_iv, &c.rx_hp, &c.tx_aead, k.tx_iv,
                                        &c.tx_hp, NGTCP2_CRYPTO_INITIAL_IVLEN) != 0)
        goto fail;
    if (retry_ctx.native_handle != NULL)
        ngtcp2_conn_set_retry_aead(conn, &retry_aead, &retry_ctx);
    rv = 0;
    goto out;
fail:
    qn_aead_ctx_clear(&retry_ctx);
    initial_ctxs_clear(&c);
out:
    initial_keys_out(&k, rx_secret, tx_secret, initial_secret, rx_key, rx_iv, rx_hp_key, tx_key,
                     tx_iv, tx_hp_key);
    return rv;
}

int ngtcp2_crypto_derive_and_install_vneg_initial_key(
    ngtcp2_conn *conn, uint8_t *rx_secret, uint8_t *tx_secret, uint8_t *initial_secret,
    uint8_t *rx_key, uint8_t *rx_iv, uint8_t *rx_hp_key, uint8_t *tx_key, uint8_t *tx_iv,
    uint8_t *tx_hp_key, uint32_t version, const ngtcp2_cid *client_dcid)
{
    const ngtcp2_crypto_ctx *ctx = ngtcp2_conn_get_initial_crypto_ctx(conn);
    struct initial_keys k;
    struct initial_ctxs c;
    int rv = -1;

    if (initial_derive(conn, ctx, version, client_dcid, &k, &c) == 0 &&
        ngtcp2_conn_install_vneg_initial_key(conn, version, &c.rx_aead, k.rx_iv, &c.rx_hp,
                                             &c.tx_aead, k.tx_iv, &c.tx_hp,
                                             NGTCP2_CRYPTO_INITIAL_IVLEN) == 0)
        rv = 0;
    else
        initial_ctxs_clear(&c);
    initial_keys_out(&k, rx_secret, tx_secret, initial_secret, rx_key, rx_iv, rx_hp_key, tx_key,
                     tx_iv, tx_hp_key);
    return rv;
}

/* ---- Key update (RFC 9001 §6) ---- */

/* The next generation of one direction: its secret, key and IV, and a context keyed with it.
 * The header-protection key does not change (§6.1). */
static int next_generation(ngtcp2_conn *conn, uint8_t *secret, ngtcp2_crypto_aead_ctx *aead_ctx,
                           uint8_t *key, uint8_t *iv, const uint8_t *current, size_t secretlen)
{
    const ngtcp2_crypto_ctx *ctx = ngtcp2_conn_get_crypto_ctx(conn);
    uint32_t version = ngtcp2_conn_get_negotiated_version(conn);

    aead_ctx->native_handle = NULL;
    if (ngtcp2_crypto_update_traffic_secret(secret, &ctx->md, current, secretlen) != 0 ||
        ngtcp2_crypto_derive_packet_protection_key(key, iv, NULL, version, &ctx->aead, &ctx->md,
                                                   secret, secretlen) != 0)
        return -1;
    return ngtcp2_crypto_aead_ctx_encrypt_init(
        aead_ctx, &ctx->aead, key, ngtcp2_crypto_packet_protection_ivlen(&ctx->aead));
}

int ngtcp2_crypto_update_key(ngtcp2_conn *conn, uint8_t *rx_secret, uint8_t *tx_secret,
                             ngtcp2_crypto_aead_ctx *rx_aead_ctx, uint8_t *rx_key, uint8_t *rx_iv,
                             ngtcp2_crypto_aead_ctx *tx_aead_ctx, uint8_t *tx_key, uint8_t *tx_iv,
                             const uint8_t *current_rx_secret, const uint8_t *current_tx_secret,
                             size_t secretlen)
{
    if (secretlen == 0 || secretlen > QN_MAX_SECRET_LEN)
        return -1;
    if (next_generation(conn, rx_secret, rx_aead_ctx, rx_key, rx_iv, current_rx_secret,
                        secretlen) != 0)
        return -1;
    if (next_generation(conn, tx_secret, tx_aead_ctx, tx_key, tx_iv, current_tx_secret,
                        secretlen) != 0) {
        qn_aead_ctx_clear(rx_aead_ctx);
        return -1;
    }
    return 0;
}

int ngtcp2_crypto_update_key_cb(ngtcp2_conn *conn, uint8_t *rx_secret, uint8_t *tx_secret,
                                ngtcp2_crypto_aead_ctx *rx_aead_ctx, uint8_t *rx_iv,
                                ngtcp2_crypto_aead_ctx *tx_aead_ctx, uint8_t *tx_iv,
                                const uint8_t *current_rx_secret,
                                const uint8_t *current_tx_secret, size_t secretlen,
                                void *user_data)
{
    uint8_t rx_key[QN_MAX_KEY_LEN], tx_key[QN_MAX_KEY_LEN];
    int rv = ngtcp2_crypto_update_key(conn, rx_secret, tx_secret, rx_aead_ctx, rx_key, rx_iv,
                                      tx_aead_ctx, tx_key, tx_iv, current_rx_secret,
                                      current_tx_secret, secretlen);
    (void)user_data;
    OPENSSL_cleanse(rx_key, sizeof(rx_key));
    OPENSSL_cleanse(tx_key, sizeof(tx_key));
    return rv == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* ---- Per-packet callbacks: ngtcp2's error codes over the primitives ---- */

int ngtcp2_crypto_encrypt_cb(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                             const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                             size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                             const uint8_t *aad, size_t aadlen)
{
    return ngtcp2_crypto_encrypt(dest, aead, aead_ctx, plaintext, plaintextlen, nonce, noncelen,
                                 aad, aadlen) == 0
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* A packet that fails to open is NGTCP2_ERR_DECRYPT, which ngtcp2 counts and drops. */
int ngtcp2_crypto_decrypt_cb(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                             const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *ciphertext,
                             size_t ciphertextlen, const uint8_t *nonce, size_t noncelen,
                             const uint8_t *aad, size_t aadlen)
{
    return ngtcp2_crypto_decrypt(dest, aead, aead_ctx, ciphertext, ciphertextlen, nonce, noncelen,
                                 aad, aadlen) == 0
               ? 0
               : NGTCP2_ERR_DECRYPT;
}

int ngtcp2_crypto_hp_mask_cb(uint8_t *dest, const ngtcp2_crypto_cipher *hp,
                             const ngtcp2_crypto_cipher_ctx *hp_ctx, const uint8_t *sample)
{
    return ngtcp2_crypto_hp_mask(dest, hp, hp_ctx, sample) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}
