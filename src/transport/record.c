/*
 * The TLS record layer (RFC 8446 §5): the third front door, TLS over TCP. It stands where a QUIC
 * stack stands for the engine: an internal SSL_QUIC_METHOD takes the secrets, flights and alerts
 * the engine hands any transport, and the glue's hooks (struct quic_hooks) pull handshake bytes
 * out of records when the engine needs a message. The engine's encryption levels are the record
 * protection epochs: initial = plaintext records, early data = the client's early traffic keys,
 * handshake and application = the traffic keys of each.
 *
 * Records are read one at a time, header then body, exactly as many bytes as the record has
 * (libssl without read-ahead): a key change never meets bytes read ahead under the old key, and
 * a protocol that shares the socket after TLS finds its bytes unread. Records are written into
 * one output buffer and handed to the BIO; what the BIO does not take waits there (non-blocking
 * BIOs: SSL_ERROR_WANT_WRITE, then the next call writes it first).
 *
 * Middlebox compatibility (§D.4), when SSL_OP_ENABLE_MIDDLEBOX_COMPAT is set: one dummy
 * change_cipher_spec, from the server right after its first flight (ServerHello or
 * HelloRetryRequest), from the client right before its second (the second ClientHello or the
 * first protected record). A peer's dummy change_cipher_spec is dropped from its first ClientHello
 * until the handshake is done (§5), and refused anywhere else.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "transport/transport.h"

#include <errno.h>
#include <string.h>

#define RT_CHANGE_CIPHER_SPEC 20
#define RT_ALERT 21
#define RT_HANDSHAKE 22
#define RT_APPLICATION_DATA 23
#define HEADER_LEN 5
#define MAX_PLAINTEXT 16384                      /* 2^14 (§5.1) */
#define MAX_CIPHERTEXT (MAX_PLAINTEXT + 256)     /* TLSCiphertext.length (§5.2) */
#define MAX_INNER (MAX_PLAINTEXT + 1)            /* TLSInnerPlaintext without padding */
/* §5.5: AES-GCM protects at most 2^24.5 full-size records per key; qtls updates its key well
 * before (KeyUpdate, §4.6.3). ChaCha20-Poly1305's limit exceeds any sequence number. */
#define GCM_RECORD_LIMIT (1ull << 24)
/* OpenSSL's bounds on records that carry nothing: empty records and dummy change_cipher_spec
   in a row (MAX_EMPTY_RECORDS), user_canceled alerts (MAX_WARN_ALERT_COUNT); a peer sending
   them without end would keep the connection busy for nothing. */
#define MAX_EMPTY_RECORDS 32
#define MAX_WARN_ALERTS 5
/* KeyUpdates in a row without application data between them: BoringSSL stops at 32, for the
   same reason (each costs a key derivation). */
#define MAX_KEY_UPDATES 32

/* The keys of one level in one direction (initial: none, plaintext records). */
struct epoch {
    struct crypto_aead *aead; /* NULL: plaintext */
    uint64_t seq;             /* the next record's sequence number (§5.3) */
    uint8_t protected_seen;   /* read: a protected record came under these keys */
};

/*
 * One direction: the keys of every level, since the engine hands over a level's keys before it
 * is done with the level below (the client's application keys come before it writes its
 * Finished, the server's before it reads the client's). Records are written at the level the
 * engine names and read at the engine's read level; the handshake's keys go when it is done.
 */
struct record_dir {
    struct epoch ep[4];           /* by OSSL_ENCRYPTION_LEVEL */
    struct kept_secret app_secret; /* application traffic secret, for KeyUpdate (§7.2) */
};

struct record {
    struct record_dir rd, wr;
    /* Input: bytes read from the rbio; [in_off, wr_len(&in)) is the record being read. A
       decrypted record's application data waits at [app_off, app_off + app_len) of it. */
    struct wr in;
    size_t in_off, app_off, app_len, app_end; /* app_end: where its record ends */
    /* Output: records the wbio has not taken yet, [out_off, wr_len(&out)). */
    struct wr out;
    size_t out_off;
    /* The SSL_write in progress, for its retry (SSL_write(3)'s same-arguments rule): its
       buffer, the bytes handed to the wbio, and those of the record it has in part. */
    const void *write_buf;
    size_t write_done, write_pending;
    uint8_t records_sent;   /* a record went out: later ones say TLS 1.2, not TLS 1.0 */
    uint8_t ccs_sent;       /* the dummy change_cipher_spec (§D.4) */
    uint8_t first_flight;   /* server: its first flight is being written */
    uint8_t close_notify;   /* the peer's close_notify came */
    int8_t key_update;      /* a KeyUpdate to send: SSL_KEY_UPDATE_NONE or the type */
    uint8_t done;           /* the handshake's keys are gone */
    uint8_t blocked;        /* the wbio did not take all the output last time */
    uint8_t skip_done;      /* server: a record came under the handshake keys (skipping ends) */
    size_t early_bytes;     /* early data written (client), received or skipped (server) */
    uint8_t early_closed;   /* client: EndOfEarlyData went out, no more early data */
    uint8_t records_read;   /* a whole record came in */
    uint8_t empty_records;  /* records in a row with nothing for the application (below) */
    uint8_t warn_alerts;    /* user_canceled alerts in a row */
    uint8_t key_updates;    /* the peer's KeyUpdates since its last application data */
};

static struct record *rec(const SSL *c) { return cold_peek(c)->rec; }

/* ------------------------------------------------------------------ */
/* Keys                                                                */
/* ------------------------------------------------------------------ */

/* §7.3: the traffic key and IV of a secret, into a new AEAD for one direction. */
static int install(SSL *c, struct record_dir *d, int enc, OSSL_ENCRYPTION_LEVEL level,
                   const struct secret *s)
{
    struct epoch *e = &d->ep[level];
    const SSL_CIPHER *suite = c->cipher;
    uint8_t key[32], iv[CRYPTO_AEAD_IV_LEN];
    size_t key_len = crypto_aead_key_len(suite);
    struct crypto_aead *a = NULL;
    if (ks_expand_label(suite->hash, s, "key", NULL, 0, key, key_len) &&
        ks_expand_label(suite->hash, s, "iv", NULL, 0, iv, sizeof(iv)))
        a = crypto_aead_new(suite, enc, key, iv);
    OPENSSL_cleanse(key, sizeof(key));
    OPENSSL_cleanse(iv, sizeof(iv));
    if (a == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    crypto_aead_free(e->aead);
    e->aead = a;
    e->seq = 0;
    e->protected_seen = 0;
    if (level == ssl_encryption_application)
        secret_keep(&d->app_secret, s);
    return 1;
}

/* Once the handshake is done only the application keys are used: the others go. */
static void drop_handshake_keys(SSL *c)
{
    struct record *r = rec(c);
    if (r->done || c->phase != PHASE_DONE)
        return;
    r->done = 1;
    for (int l = ssl_encryption_early_data; l <= ssl_encryption_handshake; l++) {
        crypto_aead_free(r->rd.ep[l].aead);
        crypto_aead_free(r->wr.ep[l].aead);
        r->rd.ep[l].aead = r->wr.ep[l].aead = NULL;
    }
}

/* §4.6.3, §7.2: application_traffic_secret_N+1 = HKDF-Expand-Label(N, "traffic upd", "", Hash.length). */
static int update_keys(SSL *c, struct record_dir *d, int enc)
{
    struct secret cur, next;
    enum qtls_hash h = c->cipher->hash;
    secret_unkeep(&cur, &d->app_secret);
    next.len = crypto_hash_len(h);
    int ok = ks_expand_label(h, &cur, "traffic upd", NULL, 0, next.b, next.len) &&
             install(c, d, enc, ssl_encryption_application, &next);
    secret_wipe(&cur);
    secret_wipe(&next);
    return ok || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
}

/* ------------------------------------------------------------------ */
/* Writing records                                                     */
/* ------------------------------------------------------------------ */

static void header(uint8_t h[HEADER_LEN], uint8_t type, uint16_t version, size_t len)
{
    h[0] = type;
    h[1] = (uint8_t)(version >> 8);
    h[2] = (uint8_t)version;
    h[3] = (uint8_t)(len >> 8);
    h[4] = (uint8_t)len;
}

/*
 * One record of at most MAX_PLAINTEXT bytes of `type` into the output, protected when the write
 * epoch has keys (§5.2: the inner type follows the content, no padding). §5.1: the first
 * ClientHello's record says TLS 1.0 (0x0301) as OpenSSL's does; every other record TLS 1.2.
 */
static int seal_one(SSL *c, struct epoch *d, uint8_t type, const uint8_t *p, size_t n)
{
    struct record *r = rec(c);
    uint8_t h[HEADER_LEN];
    int protect = d != NULL && d->aead != NULL;
    size_t inner = n + 1, total = protect ? inner + CRYPTO_AEAD_TAG_LEN : n;
    if (!protect)
        header(h, type, c->server || r->records_sent ? TLS1_2_VERSION : TLS1_VERSION, n);
    else
        header(h, RT_APPLICATION_DATA, TLS1_2_VERSION, total);
    if (protect && d->seq == UINT64_MAX) /* §5.3: a sequence number never wraps */
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    wr_bytes(&r->out, h, sizeof(h));
    uint8_t *dst = wr_reserve(&r->out, total);
    if (dst == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    memcpy(dst, p, n);
    /* OpenSSL reports the header, then the inner content type (version 0x0303 when written) */
    cb_record(c, 1, h[1] << 8 | h[2], SSL3_RT_HEADER, h, sizeof(h));
    r->records_sent = 1;
    if (!protect)
        return 1;
    dst[n] = type;
    cb_record(c, 1, TLS1_2_VERSION, SSL3_RT_INNER_CONTENT_TYPE, &type, 1);
    if (!crypto_aead_seal(d->aead, d->seq, h, sizeof(h), dst, inner, dst))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    d->seq++;
    return 1;
}

/* §D.4: the dummy change_cipher_spec, once, when middlebox compatibility is on. */
static int send_ccs(SSL *c)
{
    static const uint8_t one = 1;
    struct record *r = rec(c);
    if (r->ccs_sent || !(c->options & SSL_OP_ENABLE_MIDDLEBOX_COMPAT) || c->phase != PHASE_HANDSHAKE)
        return 1;
    r->ccs_sent = 1;
    int ok = seal_one(c, NULL, RT_CHANGE_CIPHER_SPEC, &one, 1); /* never protected */
    cb_record(c, 1, TLS1_3_VERSION, SSL3_RT_CHANGE_CIPHER_SPEC, &one, 1);
    return ok;
}

/* Content of one type at a level, in records of at most MAX_PLAINTEXT bytes. */
static int seal(SSL *c, OSSL_ENCRYPTION_LEVEL level, uint8_t type, const uint8_t *p, size_t n)
{
    struct record *r = rec(c);
    struct epoch *d = &r->wr.ep[level];
    if (level != ssl_encryption_initial && d->aead == NULL) /* keys come before their data */
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    /* The client's dummy change_cipher_spec comes before its second flight (§D.4). */
    if (!c->server && r->records_sent && !r->ccs_sent &&
        (d->aead != NULL || type == RT_HANDSHAKE) && !send_ccs(c))
        return 0;
    do {
        size_t chunk = n < MAX_PLAINTEXT ? n : MAX_PLAINTEXT;
        if (!seal_one(c, d, type, p, chunk))
            return 0;
        p += chunk;
        n -= chunk;
    } while (n > 0);
    return 1;
}

/* Is output still waiting for the wbio? */
static int output_waits(const struct record *r) { return r->out_off < wr_len(&r->out); }

/* Why a BIO call returned <= 0: want-read, want-write (the retry flags), end of input, error. */
static int bio_retry(SSL *c, BIO *b)
{
    if (!BIO_should_retry(b))
        return 0;
    if (BIO_should_read(b))
        c->want_read = 1;
    else
        c->want_write = 1;
    return 1;
}

int record_output_waits(const SSL *c) { return rec(c) != NULL && output_waits(rec(c)); }

/* Hands the output to the wbio: 1 all taken, 0 some still waits (want set), -1 failed. */
int record_flush(SSL *c)
{
    struct record *r = rec(c);
    BIO *wbio = cold_peek(c)->wbio;
    while (output_waits(r)) {
        if (wbio == NULL) {
            ERR_raise(ERR_LIB_SSL, SSL_R_BIO_NOT_SET);
            return -1;
        }
        size_t left = wr_len(&r->out) - r->out_off;
        int n = BIO_write(wbio, r->out.buf + r->out_off, left > INT_MAX ? INT_MAX : (int)left);
        if (n <= 0) {
            if (bio_retry(c, wbio)) {
                r->blocked = 1;
                return 0;
            }
            c->syscall_error = 1;
            return -1;
        }
        r->out_off += (size_t)n;
    }
    r->blocked = 0;
    r->out_off = 0;
    if (c->mode & SSL_MODE_RELEASE_BUFFERS)
        wr_free_public(&r->out); /* records as sent: ciphertext, or a plaintext first flight */
    else
        wr_reset_public(&r->out);
    return 1;
}

/* ------------------------------------------------------------------ */
/* The engine's transport (an internal SSL_QUIC_METHOD)                */
/* ------------------------------------------------------------------ */

static int sink_set_secrets(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *read,
                            const uint8_t *write, size_t len)
{
    struct record *r = rec(c);
    struct secret s;
    int ok = 1;
    if (read != NULL) {
        secret_set(&s, read, len);
        ok = install(c, &r->rd, 0, level, &s);
        secret_wipe(&s);
    }
    if (ok && write != NULL) {
        /* The server's first flight ends where its keys change (§D.4). */
        if (c->server && r->first_flight && !send_ccs(c))
            return 0;
        r->first_flight = 0;
        secret_set(&s, write, len);
        ok = install(c, &r->wr, 1, level, &s);
        secret_wipe(&s);
    }
    return ok;
}

/* The message callback for each whole message handed over (the engine's are whole). */
static void report_messages(SSL *c, const uint8_t *p, size_t n)
{
    struct rd all, body;
    uint8_t type;
    rd_init(&all, p, n);
    for (const uint8_t *at = p; rd_u8(&all, &type) && rd_vec24(&all, &body); at = all.p)
        cb_message(c, 1, at, (size_t)(all.p - at));
}

static int sink_add_handshake_data(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                                   size_t len)
{
    struct record *r = rec(c);
    if (c->server && level == ssl_encryption_initial && !r->records_sent)
        r->first_flight = 1;
    if (!seal(c, level, RT_HANDSHAKE, data, len))
        return 0;
    report_messages(c, data, len);
    if (level == ssl_encryption_early_data) /* EndOfEarlyData (§4.5) */
        r->early_closed = 1;
    return 1;
}

static int sink_flush_flight(SSL *c)
{
    struct record *r = rec(c);
    /* A server's first flight that ends without a key change is a HelloRetryRequest (§D.4). */
    if (c->server && r->first_flight) {
        r->first_flight = 0;
        if (!send_ccs(c))
            return 0;
    }
    if (record_flush(c) < 0 && !c->syscall_error)
        return 0;
    BIO *wbio = cold_peek(c)->wbio;
    if (!output_waits(r) && wbio != NULL)
        (void)BIO_flush(wbio);
    return 1; /* output a non-blocking BIO did not take waits for the next call (out_waiting) */
}

/* §6: the alert, in a record of the current write epoch, then as much of the output as goes. */
/*
 * The keys the peer reads our records with now. A client's handshake is not over for its peer
 * until its own Finished: until then it writes under its handshake keys (or its early keys,
 * while 0-RTT the server took is not ended by EndOfEarlyData), though the engine's write level
 * is already 1-RTT. Otherwise the engine's level, or the highest below it that has keys.
 */
static OSSL_ENCRYPTION_LEVEL alert_level(SSL *c, OSSL_ENCRYPTION_LEVEL level)
{
    const struct record *r = rec(c);
    if (!c->server && c->phase == PHASE_HANDSHAKE) {
        int early = r->wr.ep[ssl_encryption_early_data].aead != NULL && !r->early_closed;
        /* offered, and not refused in EncryptedExtensions: a server that took it reads the
           early keys (one that refused skips what it cannot read) */
        if (early && (c->early_data_status == SSL_EARLY_DATA_ACCEPTED ||
                      (c->hs != NULL && !c->hs->early_data_answered)))
            return ssl_encryption_early_data;
        if (r->wr.ep[ssl_encryption_handshake].aead != NULL)
            return ssl_encryption_handshake;
    }
    while (level > ssl_encryption_initial && r->wr.ep[level].aead == NULL)
        level--;
    return level;
}

static int sink_send_alert(SSL *c, OSSL_ENCRYPTION_LEVEL level, uint8_t alert)
{
    const uint8_t body[2] = {SSL3_AL_FATAL, alert};
    level = alert_level(c, level);
    if (seal(c, level, RT_ALERT, body, sizeof(body)))
        (void)record_flush(c);
    return 1;
}

static const SSL_QUIC_METHOD record_sink = {
    sink_set_secrets,
    sink_add_handshake_data,
    sink_flush_flight,
    sink_send_alert,
};

/* ------------------------------------------------------------------ */
/* Reading records                                                     */
/* ------------------------------------------------------------------ */

/* What filling the input gave, beyond "done" (1) and "not yet" (0, want set). */
enum { FILL_FAILED = -1, FILL_EOF = -2, FILL_ZERO = -3 };

/*
 * Makes the input hold `need` bytes of the current record. Without read-ahead exactly those are
 * read; with it, whatever the rbio has, up to a whole record more. 1, 0 not yet (want set),
 * FILL_EOF (the rbio says it ended), FILL_ZERO (it read nothing and says neither retry nor end:
 * SSL_ERROR_SYSCALL, as libssl), FILL_FAILED.
 */
static int fill(SSL *c, size_t need)
{
    struct record *r = rec(c);
    BIO *rbio = cold_peek(c)->rbio;
    while (wr_len(&r->in) - r->in_off < need) {
        if (rbio == NULL) {
            ERR_raise(ERR_LIB_SSL, SSL_R_BIO_NOT_SET);
            return FILL_FAILED;
        }
        if (r->in_off > 0) { /* records before this one are done: their room is reused */
            wr_consume(&r->in, r->in_off);
            r->in_off = 0;
        }
        size_t have = wr_len(&r->in), want = need - have;
        if (c->read_ahead) { /* at least a whole record, at most INT_MAX */
            size_t bulk = cold_peek(c)->read_buffer_len > HEADER_LEN + MAX_CIPHERTEXT
                              ? cold_peek(c)->read_buffer_len
                              : HEADER_LEN + MAX_CIPHERTEXT;
            if (want < bulk)
                want = bulk < INT_MAX ? bulk : INT_MAX;
        }
        uint8_t *dst = wr_reserve_exact(&r->in, want);
        if (dst == NULL) {
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return FILL_FAILED;
        }
        errno = 0; /* as libssl: a BIO that ends without setting errno leaves it 0 */
        int n = BIO_read(rbio, dst, (int)want);
        wr_truncate(&r->in, wr_len(&r->in) - want + (n > 0 ? (size_t)n : 0));
        if (n > 0)
            continue;
        if (bio_retry(c, rbio)) {
            /* an idle connection keeps no read buffer, as libssl frees its own then */
            if ((c->mode & SSL_MODE_RELEASE_BUFFERS) && wr_len(&r->in) == 0)
                wr_free_public(&r->in);
            return 0;
        }
        c->syscall_error = 1;
        if (n == 0 && BIO_eof(rbio)) {
            c->syscall_error = 0;
            return FILL_EOF;
        }
        return n == 0 ? FILL_ZERO : FILL_FAILED;
    }
    return 1;
}

/* Drops the record just processed from the input. */
static void consume_record(SSL *c, size_t len)
{
    struct record *r = rec(c);
    r->in_off += len;
    if (r->in_off == wr_len(&r->in)) {
        r->in_off = 0;
        if (c->mode & SSL_MODE_RELEASE_BUFFERS)
            wr_free_public(&r->in); /* application data is wiped as it is read, if asked */
        else
            wr_reset_public(&r->in);
    }
}

/*
 * §4.2.10: early data a server takes counts against its recv_max_early_data, and so does early
 * data it skips after rejecting it (OpenSSL's limit for both); beyond it, unexpected_message.
 */
static int count_early_data(SSL *c, size_t n)
{
    struct record *r = rec(c);
    r->early_bytes += n;
    if (r->early_bytes > c->recv_max_early_data)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_TOO_MUCH_EARLY_DATA);
    return 1;
}

/* Server: is the client's early data being read (accepted, 0-RTT keys in use)? */
static int reading_early_data(const SSL *c)
{
    return c->server && c->phase == PHASE_HANDSHAKE && c->read_level == ssl_encryption_early_data;
}

/* Server: did it reject the early data the client sent, whose records it skips until the
   client's handshake records come (§4.2.10)? */
static int skipping_early_data(const SSL *c)
{
    return c->server && c->phase == PHASE_HANDSHAKE &&
           c->early_data_status == SSL_EARLY_DATA_REJECTED && !rec(c)->skip_done;
}

/* A received alert (§6): close_notify ends the peer's writing; every other is fatal. */
static enum record_event take_alert(SSL *c, const uint8_t *p, size_t n)
{
    struct record *r = rec(c);
    if (n != 2)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_BAD_LENGTH), REC_ERROR;
    cb_record(c, 0, TLS1_3_VERSION, SSL3_RT_ALERT, p, n);
    cb_info(c, SSL_CB_READ_ALERT, (p[0] << 8) | p[1]);
    if (p[1] == SSL_AD_CLOSE_NOTIFY) {
        r->close_notify = 1;
        c->shutdown |= SSL_RECEIVED_SHUTDOWN;
        return REC_CLOSED;
    }
    /* §6.1: a close_notify follows; nothing to do, but not forever (OpenSSL stops at 5) */
    if (p[1] == SSL_AD_USER_CANCELLED && ++r->warn_alerts < MAX_WARN_ALERTS)
        return REC_AGAIN;
    if (p[1] == SSL_AD_USER_CANCELLED)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_TOO_MANY_WARN_ALERTS), REC_ERROR;
    /* The peer's fatal alert: its reason, as OpenSSL reports it (SSL_AD_REASON_OFFSET); no alert
       goes back. */
    c->alert_sent = 1;
    c->alert = p[1];
    ERR_raise_data(ERR_LIB_SSL, SSL_AD_REASON_OFFSET + p[1], "SSL alert number %d", p[1]);
    c->shutdown |= SSL_RECEIVED_SHUTDOWN;
    return REC_ERROR;
}

/* §5.4: the TLSInnerPlaintext's content type is its last non-zero byte, zeros after it. */
static int inner_type(SSL *c, const uint8_t *p, size_t *n, uint8_t *type)
{
    while (*n > 0 && p[*n - 1] == 0)
        (*n)--;
    if (*n == 0)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_BAD_RECORD_TYPE);
    *type = p[--*n];
    cb_record(c, 0, TLS1_3_VERSION, SSL3_RT_INNER_CONTENT_TYPE, type, 1);
    return 1;
}

/* §5: a dummy change_cipher_spec, dropped during the handshake (the message callback saw its
   header only, as OpenSSL's), refused otherwise. */
static enum record_event take_ccs(SSL *c, const uint8_t *p, size_t n)
{
    if (n != 1 || p[0] != 1 || c->phase != PHASE_HANDSHAKE)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_CCS_MESSAGE), REC_ERROR;
    return REC_AGAIN;
}

/* One more record with nothing for anyone (an empty one, a dummy change_cipher_spec): 0 past
   OpenSSL's bound. */
static int count_empty(SSL *c, int ccs)
{
    if (++rec(c)->empty_records <= MAX_EMPTY_RECORDS)
        return 1;
    return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE,
                     ccs ? SSL_R_UNEXPECTED_CCS_MESSAGE : SSL_R_RECORD_TOO_SMALL);
}

/* The keys records are read with now: the engine's read level's. */
static struct epoch *read_epoch(const SSL *c) { return &rec(c)->rd.ep[c->read_level]; }

/*
 * Unprotects the record at p (n bytes after the header h): the inner content and type. 1, 0
 * failed, or -1: a record of early data the server rejected, to be skipped (§4.2.10).
 */
static int unprotect(SSL *c, const uint8_t *h, uint8_t *p, size_t *n, uint8_t *type)
{
    struct epoch *d = read_epoch(c);
    if (d->aead == NULL) /* early data before the second ClientHello (HelloRetryRequest) */
        return count_early_data(c, *n) ? -1 : 0;
    if (*n < CRYPTO_AEAD_TAG_LEN + 1 || !crypto_aead_open(d->aead, d->seq, h, HEADER_LEN, p, *n, p)) {
        if (skipping_early_data(c))
            return count_early_data(c, *n) ? -1 : 0;
        return qtls_fail(c, SSL_AD_BAD_RECORD_MAC, SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC);
    }
    rec(c)->skip_done = 1;
    d->seq++;
    d->protected_seen = 1;
    *n -= CRYPTO_AEAD_TAG_LEN;
    if (*n > MAX_INNER) /* §5.4: the TLSInnerPlaintext, padding included, is at most 2^14 + 1 */
        return qtls_fail(c, SSL_AD_RECORD_OVERFLOW, SSL_R_DATA_LENGTH_TOO_LONG);
    if (!inner_type(c, p, n, type))
        return 0;
    if (*n > MAX_PLAINTEXT)
        return qtls_fail(c, SSL_AD_RECORD_OVERFLOW, SSL_R_DATA_LENGTH_TOO_LONG);
    return 1;
}

/*
 * The first bytes are no TLS record. A server told plain HTTP, as OpenSSL's: "http request" or
 * "https proxy request", and no alert (the client would not read one); else protocol_version.
 */
static int not_tls(SSL *c, const uint8_t *h)
{
    static const char *const http[] = {"GET ", "POST", "HEAD", "PUT "};
    if (c->server && !rec(c)->records_read) {
        for (size_t i = 0; i < sizeof(http) / sizeof(http[0]); i++)
            if (memcmp(h, http[i], 4) == 0) {
                ERR_raise(ERR_LIB_SSL, SSL_R_HTTP_REQUEST);
                c->alert_sent = 1;
                return 0;
            }
        if (memcmp(h, "CONNE", HEADER_LEN) == 0) {
            ERR_raise(ERR_LIB_SSL, SSL_R_HTTPS_PROXY_REQUEST);
            c->alert_sent = 1;
            return 0;
        }
    }
    return qtls_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_WRONG_VERSION_NUMBER);
}

/* §5.1: the header's checks, before the body is read. */
static int check_header(SSL *c, const uint8_t *h, size_t *len)
{
    const struct epoch *d = read_epoch(c);
    *len = (size_t)h[3] << 8 | h[4];
    if (h[1] != 3) /* not a TLS record at all (a plaintext protocol, an SSL 2.0 hello) */
        return not_tls(c, h);
    if (h[0] < RT_CHANGE_CIPHER_SPEC || h[0] > RT_APPLICATION_DATA)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_BAD_RECORD_TYPE);
    int protected = h[0] == RT_APPLICATION_DATA && (d->aead != NULL || skipping_early_data(c));
    if (*len > (protected ? MAX_CIPHERTEXT : MAX_PLAINTEXT))
        return qtls_fail(c, SSL_AD_RECORD_OVERFLOW, protected ? SSL_R_ENCRYPTED_LENGTH_TOO_LONG
                                                              : SSL_R_DATA_LENGTH_TOO_LONG);
    /* Once keys are in use only protected records come, but for the dummy change_cipher_spec
       and a plaintext alert from a peer that failed before it had our keys. */
    if (d->aead != NULL && h[0] != RT_APPLICATION_DATA && h[0] != RT_CHANGE_CIPHER_SPEC &&
        !(h[0] == RT_ALERT && !d->protected_seen && c->phase == PHASE_HANDSHAKE))
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_RECORD);
    if (d->aead == NULL && h[0] == RT_APPLICATION_DATA && !skipping_early_data(c))
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_RECORD);
    return 1;
}

/* The end of the rbio without close_notify: an error, unless SSL_OP_IGNORE_UNEXPECTED_EOF
   takes it as a close_notify (OpenSSL 3.0's ssl3_read_n). */
static enum record_event take_eof(SSL *c)
{
    if (c->options & SSL_OP_IGNORE_UNEXPECTED_EOF) {
        c->shutdown |= SSL_RECEIVED_SHUTDOWN;
        rec(c)->close_notify = 1;
        return REC_CLOSED;
    }
    ERR_raise(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING);
    c->alert_sent = 1; /* the connection is gone: no alert to send */
    if (c->phase == PHASE_DONE)
        c->phase = PHASE_FAILED;
    return REC_EOF;
}

/* A fill that did not complete, as the event the caller acts on. */
static enum record_event fill_event(SSL *c, int f)
{
    switch (f) {
    case 0:
        return REC_WANT;
    case FILL_EOF:
        return take_eof(c);
    case FILL_ZERO:
        return REC_EOF;
    default:
        return REC_ERROR;
    }
}

/* The content of one record, by type: handshake bytes to the glue, application data kept. */
static enum record_event take_content(SSL *c, uint8_t type, const uint8_t *p, size_t n,
                                      size_t body_at)
{
    struct record *r = rec(c);
    switch (type) {
    case RT_ALERT:
        return take_alert(c, p, n);
    case RT_HANDSHAKE: {
        OSSL_ENCRYPTION_LEVEL level = (OSSL_ENCRYPTION_LEVEL)c->read_level;
        if (n == 0) /* §5.1: no zero-length handshake fragments */
            return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_BAD_LENGTH), REC_ERROR;
        if (!quic_buffer_input(c, level, p, n)) {
            /* a message across a key change, or longer than the level allows */
            qtls_set_alert(c, SSL_AD_UNEXPECTED_MESSAGE);
            return REC_ERROR;
        }
        return REC_HANDSHAKE;
    }
    case RT_APPLICATION_DATA:
        /* §5.1: never during the handshake but for early data, nor inside a handshake message */
        if (reading_early_data(c)) {
            if (!count_early_data(c, n))
                return REC_ERROR;
        } else if (c->phase != PHASE_DONE || r->close_notify ||
                   quic_input_pending(c, ssl_encryption_application)) {
            return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_RECORD), REC_ERROR;
        }
        r->app_off = body_at;
        r->app_len = n;
        return n > 0 ? REC_APP : REC_AGAIN;
    default: /* change_cipher_spec under protection */
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_CCS_MESSAGE), REC_ERROR;
    }
}

enum record_event record_next(SSL *c)
{
    struct record *r = rec(c);
    if (r->app_len > 0) /* the application data read before is not taken yet */
        return REC_APP;
    drop_handshake_keys(c);
    for (;;) {
        size_t len, n;
        uint8_t type;
        int f = fill(c, HEADER_LEN);
        if (f <= 0)
            return fill_event(c, f);
        uint8_t *h = r->in.buf + r->in_off;
        if (!check_header(c, h, &len))
            return REC_ERROR;
        f = fill(c, HEADER_LEN + len);
        if (f <= 0) /* an end inside a record is an end too */
            return fill_event(c, f);
        h = r->in.buf + r->in_off; /* the input may have moved */
        cb_record(c, 0, h[1] << 8 | h[2], SSL3_RT_HEADER, h, HEADER_LEN);
        uint8_t *p = h + HEADER_LEN;
        n = len;
        type = h[0];
        enum record_event e;
        int u = type == RT_APPLICATION_DATA ? unprotect(c, h, p, &n, &type) : 1;
        if (h[0] == RT_CHANGE_CIPHER_SPEC) /* never protected: inside a record it is refused */
            e = take_ccs(c, p, n);
        else if (u <= 0)
            e = u < 0 ? REC_AGAIN : REC_ERROR; /* skipped early data, or a failure */
        else
            e = take_content(c, type, p, n, (size_t)(p - r->in.buf));
        r->records_read = 1;
        if (e == REC_AGAIN && u >= 0 && !count_empty(c, h[0] == RT_CHANGE_CIPHER_SPEC))
            e = REC_ERROR;
        if (e == REC_APP || e == REC_HANDSHAKE)
            r->empty_records = r->warn_alerts = 0;
        if (e == REC_APP)
            r->key_updates = 0;
        if (e == REC_APP) {
            r->app_end = r->in_off + HEADER_LEN + len;
            return e; /* the record stays until its data is read */
        }
        consume_record(c, HEADER_LEN + len);
        if (e != REC_AGAIN)
            return e;
    }
}

size_t record_take_app(SSL *c, uint8_t *buf, size_t num, int peek)
{
    struct record *r = rec(c);
    if (r == NULL || r->app_len == 0)
        return 0;
    size_t n = num < r->app_len ? num : r->app_len;
    memcpy(buf, r->in.buf + r->app_off, n);
    if (peek)
        return n;
    r->app_off += n;
    r->app_len -= n;
    if (r->app_len == 0) { /* the whole record is read: drop it */
        if (c->options & SSL_OP_CLEANSE_PLAINTEXT) /* wiped once read, as OpenSSL's option */
            OPENSSL_cleanse(r->in.buf + r->in_off, r->app_end - r->in_off);
        consume_record(c, r->app_end - r->in_off);
    }
    return n;
}

int record_early_writable(const SSL *c)
{
    const struct record *r = rec(c);
    return r != NULL && c->phase == PHASE_HANDSHAKE && !r->early_closed &&
           r->wr.ep[ssl_encryption_early_data].aead != NULL;
}

int record_app_writable(const SSL *c)
{
    return rec(c) != NULL && rec(c)->wr.ep[ssl_encryption_application].aead != NULL;
}

size_t record_early_written(const SSL *c) { return rec(c) != NULL ? rec(c)->early_bytes : 0; }

int record_app_secret(const SSL *c, int write, struct secret *s)
{
    secret_wipe(s);
    if (rec(c) != NULL)
        secret_unkeep(s, write ? &rec(c)->wr.app_secret : &rec(c)->rd.app_secret);
    return s->len != 0;
}

size_t record_pending(const SSL *c) { return rec(c) != NULL ? rec(c)->app_len : 0; }

int record_has_pending(const SSL *c)
{
    const struct record *r = rec(c);
    return r != NULL && (r->app_len > 0 || wr_len(&r->in) > r->in_off);
}

int record_close_notify_received(const SSL *c) { return rec(c) != NULL && rec(c)->close_notify; }

/* ------------------------------------------------------------------ */
/* The glue's hooks                                                    */
/* ------------------------------------------------------------------ */

/* Handshake bytes for the engine: 1 some came, 0 none yet (want set), -1 failed. */
static int hook_pull(SSL *c)
{
    if (c->phase == PHASE_DONE) /* after the handshake SSL_read reads the records */
        return 0;
    for (;;) {
        switch (record_next(c)) {
        case REC_HANDSHAKE:
            return 1;
        case REC_WANT:
            return 0;
        case REC_APP: /* early data: SSL_read_early_data takes it before the handshake goes on */
            c->want_read = 1;
            return 0;
        case REC_AGAIN:
            continue;
        case REC_CLOSED: /* the peer closed before the handshake was done */
            qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_EOF_WHILE_READING);
            c->alert_sent = 1;
            return -1;
        case REC_EOF:
        case REC_ERROR:
            break;
        }
        return -1;
    }
}

static int hook_peer_tp(SSL *c, const uint8_t *params, size_t len) { return 1; }

static int hook_settle(SSL *c) { return 1; }

static int hook_flush(SSL *c) { return record_flush(c); }

/* Output waits for the wbio only once it refused some: sealed records are written at the end of
   each flight (sink_flush_flight). */
static int hook_out_waiting(const SSL *c) { return rec(c)->blocked && output_waits(rec(c)); }

static const struct quic_hooks record_hooks = {hook_pull, hook_peer_tp, hook_settle, hook_flush,
                                               hook_out_waiting};

/* ------------------------------------------------------------------ */
/* Attaching, application data, KeyUpdate, close_notify                */
/* ------------------------------------------------------------------ */

int record_attach(SSL *c)
{
    if (rec(c) != NULL)
        return 1;
    if (cold_peek(c)->rbio == NULL && cold_peek(c)->wbio == NULL) {
        /* Neither a QUIC method nor BIOs: nothing to carry the handshake. */
        ERR_raise(ERR_LIB_SSL, QTLS_R_NO_QUIC_METHOD);
        return 0;
    }
    struct ssl_cold *k = cold_get(c);
    if (k == NULL || (k->rec = OPENSSL_zalloc(sizeof(*k->rec))) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    wr_init(&k->rec->in);
    wr_init(&k->rec->out);
    k->rec->key_update = SSL_KEY_UPDATE_NONE;
    c->tcp = 1;
    c->quic_method = &record_sink;
    c->quic_hooks = &record_hooks;
    return 1;
}

void record_free(SSL *c)
{
    struct record *r = rec(c);
    if (r == NULL)
        return;
    for (int l = 0; l < 4; l++) {
        crypto_aead_free(r->rd.ep[l].aead);
        crypto_aead_free(r->wr.ep[l].aead);
    }
    kept_secret_wipe(&r->rd.app_secret);
    kept_secret_wipe(&r->wr.app_secret);
    wr_free(&r->in);
    wr_free(&r->out);
    OPENSSL_clear_free(r, sizeof(*r));
    c->cold->rec = NULL;
}

/* §4.6.3: KeyUpdate { update_not_requested(0), update_requested(1) }, then the new write key. */
static int send_key_update(SSL *c, int requested)
{
    const uint8_t msg[5] = {HT_KEY_UPDATE, 0, 0, 1, (uint8_t)requested};
    if (!seal(c, ssl_encryption_application, RT_HANDSHAKE, msg, sizeof(msg)))
        return 0;
    cb_handshake_message(c, 1, msg, sizeof(msg));
    cb_message(c, 1, msg, sizeof(msg));
    return update_keys(c, &rec(c)->wr, 1);
}

int record_request_key_update(SSL *c, int type)
{
    rec(c)->key_update = (int8_t)type;
    return 1;
}

int record_pending_key_update(const SSL *c)
{
    return rec(c) != NULL ? rec(c)->key_update : SSL_KEY_UPDATE_NONE;
}

/* A KeyUpdate asked for (SSL_key_update, a peer's update_requested, the AEAD's limit), sent. */
static int send_due_key_update(SSL *c)
{
    struct record *r = rec(c);
    if (r->key_update == SSL_KEY_UPDATE_NONE && c->cipher->cipher_nid != NID_chacha20_poly1305 &&
        r->wr.ep[ssl_encryption_application].seq >= GCM_RECORD_LIMIT)
        r->key_update = SSL_KEY_UPDATE_NOT_REQUESTED;
    if (r->key_update == SSL_KEY_UPDATE_NONE)
        return 1;
    int requested = r->key_update == SSL_KEY_UPDATE_REQUESTED;
    r->key_update = SSL_KEY_UPDATE_NONE;
    return send_key_update(c, requested);
}

int record_peer_key_update(SSL *c, struct rd body)
{
    uint8_t requested;
    if (!rd_u8(&body, &requested) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (requested > 1)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_UPDATE);
    if (++rec(c)->key_updates > MAX_KEY_UPDATES)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_TOO_MANY_KEY_UPDATES);
    /* §4.6.3: answered once, with update_not_requested, before the next application data. */
    if (requested && rec(c)->key_update == SSL_KEY_UPDATE_NONE)
        rec(c)->key_update = SSL_KEY_UPDATE_NOT_REQUESTED;
    return update_keys(c, &rec(c)->rd, 0);
}

/*
 * SSL_write(3) as OpenSSL 3.0's ssl3_write_bytes: records of up to 2^14 bytes, each handed to the
 * wbio before the next is sealed. When the wbio takes a record only in part, the call returns 0
 * (want-write) with the record sealed; the retry must ask for at least as much
 * (SSL_R_BAD_LENGTH) from the same buffer unless SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
 * (SSL_R_BAD_WRITE_RETRY), finishes it and goes on. The count returned covers everything this
 * write did since its first call; with SSL_MODE_ENABLE_PARTIAL_WRITE it returns after a record.
 */
int record_write_app(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *buf, size_t num,
                     size_t *written)
{
    struct record *r = rec(c);
    size_t tot = r->write_done;
    drop_handshake_keys(c);
    if (num < tot || (r->write_pending > 0 && num < tot + r->write_pending)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return -1;
    }
    if (r->write_pending > 0 && buf != r->write_buf &&
        !(c->mode & SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_WRITE_RETRY);
        return -1;
    }
    int f = record_flush(c);
    if (f <= 0)
        return f;
    tot += r->write_pending;
    r->write_pending = 0;
    while (tot < num) {
        size_t chunk = num - tot < MAX_PLAINTEXT ? num - tot : MAX_PLAINTEXT;
        if (!send_due_key_update(c) ||
            !seal(c, level, RT_APPLICATION_DATA, buf + tot, chunk) ||
            (f = record_flush(c)) < 0) {
            r->write_done = 0; /* failed: an alert is recorded, or the wbio failed */
            return -1;
        }
        r->write_buf = buf;
        if (f == 0) { /* sealed; the retry hands it over */
            r->write_done = tot;
            r->write_pending = chunk;
            return 0;
        }
        tot += chunk;
        if (c->mode & SSL_MODE_ENABLE_PARTIAL_WRITE)
            break;
    }
    r->write_done = 0;
    if (level == ssl_encryption_early_data) /* what the early data limit counts: writes done */
        r->early_bytes += tot;
    *written = tot;
    return 1;
}

/* Sends what is due after the handshake (a KeyUpdate) and writes out the output. */
int record_send_due(SSL *c)
{
    if (!send_due_key_update(c))
        return -1;
    return record_flush(c);
}

int record_send_close_notify(SSL *c)
{
    const uint8_t body[2] = {SSL3_AL_WARNING, SSL_AD_CLOSE_NOTIFY};
    if (!seal(c, ssl_encryption_application, RT_ALERT, body, sizeof(body)))
        return -1;
    cb_record(c, 1, TLS1_3_VERSION, SSL3_RT_ALERT, body, sizeof(body));
    cb_info(c, SSL_CB_WRITE_ALERT, (SSL3_AL_WARNING << 8) | SSL_AD_CLOSE_NOTIFY);
    return record_flush(c);
}
