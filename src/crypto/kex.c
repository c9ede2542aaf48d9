/*
 * Key exchange for every group (RFC 8446 §4.2.8): the classical groups through crypto.c's
 * (EC)DH, ML-KEM alone (draft-ietf-tls-mlkem) and the hybrids (draft-ietf-tls-ecdhe-mlkem),
 * whose shares and secrets are the two halves' concatenated.
 *
 * ML-KEM comes from libcrypto where it has one (OpenSSL 3.5 and later, found at run time, so
 * that one build made against the 3.0 headers uses it on a 3.5 system) and from qtls's own
 * mlkem.c everywhere else. Which one made a client's key is in the key itself (kem or dk).
 */

#include "crypto/crypto.h"
#include "crypto/mlkem.h"

#include <string.h>

#include <openssl/core_names.h>

static const char *const mlkem_names[2] = {"ML-KEM-768", "ML-KEM-1024"};

static struct {
    CRYPTO_ONCE once;
    int have; /* libcrypto has ML-KEM */
} lc = {.once = CRYPTO_ONCE_STATIC_INIT};
static int test_own_mlkem;

/* ML-KEM in libcrypto: both the key manager and the KEM, for both parameter sets. */
static void probe_libcrypto(void)
{
    int have = 1;
    ERR_set_mark(); /* a libcrypto without it queues "unsupported" errors */
    for (size_t i = 0; i < 2; i++) {
        EVP_KEYMGMT *km = EVP_KEYMGMT_fetch(NULL, mlkem_names[i], NULL);
        EVP_KEM *kem = EVP_KEM_fetch(NULL, mlkem_names[i], NULL);
        have &= km != NULL && kem != NULL;
        EVP_KEYMGMT_free(km);
        EVP_KEM_free(kem);
    }
    ERR_pop_to_mark();
    lc.have = have;
}

int crypto_kex_mlkem_from_libcrypto(void)
{
    if (!CRYPTO_THREAD_run_once(&lc.once, probe_libcrypto))
        return 0;
    return lc.have && !__atomic_load_n(&test_own_mlkem, __ATOMIC_ACQUIRE);
}

void crypto_set_test_own_mlkem(int on) { __atomic_store_n(&test_own_mlkem, on, __ATOMIC_RELEASE); }

void crypto_kex_key_clear(struct kex_key *key)
{
    EVP_PKEY_free(key->ec);
    EVP_PKEY_free(key->kem);
    if (key->dk != NULL)
        OPENSSL_clear_free(key->dk, MLKEM_MAX_DK_LEN);
    memset(key, 0, sizeof(*key));
}

/* ---- the ML-KEM half ---- */

/* libcrypto's key pair; its encapsulation key into ek. */
static int lc_generate(enum mlkem_param p, struct kex_key *key, uint8_t *ek, size_t ek_len)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, mlkem_names[p], NULL);
    size_t got = 0;
    int ok = ctx != NULL && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_keygen(ctx, &key->kem) > 0 &&
             EVP_PKEY_get_octet_string_param(key->kem, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, ek,
                                             ek_len, &got) &&
             got == ek_len;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/* Client: a key pair, the encapsulation key appended to the share. */
static int kem_generate(enum mlkem_param p, struct kex_key *key, struct wr *share)
{
    size_t ek_len = mlkem_ek_len(p);
    uint8_t *ek = wr_reserve(share, ek_len);
    if (ek == NULL)
        return 0;
    if (crypto_kex_mlkem_from_libcrypto())
        return lc_generate(p, key, ek, ek_len);
    key->dk = OPENSSL_malloc(MLKEM_MAX_DK_LEN); /* the largest: crypto_kex_key_clear wipes it */
    return key->dk != NULL && mlkem_keygen(p, ek, key->dk);
}

/* Client: the shared secret from the server's ciphertext (its length is checked). */
static int kem_decaps(enum mlkem_param p, const struct kex_key *key, const uint8_t *ct,
                      uint8_t ss[MLKEM_SS_LEN])
{
    if (key->dk != NULL)
        return mlkem_decaps(p, key->dk, ct, ss);
    EVP_PKEY_CTX *ctx = key->kem == NULL ? NULL : EVP_PKEY_CTX_new_from_pkey(NULL, key->kem, NULL);
    size_t n = MLKEM_SS_LEN;
    int ok = ctx != NULL && EVP_PKEY_decapsulate_init(ctx, NULL) > 0 &&
             EVP_PKEY_decapsulate(ctx, ss, &n, ct, mlkem_ct_len(p)) > 0 && n == MLKEM_SS_LEN;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/* Server, through libcrypto: encapsulates to ek (already checked) into ct and ss. */
static int lc_encaps(enum mlkem_param p, const uint8_t *ek, uint8_t *ct, uint8_t *ss)
{
    EVP_PKEY *pk = EVP_PKEY_new_raw_public_key_ex(NULL, mlkem_names[p], NULL, ek, mlkem_ek_len(p));
    EVP_PKEY_CTX *ctx = pk == NULL ? NULL : EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
    size_t ct_len = mlkem_ct_len(p), ss_len = MLKEM_SS_LEN;
    int ok = ctx != NULL && EVP_PKEY_encapsulate_init(ctx, NULL) > 0 &&
             EVP_PKEY_encapsulate(ctx, ct, &ct_len, ss, &ss_len) > 0 &&
             ct_len == mlkem_ct_len(p) && ss_len == MLKEM_SS_LEN;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pk);
    return ok;
}

/*
 * Server: the client's encapsulation key must pass FIPS 203's check (§7.2; the draft's
 * illegal_parameter, raised by the caller on SSL_R_BAD_KEY_SHARE); the ciphertext is
 * appended to the share.
 */
static int kem_encaps(enum mlkem_param p, const uint8_t *ek, struct wr *share,
                      uint8_t ss[MLKEM_SS_LEN])
{
    if (!mlkem_ek_check(p, ek)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_KEY_SHARE);
        return 0;
    }
    uint8_t *ct = wr_reserve(share, mlkem_ct_len(p));
    if (ct == NULL)
        return 0;
    if (crypto_kex_mlkem_from_libcrypto())
        return lc_encaps(p, ek, ct, ss);
    return mlkem_encaps(p, ek, ct, ss);
}

/* ---- the groups ---- */

/* A hybrid's halves within a share or secret: where the classical and the ML-KEM parts are. */
struct halves {
    size_t ec_at, kem_at;
};

static struct halves halves_of(const struct group *g, size_t ec_len, size_t kem_len)
{
    struct halves h = {0, 0};
    if (g->ec_first)
        h.kem_at = ec_len;
    else
        h.ec_at = kem_len;
    return h;
}

/* The hybrid's classical group (the table names only ones qtls has). */
static const struct group *classical_of(const struct group *g) { return group_by_id(g->classical); }

static int hybrid_generate(const struct group *g, struct kex_key *key, struct wr *share)
{
    const struct group *ec = classical_of(g);
    if (g->ec_first)
        return (key->ec = crypto_ecdh_generate(ec, share)) != NULL &&
               kem_generate(g->mlkem, key, share);
    return kem_generate(g->mlkem, key, share) && (key->ec = crypto_ecdh_generate(ec, share)) != NULL;
}

int crypto_kex_generate(const struct group *g, struct kex_key *key, struct wr *share_out)
{
    int ok;
    memset(key, 0, sizeof(*key));
    if (g->kind == KEX_MLKEM)
        ok = kem_generate(g->mlkem, key, share_out);
    else if (g->kind == KEX_HYBRID)
        ok = hybrid_generate(g, key, share_out);
    else
        ok = (key->ec = crypto_ecdh_generate(g, share_out)) != NULL;
    if (!ok) {
        crypto_kex_key_clear(key);
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    }
    return ok;
}

int crypto_kex_reuse_classical(const struct group *hybrid, const struct kex_key *from,
                               const uint8_t *hybrid_share, struct kex_key *to,
                               struct wr *share_out)
{
    const struct group *ec = classical_of(hybrid);
    struct halves h = halves_of(hybrid, ec->share_len, mlkem_ek_len(hybrid->mlkem));
    memset(to, 0, sizeof(*to));
    if (hybrid->kind != KEX_HYBRID || from->ec == NULL || !EVP_PKEY_up_ref(from->ec))
        return 0;
    to->ec = from->ec;
    wr_bytes(share_out, hybrid_share + h.ec_at, ec->share_len);
    return wr_ok(share_out);
}

/*
 * A failed exchange: nothing of the secret is left. A share found wrong (a length here, or what
 * crypto_ecdh_derive and kem_encaps refused: SSL_R_BAD_KEY_SHARE, or SSL_R_BAD_ECPOINT for a
 * compressed point) says so;
 * anything else is ours (crypto_kex_bad_share tells the caller which alert to send).
 */
static size_t kex_failed(uint8_t *out, size_t out_cap, int bad_length)
{
    OPENSSL_cleanse(out, out_cap);
    if (bad_length)
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_KEY_SHARE);
    else if (!crypto_kex_bad_share())
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return 0;
}

int crypto_kex_bad_share(void)
{
    unsigned long e = ERR_peek_last_error();
    int r = ERR_GET_REASON(e);
    return ERR_GET_LIB(e) == ERR_LIB_SSL && (r == SSL_R_BAD_KEY_SHARE || r == SSL_R_BAD_ECPOINT);
}

/* A hybrid's secret, its halves in the group's order (the draft's concatenation); 0 if !ok. */
static size_t join_secrets(const struct group *g, int ok, uint8_t *ecdh, size_t n, uint8_t *ss,
                           uint8_t *out)
{
    struct halves secret = halves_of(g, n, MLKEM_SS_LEN);
    if (ok) {
        memcpy(out + secret.ec_at, ecdh, n);
        memcpy(out + secret.kem_at, ss, MLKEM_SS_LEN);
    }
    OPENSSL_cleanse(ecdh, CRYPTO_KEX_MAX_SECRET);
    OPENSSL_cleanse(ss, MLKEM_SS_LEN);
    return ok ? n + MLKEM_SS_LEN : 0;
}

/* Client, hybrid: the server's share is ciphertext and curve share, the secret both secrets. */
static size_t hybrid_derive(const struct group *g, struct kex_key *key, const uint8_t *peer,
                            uint8_t *out)
{
    const struct group *ec = classical_of(g);
    struct halves share = halves_of(g, ec->share_len, mlkem_ct_len(g->mlkem));
    uint8_t ecdh[CRYPTO_KEX_MAX_SECRET], ss[MLKEM_SS_LEN];
    size_t n = crypto_ecdh_derive(ec, key->ec, peer + share.ec_at, ec->share_len, ecdh,
                                  sizeof(ecdh));
    int ok = n != 0 && kem_decaps(g->mlkem, key, peer + share.kem_at, ss);
    return join_secrets(g, ok, ecdh, n, ss, out);
}

size_t crypto_kex_derive(const struct group *g, struct kex_key *key, const uint8_t *peer,
                         size_t peer_len, uint8_t *out, size_t out_cap)
{
    size_t n = 0;
    if (!group_is_pq(g)) /* its own checks: a compressed point is "bad ecpoint" (§4.2.8.2) */
        return crypto_ecdh_derive(g, key->ec, peer, peer_len, out, out_cap);
    if (out_cap < CRYPTO_KEX_MAX_SECRET || peer_len != g->server_share_len)
        return kex_failed(out, out_cap, 1); /* draft-ietf-tls-ecdhe-mlkem §4: the ciphertext's too */
    if (g->kind == KEX_MLKEM)
        n = kem_decaps(g->mlkem, key, peer, out) ? MLKEM_SS_LEN : 0;
    else
        n = hybrid_derive(g, key, peer, out);
    return n != 0 ? n : kex_failed(out, out_cap, 0);
}

/* Server, classical: a key pair for this handshake, its share, the secret. */
static size_t ecdh_respond(const struct group *g, const uint8_t *peer, struct wr *share,
                           uint8_t *out, size_t out_cap)
{
    EVP_PKEY *key = crypto_ecdh_generate(g, share);
    size_t n = key == NULL ? 0 : crypto_ecdh_derive(g, key, peer, g->share_len, out, out_cap);
    EVP_PKEY_free(key);
    return n;
}

/* Server, hybrid: the halves of our share in the client's order, the secret in the same. */
static size_t hybrid_respond(const struct group *g, const uint8_t *peer, struct wr *share,
                             uint8_t *out)
{
    const struct group *ec = classical_of(g);
    struct halves in = halves_of(g, ec->share_len, mlkem_ek_len(g->mlkem));
    uint8_t ecdh[CRYPTO_KEX_MAX_SECRET], ss[MLKEM_SS_LEN];
    size_t n = 0;
    int ok;
    if (g->ec_first)
        ok = (n = ecdh_respond(ec, peer + in.ec_at, share, ecdh, sizeof(ecdh))) != 0 &&
             kem_encaps(g->mlkem, peer + in.kem_at, share, ss);
    else
        ok = kem_encaps(g->mlkem, peer + in.kem_at, share, ss) &&
             (n = ecdh_respond(ec, peer + in.ec_at, share, ecdh, sizeof(ecdh))) != 0;
    return join_secrets(g, ok, ecdh, n, ss, out);
}

size_t crypto_kex_respond(const struct group *g, const uint8_t *peer, size_t peer_len,
                          struct wr *share_out, uint8_t *out, size_t out_cap)
{
    size_t n;
    if (out_cap < CRYPTO_KEX_MAX_SECRET || peer_len != g->share_len)
        return kex_failed(out, out_cap, 1);
    if (g->kind == KEX_MLKEM)
        n = kem_encaps(g->mlkem, peer, share_out, out) ? MLKEM_SS_LEN : 0;
    else if (g->kind == KEX_HYBRID)
        n = hybrid_respond(g, peer, share_out, out);
    else
        n = ecdh_respond(g, peer, share_out, out, out_cap);
    return n != 0 ? n : kex_failed(out, out_cap, 0);
}
