/*
 * A small cache of values found again by the exact bytes they were made from: a context's
 * decoded peer certificates (cert.c) and its compressed certificate chains (cert_comp.c).
 * A handful of slots replaced round-robin, one read-write lock, made on first use; a
 * lookup compares the whole key, so nothing is ever taken for bytes that differ.
 */

#include "base/base.h"

#define SLOT_CACHE_SLOTS 8

struct slot_cache {
    CRYPTO_RWLOCK *lock;
    void (*free_value)(void *value);
    size_t next; /* round-robin replacement */
    struct {
        uint8_t tag;
        uint8_t *key;
        size_t len;
        void *value;
    } slot[SLOT_CACHE_SLOTS];
};

void slot_cache_free(struct slot_cache *cache)
{
    if (cache == NULL)
        return;
    for (size_t i = 0; i < SLOT_CACHE_SLOTS; i++) {
        OPENSSL_free(cache->slot[i].key);
        if (cache->slot[i].value != NULL)
            cache->free_value(cache->slot[i].value);
    }
    CRYPTO_THREAD_lock_free(cache->lock);
    OPENSSL_free(cache);
}

struct slot_cache *slot_cache_of(struct slot_cache **where, void (*free_value)(void *))
{
    struct slot_cache *cache = __atomic_load_n(where, __ATOMIC_ACQUIRE), *none = NULL;
    if (cache != NULL)
        return cache;
    cache = OPENSSL_zalloc(sizeof(*cache));
    if (cache == NULL || (cache->lock = CRYPTO_THREAD_lock_new()) == NULL) {
        OPENSSL_free(cache);
        return NULL;
    }
    cache->free_value = free_value;
    /* Two threads may make one at once: the first published wins, the other is freed. */
    if (!__atomic_compare_exchange_n(where, &none, cache, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        slot_cache_free(cache);
        return none;
    }
    return cache;
}

int slot_cache_find(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    int (*take)(void *value, void *arg), void *arg)
{
    int found = 0;
    if (cache == NULL || !CRYPTO_THREAD_read_lock(cache->lock))
        return 0;
    for (size_t i = 0; i < SLOT_CACHE_SLOTS && !found; i++) {
        if (cache->slot[i].value != NULL && cache->slot[i].tag == tag &&
            cache->slot[i].len == len && memcmp(cache->slot[i].key, key, len) == 0)
            found = take(cache->slot[i].value, arg);
    }
    CRYPTO_THREAD_unlock(cache->lock);
    return found;
}

void slot_cache_put(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    void *value)
{
    uint8_t *copy = OPENSSL_memdup(key, len);
    if (copy == NULL || !CRYPTO_THREAD_write_lock(cache->lock)) {
        OPENSSL_free(copy);
        cache->free_value(value); /* not cached: made again next time */
        return;
    }
    size_t i = cache->next++ % SLOT_CACHE_SLOTS;
    OPENSSL_free(cache->slot[i].key);
    if (cache->slot[i].value != NULL)
        cache->free_value(cache->slot[i].value);
    cache->slot[i].tag = tag;
    cache->slot[i].key = copy;
    cache->slot[i].len = len;
    cache->slot[i].value = value;
    CRYPTO_THREAD_unlock(cache->lock);
}
