/*
 * libqtls_ngtcp2: stateless reset tokens (RFC 9000 §10.3.2), address
 * validation tokens for Retry and NEW_TOKEN (RFC 9000 §8.1.1-§8.1.4), and
 * the stateless packets a server writes before it has a connection (Retry,
 * RFC 9001 §5.8; an Initial CONNECTION_CLOSE).
 *
 * Token layout and keys follow ngtcp2 0.12's documented format:
 *
 *   token = magic (1) || AEAD ciphertext and tag || rand (32)
 *   prk = HKDF-Extract(salt = rand, ikm = secret), SHA-256
 *   key = HKDF-Expand(prk, "<kind>_token key", 16), iv = HKDF-Expand(prk, "<kind>_token iv", 12)
 *   AEAD = AES-128-GCM with nonce iv
 *
 *   Retry token (magic 0xb6): plaintext = len(odcid) || odcid padded to 20 || ts (8, big-endian);
 *     AAD = version (4, big-endian) || the client's socket address (remote_addrlen bytes, as
 *     given) || the Retry's Source Connection ID.
 *   Regular token (magic 0x36): plaintext = ts; AAD = the client's IP address (4 or 16 bytes,
 *     without the port, which changes between connections).
 *
 * Regular tokens and stateless reset tokens are interchangeable with those of
 * ngtcp2 0.12's own backends. Retry tokens are not: ngtcp2 0.12.1 writes the
 * version into its AAD and then overwrites it with the address, so its tokens
 * are not bound to the version; these are (RFC 9000 §8.1.3 lets a server
 * bind whatever it chooses). A token only ever returns to the server that
 * made it, so this matters only for a fleet mixing backends under one secret.
 */
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "backend.h"

#define RAND_LEN NGTCP2_CRYPTO_TOKEN_RAND_DATALEN
#define TOKEN_KEY_LEN 16 /* AES-128-GCM */
#define TS_LEN 8

/* ---- Stateless reset (RFC 9000 §10.3.2) ---- */

/* token = HKDF(SHA-256, ikm = static secret, salt = CID, info = "stateless_reset", 16):
 * computable by any server of the fleet from the CID alone, unguessable without the secret. */
int ngtcp2_crypto_generate_stateless_reset_token(uint8_t *token, const uint8_t *secret,
                                                 size_t secretlen, const ngtcp2_cid *cid)
{
    static const char info[] = "stateless_reset";
    ngtcp2_crypto_md md;
    return ngtcp2_crypto_hkdf(token, NGTCP2_STATELESS_RESET_TOKENLEN, ngtcp2_crypto_md_sha256(&md),
                              secret, secretlen, cid->data, cid->datalen, (const uint8_t *)info,
                              sizeof(info) - 1);
}

/* ---- Address validation tokens ---- */

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* HKDF-Expand(prk, "<kind> <what>", len), SHA-256. */
static int token_expand(uint8_t *dest, size_t destlen, const uint8_t *prk, const char *kind,
                        const char *what)
{
    char info[32];
    ngtcp2_crypto_md md;
    int n = snprintf(info, sizeof(info), "%s %s", kind, what);
    if (n < 0 || (size_t)n >= sizeof(info))
        return -1;
    return ngtcp2_crypto_hkdf_expand(dest, destlen, ngtcp2_crypto_md_sha256(&md), prk, 32,
                                     (const uint8_t *)info, (size_t)n);
}

/* An AES-128-GCM object keyed for this token's random salt, and the nonce to use with it. */
static struct qtls_quic_aead *token_aead(const uint8_t *secret, size_t secretlen,
                                         const uint8_t *rand, const char *kind,
                                         uint8_t iv[QTLS_QUIC_IV_LEN])
{
    static const uint8_t zero_iv[QTLS_QUIC_IV_LEN];
    uint8_t prk[32], key[TOKEN_KEY_LEN];
    ngtcp2_crypto_md md;
    struct qtls_quic_aead *a = NULL;

    if (ngtcp2_crypto_hkdf_extract(prk, ngtcp2_crypto_md_sha256(&md), secret, secretlen, rand,
                                   RAND_LEN) == 0 &&
        token_expand(key, sizeof(key), prk, kind, "key") == 0 &&
        token_expand(iv, QTLS_QUIC_IV_LEN, prk, kind, "iv") == 0)
        a = qtls_quic_aead_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, sizeof(key), zero_iv,
                               sizeof(zero_iv));
    OPENSSL_cleanse(prk, sizeof(prk));
    OPENSSL_cleanse(key, sizeof(key));
    return a;
}

/* Writes magic || seal(plaintext) || rand to token; its length, or -1. */
static ngtcp2_ssize token_seal(uint8_t *token, uint8_t magic, const char *kind,
                               const uint8_t *secret, size_t secretlen, const uint8_t *plaintext,
                               size_t plaintextlen, const uint8_t *aad, size_t aadlen)
{
    uint8_t rand[RAND_LEN], iv[QTLS_QUIC_IV_LEN];
    struct qtls_quic_aead *a;
    int ok;

    if (ngtcp2_crypto_random(rand, sizeof(rand)) != 0 ||
        (a = token_aead(secret, secretlen, rand, kind, iv)) == NULL)
        return -1;
    token[0] = magic;
    ok = qtls_quic_aead_seal_nonce(a, iv, aad, aadlen, plaintext, plaintextlen, token + 1);
    qtls_quic_aead_free(a);
    if (!ok)
        return -1;
    memcpy(token + 1 + plaintextlen + QTLS_QUIC_TAG_LEN, rand, sizeof(rand));
    return (ngtcp2_ssize)(1 + plaintextlen + QTLS_QUIC_TAG_LEN + sizeof(rand));
}

/* Opens a token of exactly 1 + plaintextlen + 16 + 32 bytes with the expected magic. 0 or -1. */
static int token_open(uint8_t *plaintext, size_t plaintextlen, const uint8_t *token,
                      size_t tokenlen, uint8_t magic, const char *kind, const uint8_t *secret,
                      size_t secretlen, const uint8_t *aad, size_t aadlen)
{
    uint8_t iv[QTLS_QUIC_IV_LEN];
    struct qtls_quic_aead *a;
    int ok;

    if (token == NULL || tokenlen != 1 + plaintextlen + QTLS_QUIC_TAG_LEN + RAND_LEN ||
        token[0] != magic)
        return -1;
    if ((a = token_aead(secret, secretlen, token + tokenlen - RAND_LEN, kind, iv)) == NULL)
        return -1;
    ERR_set_mark(); /* a forged token is not an error worth keeping */
    ok = qtls_quic_aead_open_nonce(a, iv, aad, aadlen, token + 1,
                                   plaintextlen + QTLS_QUIC_TAG_LEN, plaintext);
    ERR_pop_to_mark();
    qtls_quic_aead_free(a);
    return ok ? 0 : -1;
}

/* Valid from its creation until `timeout` later; a token from the future (a clock that
 * went back) is refused too. */
static int token_fresh(uint64_t gen_ts, ngtcp2_duration timeout, ngtcp2_tstamp ts)
{
    return gen_ts <= ts && ts - gen_ts < timeout ? 0 : -1;
}

/* RFC 9000 §8.1.2: a Retry token proves the address and names the original DCID. */
#define RETRY_PT_LEN (1 + NGTCP2_MAX_CIDLEN + TS_LEN)
#define RETRY_AAD_MAX (4 + sizeof(ngtcp2_sockaddr_storage) + NGTCP2_MAX_CIDLEN)

static size_t retry_aad(uint8_t *aad, uint32_t version, const ngtcp2_sockaddr *sa,
                        ngtcp2_socklen salen, const ngtcp2_cid *scid)
{
    size_t n = 0;
    aad[n++] = (uint8_t)(version >> 24);
    aad[n++] = (uint8_t)(version >> 16);
    aad[n++] = (uint8_t)(version >> 8);
    aad[n++] = (uint8_t)version;
    memcpy(aad + n, sa, (size_t)salen);
    n += (size_t)salen;
    memcpy(aad + n, scid->data, scid->datalen);
    return n + scid->datalen;
}

ngtcp2_ssize ngtcp2_crypto_generate_retry_token(uint8_t *token, const uint8_t *secret,
                                                size_t secretlen, uint32_t version,
                                                const ngtcp2_sockaddr *remote_addr,
                                                ngtcp2_socklen remote_addrlen,
                                                const ngtcp2_cid *retry_scid,
                                                const ngtcp2_cid *odcid, ngtcp2_tstamp ts)
{
    uint8_t pt[RETRY_PT_LEN] = {0}, aad[RETRY_AAD_MAX];
    size_t aadlen;

    if (remote_addrlen > sizeof(ngtcp2_sockaddr_storage) || odcid->datalen > NGTCP2_MAX_CIDLEN ||
        retry_scid->datalen > NGTCP2_MAX_CIDLEN)
        return -1;
    pt[0] = (uint8_t)odcid->datalen;
    memcpy(pt + 1, odcid->data, odcid->datalen);
    put_u64(pt + 1 + NGTCP2_MAX_CIDLEN, ts);
    aadlen = retry_aad(aad, version, remote_addr, remote_addrlen, retry_scid);
    return token_seal(token, NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY, "retry_token", secret, secretlen, pt,
                      sizeof(pt), aad, aadlen);
}

int ngtcp2_crypto_verify_retry_token(ngtcp2_cid *odcid, const uint8_t *token, size_t tokenlen,
                                     const uint8_t *secret, size_t secretlen, uint32_t version,
                                     const ngtcp2_sockaddr *remote_addr,
                                     ngtcp2_socklen remote_addrlen, const ngtcp2_cid *dcid,
                                     ngtcp2_duration timeout, ngtcp2_tstamp ts)
{
    uint8_t pt[RETRY_PT_LEN], aad[RETRY_AAD_MAX];
    size_t aadlen;

    if (remote_addrlen > sizeof(ngtcp2_sockaddr_storage) || dcid->datalen > NGTCP2_MAX_CIDLEN)
        return -1;
    aadlen = retry_aad(aad, version, remote_addr, remote_addrlen, dcid);
    if (token_open(pt, sizeof(pt), token, tokenlen, NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY,
                   "retry_token", secret, secretlen, aad, aadlen) != 0 ||
        pt[0] > NGTCP2_MAX_CIDLEN || token_fresh(get_u64(pt + 1 + NGTCP2_MAX_CIDLEN), timeout, ts))
        return -1;
    ngtcp2_cid_init(odcid, pt + 1, pt[0]);
    return 0;
}

/* RFC 9000 §8.1.3: a NEW_TOKEN token proves the address for a later connection. */
static int regular_aad(uint8_t *aad, size_t *aadlen, const ngtcp2_sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        memcpy(aad, &in->sin_addr, sizeof(in->sin_addr));
        *aadlen = sizeof(in->sin_addr);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        memcpy(aad, &in6->sin6_addr, sizeof(in6->sin6_addr));
        *aadlen = sizeof(in6->sin6_addr);
        return 0;
    }
    return -1;
}

ngtcp2_ssize ngtcp2_crypto_generate_regular_token(uint8_t *token, const uint8_t *secret,
                                                  size_t secretlen,
                                                  const ngtcp2_sockaddr *remote_addr,
                                                  ngtcp2_socklen remote_addrlen, ngtcp2_tstamp ts)
{
    uint8_t pt[TS_LEN], aad[16];
    size_t aadlen;
    (void)remote_addrlen;

    if (regular_aad(aad, &aadlen, remote_addr) != 0)
        return -1;
    put_u64(pt, ts);
    return token_seal(token, NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR, "regular_token", secret,
                      secretlen, pt, sizeof(pt), aad, aadlen);
}

int ngtcp2_crypto_verify_regular_token(const uint8_t *token, size_t tokenlen,
                                       const uint8_t *secret, size_t secretlen,
                                       const ngtcp2_sockaddr *remote_addr,
                                       ngtcp2_socklen remote_addrlen, ngtcp2_duration timeout,
                                       ngtcp2_tstamp ts)
{
    uint8_t pt[TS_LEN], aad[16];
    size_t aadlen;
    (void)remote_addrlen;

    if (regular_aad(aad, &aadlen, remote_addr) != 0 ||
        token_open(pt, sizeof(pt), token, tokenlen, NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR,
                   "regular_token", secret, secretlen, aad, aadlen) != 0)
        return -1;
    return token_fresh(get_u64(pt), timeout, ts);
}

/* ---- Packets written without a connection ---- */

/*
 * An Initial packet with CONNECTION_CLOSE, sealed with the server's Initial
 * keys for the client's Destination Connection ID, which the server uses as
 * its `scid` here (RFC 9000 §10.2.3: a server refusing a connection early).
 */
ngtcp2_ssize ngtcp2_crypto_write_connection_close(uint8_t *dest, size_t destlen, uint32_t version,
                                                  const ngtcp2_cid *dcid, const ngtcp2_cid *scid,
                                                  uint64_t error_code, const uint8_t *reason,
                                                  size_t reasonlen)
{
    uint8_t rx_secret[NGTCP2_CRYPTO_INITIAL_SECRETLEN], tx_secret[NGTCP2_CRYPTO_INITIAL_SECRETLEN];
    uint8_t key[NGTCP2_CRYPTO_INITIAL_KEYLEN], iv[NGTCP2_CRYPTO_INITIAL_IVLEN];
    uint8_t hp[NGTCP2_CRYPTO_INITIAL_KEYLEN];
    ngtcp2_crypto_aead_ctx aead_ctx = {0};
    ngtcp2_crypto_cipher_ctx hp_ctx = {0};
    ngtcp2_crypto_ctx ctx;
    ngtcp2_ssize n = -1;

    ngtcp2_crypto_ctx_initial(&ctx);
    if (ngtcp2_crypto_derive_initial_secrets(version, rx_secret, tx_secret, NULL, scid,
                                             NGTCP2_CRYPTO_SIDE_SERVER) == 0 &&
        ngtcp2_crypto_derive_packet_protection_key(key, iv, hp, version, &ctx.aead, &ctx.md,
                                                   tx_secret, sizeof(tx_secret)) == 0 &&
        ngtcp2_crypto_aead_ctx_encrypt_init(&aead_ctx, &ctx.aead, key, sizeof(iv)) == 0 &&
        ngtcp2_crypto_cipher_ctx_encrypt_init(&hp_ctx, &ctx.hp, hp) == 0) {
        n = ngtcp2_pkt_write_connection_close(dest, destlen, version, dcid, scid, error_code,
                                              reason, reasonlen, ngtcp2_crypto_encrypt_cb,
                                              &ctx.aead, &aead_ctx, iv, ngtcp2_crypto_hp_mask_cb,
                                              &ctx.hp, &hp_ctx);
        n = n < 0 ? -1 : n;
    }
    qn_cipher_ctx_clear(&hp_ctx);
    qn_aead_ctx_clear(&aead_ctx);
    OPENSSL_cleanse(rx_secret, sizeof(rx_secret));
    OPENSSL_cleanse(tx_secret, sizeof(tx_secret));
    OPENSSL_cleanse(key, sizeof(key));
    OPENSSL_cleanse(hp, sizeof(hp));
    return n;
}

/* RFC 9001 §5.8: ngtcp2 builds the Retry and its pseudo-packet; the tag is AES-128-GCM under
 * the version's fixed key (the nonce is ngtcp2's). */
ngtcp2_ssize ngtcp2_crypto_write_retry(uint8_t *dest, size_t destlen, uint32_t version,
                                       const ngtcp2_cid *dcid, const ngtcp2_cid *scid,
                                       const ngtcp2_cid *odcid, const uint8_t *token,
                                       size_t tokenlen)
{
    ngtcp2_crypto_aead aead;
    ngtcp2_crypto_aead_ctx aead_ctx = {0};
    ngtcp2_ssize n;

    if (qn_retry_aead_ctx(&aead_ctx, &aead, version) != 0)
        return -1;
    n = ngtcp2_pkt_write_retry(dest, destlen, version, dcid, scid, odcid, token, tokenlen,
                               ngtcp2_crypto_encrypt_cb, &aead, &aead_ctx);
    qn_aead_ctx_clear(&aead_ctx);
    return n < 0 ? -1 : n;
}
