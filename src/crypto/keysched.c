/*
 * The TLS 1.3 key schedule (RFC 8446 §7.1) and the running transcript hash
 * (§4.4.1). Secrets live in fixed arrays and are wiped when replaced.
 */

#include "crypto/crypto.h"

#include <string.h>

void secret_set(struct secret *s, const uint8_t *p, size_t n)
{
    OPENSSL_cleanse(s, sizeof(*s));
    memcpy(s->b, p, n);
    s->len = n;
}

void secret_wipe(struct secret *s) { OPENSSL_cleanse(s, sizeof(*s)); }

/* TLS 1.3's secrets are Hash.length; anything longer is a bug, kept as nothing. */
void secret_keep(struct kept_secret *k, const struct secret *s)
{
    kept_secret_wipe(k);
    if (s->len <= sizeof(k->b)) {
        memcpy(k->b, s->b, s->len);
        k->len = (uint8_t)s->len;
    }
}

void secret_unkeep(struct secret *s, const struct kept_secret *k) { secret_set(s, k->b, k->len); }

void kept_secret_wipe(struct kept_secret *k) { OPENSSL_cleanse(k, sizeof(*k)); }

/*
 * RFC 8446 §7.1:
 *   struct { uint16 length; opaque label<7..255> = "tls13 " + Label;
 *            opaque context<0..255>; } HkdfLabel;
 */
int ks_expand_label_n(enum qtls_hash h, const struct secret *secret, const uint8_t *label,
                      size_t label_len, const uint8_t *context, size_t context_len, uint8_t *out,
                      size_t out_len)
{
    uint8_t info[2 + 1 + 255 + 1 + 255];
    struct wr w;
    if (label_len > 255 - 6 || context_len > 255 || out_len > 0xffff) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    wr_init_fixed(&w, info, sizeof(info));
    wr_u16(&w, (uint16_t)out_len);
    wr_u8(&w, (uint8_t)(6 + label_len));
    wr_bytes(&w, "tls13 ", 6);
    wr_bytes(&w, label, label_len);
    wr_u8(&w, (uint8_t)context_len);
    wr_bytes(&w, context, context_len);
    return wr_ok(&w) &&
           crypto_hkdf_expand(h, secret->b, secret->len, info, w.len, out, out_len);
}

int ks_expand_label(enum qtls_hash h, const struct secret *secret, const char *label,
                    const uint8_t *context, size_t context_len, uint8_t *out, size_t out_len)
{
    return ks_expand_label_n(h, secret, (const uint8_t *)label, strlen(label), context,
                             context_len, out, out_len);
}

/* Derive-Secret(Secret, Label, Messages) with Transcript-Hash(Messages) given. */
int ks_derive_secret(enum qtls_hash h, const struct secret *secret, const char *label,
                     const uint8_t *thash, struct secret *out)
{
    size_t hl = crypto_hash_len(h);
    uint8_t tmp[EVP_MAX_MD_SIZE];
    int ok = ks_expand_label(h, secret, label, thash, hl, tmp, hl);
    if (ok)
        secret_set(out, tmp, hl);
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return ok;
}

/* Early Secret = HKDF-Extract(salt: 0, IKM: PSK or HashLen zeros). */
int ks_early_secret(enum qtls_hash h, const uint8_t *psk, size_t psk_len, struct secret *out)
{
    static const uint8_t zeros[EVP_MAX_MD_SIZE];
    size_t hl = crypto_hash_len(h);
    uint8_t tmp[EVP_MAX_MD_SIZE];
    if (psk == NULL) {
        psk = zeros;
        psk_len = hl;
    }
    int ok = crypto_hkdf_extract(h, NULL, 0, psk, psk_len, tmp);
    if (ok)
        secret_set(out, tmp, hl);
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return ok;
}

/* HKDF-Extract(salt: derived, IKM: ikm or HashLen zeros), the second half of a stage. */
static int extract_stage(enum qtls_hash h, const struct secret *derived, const uint8_t *ikm,
                         size_t ikm_len, struct secret *out)
{
    static const uint8_t zeros[EVP_MAX_MD_SIZE];
    size_t hl = crypto_hash_len(h);
    if (ikm == NULL) {
        ikm = zeros;
        ikm_len = hl;
    }
    uint8_t tmp[EVP_MAX_MD_SIZE];
    int ok = crypto_hkdf_extract(h, derived->b, derived->len, ikm, ikm_len, tmp);
    if (ok)
        secret_set(out, tmp, hl);
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return ok;
}

/* Handshake/Master Secret = HKDF-Extract(Derive-Secret(prev, "derived", ""), IKM). */
int ks_next_stage(enum qtls_hash h, const struct secret *prev, const uint8_t *ikm,
                  size_t ikm_len, struct secret *out)
{
    struct secret derived;
    int ok = ks_derive_secret(h, prev, "derived", crypto_empty_hash(h), &derived) &&
             extract_stage(h, &derived, ikm, ikm_len, out);
    secret_wipe(&derived);
    return ok;
}

/*
 * Without a PSK, Early Secret = HKDF-Extract(0, zeros) and its Derive-Secret(.,
 * "derived", "") are the same on every connection: public constants, computed
 * once per hash instead of twice per handshake.
 */
static struct {
    CRYPTO_ONCE once;
    int ok;
    struct secret derived[QTLS_HASH_COUNT];
} zero_psk = {.once = CRYPTO_ONCE_STATIC_INIT};

static void zero_psk_init(void)
{
    for (int h = 0; h < QTLS_HASH_COUNT; h++) {
        struct secret early;
        int ok = ks_early_secret((enum qtls_hash)h, NULL, 0, &early) &&
                 ks_derive_secret((enum qtls_hash)h, &early, "derived",
                                  crypto_empty_hash((enum qtls_hash)h), &zero_psk.derived[h]);
        secret_wipe(&early);
        if (!ok)
            return;
    }
    zero_psk.ok = 1;
}

int ks_handshake_secret_without_psk(enum qtls_hash h, const uint8_t *ecdhe, size_t ecdhe_len,
                                    struct secret *out)
{
    if (!CRYPTO_THREAD_run_once(&zero_psk.once, zero_psk_init) || !zero_psk.ok) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    return extract_stage(h, &zero_psk.derived[h], ecdhe, ecdhe_len, out);
}

/* §4.4.4: finished_key = HKDF-Expand-Label(BaseKey, "finished", "", Hash.length). */
int ks_finished(enum qtls_hash h, const struct secret *base, const uint8_t *thash, uint8_t *out)
{
    size_t hl = crypto_hash_len(h);
    uint8_t key[EVP_MAX_MD_SIZE];
    int ok = ks_expand_label(h, base, "finished", NULL, 0, key, hl) &&
             crypto_hmac(h, key, hl, thash, hl, out);
    OPENSSL_cleanse(key, sizeof(key));
    return ok;
}

/*
 * §4.2.11.2: binder_key = Derive-Secret(early_secret, "res binder", ""), and
 * the binder is a Finished MAC with it over the partial ClientHello hash.
 */
int ks_psk_binder(enum qtls_hash h, const struct secret *early, const uint8_t *thash,
                  uint8_t *out)
{
    struct secret binder_key;
    int ok = ks_derive_secret(h, early, "res binder", crypto_empty_hash(h), &binder_key) &&
             ks_finished(h, &binder_key, thash, out);
    secret_wipe(&binder_key);
    return ok;
}

/* ---- transcript ---- */

void transcript_init(struct transcript *t)
{
    memset(t, 0, sizeof(*t));
    wr_init(&t->pending);
}

int transcript_add(struct transcript *t, const uint8_t *p, size_t n)
{
    if (t->md != NULL)
        return crypto_hash_update(t->md, p, n);
    wr_bytes(&t->pending, p, n);
    if (!wr_ok(&t->pending)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    return 1;
}

int transcript_set_hash(struct transcript *t, enum qtls_hash h)
{
    if (t->md != NULL)
        return t->hash == h;
    struct crypto_hash *md = crypto_hash_new(h);
    if (md == NULL || !crypto_hash_update(md, t->pending.buf, t->pending.len)) {
        crypto_hash_free(md);
        return 0;
    }
    t->hash = h;
    t->md = md;
    wr_free(&t->pending);
    return 1;
}

int transcript_hash(struct transcript *t, uint8_t *out)
{
    if (t->md == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    return crypto_hash_peek(t->md, NULL, 0, out);
}

int transcript_hash_with(struct transcript *t, enum qtls_hash h, const uint8_t *extra,
                         size_t extra_len, uint8_t *out)
{
    if (t->md != NULL) {
        if (t->hash != h) {
            ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
            return 0;
        }
        return crypto_hash_peek(t->md, extra, extra_len, out);
    }
    /* Before ServerHello: the buffered messages under the hash asked for. */
    struct crypto_hash *m = crypto_hash_new(h);
    int ok = m != NULL && crypto_hash_update(m, t->pending.buf, t->pending.len) &&
             crypto_hash_peek(m, extra, extra_len, out);
    crypto_hash_free(m);
    return ok;
}

int transcript_copy(struct transcript *dst, const struct transcript *src)
{
    transcript_init(dst);
    if (src->md == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    dst->md = crypto_hash_dup(src->md);
    dst->hash = src->hash;
    return dst->md != NULL;
}

/*
 * §4.4.1: after a HelloRetryRequest, ClientHello1 is replaced by
 *   message_hash(254) || 00 00 Hash.length || Hash(ClientHello1).
 * Called with only ClientHello1 in the transcript.
 */
int transcript_hrr_restart(struct transcript *t)
{
    uint8_t h[4 + EVP_MAX_MD_SIZE];
    size_t hl = crypto_hash_len(t->hash);
    if (!transcript_hash(t, h + 4))
        return 0;
    h[0] = HT_MESSAGE_HASH;
    h[1] = 0;
    h[2] = 0;
    h[3] = (uint8_t)hl;
    return crypto_hash_restart(t->md) && transcript_add(t, h, 4 + hl);
}

void transcript_free(struct transcript *t)
{
    crypto_hash_free(t->md);
    wr_free(&t->pending);
    memset(t, 0, sizeof(*t));
}
