/*
 * Stateless session tickets and the 0-RTT anti-replay filter.
 *
 * RFC 8446 §4.6.1 leaves the ticket opaque to the client: the server seals
 * what it needs to resume (session.c's encoding) under a key only it knows,
 * so it keeps no per-session state. Two protections exist:
 *
 *  - built-in keys (no application callback): per SSL_CTX, the first one
 *    random and made by SSL_CTX_new, each next one derived one way from the
 *    one before, one per session lifetime; AES-256-GCM with the key name as AAD:
 *        key_name(16) || nonce(12) || ciphertext || tag(16)
 *    The previous key still opens tickets (it sealed tickets that may live
 *    one more lifetime); older keys are wiped and cannot be derived again,
 *    which bounds how long a stolen key can decrypt recorded tickets. Made
 *    before a server forks its workers (nginx's, HAProxy's master processes
 *    make their contexts, then fork), the chain is the same in every worker:
 *    a ticket one worker seals opens in another, as with OpenSSL, whose
 *    SSL_CTX_new makes the context's ticket keys.
 *
 *  - SSL_CTX_set_tlsext_ticket_key_evp_cb: the application chooses the keys
 *    (shared across a fleet), with OpenSSL 3.0's format so that qtls and
 *    libssl servers can open each other's tickets:
 *        key_name(16) || iv || ciphertext || HMAC(everything before it)
 *
 * The replay filter implements RFC 8446 §8.2's "client hello recording"
 * for single-use 0-RTT tickets.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"

#include <limits.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>

#define KEY_NAME_LEN 16 /* TLSEXT_KEYNAME_LENGTH: the same for both formats */
#define GCM_KEY_LEN 32
#define GCM_NONCE_LEN 12
#define GCM_TAG_LEN 16
#define DEFAULT_LIFETIME 7200 /* OpenSSL's default session timeout */

/* ------------------------------------------------------------------ */
/* Algorithms and clock                                                */
/* ------------------------------------------------------------------ */

/* The algorithms are crypto.c's, fetched once per process. */
static int ticket_init(void) { return crypto_init(); }

static uint64_t (*test_clock)(void);

void ticket_set_test_clock(uint64_t (*now)(void)) { test_clock = now; }

static uint64_t now_seconds(void)
{
    return test_clock != NULL ? test_clock() : clock_now_seconds();
}

/* A key lives one session lifetime as the current key, then one more as the previous key. */
static uint64_t key_lifetime(const SSL_CTX *ctx)
{
    return ctx->session_timeout > 0 ? (uint64_t)ctx->session_timeout : DEFAULT_LIFETIME;
}

/* now - then >= span, with a clock that went backwards counting as no time passed. */
static int elapsed(uint64_t then, uint64_t now, uint64_t span)
{
    return now >= then && now - then >= span;
}

/* ------------------------------------------------------------------ */
/* Built-in keys                                                       */
/* ------------------------------------------------------------------ */

struct ticket_key {
    uint8_t name[KEY_NAME_LEN];
    uint8_t key[GCM_KEY_LEN];
    uint64_t created;
    int set;
};

struct ticket_keys {
    CRYPTO_RWLOCK *lock; /* the SSL_CTX may be shared by threads */
    struct ticket_key cur, prev;
};

void ticket_keys_free(struct ticket_keys *k)
{
    if (k == NULL)
        return;
    CRYPTO_THREAD_lock_free(k->lock);
    OPENSSL_clear_free(k, sizeof(*k));
}

/*
 * The context's key set, made on first use. Contexts are shared by threads
 * and ctx.c does not make the set, so it is published with a compare-and-swap:
 * the loser of a race frees its copy and uses the winner's.
 */
static struct ticket_keys *keys_get(SSL_CTX *ctx)
{
    struct ticket_keys *k = __atomic_load_n(&ctx->ticket_keys, __ATOMIC_ACQUIRE);
    if (k != NULL)
        return k;
    k = OPENSSL_zalloc(sizeof(*k));
    if (k == NULL || (k->lock = CRYPTO_THREAD_lock_new()) == NULL) {
        ticket_keys_free(k);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    struct ticket_keys *seen = NULL;
    if (!__atomic_compare_exchange_n(&ctx->ticket_keys, &seen, k, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        ticket_keys_free(k);
        return seen;
    }
    return k;
}

/* A fresh start of the chain: a random key, made now; nothing before it. */
static int keys_start(struct ticket_keys *k, uint64_t now)
{
    struct ticket_key fresh = {.created = now, .set = 1};
    if (!crypto_random(fresh.name, sizeof(fresh.name)) ||
        !crypto_random(fresh.key, sizeof(fresh.key))) {
        OPENSSL_cleanse(&fresh, sizeof(fresh));
        return 0;
    }
    OPENSSL_cleanse(&k->prev, sizeof(k->prev));
    k->cur = fresh;
    OPENSSL_cleanse(&fresh, sizeof(fresh));
    return 1;
}

/*
 * previous <- current, current <- the next key of the chain, made one lifetime after it:
 * name || key = HKDF-Expand(key, "qtls ticket key" || name). One way, so a key gives its
 * successors and never its predecessors; the same in every process that holds the same key.
 */
static int keys_step(struct ticket_keys *k, uint64_t life)
{
    static const char label[] = "qtls ticket key";
    uint8_t info[sizeof(label) - 1 + KEY_NAME_LEN], okm[KEY_NAME_LEN + GCM_KEY_LEN];
    memcpy(info, label, sizeof(label) - 1);
    memcpy(info + sizeof(label) - 1, k->cur.name, KEY_NAME_LEN);
    if (!crypto_hkdf_expand(QTLS_SHA256, k->cur.key, GCM_KEY_LEN, info, sizeof(info), okm,
                            sizeof(okm)))
        return 0;
    OPENSSL_cleanse(&k->prev, sizeof(k->prev));
    k->prev = k->cur;
    memcpy(k->cur.name, okm, KEY_NAME_LEN);
    memcpy(k->cur.key, okm + KEY_NAME_LEN, GCM_KEY_LEN);
    k->cur.created = k->prev.created + life;
    OPENSSL_cleanse(okm, sizeof(okm));
    return 1;
}

/*
 * Moves the chain on to the key for `now` (the one made at most a lifetime ago), wiping the
 * keys passed over; called with the write lock held. Past this many steps (a context idle for
 * that many lifetimes) a new random chain starts instead, which processes no longer share.
 */
#define MAX_KEY_STEPS 100000
static int keys_rotate(struct ticket_keys *k, uint64_t now, uint64_t life)
{
    if (!k->cur.set)
        return keys_start(k, now);
    uint64_t steps = (now - k->cur.created) / life; /* the callers checked now >= created */
    if (steps > MAX_KEY_STEPS)
        return keys_start(k, now);
    for (uint64_t i = 0; i < steps; i++)
        if (!keys_step(k, life))
            return 0;
    return 1;
}

/* Copies out the key to seal with, rotating first if the current one has served its lifetime. */
static int keys_current(struct ticket_keys *k, uint64_t now, uint64_t life, struct ticket_key *out)
{
    if (!CRYPTO_THREAD_read_lock(k->lock))
        return 0;
    int fresh = k->cur.set && !elapsed(k->cur.created, now, life);
    if (fresh)
        *out = k->cur;
    CRYPTO_THREAD_unlock(k->lock);
    if (fresh)
        return 1;

    if (!CRYPTO_THREAD_write_lock(k->lock))
        return 0;
    int ok = 1;
    /* Another thread may have rotated between the two locks. */
    if (!k->cur.set || elapsed(k->cur.created, now, life))
        ok = keys_rotate(k, now, life);
    if (ok)
        *out = k->cur;
    CRYPTO_THREAD_unlock(k->lock);
    return ok;
}

/*
 * Finds the key named `name`: 1 current, 2 previous (the ticket should be
 * replaced), 0 unknown or too old to have sealed a live ticket, -1 lock failure.
 */
static int keys_find(struct ticket_keys *k, const uint8_t *name, uint64_t now, uint64_t life,
                     struct ticket_key *out)
{
    if (!CRYPTO_THREAD_read_lock(k->lock))
        return -1;
    int found = 0;
    const struct ticket_key *cand[2] = {&k->cur, &k->prev};
    for (int i = 0; i < 2 && !found; i++) {
        if (cand[i]->set && memcmp(cand[i]->name, name, KEY_NAME_LEN) == 0 &&
            !elapsed(cand[i]->created, now, 2 * life)) {
            *out = *cand[i];
            found = i + 1;
        }
    }
    CRYPTO_THREAD_unlock(k->lock);
    return found;
}

/*
 * SSL_CTX_new: the context's first key, so that processes forked from this one (a server's
 * workers) share the chain. 0 if it could not be made (raised).
 */
int ticket_keys_make(SSL_CTX *ctx)
{
    struct ticket_key key;
    struct ticket_keys *k = keys_get(ctx);
    int ok = k != NULL && keys_current(k, now_seconds(), key_lifetime(ctx), &key);
    OPENSSL_cleanse(&key, sizeof(key));
    return ok;
}

void ticket_keys_test_rotate(SSL_CTX *ctx)
{
    struct ticket_keys *k = keys_get(ctx);
    if (k == NULL || !CRYPTO_THREAD_write_lock(k->lock))
        return;
    /* A forced rotation: one step now, keeping the current key as previous whatever its age. */
    uint64_t now = now_seconds(), life = key_lifetime(ctx);
    int ok;
    if (k->cur.set) {
        k->cur.created = now >= life ? now - life : 0;
        ok = keys_step(k, life); /* made now, the previous one a lifetime ago */
    } else {
        ok = keys_start(k, now);
    }
    if (!ok)
        ERR_clear_error();
    CRYPTO_THREAD_unlock(k->lock);
}

/* AES-256-GCM over `in` with the key name as additional data (crypto.c): 1, 0 bad tag, -1. */
static int gcm_crypt(int enc, const struct ticket_key *key, const uint8_t *nonce, const uint8_t *in,
                     size_t len, uint8_t *out, uint8_t *tag)
{
    return crypto_ticket_gcm(enc, key->key, key->name, KEY_NAME_LEN, nonce, in, len, out, tag);
}

static int seal_builtin(SSL *c, const uint8_t *plain, size_t plain_len, struct wr *out)
{
    struct ticket_keys *k = keys_get(c->ctx);
    struct ticket_key key;
    uint8_t nonce[GCM_NONCE_LEN];
    if (k == NULL || !keys_current(k, now_seconds(), key_lifetime(c->ctx), &key))
        return 0;
    size_t start = wr_len(out);
    uint8_t *p = NULL;
    int ok = crypto_random(nonce, sizeof(nonce)) &&
             (p = wr_reserve(out, KEY_NAME_LEN + GCM_NONCE_LEN + plain_len + GCM_TAG_LEN)) != NULL;
    if (ok) {
        memcpy(p, key.name, KEY_NAME_LEN);
        memcpy(p + KEY_NAME_LEN, nonce, GCM_NONCE_LEN);
        uint8_t *ct = p + KEY_NAME_LEN + GCM_NONCE_LEN;
        ok = gcm_crypt(1, &key, nonce, plain, plain_len, ct, ct + plain_len) == 1;
    } else if (p == NULL && !wr_ok(out)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    }
    if (!ok && p != NULL)
        wr_rewind(out, start);
    OPENSSL_cleanse(&key, sizeof(key));
    return ok;
}

static int open_builtin(SSL *c, struct rd t, struct wr *plain)
{
    uint8_t name[KEY_NAME_LEN], tag[GCM_TAG_LEN];
    struct rd nonce, body;
    if (!rd_copy(&t, name, sizeof(name)) || !rd_bytes(&t, GCM_NONCE_LEN, &nonce) ||
        t.n < GCM_TAG_LEN || !rd_bytes(&t, t.n - GCM_TAG_LEN, &body) ||
        !rd_copy(&t, tag, sizeof(tag)))
        return SSL_TICKET_NO_DECRYPT;

    struct ticket_keys *k = keys_get(c->ctx);
    if (k == NULL)
        return SSL_TICKET_FATAL_ERR_MALLOC;
    /*
     * The chain first moves on to now's key, if this process has not sealed a ticket for a
     * while: a ticket another worker sealed with a later key of the chain then opens.
     */
    struct ticket_key key;
    uint64_t now = now_seconds(), life = key_lifetime(c->ctx);
    int which = keys_current(k, now, life, &key) ? keys_find(k, name, now, life, &key) : -1;
    if (which < 0) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return SSL_TICKET_FATAL_ERR_OTHER;
    }
    if (which == 0)
        return SSL_TICKET_NO_DECRYPT;

    /* An empty ciphertext is valid (an empty plaintext); wr_reserve(0) may give no pointer. */
    size_t start = wr_len(plain);
    uint8_t spare[1];
    uint8_t *p = body.n > 0 ? wr_reserve(plain, body.n) : spare;
    int ret;
    if (p == NULL || !wr_ok(plain)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        ret = SSL_TICKET_FATAL_ERR_MALLOC;
    } else {
        int r = gcm_crypt(0, &key, nonce.p, body.p, body.n, p, tag);
        ret = r > 0    ? (which == 1 ? SSL_TICKET_SUCCESS : SSL_TICKET_SUCCESS_RENEW)
              : r == 0 ? SSL_TICKET_NO_DECRYPT
                       : SSL_TICKET_FATAL_ERR_OTHER;
        if (r <= 0) {
            wr_rewind(plain, start); /* unauthenticated plaintext never escapes */
        }
    }
    OPENSSL_cleanse(&key, sizeof(key));
    return ret;
}

/* ------------------------------------------------------------------ */
/* The application's key callback (OpenSSL 3.0 format)                 */
/* ------------------------------------------------------------------ */

/*
 * Writes key_name || iv || E(plain) || HMAC into a region reserved for the
 * largest output, then trims it to the real length.
 */
static int seal_cb_write(const uint8_t *name, const uint8_t *iv, size_t iv_len, size_t mac_len,
                         struct crypto_ticket_cb *cb, const uint8_t *plain, size_t plain_len,
                         struct wr *out)
{
    size_t start = wr_len(out);
    uint8_t *p =
        wr_reserve(out, KEY_NAME_LEN + iv_len + plain_len + EVP_MAX_BLOCK_LENGTH + mac_len);
    if (p == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    memcpy(p, name, KEY_NAME_LEN);
    memcpy(p + KEY_NAME_LEN, iv, iv_len);
    uint8_t *ct = p + KEY_NAME_LEN + iv_len;
    size_t ct_len = 0;
    int r = crypto_ticket_cb_cipher(cb, plain, plain_len, ct, &ct_len);
    size_t authed = KEY_NAME_LEN + iv_len + ct_len;
    if (r == 0)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB); /* a failed final block, when encrypting */
    if (r != 1 || !crypto_ticket_cb_mac(cb, p, authed, p + authed, mac_len)) {
        wr_rewind(out, start);
        return 0;
    }
    wr_truncate(out, start + authed + mac_len); /* the padding room left unused */
    return 1;
}

static int seal_with_cb(SSL *c, const uint8_t *plain, size_t plain_len, struct wr *out)
{
    uint8_t name[KEY_NAME_LEN] = {0}, iv[EVP_MAX_IV_LENGTH] = {0};
    struct crypto_ticket_cb cb;
    size_t iv_len, mac_len;
    int ok = 0;
    if (!crypto_ticket_cb_new(&cb))
        return 0;
    int rv = c->ctx->ticket_key_evp_cb(c, name, iv, cb.cc, cb.hc, 1);
    /*
     * 0: the application declines to issue a ticket. A TLS 1.3 ticket may not
     * be empty (RFC 8446 §4.6.1: ticket<1..2^16-1>), so, as OpenSSL does, no
     * ticket is sent; that is not an error, so nothing is queued.
     */
    if (rv == 0)
        goto end;
    if (rv < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_CALLBACK_FAILED);
        goto end;
    }
    if (!crypto_ticket_cb_lengths(&cb, 1, &iv_len, &mac_len) ||
        plain_len > INT_MAX - EVP_MAX_BLOCK_LENGTH) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_CALLBACK_FAILED,
                       "ticket key callback left the cipher or MAC unusable");
        goto end;
    }
    ok = seal_cb_write(name, iv, iv_len, mac_len, &cb, plain, plain_len, out);
end:
    OPENSSL_cleanse(iv, sizeof(iv));
    crypto_ticket_cb_free(&cb);
    return ok;
}

/* Checks the HMAC, then decrypts; the callback has already set up both contexts. */
static int open_cb_checked(struct rd t, size_t iv_len, size_t mac_len,
                           struct crypto_ticket_cb *cb, struct wr *plain)
{
    struct rd authed, mac, skip, ct;
    uint8_t want[EVP_MAX_MD_SIZE];
    /* OpenSSL's rule: the ticket must exceed key name + IV + MAC (no empty ciphertext). */
    if (t.n <= KEY_NAME_LEN + iv_len + mac_len || !rd_bytes(&t, t.n - mac_len, &authed) ||
        !rd_bytes(&t, mac_len, &mac))
        return SSL_TICKET_NO_DECRYPT;
    if (!crypto_ticket_cb_mac(cb, authed.p, authed.n, want, mac_len))
        return SSL_TICKET_FATAL_ERR_OTHER;
    if (CRYPTO_memcmp(want, mac.p, mac_len) != 0)
        return SSL_TICKET_NO_DECRYPT;

    ct = authed;
    if (!rd_bytes(&ct, KEY_NAME_LEN + iv_len, &skip) || ct.n > INT_MAX - EVP_MAX_BLOCK_LENGTH)
        return SSL_TICKET_NO_DECRYPT;
    size_t start = wr_len(plain);
    uint8_t *p = wr_reserve(plain, ct.n + EVP_MAX_BLOCK_LENGTH);
    if (p == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return SSL_TICKET_FATAL_ERR_MALLOC;
    }
    size_t n = 0;
    int r = crypto_ticket_cb_cipher(cb, ct.p, ct.n, p, &n);
    if (r != 1) {
        wr_rewind(plain, start);
        /* 0: bad padding under a MAC that matched: a wrong key */
        return r == 0 ? SSL_TICKET_NO_DECRYPT : SSL_TICKET_FATAL_ERR_OTHER;
    }
    wr_rewind(plain, start + n);
    return SSL_TICKET_SUCCESS;
}

static int open_with_cb(SSL *c, struct rd t, struct wr *plain)
{
    /*
     * The callback reads the IV from the EVP_MAX_IV_LENGTH bytes after the
     * name, so a ticket shorter than that cannot be one of ours (OpenSSL's
     * first check). Copies: the callback takes writable buffers, the ticket is not.
     */
    uint8_t name[KEY_NAME_LEN], iv[EVP_MAX_IV_LENGTH];
    struct rd r = t;
    if (!rd_copy(&r, name, sizeof(name)) || !rd_copy(&r, iv, sizeof(iv)))
        return SSL_TICKET_NO_DECRYPT;
    struct crypto_ticket_cb cb;
    size_t iv_len, mac_len;
    int ret;
    if (!crypto_ticket_cb_new(&cb))
        return SSL_TICKET_FATAL_ERR_MALLOC;
    int rv = c->ctx->ticket_key_evp_cb(c, name, iv, cb.cc, cb.hc, 0);
    if (rv < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_CALLBACK_FAILED);
        ret = SSL_TICKET_FATAL_ERR_OTHER;
    } else if (rv == 0) {
        ret = SSL_TICKET_NO_DECRYPT; /* a key name the application does not know */
    } else if (!crypto_ticket_cb_lengths(&cb, 0, &iv_len, &mac_len)) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_CALLBACK_FAILED,
                       "ticket key callback left the cipher or MAC unusable");
        ret = SSL_TICKET_FATAL_ERR_OTHER;
    } else {
        ret = open_cb_checked(t, iv_len, mac_len, &cb, plain);
        /* 2: the key is valid but being retired, so the client should get a new ticket. */
        if (ret == SSL_TICKET_SUCCESS && rv == 2)
            ret = SSL_TICKET_SUCCESS_RENEW;
    }
    crypto_ticket_cb_free(&cb);
    return ret;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

int ticket_seal(SSL *c, const uint8_t *plain, size_t plain_len, struct wr *out)
{
    if (!ticket_init())
        return 0;
    if (c->ctx->ticket_key_evp_cb != NULL)
        return seal_with_cb(c, plain, plain_len, out);
    return seal_builtin(c, plain, plain_len, out);
}

int ticket_open(SSL *c, struct rd ticket, struct wr *plain)
{
    if (rd_empty(&ticket))
        return SSL_TICKET_EMPTY;
    if (!ticket_init())
        return SSL_TICKET_FATAL_ERR_OTHER;
    if (c->ctx->ticket_key_evp_cb != NULL)
        return open_with_cb(c, ticket, plain);
    return open_builtin(c, ticket, plain);
}

/* ------------------------------------------------------------------ */
/* Anti-replay (RFC 8446 §8.2)                                         */
/* ------------------------------------------------------------------ */

/*
 * An open-addressing hash set of keyed digests of the tickets used for
 * 0-RTT, each with the second it stops mattering: when its own ticket's
 * window ends. Each entry keeps its own expiry because tickets checked later
 * may have shorter lifetimes (SSL_CTX_set_timeout changed, fleet keys): judged
 * by their window, a longer-lived entry would look expired, be reused or
 * dropped, and its ticket could be replayed. The digest is an HMAC under a
 * per-filter random key, so a client cannot aim tickets at one probe chain.
 * Expired entries stay in place until reused by a probe or dropped by a
 * rebuild. The load stays at most 1/2 so every probe ends at an empty slot.
 */
#define REPLAY_DIGEST_LEN 16
#define REPLAY_MIN_SLOTS 256
#define REPLAY_MAX_ENTRIES 65536
#define REPLAY_MAX_SLOTS (2 * REPLAY_MAX_ENTRIES)

struct replay_slot {
    uint8_t d[REPLAY_DIGEST_LEN];
    uint64_t expires; /* live while now < expires (a clock going backwards keeps it live) */
    uint8_t used;
};

struct replay_filter {
    CRYPTO_RWLOCK *lock;
    uint8_t key[32];
    struct replay_slot *slots;
    size_t cap;      /* a power of two */
    size_t count;    /* used slots, live or expired */
    uint64_t swept;  /* the second of the last rebuild at full size ... */
    int swept_valid; /* ... which is not repeated within that second */
};

void replay_filter_free(struct replay_filter *r)
{
    if (r == NULL)
        return;
    CRYPTO_THREAD_lock_free(r->lock);
    OPENSSL_free(r->slots);
    OPENSSL_clear_free(r, sizeof(*r));
}

static struct replay_filter *filter_get(SSL_CTX *ctx)
{
    struct replay_filter *f = __atomic_load_n(&ctx->replay, __ATOMIC_ACQUIRE);
    if (f != NULL)
        return f;
    f = OPENSSL_zalloc(sizeof(*f));
    if (f == NULL || (f->lock = CRYPTO_THREAD_lock_new()) == NULL ||
        (f->slots = OPENSSL_zalloc(REPLAY_MIN_SLOTS * sizeof(*f->slots))) == NULL) {
        replay_filter_free(f);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    f->cap = REPLAY_MIN_SLOTS;
    if (!crypto_random(f->key, sizeof(f->key))) {
        replay_filter_free(f);
        return NULL;
    }
    struct replay_filter *seen = NULL;
    if (!__atomic_compare_exchange_n(&ctx->replay, &seen, f, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        replay_filter_free(f);
        return seen;
    }
    return f;
}

static int slot_live(const struct replay_slot *s, uint64_t now)
{
    return s->used && now < s->expires;
}

static uint64_t expiry(uint64_t now, uint64_t window)
{
    return window > UINT64_MAX - now ? UINT64_MAX : now + window;
}

static size_t slot_index(const uint8_t *d, size_t cap)
{
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h = h << 8 | d[i];
    return (size_t)h & (cap - 1);
}

static struct replay_slot *slot_empty(struct replay_slot *slots, size_t cap, const uint8_t *d)
{
    size_t i = slot_index(d, cap);
    while (slots[i].used)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

/*
 * Drops expired entries, growing the table while the live ones would fill
 * more than a quarter of it (so rebuilds are rare). 0 when the live entries
 * alone reach the cap: the filter is full.
 */
static int filter_make_room(struct replay_filter *f, uint64_t now)
{
    if (f->cap == REPLAY_MAX_SLOTS && f->swept_valid && f->swept == now)
        return 0; /* already rebuilt this second: expiry has freed nothing new */
    size_t live = 0;
    for (size_t i = 0; i < f->cap; i++)
        live += (size_t)slot_live(&f->slots[i], now);
    size_t cap = f->cap;
    while (live + 1 > cap / 4 && cap < REPLAY_MAX_SLOTS)
        cap *= 2;
    if (cap == REPLAY_MAX_SLOTS) {
        f->swept = now;
        f->swept_valid = 1;
    }
    if (live + 1 > cap / 2)
        return 0;
    struct replay_slot *slots = OPENSSL_zalloc(cap * sizeof(*slots));
    if (slots == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    for (size_t i = 0; i < f->cap; i++)
        if (slot_live(&f->slots[i], now))
            *slot_empty(slots, cap, f->slots[i].d) = f->slots[i];
    OPENSSL_free(f->slots);
    f->slots = slots;
    f->cap = cap;
    f->count = live;
    return 1;
}

/* Called with the write lock held. */
static int filter_check_and_add(struct replay_filter *f, const uint8_t *d, uint64_t now,
                                uint64_t window)
{
    struct replay_slot *reuse = NULL, *s;
    for (size_t i = slot_index(d, f->cap);; i = (i + 1) & (f->cap - 1)) {
        s = &f->slots[i];
        if (!s->used)
            break;
        if (memcmp(s->d, d, REPLAY_DIGEST_LEN) == 0) {
            if (slot_live(s, now))
                return 0; /* a replay */
            s->expires = expiry(now, window);
            return 1;
        }
        if (reuse == NULL && !slot_live(s, now))
            reuse = s;
    }
    /* The whole chain was searched, so an expired slot in it can take the entry. */
    if (reuse == NULL) {
        if (f->count + 1 > f->cap / 2) {
            if (!filter_make_room(f, now))
                return 0; /* full: refuse 0-RTT rather than risk accepting a replay */
            s = slot_empty(f->slots, f->cap, d);
        }
        f->count++;
        reuse = s;
    }
    memcpy(reuse->d, d, REPLAY_DIGEST_LEN);
    reuse->expires = expiry(now, window);
    reuse->used = 1;
    return 1;
}

int replay_check_and_add(SSL_CTX *ctx, const uint8_t *ticket, size_t len, uint64_t now,
                         uint64_t window)
{
    uint8_t mac[EVP_MAX_MD_SIZE];
    struct replay_filter *f;
    if (!crypto_init() || (f = filter_get(ctx)) == NULL ||
        !crypto_hmac(QTLS_SHA256, f->key, sizeof(f->key), ticket, len, mac))
        return 0;
    if (!CRYPTO_THREAD_write_lock(f->lock))
        return 0;
    int fresh = filter_check_and_add(f, mac, now, window);
    CRYPTO_THREAD_unlock(f->lock);
    return fresh;
}
