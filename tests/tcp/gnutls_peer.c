/*
 * tests/tcp/gnutls_peer.c: the TCP interop peer on GnuTLS 3.7, with tls_peer.c's command line
 * and result lines (peer_common.c, tests/tcp/README.md). TLS 1.3 only unless --tls12-only.
 *
 * How each option maps onto GnuTLS:
 *   --ciphersuites, --groups   the priority string ("-CIPHER-ALL:+AES-128-GCM",
 *                              "-GROUP-ALL:+GROUP-X25519:..."); a client sends one key share
 *                              (GNUTLS_KEY_SHARE_TOP), as OpenSSL's does, so that a server
 *                              that wants the second group asks for it with a HelloRetryRequest
 *   --resume                   gnutls_session_get_data2 / gnutls_session_set_data; the server
 *                              has one ticket key per process (gnutls_session_ticket_key_generate)
 *   --early-data (client)      GNUTLS_ENABLE_EARLY_DATA, gnutls_record_send_early_data
 *   --max-early-data (server)  GNUTLS_ENABLE_EARLY_DATA, gnutls_record_set_max_early_data_size,
 *                              an anti-replay context with an in-memory store (without a store
 *                              GnuTLS rejects all early data), gnutls_record_recv_early_data
 *                              after the handshake; --reject-early-data-from N leaves
 *                              GNUTLS_ENABLE_EARLY_DATA off from the N-th connection on
 *   --key-update-after         gnutls_session_key_update(GNUTLS_KU_PEER)
 *   --post-handshake-auth      GNUTLS_POST_HANDSHAKE_AUTH; the server asks with gnutls_reauth,
 *                              the client answers GNUTLS_E_REAUTH_REQUEST with gnutls_reauth
 * What it reports: the handshake hook (GNUTLS_HANDSHAKE_ANY, after each message, both
 * directions) counts KeyUpdates, CertificateRequests, tickets and HelloRetryRequests, and
 * reads the first ClientHello's extensions (gnutls_ext_raw_parse) for early_data, so that a
 * server can tell "rejected" from "not sent". GnuTLS sends no alert of its own when a
 * handshake fails; like gnutls-serv and gnutls-cli, this peer then sends the one
 * gnutls_alert_send_appropriate picks, and reports it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>

#include "peer_common.h"

struct peer_conn {
    gnutls_session_t s;
    struct report *r;
    int conn, early_enabled, early_written, early_offered, client_hellos;
};

static const struct opts *opt;
static gnutls_certificate_credentials_t cred;
static gnutls_priority_t prio;
static gnutls_datum_t ticket_key;     /* server */
static gnutls_anti_replay_t anti_replay; /* server with early data */
static gnutls_datum_t saved;          /* client: the session of the previous connection */

/* The anti-replay store: ClientHellos seen with early data (a handful per run). */
static gnutls_datum_t seen[64];
static int nseen;

static int ar_add(void *ptr, time_t exp, const gnutls_datum_t *key, const gnutls_datum_t *data)
{
    (void)ptr, (void)exp, (void)data;
    for (int i = 0; i < nseen; i++)
        if (seen[i].size == key->size && memcmp(seen[i].data, key->data, key->size) == 0)
            return GNUTLS_E_DB_ENTRY_EXISTS;
    if (nseen == 64)
        return GNUTLS_E_DB_ERROR;
    seen[nseen].data = malloc(key->size);
    if (seen[nseen].data == NULL)
        return GNUTLS_E_MEMORY_ERROR;
    memcpy(seen[nseen].data, key->data, key->size);
    seen[nseen++].size = key->size;
    return 0;
}

static int on_ext(void *ctx, unsigned tls_id, const unsigned char *data, unsigned size)
{
    (void)data, (void)size;
    if (tls_id == 42) /* early_data */
        ((struct peer_conn *)ctx)->early_offered = 1;
    return 0;
}

static int on_message(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                      const gnutls_datum_t *msg)
{
    struct peer_conn *c = gnutls_session_get_ptr(s);
    (void)when;
    if (c == NULL)
        return 0;
    if (opt->verbose)
        fprintf(stderr, "msg %s type %u\n", incoming ? "received" : "sent", htype);
    switch (htype) {
    case GNUTLS_HANDSHAKE_KEY_UPDATE:
        (*(incoming ? &c->r->ku_recv : &c->r->ku_sent))++;
        break;
    case GNUTLS_HANDSHAKE_CERTIFICATE_REQUEST:
        (*(incoming ? &c->r->certreq_recv : &c->r->certreq_sent))++;
        break;
    case GNUTLS_HANDSHAKE_NEW_SESSION_TICKET:
        if (incoming)
            c->r->tickets_recv++;
        break;
    case GNUTLS_HANDSHAKE_HELLO_RETRY_REQUEST:
        c->r->hrr = 1;
        break;
    case GNUTLS_HANDSHAKE_CLIENT_HELLO:
        if (incoming && c->client_hellos++ == 0)
            gnutls_ext_raw_parse(c, on_ext, msg, GNUTLS_EXT_RAW_FLAG_TLS_CLIENT_HELLO);
        break;
    default:
        break;
    }
    return 0;
}

/* Whether a call that returned err should be made again: GNUTLS_E_INTERRUPTED, and
 * GNUTLS_E_AGAIN, which gnutls_record_recv also returns after a post-handshake message (a
 * ticket, a KeyUpdate) that brought no data, until the socket's own timeout (SO_RCVTIMEO)
 * has passed since `start`. */
static int again(int err, time_t start)
{
    if (err == GNUTLS_E_INTERRUPTED)
        return 1;
    return err == GNUTLS_E_AGAIN && time(NULL) - start < opt->timeout;
}

/* Fills the report from a GnuTLS error; in the handshake, sends the alert GnuTLS picks for it. */
static int gt_fail(struct peer_conn *c, int err, const char *stage)
{
    struct report *r = c->r;
    r->ok = 0;
    r->stage = stage;
    if (err == GNUTLS_E_AGAIN)
        snprintf(r->err, sizeof(r->err), "timed out: nothing moved for %d s", opt->timeout);
    else
        snprintf(r->err, sizeof(r->err), "%s: %s", gnutls_strerror_name(err),
                 gnutls_strerror(err));
    if (err == GNUTLS_E_FATAL_ALERT_RECEIVED || err == GNUTLS_E_WARNING_ALERT_RECEIVED) {
        r->alert_recv = r->err_alert = (int)gnutls_alert_get(c->s);
        snprintf(r->err + strlen(r->err), sizeof(r->err) - strlen(r->err), " (%s)",
                 gnutls_alert_get_name(gnutls_alert_get(c->s)));
    } else if (strcmp(stage, "handshake") == 0 && err != GNUTLS_E_PREMATURE_TERMINATION &&
               err != GNUTLS_E_PULL_ERROR && err != GNUTLS_E_PUSH_ERROR &&
               err != GNUTLS_E_TIMEDOUT && err != GNUTLS_E_AGAIN) {
        int level, alert = gnutls_error_to_alert(err, &level);
        if (alert >= 0 && gnutls_alert_send_appropriate(c->s, err) == 0)
            r->alert_sent = alert;
    }
    fprintf(stderr, "gnutls_peer: %s: %s\n", stage, r->err);
    return -1;
}

/* The priority string of the options (TLS 1.3 only unless --tls12-only). */
static int build_priority(const struct opts *o, char *p, size_t len)
{
    static const struct {
        const char *name, *gnutls;
    } suites[] = {{"TLS_AES_128_GCM_SHA256", "AES-128-GCM"},
                  {"TLS_AES_256_GCM_SHA384", "AES-256-GCM"},
                  {"TLS_CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305"},
                  {"TLS_AES_128_CCM_SHA256", "AES-128-CCM"}},
      groups[] = {{"X25519", "GROUP-X25519"},       {"X448", "GROUP-X448"},
                  {"P-256", "GROUP-SECP256R1"},     {"P-384", "GROUP-SECP384R1"},
                  {"P-521", "GROUP-SECP521R1"},     {"prime256v1", "GROUP-SECP256R1"},
                  {"secp384r1", "GROUP-SECP384R1"}, {"secp521r1", "GROUP-SECP521R1"}};
    char list[256], *save = NULL;
    snprintf(p, len, "NORMAL:-VERS-ALL:+VERS-TLS1.%d", o->tls12_only ? 2 : 3);
    for (int pass = 0; pass < 2; pass++) {
        const char *in = pass == 0 ? o->ciphersuites : o->groups;
        if (in == NULL)
            continue;
        strncat(p, pass == 0 ? ":-CIPHER-ALL" : ":-GROUP-ALL", len - strlen(p) - 1);
        snprintf(list, sizeof(list), "%s", in);
        for (char *t = strtok_r(list, ":", &save); t != NULL; t = strtok_r(NULL, ":", &save)) {
            const char *g = NULL;
            size_t n = pass == 0 ? sizeof(suites) / sizeof(suites[0])
                                 : sizeof(groups) / sizeof(groups[0]);
            for (size_t i = 0; i < n; i++)
                if (strcmp(t, (pass == 0 ? suites : groups)[i].name) == 0)
                    g = (pass == 0 ? suites : groups)[i].gnutls;
            if (g == NULL) {
                fprintf(stderr, "gnutls_peer: no GnuTLS name for %s\n", t);
                return -1;
            }
            strncat(p, ":+", len - strlen(p) - 1);
            strncat(p, g, len - strlen(p) - 1);
        }
    }
    return 0;
}

static int setup_fail(const char *what, int err)
{
    fprintf(stderr, "gnutls_peer: %s: %s\n", what, gnutls_strerror(err));
    return -1;
}

static int peer_setup(const struct opts *o)
{
    char p[512];
    const char *errpos = NULL;
    int ret;
    opt = o;
    if ((ret = gnutls_global_init()) < 0)
        return setup_fail("gnutls_global_init", ret);
    if ((ret = gnutls_certificate_allocate_credentials(&cred)) < 0)
        return setup_fail("gnutls_certificate_allocate_credentials", ret);
    if (o->ca != NULL &&
        (ret = gnutls_certificate_set_x509_trust_file(cred, o->ca, GNUTLS_X509_FMT_PEM)) < 0)
        return setup_fail(o->ca, ret);
    const char *cert = o->server ? o->cert : o->client_cert;
    const char *key = o->server ? o->key : o->client_key;
    if (cert != NULL &&
        (ret = gnutls_certificate_set_x509_key_file(cred, cert, key, GNUTLS_X509_FMT_PEM)) < 0)
        return setup_fail(cert, ret);
    if (build_priority(o, p, sizeof(p)) != 0)
        return -1;
    if (o->verbose)
        fprintf(stderr, "priority %s\n", p);
    if ((ret = gnutls_priority_init(&prio, p, &errpos)) < 0) {
        fprintf(stderr, "gnutls_peer: priority %s at %s\n", p, errpos ? errpos : "?");
        return setup_fail("gnutls_priority_init", ret);
    }
    if (o->server) {
        if ((ret = gnutls_session_ticket_key_generate(&ticket_key)) < 0)
            return setup_fail("gnutls_session_ticket_key_generate", ret);
        if (o->max_early_data > 0) {
            if ((ret = gnutls_anti_replay_init(&anti_replay)) < 0)
                return setup_fail("gnutls_anti_replay_init", ret);
            gnutls_anti_replay_set_add_function(anti_replay, ar_add);
        }
    }
    return 0;
}

static struct peer_conn *peer_open(const struct opts *o, int fd, int conn, struct report *r)
{
    struct peer_conn *c = calloc(1, sizeof(*c));
    unsigned flags;
    int ret;
    if (c == NULL)
        return NULL;
    c->r = r;
    c->conn = conn;
    if (o->server) {
        flags = GNUTLS_SERVER;
        c->early_enabled = o->max_early_data > 0 &&
                           !(o->reject_early_from > 0 && conn >= o->reject_early_from);
    } else {
        flags = GNUTLS_CLIENT | GNUTLS_KEY_SHARE_TOP;
        c->early_enabled = o->early_data > 0;
    }
    if (c->early_enabled)
        flags |= GNUTLS_ENABLE_EARLY_DATA;
    if (o->post_handshake_auth)
        flags |= GNUTLS_POST_HANDSHAKE_AUTH;
    if ((ret = gnutls_init(&c->s, flags)) < 0) {
        free(c);
        r->ok = 0, r->stage = "setup";
        snprintf(r->err, sizeof(r->err), "gnutls_init: %s", gnutls_strerror(ret));
        return NULL;
    }
    gnutls_session_set_ptr(c->s, c);
    gnutls_priority_set(c->s, prio);
    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_transport_set_int(c->s, fd);
    gnutls_handshake_set_hook_function(c->s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_POST, on_message);
    gnutls_handshake_set_timeout(c->s, (unsigned)o->timeout * 1000);
    gnutls_record_set_timeout(c->s, (unsigned)o->timeout * 1000);
    if (o->server) {
        gnutls_session_ticket_enable_server(c->s, &ticket_key);
        if (c->early_enabled) {
            gnutls_anti_replay_enable(c->s, anti_replay);
            gnutls_record_set_max_early_data_size(c->s, (size_t)o->max_early_data);
        }
        if (o->require_client_cert)
            gnutls_certificate_server_set_request(c->s, GNUTLS_CERT_REQUIRE);
        if (o->require_client_cert || o->post_handshake_auth)
            gnutls_session_set_verify_cert(c->s, NULL, 0);
        return c;
    }
    gnutls_server_name_set(c->s, GNUTLS_NAME_DNS, o->servername, strlen(o->servername));
    gnutls_session_set_verify_cert(c->s, o->servername, 0);
    if (conn > 1) {
        if (saved.data == NULL) {
            r->ok = 0, r->stage = "session";
            snprintf(r->err, sizeof(r->err), "no session ticket came on connection %d",
                     conn - 1);
            gnutls_deinit(c->s);
            free(c);
            return NULL;
        }
        if ((ret = gnutls_session_set_data(c->s, saved.data, saved.size)) < 0) {
            gt_fail(c, ret, "session");
            gnutls_deinit(c->s);
            free(c);
            return NULL;
        }
    }
    return c;
}

static int peer_early_write(struct peer_conn *c, const unsigned char *buf, size_t n)
{
    if (c->conn == 1 || saved.data == NULL)
        return 0;
    /* All or nothing: it appends the data to the buffer the ClientHello's flight takes it
     * from. GnuTLS 3.7 returns 0, not n, when it took it all (the append's own result). */
    ssize_t ret = gnutls_record_send_early_data(c->s, buf, n);
    if (ret < 0)
        return gt_fail(c, (int)ret, "early_data");
    c->early_written = 1;
    return 1;
}

static int peer_handshake(struct peer_conn *c, struct sink *sk)
{
    int ret;
    time_t start = time(NULL);
    do
        ret = gnutls_handshake(c->s);
    while (ret < 0 && again(ret, start));
    if (ret < 0)
        return gt_fail(c, ret, "handshake");
    if (opt->server && c->early_enabled) {
        unsigned char buf[PEER_CHUNK];
        for (;;) {
            ssize_t n = gnutls_record_recv_early_data(c->s, buf, sizeof(buf));
            if (n == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
                break;
            if (n < 0 && again((int)n, start))
                continue;
            if (n < 0)
                return gt_fail(c, (int)n, "early_data");
            if (n > 0 && sk->take(sk, buf, (size_t)n) < 0)
                return -1;
        }
    }
    return 0;
}

static void peer_describe(struct peer_conn *c)
{
    struct report *r = c->r;
    gnutls_protocol_t v = gnutls_protocol_get_version(c->s);
    const char *suite = gnutls_ciphersuite_get(c->s);
    gnutls_group_t g = gnutls_group_get(c->s);
    unsigned flags = gnutls_session_get_flags(c->s);
    snprintf(r->version, sizeof(r->version), "%s",
             v == GNUTLS_TLS1_3   ? "TLSv1.3"
             : v == GNUTLS_TLS1_2 ? "TLSv1.2"
                                  : gnutls_protocol_get_name(v));
    snprintf(r->suite, sizeof(r->suite), "%s", suite != NULL ? suite : "-");
    if (g != GNUTLS_GROUP_INVALID)
        snprintf(r->group, sizeof(r->group), "%s", peer_group_name(gnutls_group_get_name(g)));
    r->resumed = gnutls_session_is_resumed(c->s) != 0;
    if (flags & GNUTLS_SFLAGS_EARLY_DATA)
        r->early = "accepted";
    else if (opt->server ? c->early_offered : c->early_written)
        r->early = "rejected";
    else
        r->early = "not_sent";
}

static int peer_write(struct peer_conn *c, const unsigned char *buf, size_t n)
{
    time_t start = time(NULL);
    while (n > 0) {
        ssize_t ret = gnutls_record_send(c->s, buf, n);
        if (ret < 0 && again((int)ret, start))
            continue;
        if (ret < 0)
            return gt_fail(c, (int)ret, "write");
        buf += ret;
        n -= (size_t)ret;
    }
    return 0;
}

static long peer_read(struct peer_conn *c, unsigned char *buf, size_t cap)
{
    time_t start = time(NULL);
    for (;;) {
        ssize_t ret = gnutls_record_recv(c->s, buf, cap);
        if (ret >= 0)
            return (long)ret;
        if (again((int)ret, start))
            continue;
        if (ret == GNUTLS_E_REAUTH_REQUEST) { /* client: a post-handshake CertificateRequest */
            int r2, seen_by_hook = c->r->certreq_recv;
            do
                r2 = gnutls_reauth(c->s, 0);
            while (r2 < 0 && again(r2, start));
            if (r2 < 0)
                return gt_fail(c, r2, "post_handshake_auth");
            /* GnuTLS 3.7 calls no handshake hook for a CertificateRequest that comes after the
             * handshake: this error is how the client sees it */
            if (c->r->certreq_recv == seen_by_hook)
                c->r->certreq_recv++;
            continue;
        }
        return gt_fail(c, (int)ret, "read");
    }
}

static int peer_key_update(struct peer_conn *c)
{
    int ret = gnutls_session_key_update(c->s, GNUTLS_KU_PEER);
    return ret < 0 ? gt_fail(c, ret, "key_update") : 0;
}

/* gnutls_reauth sends the CertificateRequest and reads the answer; application data that
 * comes first is read (GNUTLS_E_GOT_APPLICATION_DATA) and the call made again. */
static int peer_request_client_cert(struct peer_conn *c, struct sink *sk)
{
    unsigned char buf[PEER_CHUNK];
    time_t start = time(NULL);
    gnutls_certificate_server_set_request(c->s, GNUTLS_CERT_REQUIRE);
    for (;;) {
        int ret = gnutls_reauth(c->s, 0);
        if (ret == 0)
            return 0;
        if (again(ret, start))
            continue;
        if (ret != GNUTLS_E_GOT_APPLICATION_DATA)
            return gt_fail(c, ret, "post_handshake_auth");
        ssize_t n;
        do
            n = gnutls_record_recv(c->s, buf, sizeof(buf));
        while (n < 0 && again((int)n, start));
        if (n <= 0)
            return gt_fail(c, n == 0 ? GNUTLS_E_PREMATURE_TERMINATION : (int)n,
                           "post_handshake_auth");
        if (sk->take(sk, buf, (size_t)n) < 0)
            return -1;
    }
}

static int peer_cert_ok(struct peer_conn *c)
{
    unsigned n = 0, status = 0;
    if (gnutls_certificate_get_peers(c->s, &n) == NULL || n == 0)
        return 0;
    return gnutls_certificate_verify_peers2(c->s, &status) == 0 && status == 0;
}

static int peer_shutdown(struct peer_conn *c)
{
    int ret;
    time_t start = time(NULL);
    do
        ret = gnutls_bye(c->s, GNUTLS_SHUT_WR);
    while (ret < 0 && again(ret, start));
    return ret < 0 ? gt_fail(c, ret, "shutdown") : 0;
}

static void peer_close(struct peer_conn *c)
{
    if (!opt->server && c->r->ok &&
        (gnutls_session_get_flags(c->s) & GNUTLS_SFLAGS_SESSION_TICKET)) {
        gnutls_free(saved.data);
        saved.data = NULL;
        if (gnutls_session_get_data2(c->s, &saved) < 0)
            saved.data = NULL;
    }
    gnutls_deinit(c->s);
    free(c);
}

static const char *peer_library(void)
{
    static char v[64];
    snprintf(v, sizeof(v), "gnutls-%s", gnutls_check_version(NULL));
    return v;
}

int main(int argc, char **argv)
{
    static const struct backend b = {
        .name = "gnutls_peer",
        .library = peer_library,
        .setup = peer_setup,
        .open = peer_open,
        .early_write = peer_early_write,
        .handshake = peer_handshake,
        .describe = peer_describe,
        .write = peer_write,
        .read = peer_read,
        .key_update = peer_key_update,
        .request_client_cert = peer_request_client_cert,
        .peer_cert_ok = peer_cert_ok,
        .shutdown = peer_shutdown,
        .close = peer_close,
    };
    int rc = peer_main(argc, argv, &b);
    gnutls_free(saved.data);
    for (int i = 0; i < nseen; i++)
        free(seen[i].data);
    if (anti_replay != NULL)
        gnutls_anti_replay_deinit(anti_replay);
    gnutls_free(ticket_key.data);
    if (prio != NULL)
        gnutls_priority_deinit(prio);
    if (cred != NULL)
        gnutls_certificate_free_credentials(cred);
    gnutls_global_deinit();
    return rc;
}
