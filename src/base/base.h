/*
 * base/: what every layer stands on. The bounds-checked reader and writer (bytes.h), the error
 * queue and alerts (err.c), the clock (clock.c) and a small keyed cache (slot_cache.c). Nothing
 * here calls any other folder.
 */
#ifndef QTLS_BASE_H
#define QTLS_BASE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/bytes.h"

/* ------------------------------------------------------------------ */
/* Errors and alerts (err.c), the clock (clock.c)                     */
/* ------------------------------------------------------------------ */

/* qtls's own reason codes for ERR_LIB_SSL, beside the system sslerr.h ones. */
#define QTLS_R_DUPLICATE_EXTENSION 900
#define QTLS_R_UNEXPECTED_EXTENSION 901
#define QTLS_R_KEY_UPDATE_NOT_ALLOWED 902
#define QTLS_R_EXCESS_HANDSHAKE_DATA 903
#define QTLS_R_UNEXPECTED_COMPATIBILITY_MODE 904
#define QTLS_R_NOT_QUIC 905
#define QTLS_R_DECODE_ERROR 906
#define QTLS_R_QUIC_CALLBACK_FAILED 907
#define QTLS_R_INCONSISTENT_CLIENT_HELLO 908
#define QTLS_R_MISSING_EXTENSION 909
#define QTLS_R_INVALID_ALPN_PROTOCOL 910
#define QTLS_R_NO_QUIC_METHOD 911
#define QTLS_R_CHANGE_CIPHER_SPEC_NOT_ALLOWED 912
#define QTLS_R_UNSUPPORTED_GROUP 913
#define QTLS_R_HANDSHAKE_FAILED_BEFORE 914
#define QTLS_R_BAD_SESSION 920 /* d2i_SSL_SESSION / ticket plaintext that does not decode */
#define QTLS_R_TLS_OVER_TCP_UNSUPPORTED 921 /* record-layer I/O: qtls is TLS for QUIC only */
#define QTLS_R_NOT_IMPLEMENTED 922          /* a setting qtls does not implement (data names it) */
#define QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC 923 /* RFC 9001 §4.4 */
#define QTLS_R_INVALID_SCT_LIST 924 /* sct.c: not an RFC 6962 §3.3 list (BoringSSL's reason) */
#define QTLS_R_OCSP_CB_ERROR 925    /* ocsp.c: a status callback said no, after OpenSSL's reason */
#define QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY 940 /* custom_ext.c: qtls handles that extension */
#define QTLS_R_CUSTOM_EXT_DUPLICATE 941          /* custom_ext.c: the type is already added */
#define QTLS_R_KEY_USAGE_BIT_INCORRECT 926 /* cert.c: a signing leaf without digitalSignature */
#define QTLS_R_QUIC_API_MIXED 950 /* quic_tls35.c: quictls and OpenSSL 3.5 QUIC APIs on one SSL */

/* Registers the reason strings once (called from OPENSSL_init_ssl). */
void err_load_strings(void);

/*
 * The one failure path: pushes `reason` on the error queue and records
 * `alert` unless an alert is already pending (the first alert wins; the
 * handshake driver sends it once). Always evaluates to 0.
 */
void qtls_set_alert(SSL *c, uint8_t alert);
/* Raises `reason` (after ERR_new/ERR_set_debug recorded the caller), records the alert; returns 0. */
int qtls_fail_raise(SSL *c, int alert, int reason);
#define qtls_fail(c, alert, reason)                                                                \
    (ERR_new(), ERR_set_debug(OPENSSL_FILE, OPENSSL_LINE, OPENSSL_FUNC),                           \
     qtls_fail_raise((c), (alert), (reason)))
/* Raises QTLS_R_NOT_IMPLEMENTED naming the setting (for any layer, err.c); returns 0. */
int qtls_not_implemented(const char *setting);

/* clock.c: the wall clock every session and ticket time comes from (µs / s since the epoch). */
uint64_t clock_now_us(void);
uint64_t clock_now_seconds(void);
/* Test hook: the clock every time above comes from, in µs (NULL restores the wall clock). */
void clock_set_test_clock(uint64_t (*now_us)(void));

/* Handshake message types (RFC 8446 §4). */
enum {
    HT_CLIENT_HELLO = 1,
    HT_SERVER_HELLO = 2,
    HT_NEW_SESSION_TICKET = 4,
    HT_END_OF_EARLY_DATA = 5,
    HT_ENCRYPTED_EXTENSIONS = 8,
    HT_CERTIFICATE = 11,
    HT_CERTIFICATE_REQUEST = 13,
    HT_CERTIFICATE_VERIFY = 15,
    HT_FINISHED = 20,
    HT_KEY_UPDATE = 24,
    HT_COMPRESSED_CERTIFICATE = 25, /* RFC 8879 §4 */
    HT_MESSAGE_HASH = 254,
};

/* ------------------------------------------------------------------ */
/* A keyed cache (slot_cache.c)                                       */
/* ------------------------------------------------------------------ */

/*
 * slot_cache.c: a few values found again by the exact bytes they were made from (a context's
 * decoded peer certificates, its compressed chains), under one lock, made on first use.
 */
struct slot_cache;
/* *where's cache, made (with the function that frees its values) if none; NULL if that failed. */
struct slot_cache *slot_cache_of(struct slot_cache **where, void (*free_value)(void *));
/* Calls take(value, arg) under the lock for the value stored under (tag, key) and returns its
   result; 0 if there is none (or cache is NULL). */
int slot_cache_find(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    int (*take)(void *value, void *arg), void *arg);
/* Stores value under a copy of (tag, key), replacing the oldest; the cache owns value from now
   on (freed at once if it cannot be stored). */
void slot_cache_put(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    void *value);
void slot_cache_free(struct slot_cache *cache);

#endif
