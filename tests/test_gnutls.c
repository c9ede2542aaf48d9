/*
 * Interop with an independent TLS 1.3 stack: GnuTLS 3.7's QUIC mode as an
 * in-process peer of qtls, in both roles, driven the way ngtcp2's GnuTLS
 * backend drives it. Handshake bytes move per encryption level in memory,
 * like CRYPTO frames: qtls through SSL_QUIC_METHOD (mock_quic's method and
 * struct mock_side), GnuTLS through gnutls_handshake_write and its
 * read/secret/alert hooks, with the quic_transport_parameters extension
 * (0x39) registered on the session. GnuTLS >= 3.7.0 (libgnutls28-dev).
 *
 * Every case checks that both sides complete with the suite and group the
 * configuration forces, that the secrets each side derived agree crosswise
 * per level (client write == server read and the reverse, handshake and
 * application), that the transport parameters and SNI crossed, that ALPN
 * "h3" was selected on both sides, and that the server certificate verified
 * on the client (GnuTLS against ca.pem and "localhost", qtls likewise).
 * Post-handshake messages (NewSessionTicket) from either server must be
 * taken in whole by the client; the GnuTLS client records a qtls ticket.
 *
 * Resumption (RFC 8446 §2.2) and 0-RTT (RFC 9001 §4.6) run a first
 * connection, keep the client's session (qtls: the SSL_SESSION handed to the
 * new-session callback; GnuTLS: gnutls_session_get_data2 once the tickets
 * arrived) and the server's ticket key and SSL_CTX, then connect again with
 * it: both sides must report resumption, and with 0-RTT the early secret
 * must be the client's write secret and the server's read secret, equal,
 * with both sides agreeing that the server accepted (or refused) it. In QUIC
 * mode GnuTLS neither sends nor reads early application data itself: the
 * early-level secret callback is what 0-RTT means to it, as to ngtcp2.
 *
 * What GnuTLS 3.7.9 does differently or cannot do, each stated in its case
 * (and printed when it runs):
 * - 0-RTT offered and then a HelloRetryRequest fails in both roles
 *   (conformance.md §4.3 quirk 1, which is two bugs): a GnuTLS server keeps
 *   the 0-RTT it accepted on the first ClientHello and fails once it has sent
 *   its flight; a GnuTLS client offers 0-RTT again in its second ClientHello.
 *   Resumption after a HelloRetryRequest without 0-RTT works both ways.
 * - A GnuTLS server's tickets allow 16384 bytes of early data unless told
 *   0xffffffff, which QUIC requires (RFC 9001 §4.6.1).
 * - A GnuTLS client offers 0-RTT even with a ticket that does not allow it.
 * - A GnuTLS server records ClientHellos against replay (RFC 8446 §8.2)
 *   rather than single-use tickets: one ticket gets 0-RTT more than once.
 * - A GnuTLS server refuses 0-RTT when the client's ticket age is ahead of
 *   its own view by even a millisecond.
 *
 * Each combination is its own cmocka test, named after what it shows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>

#include "gnutls_quic.h"
#include "mock_quic.h"

#define NLEVELS 4
#define MAX_CASES 128

/* Transport parameters are opaque to TLS; distinct bytes per sender show who sent what. */
static const uint8_t qtls_tp[] = "qtls transport parameters";
static const uint8_t gnutls_tp[] = "GnuTLS transport parameters, a little longer";

struct suite {
    const char *name; /* IANA = OpenSSL = gnutls_ciphersuite_get() name */
    uint32_t id;      /* SSL_CIPHER_get_id */
    const char *gnutls_cipher;
    size_t secret_len;
};

static const struct suite suites[] = {
    {"TLS_AES_128_GCM_SHA256", 0x03001301, "AES-128-GCM", 32},
    {"TLS_AES_256_GCM_SHA384", 0x03001302, "AES-256-GCM", 48},
    {"TLS_CHACHA20_POLY1305_SHA256", 0x03001303, "CHACHA20-POLY1305", 32},
    {"TLS_AES_128_CCM_SHA256", 0x03001304, "AES-128-CCM", 32},
};

struct group {
    const char *name; /* qtls (OpenSSL) groups list name */
    int nid;
    const char *gnutls_prio;
    gnutls_group_t gnutls_id;
};

/*
 * X448 is in GnuTLS 3.7.9's TLS 1.3 group list (GROUP-X448, nettle >= 3.6),
 * so it is tested like the others.
 */
static const struct group groups[] = {
    {"X25519", NID_X25519, "GROUP-X25519", GNUTLS_GROUP_X25519},
    {"P-256", NID_X9_62_prime256v1, "GROUP-SECP256R1", GNUTLS_GROUP_SECP256R1},
    {"P-384", NID_secp384r1, "GROUP-SECP384R1", GNUTLS_GROUP_SECP384R1},
    {"X448", NID_X448, "GROUP-X448", GNUTLS_GROUP_X448},
};
enum { G_X25519, G_P256, G_P384, G_X448 };

static const char *certs[] = {"ecdsa256", "ecdsa384", "rsa", "ed25519"};

struct interop_case {
    char name[200];
    int qtls_is_server;
    int suite, group; /* what must be negotiated; the server offers only this group */
    const char *cert; /* the server's, whichever side it is */
    /* HRR: the client's groups, its first (the only key share) not the server's */
    const char *qtls_client_groups;   /* OpenSSL list, when qtls is the client */
    const char *gnutls_client_groups; /* priority fragment, when GnuTLS is the client */
    int expect_hrr;
    long to_qtls_chunk, to_gnutls_chunk; /* bytes per call, 0 = everything queued at once */
    int gnutls_hrr_whole;                /* a HelloRetryRequest reaches GnuTLS unsplit */
    int gnutls_server_tickets;           /* the GnuTLS server sends a NewSessionTicket */
    /*
     * Resumption: after the first connection, `resumptions` more, each offering
     * the session the client kept from the first one.
     */
    int resumptions;
    int early_tickets; /* the server's tickets allow 0-RTT (max_early_data_size 0xffffffff) */
    int client_early;  /* the client offers 0-RTT when it resumes */
    int server_early;  /* the server of the resumed connections may accept 0-RTT */
    int expect_early[3]; /* per connection: what becomes of 0-RTT (enum early) */
    int gnutls_default_max_early; /* the GnuTLS server leaves max_early_data_size at 16384 */
    int keep_latest_session;      /* resume with the newest ticket, not the first connection's */
    int grease; /* qtls GREASEs (SSL_CTX_set_grease_enabled): ClientHello or NewSessionTicket */
    int cert_comp;                /* RFC 8879 algorithm GnuTLS is given, 0: none */
    const char *note;             /* what GnuTLS does differently here, printed when it runs */
    void (*test)(void **state);
};

/* What becomes of 0-RTT on a connection. */
enum early { EARLY_NONE, EARLY_ACCEPTED, EARLY_REJECTED };
static const char *early_name[] = {"not offered", "accepted", "rejected"};

static struct interop_case cases[MAX_CASES];
static size_t ncases;

/* The GnuTLS endpoint: what its hooks saw (tests/helpers/gnutls), and what this suite notes. */
struct gt_side {
    struct gq_peer p; /* first: the hooks' session pointer is this side's */
    gnutls_certificate_credentials_t cred;
    int client_hellos, hello_retry_requests, tickets, certificates;
    /* Of the client, either one: early_data (42) in its n-th ClientHello, -1 unparsed. */
    int hello_early_data[2];
    int hellos;
    /* The first ClientHello's first PSK identity: obfuscated_ticket_age (RFC 8446 §4.2.11). */
    uint32_t obfuscated_age;
    int have_obfuscated_age;
    uint32_t ticket_age_add; /* of the last NewSessionTicket a GnuTLS server sent */
    int done;
    int last_error;
    size_t post_bytes;   /* post-handshake bytes qtls sent it (application level) */
    int post_incomplete; /* the last gnutls_handshake_write wanted more (GNUTLS_E_AGAIN) */
};

#define MAX_REPLAY_KEYS 32

/* One test: a connection, or several when resuming; q and g are the current one's. */
struct interop {
    const struct interop_case *c;
    int conn; /* 0 = the first connection, 1.. = resumed ones */
    SSL_CTX *ctx; /* qtls's, kept across connections: its ticket key, its replay cache */
    struct mock_side q;
    struct gt_side g;
    /* What a GnuTLS server keeps across connections. */
    gnutls_datum_t ticket_key;
    gnutls_anti_replay_t anti_replay;
    gnutls_datum_t replay_keys[MAX_REPLAY_KEYS]; /* its ClientHello record (RFC 8446 §8.2) */
    int n_replay_keys;
    /* The session the client offers when it resumes (see qtls_new_session). */
    SSL_SESSION *qtls_session;
    int qtls_sessions;
    uint32_t qtls_ticket_age_add; /* its ticket_age_add */
    uint32_t offered_ticket_age_add; /* that of the session the current connection offers */
    struct timespec qtls_session_arrival, offered_session_arrival; /* at the callback */
    gnutls_datum_t gnutls_session; /* gnutls_session_get_data2 */
    char why[1024];
};

/*
 * Whether a whole ClientHello message (with its 4-byte header) carries
 * extension `type`: 1 or 0, -1 if it does not parse; *body is its body.
 */
static int hello_extension(const uint8_t *m, size_t n, uint16_t type, const uint8_t **body,
                           size_t *body_len)
{
    size_t at = 4 + 2 + 32; /* header, legacy_version, random */
    if (n < at + 1 || m[0] != GNUTLS_HANDSHAKE_CLIENT_HELLO ||
        ((size_t)m[1] << 16 | (size_t)m[2] << 8 | m[3]) != n - 4)
        return -1;
    at += 1 + m[at]; /* legacy_session_id */
    if (at + 2 > n)
        return -1;
    at += 2 + ((size_t)m[at] << 8 | m[at + 1]); /* cipher_suites */
    if (at + 1 > n)
        return -1;
    at += 1 + m[at]; /* legacy_compression_methods */
    if (at + 2 > n || at + 2 + ((size_t)m[at] << 8 | m[at + 1]) != n)
        return -1;
    for (at += 2; at + 4 <= n;) {
        uint16_t t = (uint16_t)(m[at] << 8 | m[at + 1]);
        size_t len = (size_t)m[at + 2] << 8 | m[at + 3];
        if (at + 4 + len > n)
            return -1;
        if (t == type) {
            *body = m + at + 4;
            *body_len = len;
            return 1;
        }
        at += 4 + len;
    }
    return at == n ? 0 : -1;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Records whether the client's next ClientHello offers 0-RTT. */
static void note_client_hello(struct gt_side *g, const uint8_t *m, size_t n)
{
    const uint8_t *b;
    size_t len;
    if (g->hellos < 2)
        g->hello_early_data[g->hellos] = hello_extension(m, n, 42, &b, &len);
    /* pre_shared_key: identities<7..2^16-1> = {identity<1..2^16-1>, uint32 age}... */
    if (g->hellos == 0 && hello_extension(m, n, 41, &b, &len) == 1 && len >= 4) {
        size_t id_len = (size_t)b[2] << 8 | b[3];
        if (4 + id_len + 4 <= len) {
            g->obfuscated_age = get_u32(b + 4 + id_len);
            g->have_obfuscated_age = 1;
        }
    }
    g->hellos++;
}

/* --- GnuTLS hooks ------------------------------------------------------- */

/* gq_peer's on_message: counts the messages GnuTLS sends by type, notes its ClientHellos. */
static void note_message(struct gq_peer *p, gnutls_handshake_description_t htype,
                         const uint8_t *data, size_t len)
{
    struct gt_side *g = (struct gt_side *)p;
    if (htype == GNUTLS_HANDSHAKE_CLIENT_HELLO) {
        g->client_hellos++;
        note_client_hello(g, data, len);
    } else if (htype == GNUTLS_HANDSHAKE_HELLO_RETRY_REQUEST) {
        g->hello_retry_requests++;
    } else if (htype == GNUTLS_HANDSHAKE_NEW_SESSION_TICKET) {
        g->tickets++;
        if (len >= 12) /* header, ticket_lifetime, ticket_age_add */
            g->ticket_age_add = get_u32(data + 8);
    } else if (htype == GNUTLS_HANDSHAKE_CERTIFICATE_PKT) {
        g->certificates++;
    }
}

/*
 * The GnuTLS server's anti-replay database (gnutls_anti_replay_set_add_function):
 * it records ClientHellos by binder within a window and refuses 0-RTT for one
 * seen before; without this function GnuTLS refuses all 0-RTT.
 */
static int gt_replay_add(void *ptr, time_t expires, const gnutls_datum_t *key,
                         const gnutls_datum_t *data)
{
    struct interop *t = ptr;
    for (int i = 0; i < t->n_replay_keys; i++) {
        if (t->replay_keys[i].size == key->size &&
            memcmp(t->replay_keys[i].data, key->data, key->size) == 0)
            return GNUTLS_E_DB_ENTRY_EXISTS;
    }
    if (t->n_replay_keys == MAX_REPLAY_KEYS)
        return GNUTLS_E_MEMORY_ERROR;
    gnutls_datum_t *k = &t->replay_keys[t->n_replay_keys];
    if ((k->data = malloc(key->size)) == NULL)
        return GNUTLS_E_MEMORY_ERROR;
    memcpy(k->data, key->data, key->size);
    k->size = key->size;
    t->n_replay_keys++;
    return 0;
}

/*
 * qtls's new-session callback: the client keeps the newest session of the
 * first connection, which every resumption then offers (or the newest of all
 * with keep_latest_session).
 */
static int qtls_new_session(SSL *ssl, SSL_SESSION *s)
{
    struct interop *t =
        (struct interop *)((char *)SSL_get_app_data(ssl) - offsetof(struct interop, q));
    if (t->conn != 0 && !t->c->keep_latest_session)
        return 0; /* not kept: qtls frees it */
    SSL_SESSION_free(t->qtls_session);
    t->qtls_session = s;
    t->qtls_sessions++;
    t->qtls_ticket_age_add = t->g.ticket_age_add; /* the GnuTLS server's, as it sent it */
    clock_gettime(CLOCK_REALTIME, &t->qtls_session_arrival);
    return 1; /* we keep the reference */
}

/* --- set-up --------------------------------------------------------------- */

static int fail_setup(struct interop *t, const char *what, int r)
{
    snprintf(t->why, sizeof(t->why), "set-up: %s failed: %s", what,
             r < 0 ? gnutls_strerror(r) : "qtls call returned 0");
    return 0;
}

static int gnutls_side_init(struct interop *t)
{
    const struct interop_case *c = t->c;
    struct gt_side *g = &t->g;
    int r;
    g->p.is_server = !c->qtls_is_server;

    /*
     * 0-RTT as ngtcp2 configures it: QUIC has no EndOfEarlyData (RFC 9001
     * §8.3). A server issues tickets allowing it on the first connection
     * (early_tickets) and may accept it on the resumed ones (server_early).
     */
    int early = g->p.is_server ? (t->conn == 0 ? c->early_tickets : c->server_early)
                             : c->client_early;
    unsigned flags = g->p.is_server ? GNUTLS_SERVER : GNUTLS_CLIENT;
    if (early)
        flags |= GNUTLS_ENABLE_EARLY_DATA | GNUTLS_NO_END_OF_EARLY_DATA;
    gnutls_session_t session;
    if ((r = gnutls_init(&session, flags)) < 0)
        return fail_setup(t, "gnutls_init", r);
    if ((r = gq_peer_attach(&g->p, session, g->p.is_server, gnutls_tp, sizeof(gnutls_tp))) < 0)
        return fail_setup(t, "gq_peer_attach (0x39)", r);
    g->p.on_message = note_message;

    /* QUIC forbids the middlebox compatibility mode (RFC 9001 §8.4). */
    char prio[300];
    const char *grp = g->p.is_server || c->gnutls_client_groups == NULL
                          ? groups[c->group].gnutls_prio
                          : c->gnutls_client_groups;
    snprintf(prio, sizeof(prio),
             "NORMAL:-VERS-ALL:+VERS-TLS1.3:%%DISABLE_TLS13_COMPAT_MODE:-CIPHER-ALL:+%s:"
             "-GROUP-ALL:+%s",
             suites[c->suite].gnutls_cipher, grp);
    const char *err_pos = NULL;
    if ((r = gnutls_priority_set_direct(g->p.session, prio, &err_pos)) < 0)
        return fail_setup(t, err_pos != NULL ? err_pos : prio, r);

    gnutls_datum_t h3 = {(unsigned char *)"h3", 2};
    if ((r = gnutls_alpn_set_protocols(g->p.session, &h3, 1, GNUTLS_ALPN_MANDATORY)) < 0)
        return fail_setup(t, "gnutls_alpn_set_protocols", r);

    if ((r = gnutls_certificate_allocate_credentials(&g->cred)) < 0)
        return fail_setup(t, "gnutls_certificate_allocate_credentials", r);
    if (g->p.is_server) {
        char pem[64], key[64];
        snprintf(pem, sizeof(pem), "%s.pem", c->cert);
        snprintf(key, sizeof(key), "%s.key", c->cert);
        r = gnutls_certificate_set_x509_key_file(g->cred, mock_cert_path(pem),
                                                 mock_cert_path(key), GNUTLS_X509_FMT_PEM);
        if (r < 0)
            return fail_setup(t, "gnutls_certificate_set_x509_key_file", r);
        if (c->gnutls_server_tickets) {
            /* One ticket key for all the connections of a test, as for one server. */
            if ((t->ticket_key.data == NULL &&
                 (r = gnutls_session_ticket_key_generate(&t->ticket_key)) < 0) ||
                (r = gnutls_session_ticket_enable_server(g->p.session, &t->ticket_key)) < 0)
                return fail_setup(t, "gnutls_session_ticket_enable_server", r);
        }
        if (early) {
            /*
             * GnuTLS refuses 0-RTT without anti-replay, and its tickets say
             * max_early_data_size 16384 unless told otherwise; QUIC needs
             * 0xffffffff (RFC 9001 §4.6.1).
             */
            gnutls_anti_replay_enable(g->p.session, t->anti_replay);
            if (!c->gnutls_default_max_early &&
                (r = gnutls_record_set_max_early_data_size(g->p.session, 0xffffffffu)) < 0)
                return fail_setup(t, "gnutls_record_set_max_early_data_size", r);
        }
    } else {
        r = gnutls_certificate_set_x509_trust_file(g->cred, mock_cert_path("ca.pem"),
                                                   GNUTLS_X509_FMT_PEM);
        if (r <= 0)
            return fail_setup(t, "gnutls_certificate_set_x509_trust_file(ca.pem)", r);
        /* The handshake fails unless the chain verifies and names localhost. */
        gnutls_session_set_verify_cert(g->p.session, "localhost", 0);
        if ((r = gnutls_server_name_set(g->p.session, GNUTLS_NAME_DNS, "localhost", 9)) < 0)
            return fail_setup(t, "gnutls_server_name_set", r);
        if (t->conn > 0 &&
            (r = gnutls_session_set_data(g->p.session, t->gnutls_session.data,
                                         t->gnutls_session.size)) < 0)
            return fail_setup(t, "gnutls_session_set_data", r);
    }
    if ((r = gnutls_credentials_set(g->p.session, GNUTLS_CRD_CERTIFICATE, g->cred)) < 0)
        return fail_setup(t, "gnutls_credentials_set", r);
    return 1;
}

/* --- OCSP stapling ---------------------------------------------------------- */

/*
 * A real OCSP response (RFC 6960), "good" for the ecdsa256 leaf, signed by the test CA, so
 * that GnuTLS, which checks stapled responses, accepts it. Made once per process.
 */
static gnutls_datum_t ocsp_der;

static X509 *read_cert(const char *name)
{
    FILE *fp = fopen(mock_cert_path(name), "r");
    X509 *x = fp != NULL ? PEM_read_X509(fp, NULL, NULL, NULL) : NULL;
    if (fp != NULL)
        fclose(fp);
    return x;
}

static int make_ocsp_response(void)
{
    if (ocsp_der.data != NULL)
        return 1;
    FILE *fp = fopen(mock_cert_path("ca.key"), "r");
    EVP_PKEY *ca_key = fp != NULL ? PEM_read_PrivateKey(fp, NULL, NULL, NULL) : NULL;
    if (fp != NULL)
        fclose(fp);
    X509 *ca = read_cert("ca.pem"), *leaf = read_cert("ecdsa256.pem");
    OCSP_BASICRESP *basic = OCSP_BASICRESP_new();
    OCSP_CERTID *id = leaf != NULL && ca != NULL ? OCSP_cert_to_id(EVP_sha1(), leaf, ca) : NULL;
    ASN1_TIME *now = X509_gmtime_adj(NULL, -60), *next = X509_gmtime_adj(NULL, 86400);
    OCSP_RESPONSE *resp = NULL;
    unsigned char *der = NULL;
    int len = -1;
    if (ca_key != NULL && basic != NULL && id != NULL && now != NULL && next != NULL &&
        OCSP_basic_add1_status(basic, id, V_OCSP_CERTSTATUS_GOOD, 0, NULL, now, next) != NULL &&
        OCSP_basic_sign(basic, ca, ca_key, EVP_sha256(), NULL, 0) == 1 &&
        (resp = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic)) != NULL)
        len = i2d_OCSP_RESPONSE(resp, &der);
    OCSP_RESPONSE_free(resp);
    OCSP_CERTID_free(id);
    OCSP_BASICRESP_free(basic);
    ASN1_TIME_free(now);
    ASN1_TIME_free(next);
    X509_free(ca);
    X509_free(leaf);
    EVP_PKEY_free(ca_key);
    if (len <= 0)
        return 0;
    ocsp_der.data = der;
    ocsp_der.size = (unsigned)len;
    return 1;
}

/* The qtls server staples the response; the qtls client keeps what it was given. */
static int qtls_server_staple(SSL *s, void *arg)
{
    unsigned char *copy = OPENSSL_memdup(ocsp_der.data, ocsp_der.size);
    if (copy == NULL || SSL_set_tlsext_status_ocsp_resp(s, copy, (long)ocsp_der.size) != 1)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    return SSL_TLSEXT_ERR_OK;
}

static unsigned char qtls_client_ocsp[4096];
static long qtls_client_ocsp_len;

static int qtls_client_status(SSL *s, void *arg)
{
    const unsigned char *p;
    qtls_client_ocsp_len = SSL_get_tlsext_status_ocsp_resp(s, &p);
    if (qtls_client_ocsp_len > (long)sizeof(qtls_client_ocsp))
        return 0;
    if (qtls_client_ocsp_len > 0)
        memcpy(qtls_client_ocsp, p, (size_t)qtls_client_ocsp_len);
    return 1;
}

/* RFC 8446 §4.4.2.1: the response travels in the leaf's CertificateEntry, either direction. */
static int ocsp_side_init(struct interop *t)
{
    struct gt_side *g = &t->g;
    int r;
    if (!make_ocsp_response())
        return fail_setup(t, "make_ocsp_response", 0);
    if (t->c->qtls_is_server) {
        SSL_CTX_set_tlsext_status_cb(t->ctx, qtls_server_staple);
        if ((r = gnutls_ocsp_status_request_enable_client(g->p.session, NULL, 0, NULL)) < 0)
            return fail_setup(t, "gnutls_ocsp_status_request_enable_client", r);
        return 1;
    }
    SSL_CTX_set_tlsext_status_cb(t->ctx, qtls_client_status);
    if (SSL_set_tlsext_status_type(t->q.ssl, TLSEXT_STATUSTYPE_ocsp) != 1)
        return fail_setup(t, "SSL_set_tlsext_status_type", 0);
    qtls_client_ocsp_len = 0;
    r = gnutls_certificate_set_ocsp_status_request_mem(g->cred, &ocsp_der, 0, GNUTLS_X509_FMT_DER);
    return r >= 0 || fail_setup(t, "gnutls_certificate_set_ocsp_status_request_mem", r);
}

static int qtls_side_init(struct interop *t)
{
    const struct interop_case *c = t->c;
    const char *grp = groups[c->group].name;
    if (!c->qtls_is_server && c->qtls_client_groups != NULL)
        grp = c->qtls_client_groups;

    /* One SSL_CTX for all the connections of a test: it holds the ticket key. */
    if (t->ctx == NULL) {
        t->ctx = c->qtls_is_server ? mock_server_ctx(c->cert) : mock_client_ctx();
        if (t->ctx == NULL)
            return fail_setup(t, c->qtls_is_server ? "mock_server_ctx" : "mock_client_ctx", 0);
        if (SSL_CTX_set_ciphersuites(t->ctx, suites[c->suite].name) != 1)
            return fail_setup(t, "SSL_CTX_set_ciphersuites", 0);
        if (SSL_CTX_set1_groups_list(t->ctx, grp) != 1)
            return fail_setup(t, "SSL_CTX_set1_groups_list", 0);
        SSL_CTX_set_grease_enabled(t->ctx, c->grease);
        if (!c->qtls_is_server) {
            SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
            SSL_CTX_set_session_cache_mode(t->ctx,
                                           SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
            SSL_CTX_sess_set_new_cb(t->ctx, qtls_new_session);
        } else if (c->early_tickets) {
            SSL_CTX_set_max_early_data(t->ctx, UINT32_MAX); /* tickets say 0xffffffff */
        }
    }

    t->q.ssl = SSL_new(t->ctx);
    if (t->q.ssl == NULL)
        return fail_setup(t, "SSL_new", 0);
    SSL_set_app_data(t->q.ssl, &t->q);
    if (!SSL_set_quic_transport_params(t->q.ssl, qtls_tp, sizeof(qtls_tp)))
        return fail_setup(t, "SSL_set_quic_transport_params", 0);
    if (c->qtls_is_server) {
        if (t->conn > 0 && c->server_early)
            SSL_set_quic_early_data_enabled(t->q.ssl, 1);
        SSL_set_accept_state(t->q.ssl);
    } else {
        if (c->client_early)
            SSL_set_quic_early_data_enabled(t->q.ssl, 1);
        if (t->conn > 0 && SSL_set_session(t->q.ssl, t->qtls_session) != 1)
            return fail_setup(t, "SSL_set_session", 0);
        if (SSL_set_tlsext_host_name(t->q.ssl, "localhost") != 1 ||
            SSL_set1_host(t->q.ssl, "localhost") != 1)
            return fail_setup(t, "SSL_set_tlsext_host_name/SSL_set1_host", 0);
        SSL_set_connect_state(t->q.ssl);
    }
    return 1;
}

static int setup(void **state)
{
    struct interop *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    t->c = *state;
    ERR_clear_error();
    *state = t;
    /* Failures are reported by the test itself, with the reason in t->why. */
    int r = gnutls_anti_replay_init(&t->anti_replay);
    if (r < 0) {
        fail_setup(t, "gnutls_anti_replay_init", r);
        return 0;
    }
    gnutls_anti_replay_set_ptr(t->anti_replay, t);
    gnutls_anti_replay_set_add_function(t->anti_replay, gt_replay_add);
    if (qtls_side_init(t))
        gnutls_side_init(t);
    return 0;
}

/* Ends the current connection on both sides; what a test keeps across connections stays. */
static void end_connection(struct interop *t)
{
    SSL_free(t->q.ssl);
    if (t->g.p.session != NULL)
        gnutls_deinit(t->g.p.session);
    if (t->g.cred != NULL)
        gnutls_certificate_free_credentials(t->g.cred);
    for (int l = 0; l < NLEVELS; l++) {
        free(t->q.out[l]);
        free(t->g.p.out[l]);
    }
    memset(&t->q, 0, sizeof(t->q));
    memset(&t->g, 0, sizeof(t->g));
}

/* The next connection of the test, the client offering the session it kept. */
static int reconnect(struct interop *t)
{
    end_connection(t);
    t->conn++;
    t->offered_ticket_age_add = t->qtls_ticket_age_add;
    t->offered_session_arrival = t->qtls_session_arrival;
    ERR_clear_error();
    return t->why[0] == '\0' && qtls_side_init(t) && gnutls_side_init(t);
}

static int teardown(void **state)
{
    struct interop *t = *state;
    end_connection(t);
    SSL_CTX_free(t->ctx);
    if (t->ticket_key.data != NULL)
        gnutls_free(t->ticket_key.data);
    if (t->anti_replay != NULL)
        gnutls_anti_replay_deinit(t->anti_replay);
    for (int i = 0; i < t->n_replay_keys; i++)
        free(t->replay_keys[i].data);
    SSL_SESSION_free(t->qtls_session);
    gnutls_free(t->gnutls_session.data);
    free(t);
    ERR_clear_error();
    return 0;
}

/* --- the pump ------------------------------------------------------------- */

static const char *level_name(int l)
{
    static const char *n[] = {"initial", "early", "handshake", "application"};
    return l >= 0 && l < NLEVELS ? n[l] : "?";
}

/* Records why the exchange stopped, with both sides' state; returns -1. */
static int stop(struct interop *t, const char *fmt, ...)
{
    char msg[400], errs[300] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    unsigned long e = ERR_peek_error();
    if (e != 0)
        ERR_error_string_n(e, errs, sizeof(errs));
    snprintf(t->why, sizeof(t->why),
             "%s [qtls: finished=%d alerts=%d last alert=%d at %s, error queue: %s] "
             "[GnuTLS: done=%d alerts=%d last alert=%d (%s) at %s, last error: %s, pushed=%d]",
             msg, t->q.ssl != NULL ? SSL_is_init_finished(t->q.ssl) : 0, t->q.alerts_sent,
             t->q.alert, level_name(t->q.alert_level), errs[0] ? errs : "empty", t->g.done,
             t->g.p.alerts, t->g.p.alert_desc,
             t->g.p.alerts ? gnutls_alert_get_strname(t->g.p.alert_desc) : "-",
             level_name(t->g.p.alert_level),
             t->g.last_error ? gnutls_strerror(t->g.last_error) : "none", t->g.p.pushed);
    return -1;
}

static size_t piece(size_t left, long chunk)
{
    return chunk > 0 && (size_t)chunk < left ? (size_t)chunk : left;
}

/* One gnutls_handshake() while GnuTLS is not done: 0 or -1 (failed). */
static int gnutls_step(struct interop *t)
{
    if (t->g.done)
        return 0;
    int r = gnutls_handshake(t->g.p.session);
    if (r == 0) {
        t->g.done = 1;
    } else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
        t->g.last_error = r;
        return stop(t, "gnutls_handshake failed: %s", gnutls_strerror(r));
    }
    return 0;
}

/* One SSL_do_handshake() while qtls is not done: 0 or -1 (failed). */
static int qtls_step(struct interop *t)
{
    if (SSL_is_init_finished(t->q.ssl))
        return 0;
    int r = SSL_do_handshake(t->q.ssl);
    if (r != 1 && SSL_get_error(t->q.ssl, r) != SSL_ERROR_WANT_READ)
        return stop(t, "SSL_do_handshake failed (SSL_get_error %d)", SSL_get_error(t->q.ssl, r));
    return 0;
}

/*
 * Everything qtls wrote goes to GnuTLS, as ngtcp2 does it: gnutls_handshake_write
 * per CRYPTO piece, then gnutls_handshake() until it is done; afterwards the
 * write alone processes post-handshake messages. 1 moved bytes, 0 none, -1 failed.
 */
static int qtls_to_gnutls(struct interop *t)
{
    int moved = 0;
    for (int l = 0; l < NLEVELS; l++) {
        uint8_t *buf = t->q.out[l];
        size_t len = t->q.out_len[l], off = 0;
        t->q.out[l] = NULL;
        t->q.out_len[l] = 0;
        /* A qtls client's initial-level flight is one ClientHello. */
        if (l == ssl_encryption_initial && !t->c->qtls_is_server && len > 0)
            note_client_hello(&t->g, buf, len);
        /* Before its second ClientHello, all a GnuTLS client gets is the HRR. */
        int hrr = l == ssl_encryption_initial && t->g.client_hellos == 1;
        long chunk = hrr && t->c->gnutls_hrr_whole ? 0 : t->c->to_gnutls_chunk;
        while (off < len) {
            size_t n = piece(len - off, chunk);
            int r = gnutls_handshake_write(t->g.p.session, (gnutls_record_encryption_level_t)l,
                                           buf + off, n);
            /* After the handshake, a partial message is GNUTLS_E_AGAIN (ngtcp2 reads on). */
            t->g.post_incomplete = r == GNUTLS_E_AGAIN;
            if (r < 0 && gnutls_error_is_fatal(r)) {
                t->g.last_error = r;
                free(buf);
                return stop(t, "gnutls_handshake_write(%s, %zu bytes at %zu) failed: %s",
                            level_name(l), n, off, gnutls_strerror(r));
            }
            off += n;
            if (gnutls_step(t) < 0) {
                free(buf);
                return -1;
            }
        }
        free(buf);
        moved |= len > 0;
        if (l == ssl_encryption_application)
            t->g.post_bytes += len;
    }
    return moved;
}

/*
 * Everything GnuTLS emitted goes to qtls: SSL_provide_quic_data per piece, then
 * SSL_do_handshake, or SSL_process_quic_post_handshake once it is complete.
 */
static int gnutls_to_qtls(struct interop *t)
{
    int moved = 0;
    for (int l = 0; l < NLEVELS; l++) {
        uint8_t *buf = t->g.p.out[l];
        size_t len = t->g.p.out_len[l], off = 0;
        t->g.p.out[l] = NULL;
        t->g.p.out_len[l] = 0;
        while (off < len) {
            size_t n = piece(len - off, t->c->to_qtls_chunk);
            if (!SSL_provide_quic_data(t->q.ssl, (OSSL_ENCRYPTION_LEVEL)l, buf + off, n)) {
                free(buf);
                return stop(t, "SSL_provide_quic_data(%s, %zu bytes at %zu) failed",
                            level_name(l), n, off);
            }
            off += n;
            int r;
            if (!SSL_is_init_finished(t->q.ssl))
                r = qtls_step(t);
            else
                r = SSL_process_quic_post_handshake(t->q.ssl) == 1
                        ? 0
                        : stop(t, "SSL_process_quic_post_handshake failed at %s",
                               level_name(l));
            if (r < 0) {
                free(buf);
                return -1;
            }
        }
        free(buf);
        moved |= len > 0;
    }
    return moved;
}

/* Runs the exchange until nothing moves: 1 if both sides completed, 0 with t->why. */
static int run(struct interop *t)
{
    if (t->why[0] != '\0') /* set-up failed */
        return 0;
    if ((t->c->qtls_is_server ? gnutls_step(t) : qtls_step(t)) < 0)
        return 0;
    for (int round = 0; round < 64; round++) {
        int a = qtls_to_gnutls(t);
        if (a < 0)
            return 0;
        int b = gnutls_to_qtls(t);
        if (b < 0)
            return 0;
        if (t->g.p.hook_failed) {
            stop(t, "a GnuTLS hook failed");
            return 0;
        }
        if (a == 0 && b == 0)
            break;
    }
    if (!SSL_is_init_finished(t->q.ssl) || !t->g.done) {
        stop(t, "the exchange stalled before both sides completed");
        return 0;
    }
    return 1;
}

/* --- the checks ----------------------------------------------------------- */

static void assert_secrets_cross(struct interop *t, int level)
{
    struct mock_side *q = &t->q;
    struct gt_side *g = &t->g;
    size_t len = suites[t->c->suite].secret_len;
    print_message("    %s secrets: qtls read=%d write=%d, GnuTLS read=%d write=%d, %zu bytes\n",
                  level_name(level), q->have_read[level], q->have_write[level],
                  g->p.have_read[level], g->p.have_write[level], q->secret_len[level]);
    assert_true(q->have_read[level] && q->have_write[level]);
    assert_true(g->p.have_read[level] && g->p.have_write[level]);
    assert_int_equal(q->secret_len[level], len);
    assert_int_equal(g->p.read_len[level], len);
    assert_int_equal(g->p.write_len[level], len);
    /* qtls's write secret is GnuTLS's read secret, and the reverse. */
    assert_memory_equal(q->write_secret[level], g->p.read_secret[level], len);
    assert_memory_equal(q->read_secret[level], g->p.write_secret[level], len);
    assert_memory_not_equal(q->write_secret[level], q->read_secret[level], len);
}

static void assert_server_signature(struct interop *t)
{
    const char *cert = t->c->cert;
    int sig = gnutls_sign_algorithm_get(t->g.p.session); /* the server's, on either side */
    print_message("    server signature: %s\n", gnutls_sign_get_name(sig));
    if (strcmp(cert, "ecdsa256") == 0)
        assert_int_equal(sig, GNUTLS_SIGN_ECDSA_SECP256R1_SHA256);
    else if (strcmp(cert, "ecdsa384") == 0)
        assert_int_equal(sig, GNUTLS_SIGN_ECDSA_SECP384R1_SHA384);
    else if (strcmp(cert, "ed25519") == 0)
        assert_int_equal(sig, GNUTLS_SIGN_EDDSA_ED25519);
    else /* RFC 8446 §4.2.3: RSA signs with RSASSA-PSS in TLS 1.3 */
        assert_true(sig == GNUTLS_SIGN_RSA_PSS_RSAE_SHA256 ||
                    sig == GNUTLS_SIGN_RSA_PSS_RSAE_SHA384 ||
                    sig == GNUTLS_SIGN_RSA_PSS_RSAE_SHA512);
}

/* RFC 9001 §4.6.1: 0-RTT keys are the client's to write and the server's to read, equal. */
static void assert_early_secrets(struct interop *t, enum early expect)
{
    struct mock_side *q = &t->q;
    struct gt_side *g = &t->g;
    int l = ssl_encryption_early_data;
    size_t len = suites[t->c->suite].secret_len;
    int qtls_client = !t->c->qtls_is_server;
    print_message("    early secrets: qtls read=%d write=%d, GnuTLS read=%d write=%d\n",
                  q->have_read[l], q->have_write[l], g->p.have_read[l], g->p.have_write[l]);
    /* Nobody ever reads 0-RTT as a client or writes it as a server. */
    assert_false(qtls_client ? q->have_read[l] : q->have_write[l]);
    assert_false(qtls_client ? g->p.have_write[l] : g->p.have_read[l]);
    /* The client installs its write key when it offers, before it knows the answer. */
    int offered = expect != EARLY_NONE;
    assert_int_equal(qtls_client ? q->have_write[l] : g->p.have_write[l], offered);
    /* The server installs its read key exactly when it accepts. */
    int accepted = expect == EARLY_ACCEPTED;
    assert_int_equal(qtls_client ? g->p.have_read[l] : q->have_read[l], accepted);
    if (!accepted)
        return;
    const uint8_t *client_write = qtls_client ? q->write_secret[l] : g->p.write_secret[l];
    const uint8_t *server_read = qtls_client ? g->p.read_secret[l] : q->read_secret[l];
    assert_int_equal(q->secret_len[l], len);
    assert_int_equal(qtls_client ? g->p.read_len[l] : g->p.write_len[l], len);
    assert_memory_equal(client_write, server_read, len);
}

/* The checks every completed connection passes; `resumed`/`early` are what it must show. */
static void check_connection(struct interop *t, int resumed, enum early early)
{
    const struct interop_case *c = t->c;
    const struct suite *s = &suites[c->suite];
    const struct group *g = &groups[c->group];

    /* Completion, no alerts, no TLS records. */
    assert_int_equal(SSL_is_init_finished(t->q.ssl), 1);
    assert_true(t->g.done);
    assert_int_equal(t->q.alerts_sent, 0);
    assert_int_equal(t->g.p.alerts, 0);
    assert_int_equal(t->g.p.pushed, 0);
    assert_int_equal(SSL_version(t->q.ssl), TLS1_3_VERSION);
    assert_int_equal(gnutls_protocol_get_version(t->g.p.session), GNUTLS_TLS1_3);

    /* The suite and group forced by the configuration, seen alike by both. */
    const SSL_CIPHER *cipher = SSL_get_current_cipher(t->q.ssl);
    assert_non_null(cipher);
    print_message("    suite: qtls %s, GnuTLS %s; group: qtls nid %d, GnuTLS %s\n",
                  SSL_CIPHER_get_name(cipher), gnutls_ciphersuite_get(t->g.p.session),
                  (int)SSL_get_negotiated_group(t->q.ssl),
                  gnutls_group_get_name(gnutls_group_get(t->g.p.session)));
    assert_int_equal(SSL_CIPHER_get_id(cipher), s->id);
    assert_string_equal(SSL_CIPHER_get_name(cipher), s->name);
    assert_string_equal(gnutls_ciphersuite_get(t->g.p.session), s->name);
    /* A resumption is psk_dhe_ke (all qtls does), so it negotiates a group too. */
    assert_int_equal(SSL_get_negotiated_group(t->q.ssl), g->nid);
    assert_int_equal(gnutls_group_get(t->g.p.session), g->gnutls_id);

    /* HelloRetryRequest exactly when the client's key share missed the server's group. */
    if (c->qtls_is_server) {
        assert_int_equal(t->g.client_hellos, c->expect_hrr ? 2 : 1);
    } else {
        assert_int_equal(t->g.hello_retry_requests, c->expect_hrr ? 1 : 0);
    }

    /* Resumed or not, alike on both sides (RFC 8446 §2.2). */
    print_message("    resumed: qtls %d, GnuTLS %d; 0-RTT: qtls status %d, GnuTLS %s\n",
                  SSL_session_reused(t->q.ssl), gnutls_session_is_resumed(t->g.p.session),
                  SSL_get_early_data_status(t->q.ssl),
                  gnutls_session_get_flags(t->g.p.session) & GNUTLS_SFLAGS_EARLY_DATA
                      ? "accepted"
                      : "not accepted");
    assert_int_equal(SSL_session_reused(t->q.ssl), resumed);
    assert_int_equal(gnutls_session_is_resumed(t->g.p.session) != 0, resumed);

    /*
     * 0-RTT: offered in the first ClientHello only (RFC 8446 §4.1.2: the one
     * answering a HelloRetryRequest drops early_data), what both sides say
     * became of it, and its secret.
     */
    assert_int_equal(t->g.hellos, c->expect_hrr ? 2 : 1);
    for (int i = 0; i < t->g.hellos; i++)
        assert_int_equal(t->g.hello_early_data[i], i == 0 && early != EARLY_NONE);
    static const int status[] = {SSL_EARLY_DATA_NOT_SENT, SSL_EARLY_DATA_ACCEPTED,
                                 SSL_EARLY_DATA_REJECTED};
    assert_int_equal(SSL_get_early_data_status(t->q.ssl), status[early]);
    assert_int_equal((gnutls_session_get_flags(t->g.p.session) & GNUTLS_SFLAGS_EARLY_DATA) != 0,
                     early == EARLY_ACCEPTED);
    assert_early_secrets(t, early);

    /* Secrets agree crosswise; initial keys are QUIC's business. */
    assert_secrets_cross(t, ssl_encryption_handshake);
    assert_secrets_cross(t, ssl_encryption_application);
    assert_false(t->q.have_read[ssl_encryption_initial] || t->q.have_write[ssl_encryption_initial]);
    assert_false(t->g.p.have_read[ssl_encryption_initial] || t->g.p.have_write[ssl_encryption_initial]);

    /* Transport parameters crossed, byte for byte. */
    const uint8_t *tp;
    size_t tp_len;
    SSL_get_peer_quic_transport_params(t->q.ssl, &tp, &tp_len);
    assert_int_equal(tp_len, sizeof(gnutls_tp));
    assert_memory_equal(tp, gnutls_tp, sizeof(gnutls_tp));
    assert_true(t->g.p.tp_received);
    assert_int_equal(t->g.p.peer_tp_len, sizeof(qtls_tp));
    assert_memory_equal(t->g.p.peer_tp, qtls_tp, sizeof(qtls_tp));

    /* ALPN h3 on both sides. */
    const unsigned char *alpn;
    unsigned int alpn_len;
    SSL_get0_alpn_selected(t->q.ssl, &alpn, &alpn_len);
    assert_int_equal(alpn_len, 2);
    assert_memory_equal(alpn, "h3", 2);
    gnutls_datum_t galpn = {NULL, 0};
    assert_int_equal(gnutls_alpn_get_selected_protocol(t->g.p.session, &galpn), 0);
    assert_int_equal(galpn.size, 2);
    assert_memory_equal(galpn.data, "h3", 2);

    /*
     * SNI reached the server; the server certificate verified on the client
     * (on a resumption: in the first connection, and the client says so).
     */
    if (c->qtls_is_server) {
        const char *sni = SSL_get_servername(t->q.ssl, TLSEXT_NAMETYPE_host_name);
        assert_non_null(sni);
        assert_string_equal(sni, "localhost");
        /* GnuTLS verified the chain to ca.pem and the name during the handshake. */
        assert_int_equal(gnutls_certificate_type_get(t->g.p.session), GNUTLS_CRT_X509);
    } else {
        char sni[64];
        size_t sni_len = sizeof(sni);
        unsigned type = 0;
        assert_int_equal(gnutls_server_name_get(t->g.p.session, sni, &sni_len, &type, 0), 0);
        assert_int_equal(type, GNUTLS_NAME_DNS);
        assert_string_equal(sni, "localhost");
        assert_int_equal(SSL_get_verify_result(t->q.ssl), X509_V_OK);
        X509 *peer = SSL_get1_peer_certificate(t->q.ssl);
        assert_non_null(peer);
        X509_free(peer);
        /* A resumed GnuTLS server sends no Certificate (RFC 8446 §2.2). */
        assert_int_equal(t->g.certificates, resumed ? 0 : 1);
    }
    if (!resumed)
        assert_server_signature(t);

    /* Whatever qtls sent after the handshake (tickets), GnuTLS took in whole. */
    assert_false(t->g.post_incomplete);
    if (c->qtls_is_server && t->g.post_bytes > 0) {
        unsigned flags = gnutls_session_get_flags(t->g.p.session);
        print_message("    qtls server sent %zu bytes after the handshake; GnuTLS %s a ticket\n",
                      t->g.post_bytes,
                      flags & GNUTLS_SFLAGS_SESSION_TICKET ? "received" : "did not receive");
        assert_true(flags & GNUTLS_SFLAGS_SESSION_TICKET);
    }
    if (c->gnutls_server_tickets) {
        /* qtls processed it in SSL_process_quic_post_handshake (run() checks the result). */
        print_message("    GnuTLS server sent %d NewSessionTicket(s)\n", t->g.tickets);
        assert_true(t->g.tickets >= 1);
    }
}

/* After the first connection: the client kept a session to resume. */
static void keep_client_session(struct interop *t)
{
    const struct interop_case *c = t->c;
    if (c->qtls_is_server) {
        /* The tickets came after the handshake (gnutls_handshake_write at the application level). */
        assert_true(gnutls_session_get_flags(t->g.p.session) & GNUTLS_SFLAGS_SESSION_TICKET);
        assert_int_equal(gnutls_session_get_data2(t->g.p.session, &t->gnutls_session), 0);
        print_message("    GnuTLS client stored a %u-byte session\n", t->gnutls_session.size);
        assert_true(t->gnutls_session.size > 4); /* not GnuTLS's "no ticket yet" placeholder */
    } else {
        print_message("    qtls client got %d session(s), max_early_data %u\n", t->qtls_sessions,
                      t->qtls_session != NULL ? SSL_SESSION_get_max_early_data(t->qtls_session)
                                              : 0);
        assert_true(t->qtls_sessions >= 1);
        assert_int_equal(SSL_SESSION_is_resumable(t->qtls_session), 1);
        assert_int_equal(SSL_SESSION_get_max_early_data(t->qtls_session),
                         c->early_tickets ? 0xffffffffu : 0);
        assert_int_equal(SSL_CIPHER_get_id(SSL_SESSION_get0_cipher(t->qtls_session)),
                         suites[c->suite].id);
    }
}

static void print_notes(const struct interop_case *c)
{
    if (c->note != NULL)
        print_message("    note: %s\n", c->note);
    if (c->gnutls_hrr_whole)
        print_message("    note: the HelloRetryRequest goes to the GnuTLS client whole: GnuTLS "
                      "3.7.9 cannot decode one split under 39 bytes\n");
}

/* The connection(s) of the case complete, each resumed and with 0-RTT as expected. */
static void interop_completes(void **state)
{
    struct interop *t = *state;
    const struct interop_case *c = t->c;
    print_notes(c);
    for (int conn = 0; conn <= c->resumptions; conn++) {
        if (conn > 0) {
            if (conn == 1)
                keep_client_session(t);
            if (!reconnect(t))
                fail_msg("connection %d: %s", conn, t->why);
        }
        if (c->resumptions > 0)
            print_message("  connection %d: %s, 0-RTT %s\n", conn,
                          conn == 0 ? "full handshake" : "resumption",
                          early_name[c->expect_early[conn]]);
        if (!run(t))
            fail_msg("connection %d: %s", conn, t->why);
        check_connection(t, conn > 0, c->expect_early[conn]);
    }
}

/* Runs the first connection of a case and keeps the client's session. */
static void first_connection(struct interop *t)
{
    if (!run(t))
        fail_msg("connection 0: %s", t->why);
    check_connection(t, 0, EARLY_NONE);
    keep_client_session(t);
    if (!reconnect(t))
        fail_msg("connection 1: %s", t->why);
}

/*
 * RFC 8446 §4.2.10: after a HelloRetryRequest there is no 0-RTT; the
 * client's second ClientHello drops early_data (§4.1.2) and the handshake
 * goes on, resumed, with 0-RTT rejected. qtls does so with itself
 * (test_resumption.c) and, in either role, here; GnuTLS 3.7.9 gets it wrong
 * in both roles, so the case accepts exactly GnuTLS's known failure, checks
 * qtls's part of it, and turns into the full check if GnuTLS completes.
 */
static void zero_rtt_meets_a_hello_retry_request(void **state)
{
    struct interop *t = *state;
    struct gt_side *g = &t->g;
    int l = ssl_encryption_early_data;
    first_connection(t);
    print_message("  connection 1: resumption, 0-RTT offered, HelloRetryRequest\n");
    if (run(t)) {
        print_message("    GnuTLS %s completed: its 0-RTT-after-HRR bug is fixed\n",
                      t->c->qtls_is_server ? "client" : "server");
        check_connection(t, 1, EARLY_REJECTED);
        return;
    }
    print_message("    stopped: %s\n", t->why);
    assert_int_equal(g->hellos, 2);
    assert_int_equal(g->hello_early_data[0], 1);
    if (!t->c->qtls_is_server) {
        /*
         * GnuTLS server bug: it accepts 0-RTT while parsing pre_shared_key,
         * before key_share makes it send the HRR, and installs its early read
         * key; the HSK_EARLY_DATA_ACCEPTED flag outlives the HRR, so once it
         * has sent its flight for the second ClientHello (without early_data,
         * as qtls must send it) it has no key epoch left for the application
         * keys and fails with GNUTLS_E_INVALID_REQUEST ("Epoch 4 out of range").
         */
        print_message("    note: GnuTLS 3.7.9 server: 0-RTT accepted on the first ClientHello "
                      "outlives its HelloRetryRequest; it fails after its flight with "
                      "GNUTLS_E_INVALID_REQUEST\n");
        assert_int_equal(g->hello_early_data[1], 0); /* qtls dropped early_data */
        assert_int_equal(g->last_error, GNUTLS_E_INVALID_REQUEST);
        assert_true(g->p.have_read[l]);
        assert_int_equal(t->q.alerts_sent, 0);
        /* GnuTLS's flight was right (no early_data in EncryptedExtensions): qtls completes. */
        assert_true(gnutls_to_qtls(t) >= 0);
        assert_int_equal(t->q.alerts_sent, 0);
        assert_int_equal(SSL_is_init_finished(t->q.ssl), 1);
        assert_int_equal(SSL_session_reused(t->q.ssl), 1);
        assert_int_equal(SSL_get_early_data_status(t->q.ssl), SSL_EARLY_DATA_REJECTED);
        assert_true(t->q.have_write[l]); /* installed with the first ClientHello */
        assert_secrets_cross(t, ssl_encryption_handshake);
    } else {
        /*
         * GnuTLS client bug: its second ClientHello still offers early_data
         * (RFC 8446 §4.1.2 says to remove it); the qtls server must abort
         * with illegal_parameter.
         */
        print_message("    note: GnuTLS 3.7.9 client: its ClientHello after a HelloRetryRequest "
                      "offers 0-RTT again; qtls aborts with illegal_parameter\n");
        assert_int_equal(g->hello_early_data[1], 1);
        assert_true(g->p.have_write[l]);
        assert_int_equal(t->q.alerts_sent, 1);
        assert_int_equal(t->q.alert, SSL_AD_ILLEGAL_PARAMETER);
        assert_int_equal(t->q.alert_level, ssl_encryption_initial);
        assert_false(t->q.have_read[l]);
        print_message("    qtls: %s\n", ERR_reason_error_string(ERR_peek_error()));
    }
}

/* Busy-waits until the wall clock (qtls's and GnuTLS's) is in the first 50 µs of a millisecond. */
static void wait_for_a_new_millisecond(void)
{
    struct timespec ts;
    do
        clock_gettime(CLOCK_REALTIME, &ts);
    while (ts.tv_nsec % 1000000 >= 50000);
}

/*
 * RFC 8446 §4.2.11.1: the ticket age is the time since the client received
 * the ticket. A GnuTLS server refuses 0-RTT when the client's age exceeds its
 * own view, the time since it made the ticket (anti_replay.c: "It shouldn't
 * be possible that the server's view of ticket age is smaller than the
 * client's view"), both whole milliseconds truncated from nanoseconds. A
 * client that subtracts two truncated millisecond clock readings instead
 * overstates the age by one millisecond whenever a millisecond boundary
 * falls between them later in the millisecond than the ticket arrived,
 * and then GnuTLS refuses 0-RTT. Resuming right after a millisecond starts,
 * each time with the newest ticket, makes that likely on every try; each
 * must still get 0-RTT accepted.
 */
static void zero_rtt_ticket_age_is_never_ahead_of_the_gnutls_server(void **state)
{
    struct interop *t = *state;
    print_notes(t->c);
    first_connection(t);
    for (int i = 0; i < 16; i++) {
        if (i > 0 && !reconnect(t))
            fail_msg("connection %d: %s", i + 1, t->why);
        struct timespec start;
        wait_for_a_new_millisecond();
        clock_gettime(CLOCK_REALTIME, &start);
        if (!run(t))
            fail_msg("connection %d: %s", i + 1, t->why);
        if (SSL_get_early_data_status(t->q.ssl) != SSL_EARLY_DATA_ACCEPTED) {
            const struct timespec *got = &t->offered_session_arrival;
            long us = (long)(start.tv_sec - got->tv_sec) * 1000000 +
                      (start.tv_nsec - got->tv_nsec) / 1000;
            /* obfuscated_ticket_age - ticket_age_add: the age qtls sent. */
            fail_msg("connection %d: the GnuTLS server refused 0-RTT: the qtls client said the "
                     "ticket was %u ms old when about %ld us had passed since it got it (GnuTLS "
                     "refuses an age above the time since it made the ticket)",
                     i + 1,
                     t->g.have_obfuscated_age ? t->g.obfuscated_age - t->offered_ticket_age_add : 0,
                     us);
        }
        check_connection(t, 1, EARLY_ACCEPTED);
    }
}

/*
 * RFC 9001 §4.6.1: a QUIC server's tickets say max_early_data_size
 * 0xffffffff or nothing, and a client that gets another value MUST treat it
 * as a connection error. GnuTLS says 16384 (its TLS default) unless the
 * application sets gnutls_record_set_max_early_data_size(0xffffffff), as
 * ngtcp2 does; this GnuTLS server does not.
 */
static void qtls_client_refuses_a_ticket_with_a_tls_max_early_data(void **state)
{
    struct interop *t = *state;
    print_message("    note: GnuTLS 3.7.9's tickets allow 16384 bytes of 0-RTT unless told "
                  "0xffffffff: not a QUIC ticket\n");
    assert_int_equal(run(t), 0);
    print_message("    stopped: %s\n", t->why);
    /*
     * qtls completed the handshake (GnuTLS sends its tickets with its first
     * flight in a full handshake without client certificates, so the ticket
     * arrived right after it), then refused the ticket, before its Finished
     * reached GnuTLS.
     */
    assert_true(t->q.have_read[ssl_encryption_application] &&
                t->q.have_write[ssl_encryption_application]);
    assert_true(t->g.tickets >= 1);
    assert_int_equal(t->q.alerts_sent, 1);
    assert_int_equal(t->q.alert, SSL_AD_ILLEGAL_PARAMETER);
    assert_int_equal(t->q.alert_level, ssl_encryption_application);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_INVALID_MAX_EARLY_DATA);
    assert_int_equal(t->qtls_sessions, 0);
}

static void ocsp_response_is_stapled(void **state)
{
    struct interop *t = *state;
    if (!ocsp_side_init(t))
        fail_msg("%s", t->why);
    if (!run(t))
        fail_msg("%s", t->why);
    check_connection(t, 0, EARLY_NONE);
    if (!t->c->qtls_is_server) {
        assert_int_equal(qtls_client_ocsp_len, ocsp_der.size);
        assert_memory_equal(qtls_client_ocsp, ocsp_der.data, ocsp_der.size);
        return;
    }
    gnutls_datum_t got = {NULL, 0};
    assert_int_equal(gnutls_ocsp_status_request_get(t->g.p.session, &got), 0);
    assert_int_equal(got.size, ocsp_der.size);
    assert_memory_equal(got.data, ocsp_der.data, ocsp_der.size);
    /* GnuTLS checked it against the chain it verified. */
    assert_int_not_equal(gnutls_ocsp_status_request_is_checked(t->g.p.session, 0), 0);
}

/* --- certificate compression (RFC 8879) ------------------------------------ */

static const struct {
    int id; /* RFC 8879 */
    gnutls_compression_method_t method;
    const char *name;
} comp_methods[] = {
    {TLSEXT_comp_cert_zlib, GNUTLS_COMP_ZLIB, "zlib"},
    {TLSEXT_comp_cert_brotli, GNUTLS_COMP_BROTLI, "brotli"},
    {TLSEXT_comp_cert_zstd, GNUTLS_COMP_ZSTD, "zstd"},
};

static int gnutls_comp_method(int id, gnutls_compression_method_t *out)
{
    for (size_t i = 0; i < sizeof(comp_methods) / sizeof(comp_methods[0]); i++)
        if (comp_methods[i].id == id)
            return *out = comp_methods[i].method, 1;
    return 0;
}

/* Whether this GnuTLS build compresses certificates with the RFC 8879 algorithm `id`. */
static int gnutls_has_cert_comp(int id)
{
    gnutls_session_t s;
    gnutls_compression_method_t m;
    if (!gnutls_comp_method(id, &m) || gnutls_init(&s, GNUTLS_CLIENT) < 0)
        return 0;
    int ok = gnutls_compress_certificate_set_methods(s, &m, 1) == 0;
    gnutls_deinit(s);
    return ok;
}

/*
 * qtls offers and accepts all three algorithms; GnuTLS the one of the case, or none: then the
 * certificate goes uncompressed both ways, and qtls reports no compression.
 */
static void certificate_compression_with_gnutls(void **state)
{
    struct interop *t = *state;
    const struct interop_case *c = t->c;
    int all[] = {TLSEXT_comp_cert_zlib, TLSEXT_comp_cert_brotli, TLSEXT_comp_cert_zstd};
    print_notes(c);
    if (t->why[0] != '\0')
        fail_msg("%s", t->why);
    assert_int_equal(SSL_set1_cert_comp_preference(t->q.ssl, all, 3), 1);
    gnutls_compression_method_t m;
    if (c->cert_comp != 0) {
        assert_true(gnutls_comp_method(c->cert_comp, &m));
        assert_int_equal(gnutls_compress_certificate_set_methods(t->g.p.session, &m, 1), 0);
    }
    if (!run(t))
        fail_msg("%s", t->why);
    check_connection(t, 0, EARLY_NONE);
    assert_int_equal(SSL_get_negotiated_server_cert_comp(t->q.ssl), c->cert_comp);
}

/* --- CA name lists (RFC 8446 §4.2.4) ---------------------------------------- */

/* What each side saw of the peer's certificate_authorities when the certificate was asked. */
static struct {
    int calls;
    int n;          /* names */
    int first_is_ca; /* the first is "qtls test CA" */
} ca_seen;

static int subject_der_is(const unsigned char *der, size_t len, const char *file)
{
    X509 *x = read_cert(file);
    unsigned char *mine = NULL;
    int n = x != NULL ? i2d_X509_NAME(X509_get_subject_name(x), &mine) : -1;
    int same = n > 0 && (size_t)n == len && memcmp(mine, der, len) == 0;
    OPENSSL_free(mine);
    X509_free(x);
    return same;
}

/* GnuTLS client: the req_ca_rdn it parsed from qtls's CertificateRequest; no certificate. */
static int gt_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    ca_seen.calls++;
    ca_seen.n = nreqs;
    ca_seen.first_is_ca = nreqs > 0 && subject_der_is(req_ca_rdn[0].data, req_ca_rdn[0].size,
                                                      "ca.pem");
    *pcert = NULL;
    *pcert_length = 0;
    *pkey = NULL;
    return 0;
}

/* qtls client: SSL_get_client_CA_list when its certificate callback runs. */
static int qtls_client_cert_cb(SSL *s, void *arg)
{
    const STACK_OF(X509_NAME) *l = SSL_get_client_CA_list(s);
    unsigned char *der = NULL;
    int n = sk_X509_NAME_num(l) > 0 ? i2d_X509_NAME(sk_X509_NAME_value(l, 0), &der) : 0;
    ca_seen.calls++;
    ca_seen.n = l == NULL ? 0 : sk_X509_NAME_num(l);
    ca_seen.first_is_ca = n > 0 && subject_der_is(der, (size_t)n, "ca.pem");
    OPENSSL_free(der);
    return 1;
}

static void ca_list_reaches_the_peer(void **state)
{
    struct interop *t = *state;
    int r;
    if (t->why[0] != '\0')
        fail_msg("%s", t->why);
    memset(&ca_seen, 0, sizeof(ca_seen));
    if (t->c->qtls_is_server) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(mock_cert_path("ca.pem"));
        X509 *other = read_cert("other-ca.pem");
        assert_non_null(names);
        assert_non_null(other);
        SSL_set_client_CA_list(t->q.ssl, names);
        assert_int_equal(SSL_add_client_CA(t->q.ssl, other), 1);
        X509_free(other);
        SSL_set_verify(t->q.ssl, SSL_VERIFY_PEER, NULL);
        gnutls_certificate_set_retrieve_function2(t->g.cred, gt_retrieve);
    } else {
        /* The GnuTLS server names the CAs it trusts. */
        r = gnutls_certificate_set_x509_trust_file(t->g.cred, mock_cert_path("ca.pem"),
                                                   GNUTLS_X509_FMT_PEM);
        assert_true(r > 0);
        gnutls_certificate_server_set_request(t->g.p.session, GNUTLS_CERT_REQUEST);
        SSL_set_cert_cb(t->q.ssl, qtls_client_cert_cb, NULL);
    }
    if (!run(t))
        fail_msg("%s", t->why);
    check_connection(t, 0, EARLY_NONE);
    assert_int_equal(ca_seen.calls, 1);
    assert_int_equal(ca_seen.n, t->c->qtls_is_server ? 2 : 1);
    assert_true(ca_seen.first_is_ca);
    if (!t->c->qtls_is_server)
        assert_int_equal(sk_X509_NAME_num(SSL_get0_peer_CA_list(t->q.ssl)), 1);
}

/* --- several certificates on one qtls server ---------------------------------- */

static void add_qtls_pair(struct interop *t, const char *name)
{
    char pem[64], key[64];
    snprintf(pem, sizeof(pem), "%s.pem", name);
    snprintf(key, sizeof(key), "%s.key", name);
    assert_int_equal(SSL_CTX_use_certificate_file(t->ctx, mock_cert_path(pem), SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(t->ctx, mock_cert_path(key), SSL_FILETYPE_PEM),
                     1);
}

/*
 * The qtls server holds ECDSA, Ed25519 and RSA certificates (those the case leaves out) and
 * must send c->cert, the one the GnuTLS client's signature_algorithms make best: ECDSA when
 * offered, then Ed25519, and RSA when GnuTLS offers RSA-PSS only. check_connection checks the
 * signature GnuTLS verified against c->cert.
 */
static void server_picks_the_certificate_the_client_can_verify(void **state)
{
    struct interop *t = *state;
    const char *cert = t->c->cert;
    if (t->why[0] != '\0')
        fail_msg("%s", t->why);
    add_qtls_pair(t, "rsa");
    if (strcmp(cert, "ed25519") != 0)
        add_qtls_pair(t, "ed25519");
    if (strcmp(cert, "rsa") == 0) {
        add_qtls_pair(t, "ecdsa256");
        char prio[300];
        const char *err_pos = NULL;
        snprintf(prio, sizeof(prio),
                 "NORMAL:-VERS-ALL:+VERS-TLS1.3:%%DISABLE_TLS13_COMPAT_MODE:-CIPHER-ALL:+%s:"
                 "-GROUP-ALL:+%s:-SIGN-ALL:+SIGN-RSA-PSS-RSAE-SHA256:+SIGN-RSA-PSS-RSAE-SHA384",
                 suites[t->c->suite].gnutls_cipher, groups[t->c->group].gnutls_prio);
        assert_int_equal(gnutls_priority_set_direct(t->g.p.session, prio, &err_pos), 0);
    }
    if (!run(t))
        fail_msg("%s", t->why);
    check_connection(t, 0, EARLY_NONE);
}

/*
 * Signature algorithms on the wire (sigalgs.c): a qtls client's list decides what the GnuTLS
 * server signs with; a qtls server's list decides what it signs with for a GnuTLS client.
 */
static void sigalgs_list_decides_the_server_signature(void **state)
{
    struct interop *t = *state;
    int nid = 0, want = t->c->qtls_is_server ? GNUTLS_SIGN_RSA_PSS_RSAE_SHA512
                                             : GNUTLS_SIGN_RSA_PSS_RSAE_SHA384;
    const char *list = t->c->qtls_is_server ? "RSA-PSS+SHA512" : "rsa_pss_rsae_sha384:ed25519";
    if (t->why[0] == '\0' && SSL_set1_sigalgs_list(t->q.ssl, list) != 1)
        fail_msg("SSL_set1_sigalgs_list");
    if (!run(t))
        fail_msg("%s", t->why);
    assert_int_equal(gnutls_sign_algorithm_get(t->g.p.session), want);
    if (t->c->qtls_is_server) {
        assert_int_equal(SSL_get_signature_nid(t->q.ssl, &nid), 1);
        assert_int_equal(nid, NID_sha512);
    } else {
        assert_int_equal(SSL_get_peer_signature_type_nid(t->q.ssl, &nid), 1);
        assert_int_equal(nid, EVP_PKEY_RSA_PSS);
        assert_int_equal(SSL_get_peer_signature_nid(t->q.ssl, &nid), 1);
        assert_int_equal(nid, NID_sha384);
    }
}

/* A qtls client offering nothing the GnuTLS server's key can sign: no handshake. */
static void sigalgs_list_without_the_servers_scheme_fails(void **state)
{
    struct interop *t = *state;
    if (t->why[0] == '\0' && SSL_set1_sigalgs_list(t->q.ssl, "ed25519:rsa_pss_rsae_sha256") != 1)
        fail_msg("SSL_set1_sigalgs_list");
    assert_false(run(t));
    assert_false(SSL_is_init_finished(t->q.ssl));
    ERR_clear_error();
}

/* --- custom extensions and the certificate verify callback ------------------- */

#define CUSTOM_EXT 0xfa11 /* a type neither library knows */

/* What each side's custom-extension hooks saw, for one test. */
static struct {
    char qtls_got[32], gnutls_got[32];
    int qtls_parses, gnutls_recvs, qtls_adds, gnutls_sends;
} xt;

static int q_xt_add(SSL *s, unsigned int type, unsigned int context, const unsigned char **out,
                    size_t *outlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    xt.qtls_adds++;
    *out = (const unsigned char *)(SSL_is_server(s) ? "qtls-server" : "qtls-client");
    *outlen = strlen((const char *)*out);
    return 1;
}

static int q_xt_parse(SSL *s, unsigned int type, unsigned int context, const unsigned char *in,
                      size_t inlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    xt.qtls_parses++;
    if (inlen >= sizeof(xt.qtls_got))
        return 0;
    memcpy(xt.qtls_got, in, inlen);
    xt.qtls_got[inlen] = 0;
    return 1;
}

static int g_xt_recv(gnutls_session_t session, const unsigned char *data, size_t len)
{
    xt.gnutls_recvs++;
    if (len >= sizeof(xt.gnutls_got))
        return GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
    memcpy(xt.gnutls_got, data, len);
    xt.gnutls_got[len] = 0;
    return 0;
}

static int g_xt_send(gnutls_session_t session, gnutls_buffer_t extdata)
{
    struct gt_side *g = gnutls_session_get_ptr(session);
    const char *v = g->p.is_server ? "gnutls-server" : "gnutls-client";
    xt.gnutls_sends++;
    int r = gnutls_buffer_append_data(extdata, v, strlen(v));
    return r < 0 ? r : (int)strlen(v);
}

/*
 * A custom extension crosses in the ClientHello and comes back in EncryptedExtensions, both
 * directions: qtls's SSL_CTX_add_custom_ext against GnuTLS's gnutls_session_ext_register.
 */
static void custom_extension_crosses_both_ways(void **state)
{
    struct interop *t = *state;
    memset(&xt, 0, sizeof(xt));
    if (t->why[0] == '\0') {
        assert_int_equal(SSL_CTX_add_custom_ext(t->ctx, CUSTOM_EXT,
                                                SSL_EXT_CLIENT_HELLO |
                                                    SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS,
                                                q_xt_add, NULL, NULL, q_xt_parse, NULL),
                         1);
        assert_true(gnutls_session_ext_register(t->g.p.session, "qtls test", CUSTOM_EXT,
                                                GNUTLS_EXT_TLS, g_xt_recv, g_xt_send, NULL, NULL,
                                                NULL,
                                                GNUTLS_EXT_FLAG_TLS | GNUTLS_EXT_FLAG_CLIENT_HELLO |
                                                    GNUTLS_EXT_FLAG_EE) >= 0);
    }
    if (!run(t))
        fail_msg("%s", t->why);
    check_connection(t, 0, EARLY_NONE);
    assert_int_equal(xt.qtls_adds, 1);
    assert_int_equal(xt.qtls_parses, 1);
    assert_int_equal(xt.gnutls_recvs, 1);
    if (t->c->qtls_is_server) {
        assert_string_equal(xt.qtls_got, "gnutls-client");
        assert_string_equal(xt.gnutls_got, "qtls-server");
    } else {
        assert_string_equal(xt.gnutls_got, "qtls-client");
        assert_string_equal(xt.qtls_got, "gnutls-server");
    }
}

static int verify_calls, verify_saw_ssl, verify_chain_len;
static int reject_with_cert_rejected(X509_STORE_CTX *sctx, void *arg)
{
    verify_calls++;
    verify_saw_ssl =
        X509_STORE_CTX_get_ex_data(sctx, SSL_get_ex_data_X509_STORE_CTX_idx()) == arg;
    verify_chain_len = sk_X509_num(X509_STORE_CTX_get0_untrusted(sctx));
    X509_STORE_CTX_set_error(sctx, X509_V_ERR_CERT_REJECTED);
    return 0;
}

/* The application's verify function replaces X509_verify_cert on GnuTLS's chain: its "no"
   fails the handshake with bad_certificate, though the chain itself verifies. */
static void cert_verify_callback_rejects_the_gnutls_chain(void **state)
{
    struct interop *t = *state;
    verify_calls = verify_saw_ssl = verify_chain_len = 0;
    if (t->why[0] == '\0')
        SSL_CTX_set_cert_verify_callback(t->ctx, reject_with_cert_rejected, t->q.ssl);
    assert_false(run(t));
    assert_int_equal(verify_calls, 1);
    assert_true(verify_saw_ssl);
    assert_int_equal(verify_chain_len, 1); /* the leaf GnuTLS sent */
    assert_int_equal(t->q.alert, SSL_AD_BAD_CERTIFICATE);
    assert_int_equal(SSL_get_verify_result(t->q.ssl), X509_V_ERR_CERT_REJECTED);
    assert_false(t->g.done);
    ERR_clear_error();
}

/* --- the cases ------------------------------------------------------------ */

static struct interop_case *add_case(int qtls_is_server, int suite, int group, const char *cert)
{
    if (ncases == MAX_CASES) {
        fprintf(stderr, "test_gnutls: raise MAX_CASES\n");
        exit(1);
    }
    struct interop_case *c = &cases[ncases++];
    memset(c, 0, sizeof(*c));
    c->qtls_is_server = qtls_is_server;
    c->suite = suite;
    c->group = group;
    c->cert = cert;
    return c;
}

static const char *pair_name(int qtls_is_server)
{
    return qtls_is_server ? "gnutls_client_and_qtls_server" : "qtls_client_and_gnutls_server";
}

static void build_cases(struct CMUnitTest *tests)
{
    struct interop_case *c;

    /* Every suite x group, both directions, ECDSA P-256 server certificate. */
    for (int dir = 0; dir < 2; dir++) {
        for (int s = 0; s < 4; s++) {
            for (int g = 0; g < 4; g++) {
                c = add_case(dir, s, g, "ecdsa256");
                snprintf(c->name, sizeof(c->name), "%s_agree_on_%s_with_%s", pair_name(dir),
                         suites[s].name, groups[g].name);
            }
        }
    }

    /* Every server certificate type, on whichever side is the server. */
    for (int dir = 0; dir < 2; dir++) {
        for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++) {
            c = add_case(dir, 0, G_X25519, certs[i]);
            snprintf(c->name, sizeof(c->name), "%s_verify_a_%s_server_certificate",
                     pair_name(dir), certs[i]);
        }
    }

    /*
     * HelloRetryRequest (RFC 8446 §4.1.4): the server offers only P-384; the
     * client's one key share is for another group. qtls as client shares only
     * its first group (X25519); GnuTLS shares its first group plus the first of
     * another kind, so its list is P-256 then P-384, both ECDH on NIST curves.
     */
    for (int dir = 0; dir < 2; dir++) {
        for (int framing = 0; framing < 2; framing++) {
            c = add_case(dir, 0, G_P384, "ecdsa256");
            c->qtls_client_groups = "X25519:P-384";
            c->gnutls_client_groups = "GROUP-SECP256R1:+GROUP-SECP384R1";
            c->expect_hrr = 1;
            if (framing) {
                c->to_qtls_chunk = 1;
                c->to_gnutls_chunk = 1;
                /*
                 * GnuTLS 3.7.9 bug (conformance.md §4.3 quirk 2, seen here
                 * too): a GnuTLS client given the HelloRetryRequest in pieces
                 * under 39 bytes fails with "Error decoding the received TLS
                 * packet". So the HRR alone reaches a GnuTLS client whole;
                 * the ServerHello and everything after it go 1 byte at a
                 * time, and qtls gets everything 1 byte at a time.
                 */
                c->gnutls_hrr_whole = dir == 1;
            }
            snprintf(c->name, sizeof(c->name), "%s_complete_a_hello_retry_request%s",
                     pair_name(dir),
                     !framing   ? ""
                     : dir == 1 ? "_fed_1_byte_at_a_time_but_the_hrr_whole_to_gnutls"
                                : "_fed_1_byte_at_a_time");
        }
    }

    /* 1-byte framing towards each side, and towards both. */
    for (int dir = 0; dir < 2; dir++) {
        static const struct {
            long to_qtls, to_gnutls;
            const char *what;
        } framings[] = {{1, 0, "qtls_fed_1_byte_at_a_time"},
                        {0, 1, "gnutls_fed_1_byte_at_a_time"},
                        {1, 1, "both_fed_1_byte_at_a_time"}};
        for (size_t f = 0; f < 3; f++) {
            c = add_case(dir, 0, G_X25519, "ecdsa256");
            c->to_qtls_chunk = framings[f].to_qtls;
            c->to_gnutls_chunk = framings[f].to_gnutls;
            snprintf(c->name, sizeof(c->name), "%s_complete_with_%s", pair_name(dir),
                     framings[f].what);
        }
    }

    /*
     * A GnuTLS server sends a NewSessionTicket after the handshake; the qtls
     * client must process it (RFC 8446 §4.6.1: it may ignore it), here in
     * whole and 1 byte at a time. Resuming with it comes with the sessions work.
     */
    for (int framing = 0; framing < 2; framing++) {
        c = add_case(0, 0, G_X25519, "ecdsa256");
        c->gnutls_server_tickets = 1;
        c->to_qtls_chunk = framing;
        snprintf(c->name, sizeof(c->name),
                 "qtls_client_processes_a_gnutls_new_session_ticket%s",
                 framing ? "_fed_1_byte_at_a_time" : "");
    }

    /*
     * Resumption and 0-RTT, both directions. The client keeps the session of
     * the first connection and offers it on the next; the GnuTLS server
     * shares its ticket key and anti-replay record across connections, the
     * qtls server its SSL_CTX.
     */
    for (int dir = 0; dir < 2; dir++) {
        /* Resumption alone: the client does not offer 0-RTT. */
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 1;
        snprintf(c->name, sizeof(c->name), "%s_resume_a_session", pair_name(dir));

        /* 0-RTT accepted, with every suite (the early secret has the suite's hash). */
        for (int s = 0; s < 4; s++) {
            c = add_case(dir, s, G_X25519, "ecdsa256");
            c->gnutls_server_tickets = dir == 0;
            c->resumptions = 1;
            c->early_tickets = c->client_early = c->server_early = 1;
            c->expect_early[1] = EARLY_ACCEPTED;
            snprintf(c->name, sizeof(c->name), "%s_resume_with_0rtt_accepted_on_%s",
                     pair_name(dir), suites[s].name);
        }

        /*
         * The server of the second connection does not take 0-RTT (GnuTLS:
         * no GNUTLS_ENABLE_EARLY_DATA; qtls: no SSL_set_quic_early_data_enabled)
         * although its tickets allow it: a resumed 1-RTT handshake (RFC 9001 §4.6.2).
         */
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 1;
        c->early_tickets = c->client_early = 1;
        c->expect_early[1] = EARLY_REJECTED;
        snprintf(c->name, sizeof(c->name), "%s_resume_with_0rtt_rejected_by_the_server",
                 pair_name(dir));

        /*
         * Resumption after a HelloRetryRequest, both connections (neither
         * client remembers the group): the resumed second ClientHello carries
         * the PSK with its binder over the new transcript (RFC 8446 §4.2.11.2).
         */
        c = add_case(dir, 0, G_P384, "ecdsa256");
        c->qtls_client_groups = "X25519:P-384";
        c->gnutls_client_groups = "GROUP-SECP256R1:+GROUP-SECP384R1";
        c->expect_hrr = 1;
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 1;
        snprintf(c->name, sizeof(c->name), "%s_resume_after_a_hello_retry_request",
                 pair_name(dir));
    }

    /*
     * GREASE (RFC 8701): the GnuTLS server ignores the qtls client's GREASE suite, group and
     * key share, sigalg, version, PSK mode and extensions; after a HelloRetryRequest (the
     * same values again) and on resumption with 0-RTT (psk_key_exchange_modes matters there).
     */
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->grease = 1;
    snprintf(c->name, sizeof(c->name), "qtls_client_with_grease_and_gnutls_server");
    c = add_case(0, 0, G_P384, "ecdsa256");
    c->grease = 1;
    c->qtls_client_groups = "X25519:P-384";
    c->expect_hrr = 1;
    snprintf(c->name, sizeof(c->name), "qtls_client_with_grease_meets_a_gnutls_hello_retry_request");
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->grease = 1;
    c->gnutls_server_tickets = 1;
    c->resumptions = 1;
    c->early_tickets = c->client_early = c->server_early = 1;
    c->expect_early[1] = EARLY_ACCEPTED;
    snprintf(c->name, sizeof(c->name), "qtls_client_with_grease_resumes_with_0rtt_from_gnutls");
    /* ... and a GnuTLS client ignores the GREASE extension in a qtls server's tickets. */
    c = add_case(1, 0, G_X25519, "ecdsa256");
    c->grease = 1;
    c->resumptions = 1;
    c->early_tickets = c->client_early = c->server_early = 1;
    c->expect_early[1] = EARLY_ACCEPTED;
    snprintf(c->name, sizeof(c->name), "gnutls_client_resumes_with_0rtt_from_a_grease_qtls_server");

    /*
     * 0-RTT offered, then a HelloRetryRequest, which GnuTLS 3.7.9 cannot do in
     * either role: see zero_rtt_meets_a_hello_retry_request.
     */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_P384, "ecdsa256");
        c->qtls_client_groups = "X25519:P-384";
        c->gnutls_client_groups = "GROUP-SECP256R1:+GROUP-SECP384R1";
        c->expect_hrr = 1;
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 1;
        c->early_tickets = c->client_early = c->server_early = 1;
        c->test = zero_rtt_meets_a_hello_retry_request;
        snprintf(c->name, sizeof(c->name), "%s_offer_0rtt_and_meet_a_hello_retry_request",
                 pair_name(dir));
    }

    /*
     * A ticket that does not allow 0-RTT, and the client asked to use it.
     * The qtls client does not offer 0-RTT; the GnuTLS client offers it
     * anyway (its client keeps max_early_data_size at UINT32_MAX when the
     * NewSessionTicket has no early_data extension), and the qtls server
     * refuses it since its ticket does not allow it.
     */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 1;
        c->client_early = c->server_early = 1;
        c->expect_early[1] = dir == 0 ? EARLY_NONE : EARLY_REJECTED;
        if (dir == 1)
            c->note = "GnuTLS 3.7.9 client: offers 0-RTT with a ticket that does not allow it";
        snprintf(c->name, sizeof(c->name), "%s_resume_with_a_ticket_that_does_not_allow_0rtt",
                 pair_name(dir));
    }

    /*
     * The same ticket twice with 0-RTT. The qtls server takes 0-RTT once per
     * ticket (RFC 8446 §8.1) and resumes the second time without it; the
     * GnuTLS server records ClientHellos instead (§8.2), so a new
     * ClientHello with the same ticket gets 0-RTT again.
     */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->gnutls_server_tickets = dir == 0;
        c->resumptions = 2;
        c->early_tickets = c->client_early = c->server_early = 1;
        c->expect_early[1] = EARLY_ACCEPTED;
        c->expect_early[2] = dir == 0 ? EARLY_ACCEPTED : EARLY_REJECTED;
        if (dir == 0)
            c->note = "GnuTLS 3.7.9 server: records ClientHellos against replay, not tickets: "
                      "the same ticket gets 0-RTT again";
        snprintf(c->name, sizeof(c->name), "%s_resume_twice_with_one_0rtt_ticket",
                 pair_name(dir));
    }

    /* The ticket age qtls sends, against GnuTLS's check of it. */
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->gnutls_server_tickets = 1;
    c->early_tickets = c->client_early = c->server_early = 1;
    c->keep_latest_session = 1;
    c->note = "GnuTLS 3.7.9 server: refuses 0-RTT when the client's ticket age is ahead of its "
              "own view by a millisecond";
    c->test = zero_rtt_ticket_age_is_never_ahead_of_the_gnutls_server;
    snprintf(c->name, sizeof(c->name),
             "qtls_client_ticket_age_is_never_ahead_of_the_gnutls_server_so_0rtt_is_accepted");

    /* Certificate compression both ways, with each algorithm this GnuTLS has, and none. */
    static char comp_note[200];
    size_t len = (size_t)snprintf(comp_note, sizeof(comp_note),
                                  "GnuTLS here compresses certificates with:");
    int gnutls_algs = 0;
    for (size_t i = 0; i < sizeof(comp_methods) / sizeof(comp_methods[0]); i++) {
        int has = gnutls_has_cert_comp(comp_methods[i].id);
        if (has && len < sizeof(comp_note))
            len += (size_t)snprintf(comp_note + len, sizeof(comp_note) - len, " %s",
                                    comp_methods[i].name);
        gnutls_algs += has;
        for (int dir = 0; has && dir < 2; dir++) {
            c = add_case(dir, 0, G_X25519, "rsa");
            c->cert_comp = comp_methods[i].id;
            c->test = certificate_compression_with_gnutls;
            snprintf(c->name, sizeof(c->name), "%s_compress_the_certificate_with_%s",
                     pair_name(dir), comp_methods[i].name);
        }
    }
    if (gnutls_algs == 0 && len < sizeof(comp_note))
        snprintf(comp_note + len, sizeof(comp_note) - len,
                 " nothing (Debian's 3.7.9 is built without zlib, brotli and zstd)");
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "rsa");
        c->test = certificate_compression_with_gnutls;
        c->note = comp_note;
        snprintf(c->name, sizeof(c->name),
                 "%s_send_the_certificate_uncompressed_when_gnutls_does_not_compress",
                 pair_name(dir));
    }

    /* OCSP stapling both ways, with a response GnuTLS checks. */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->test = ocsp_response_is_stapled;
        snprintf(c->name, sizeof(c->name), "%s_staple_an_ocsp_response", pair_name(dir));
    }

    /* A qtls server with several certificates picks by the client's signature_algorithms. */
    static const char *const picks[] = {"ecdsa256", "ed25519", "rsa"};
    for (int i = 0; i < 3; i++) {
        c = add_case(1, 0, G_X25519, picks[i]);
        c->test = server_picks_the_certificate_the_client_can_verify;
        snprintf(c->name, sizeof(c->name), "qtls_server_with_several_certificates_sends_%s",
                 picks[i]);
    }

    /* certificate_authorities in CertificateRequest, both ways. */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->test = ca_list_reaches_the_peer;
        snprintf(c->name, sizeof(c->name), "%s_read_the_certificate_request_ca_list",
                 pair_name(dir));
    }

    /* Signature-algorithm lists on the wire, both directions. */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "rsa");
        c->test = sigalgs_list_decides_the_server_signature;
        snprintf(c->name, sizeof(c->name), "%s_sign_with_the_configured_sigalgs", pair_name(dir));
    }
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->test = sigalgs_list_without_the_servers_scheme_fails;
    snprintf(c->name, sizeof(c->name),
             "qtls_client_sigalgs_without_the_gnutls_servers_scheme_fail_the_handshake");

    /* Custom extensions both ways; the certificate verify callback refusing GnuTLS's chain. */
    for (int dir = 0; dir < 2; dir++) {
        c = add_case(dir, 0, G_X25519, "ecdsa256");
        c->test = custom_extension_crosses_both_ways;
        snprintf(c->name, sizeof(c->name), "%s_exchange_a_custom_extension", pair_name(dir));
    }
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->test = cert_verify_callback_rejects_the_gnutls_chain;
    snprintf(c->name, sizeof(c->name),
             "qtls_client_cert_verify_callback_rejects_the_gnutls_servers_chain");

    /* RFC 9001 §4.6.1 against GnuTLS's TLS default for max_early_data_size. */
    c = add_case(0, 0, G_X25519, "ecdsa256");
    c->gnutls_server_tickets = 1;
    c->early_tickets = 1;
    c->gnutls_default_max_early = 1;
    c->test = qtls_client_refuses_a_ticket_with_a_tls_max_early_data;
    snprintf(c->name, sizeof(c->name),
             "qtls_client_refuses_a_gnutls_ticket_allowing_16384_bytes_of_early_data");

    for (size_t i = 0; i < ncases; i++) {
        tests[i] = (struct CMUnitTest){
            cases[i].name, cases[i].test != NULL ? cases[i].test : interop_completes, setup,
            teardown, &cases[i]};
    }
}

/* GnuTLS's own log on stderr, when QTLS_GNUTLS_DEBUG=<level> asks for it. */
static void gt_log(int level, const char *msg) { fprintf(stderr, "gnutls<%d>: %s", level, msg); }

int main(void)
{
    static struct CMUnitTest tests[MAX_CASES];
    if (gnutls_check_version("3.7.0") == NULL) {
        /* The QUIC hooks appeared in 3.7.0: nothing here can run. */
        printf("test_gnutls: GnuTLS %s has no QUIC API (needs 3.7.0)\n",
               gnutls_check_version(NULL));
        return 1;
    }
    if (gnutls_global_init() < 0)
        return 1;
    const char *debug = getenv("QTLS_GNUTLS_DEBUG");
    if (debug != NULL) {
        gnutls_global_set_log_function(gt_log);
        gnutls_global_set_log_level(atoi(debug));
    }
    print_message("GnuTLS %s, %s\n", gnutls_check_version(NULL), OpenSSL_version(OPENSSL_VERSION));
    build_cases(tests);
    int failed = _cmocka_run_group_tests("qtls <-> GnuTLS QUIC interop", tests, ncases, NULL,
                                         NULL);
    gnutls_global_deinit();
    OPENSSL_free(ocsp_der.data);
    return failed;
}
