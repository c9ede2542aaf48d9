/*
 * The qtls shim for BoringSSL's BoGo test runner (ssl/test/runner), in QUIC and TCP modes.
 *
 * The runner starts `shim -port P [-shim-id N] [-ipv6] <flags>`; the shim connects back over
 * TCP once per connection (initial + -resume-count resumptions).
 *
 * With -quic it speaks the runner's mock QUIC transport on that socket:
 *
 *   u8 type (22 handshake, 23 application data, 21 alert) | u8 level
 *   | u16 cipher suite (0 at the initial level) | u32 length
 *   | the sender's traffic secret for that level || payload
 *
 * Both ends check every record against their own derivation: the runner checks the secrets
 * qtls hands to the SSL_QUIC_METHOD, and this shim checks the runner's against the read
 * secrets qtls installed.
 *
 * Without -quic (TCP mode) the socket is qtls's transport (SSL_set_fd; with -async a socket
 * BIO under a filter BIO, SSL_set_bio), the runner's flags mapped to libssl's API as OpenSSL 3.0 defines it
 * (SSL_do_handshake, SSL_read/SSL_write/SSL_peek, SSL_shutdown, SSL_key_update,
 * SSL_read_early_data/SSL_write_early_data), -async as BoringSSL's shim does it (a byte at a
 * time through the filter BIO, and the certificate callback's pause).
 *
 * In both modes application data is echoed back XOR 0xff.
 *
 * Exit codes: 0 pass, 1 fail (the error queue goes to stderr, where the runner looks for the
 * expected error, translated by config.json's ErrorMap), 89 "unimplemented": the test needs
 * something qtls does not do (DTLS, TLS 1.0-1.2, ECH, ALPS, Channel ID, BoringSSL-only APIs,
 * ...; see blocker(), version_refused() and tests/bogo/README.md).
 *
 * Session and 0-RTT functions are referenced weakly: while qtls lacks them
 * the shim answers 89 to the tests that need them (after the first
 * connection, whose handshake is still checked), and picks them up by itself
 * once they exist (see have_sessions() and blocker()). Link with
 * --whole-archive so that a weak reference finds them in libqtls.a.
 *
 * In QUIC mode secrets arrive through quictls's set_encryption_secrets (qtls's
 * SSL_QUIC_METHOD has exactly quictls's four members) and are filed per
 * direction for the mock transport.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/* ------------------------------------------------------------------ */
/* Functions qtls may not have yet: weak, checked before use.          */
/* ------------------------------------------------------------------ */

#pragma weak SSL_set_session
#pragma weak SSL_get_session
#pragma weak SSL_SESSION_free
#pragma weak SSL_session_reused
#pragma weak SSL_CTX_sess_set_new_cb
#pragma weak SSL_get_early_data_status
#pragma weak SSL_SESSION_get_max_early_data
#pragma weak SSL_CTX_set_tlsext_ticket_key_evp_cb
#pragma weak SSL_CTX_set_client_cert_cb
#pragma weak SSL_set_tlsext_use_srtp
#pragma weak SSL_get0_peer_certificate
#pragma weak SSL_get1_peer_certificate

/* BoringSSL-only: used if qtls ever provides it. */
int SSL_send_fatal_alert(SSL *ssl, uint8_t alert) __attribute__((weak));

#define EXIT_UNIMPLEMENTED 89
/* The reason for every test that needs TLS 1.0-1.2 from qtls. */
#define TLS12_ONLY "TLS 1.0-1.2 (the test negotiates it; qtls speaks TLS 1.3 only)"

/* ------------------------------------------------------------------ */
/* Configuration: the runner's flags                                   */
/* ------------------------------------------------------------------ */

struct blob {
    uint8_t *p;
    size_t n;
    int set;
};

/* A flag given once per value (BoringSSL's IntVector flags: -curves 29 -curves 23). */
struct intlist {
    int v[32];
    size_t n;
};

struct config {
    int port, ipv6, is_server, is_quic, resume_count;
    uint64_t shim_id;
    int shim_id_set;
    const char *cert_file, *key_file, *trust_cert, *expect_peer_cert_file;
    const char *advertise_alpn, *expect_alpn, *select_alpn, *expect_advertised_alpn;
    int decline_alpn, reject_alpn, select_empty_alpn;
    struct blob quic_tp, expect_quic_tp;
    int quic_use_legacy_codepoint;
    const char *host_name, *expect_server_name;
    int require_any_client_certificate, verify_peer, verify_fail, expect_verify_result;
    int use_old_client_cert_callback;
    int shim_writes_first, shim_shuts_down, send_alert;
    int expect_session_miss, expect_no_session, expect_ticket_renewal;
    int expect_no_session_id, expect_session_id;
    int enable_early_data, expect_ticket_supports_early_data;
    int expect_accept_early_data, expect_reject_early_data, expect_no_offer_early_data;
    const char *quic_early_data_context, *expect_early_data_reason;
    int expect_hrr, expect_no_hrr;
    int min_version, max_version, expect_version;
    int export_keying_material, use_export_context;
    const char *export_label, *export_context;
    int use_ticket_callback, renew_ticket;
    const char *cipher, *srtp_profiles;
    int read_size;
    int is_handshaker_supported;
    int use_custom_verify_callback, reverify_on_resume;
    int enable_ocsp_stapling, use_ocsp_callback, set_ocsp_in_callback, decline_ocsp_callback,
        fail_ocsp_callback;
    struct blob ocsp_response, expect_ocsp_response;
    int enable_signed_cert_timestamps, enable_grease;
    int async;
    int key_update, peek_then_read, check_close_notify;
    int implicit_handshake, no_op_extra_handshake, server_preference, fail_cert_callback;
    int no_tls1, no_tls11, no_tls12, no_ticket;
    int expect_curve_id, expect_peer_signature_algorithm, expect_cipher;
    int expect_cipher_aes, expect_cipher_no_aes, read_with_unfinished_write, export_traffic_secrets;
    int enforce_rsa_key_usage, max_cert_list;
    const char *use_client_ca_list, *expect_client_ca_list;
    const char *advertise_npn, *select_next_proto, *expect_next_proto;
    struct intlist curves, signing_prefs, verify_prefs;
    struct blob signed_cert_timestamps, expect_signed_cert_timestamps;
    const char *unimplemented; /* the first flag qtls cannot honour */
};

enum kind { K_BOOL, K_INT, K_STR, K_B64, K_U64, K_INTS };
/* FLAG_OK: implemented. FLAG_NO: qtls has no such feature: exit 89 if given. */
enum support { FLAG_OK, FLAG_NO };

struct flag {
    const char *name;
    enum kind kind;
    size_t off; /* offset in struct config; unused for FLAG_NO */
    enum support support;
};

#define B(n, f) {n, K_BOOL, offsetof(struct config, f), FLAG_OK}
#define I(n, f) {n, K_INT, offsetof(struct config, f), FLAG_OK}
#define S(n, f) {n, K_STR, offsetof(struct config, f), FLAG_OK}
#define X(n, f) {n, K_B64, offsetof(struct config, f), FLAG_OK}
#define L(n, f) {n, K_INTS, offsetof(struct config, f), FLAG_OK}
#define NOB(n) {n, K_BOOL, 0, FLAG_NO}
#define NOP(n) {n, K_STR, 0, FLAG_NO}

static const struct flag flags[] = {
    I("-port", port),
    {"-shim-id", K_U64, offsetof(struct config, shim_id), FLAG_OK},
    B("-ipv6", ipv6),
    B("-server", is_server),
    B("-quic", is_quic),
    I("-resume-count", resume_count),
    S("-cert-file", cert_file),
    S("-key-file", key_file),
    S("-trust-cert", trust_cert),
    S("-expect-peer-cert-file", expect_peer_cert_file),
    S("-advertise-alpn", advertise_alpn),
    S("-expect-alpn", expect_alpn),
    S("-select-alpn", select_alpn),
    S("-expect-advertised-alpn", expect_advertised_alpn),
    B("-decline-alpn", decline_alpn),
    B("-reject-alpn", reject_alpn),
    B("-select-empty-alpn", select_empty_alpn),
    X("-quic-transport-params", quic_tp),
    X("-expect-quic-transport-params", expect_quic_tp),
    I("-quic-use-legacy-codepoint", quic_use_legacy_codepoint),
    S("-host-name", host_name),
    S("-expect-server-name", expect_server_name),
    B("-require-any-client-certificate", require_any_client_certificate),
    B("-verify-peer", verify_peer),
    B("-verify-fail", verify_fail),
    B("-expect-verify-result", expect_verify_result),
    B("-use-old-client-cert-callback", use_old_client_cert_callback),
    B("-shim-writes-first", shim_writes_first),
    B("-shim-shuts-down", shim_shuts_down),
    B("-send-alert", send_alert),
    B("-expect-session-miss", expect_session_miss),
    B("-expect-no-session", expect_no_session),
    B("-expect-ticket-renewal", expect_ticket_renewal),
    B("-expect-no-session-id", expect_no_session_id),
    B("-expect-session-id", expect_session_id),
    B("-enable-early-data", enable_early_data),
    B("-expect-ticket-supports-early-data", expect_ticket_supports_early_data),
    B("-expect-accept-early-data", expect_accept_early_data),
    B("-expect-reject-early-data", expect_reject_early_data),
    B("-expect-no-offer-early-data", expect_no_offer_early_data),
    S("-quic-early-data-context", quic_early_data_context),
    S("-expect-early-data-reason", expect_early_data_reason),
    B("-expect-hrr", expect_hrr),
    B("-expect-no-hrr", expect_no_hrr),
    I("-min-version", min_version),
    I("-max-version", max_version),
    I("-expect-version", expect_version),
    I("-export-keying-material", export_keying_material),
    S("-export-label", export_label),
    S("-export-context", export_context),
    B("-use-export-context", use_export_context),
    B("-use-ticket-callback", use_ticket_callback),
    B("-renew-ticket", renew_ticket),
    S("-cipher", cipher),
    S("-srtp-profiles", srtp_profiles),
    I("-read-size", read_size),
    B("-is-handshaker-supported", is_handshaker_supported),
    /* SSL_CTX_set_cert_verify_callback: BoringSSL's SSL_set_custom_verify replaces verification
       the same way; a refusal with no X509 error is certificate_unknown in both. */
    B("-use-custom-verify-callback", use_custom_verify_callback),
    B("-reverify-on-resume", reverify_on_resume), /* SSL_CTX_set_reverify_on_resume */
    B("-enable-ocsp-stapling", enable_ocsp_stapling),
    X("-ocsp-response", ocsp_response),
    X("-expect-ocsp-response", expect_ocsp_response),
    B("-use-ocsp-callback", use_ocsp_callback),
    B("-set-ocsp-in-callback", set_ocsp_in_callback),
    B("-decline-ocsp-callback", decline_ocsp_callback),
    B("-fail-ocsp-callback", fail_ocsp_callback),
    /* BoringSSL's SCT list API, which qtls has (sct.c). */
    B("-enable-signed-cert-timestamps", enable_signed_cert_timestamps),
    X("-signed-cert-timestamps", signed_cert_timestamps),
    X("-expect-signed-cert-timestamps", expect_signed_cert_timestamps),
    B("-enable-grease", enable_grease), /* SSL_set_grease_enabled (RFC 8701), both roles */
    /* BoringSSL's shim: in QUIC only callbacks are asynchronous. Of its callbacks, OpenSSL's API
       lets the certificate callback pause (SSL_ERROR_WANT_X509_LOOKUP): it installs the
       certificate after one retry, as BoringSSL's CertCallback. Its private-key, custom-verify
       and early-callback retries have no OpenSSL form, so *-Async tests pause only there. */
    B("-async", async),
    /* TLS over TCP */
    B("-key-update", key_update),         /* SSL_key_update after each read (QUIC: none) */
    B("-peek-then-read", peek_then_read), /* SSL_peek, SSL_peek again, then SSL_read */
    B("-check-close-notify", check_close_notify), /* no quiet shutdown */
    B("-implicit-handshake", implicit_handshake), /* SSL_read / SSL_write run the handshake */
    B("-no-op-extra-handshake", no_op_extra_handshake), /* SSL_do_handshake once more: 1 */
    B("-server-preference", server_preference), /* SSL_OP_CIPHER_SERVER_PREFERENCE */
    B("-fail-cert-callback", fail_cert_callback), /* the SSL_set_cert_cb callback fails */
    B("-no-tls1", no_tls1), B("-no-tls11", no_tls11), B("-no-tls12", no_tls12), /* SSL_OP_NO_* */
    B("-no-ticket", no_ticket),               /* SSL_OP_NO_TICKET */
    L("-curves", curves),                     /* SSL_set1_groups, by TLS group ID */
    I("-expect-curve-id", expect_curve_id),   /* SSL_get_negotiated_group */
    L("-signing-prefs", signing_prefs),       /* SSL_set1_(client_)sigalgs_list */
    L("-verify-prefs", verify_prefs),
    /* SSL_get_peer_signature_type_nid and SSL_get_peer_signature_nid, as a TLS code point */
    I("-expect-peer-signature-algorithm", expect_peer_signature_algorithm),
    I("-expect-cipher", expect_cipher),       /* SSL_CIPHER_get_protocol_id */
    /* BoringSSL's suite choice by AES hardware: the shim asks the CPU (x86's AES-NI). */
    I("-expect-cipher-aes", expect_cipher_aes),
    I("-expect-cipher-no-aes", expect_cipher_no_aes),
    /* -async: SSL_write leaves "hello" unfinished (one byte through), SSL_read, then the retry */
    B("-read-with-unfinished-write", read_with_unfinished_write),
    /* BoringSSL's SSL_get_traffic_secrets: from the keylog callback's *_TRAFFIC_SECRET_0 */
    B("-export-traffic-secrets", export_traffic_secrets),
    /* TLS 1.2 in BoringSSL: TLS 1.3 always enforces the RSA key usage, so a no-op here */
    B("-enforce-rsa-key-usage", enforce_rsa_key_usage),
    I("-max-cert-list", max_cert_list),       /* SSL_CTX_set_max_cert_list */
    /* NPN (TLS 1.2): OpenSSL's callbacks, which a TLS 1.3 connection must not use */
    S("-advertise-npn", advertise_npn),       /* SSL_CTX_set_next_protos_advertised_cb */
    S("-select-next-proto", select_next_proto), /* SSL_CTX_set_next_proto_select_cb */
    S("-expect-next-proto", expect_next_proto), /* SSL_get0_next_proto_negotiated */
    /* SSL_CTX_set_client_CA_list (hex DER names, ',' between; <NULL>, <EMPTY>), and the
       client's SSL_get_client_CA_list after the handshake */
    S("-use-client-ca-list", use_client_ca_list),
    S("-expect-client-ca-list", expect_client_ca_list),

    /* Not TLS 1.3, or not something qtls does. */
    NOB("-dtls"),                     /* DTLS */
    NOB("-handoff"),                  /* split handshakes */
    NOB("-handshake-hints"),          /* split handshakes */
    NOB("-allow-hint-mismatch"),      /* split handshakes */
    NOB("-handshaker-resume"),        /* split handshakes */
    NOP("-handshaker-path"),          /* split handshakes */
    NOB("-no-tls13"),                 /* TLS <= 1.2 */
    NOB("-fallback-scsv"),            /* TLS <= 1.2 */
    NOB("-false-start"),              /* TLS <= 1.2 */
    NOB("-allow-false-start-without-alpn"),
    NOB("-renegotiate-once"), NOB("-renegotiate-freely"), NOB("-renegotiate-ignore"),
    NOB("-renegotiate-explicit"), NOB("-forbid-renegotiation-after-handshake"),
    NOP("-expect-total-renegotiations"),
    NOB("-expect-extended-master-secret"), NOB("-expect-secure-renegotiation"),
    NOB("-expect-no-secure-renegotiation"),
    NOB("-tls-unique"),               /* TLS <= 1.2 */
    NOB("-cbc-record-splitting"), NOB("-write-different-record-sizes"),
    NOB("-partial-write"),
    NOP("-max-send-fragment"), NOP("-mtu"), NOP("-initial-timeout-duration-ms"),
    NOB("-use-exporter-between-reads"),
    NOP("-psk"), NOP("-psk-identity"), /* external (TLS 1.2) PSK */
    NOB("-enable-ech-grease"), NOP("-ech-server-config"), NOP("-ech-server-key"),
    NOP("-ech-is-retry-config"), NOB("-expect-ech-accept"), NOP("-expect-ech-name-override"),
    NOB("-expect-no-ech-name-override"), NOP("-expect-ech-retry-configs"),
    NOB("-expect-no-ech-retry-configs"), NOP("-ech-config-list"), /* ECH */
    NOP("-application-settings"), NOP("-expect-peer-application-settings"),
    NOB("-defer-alps"),               /* ALPS */
    NOP("-expect-channel-id"), NOB("-enable-channel-id"), NOP("-send-channel-id"),
    NOB("-verify-peer-if-no-obc"),    /* Channel ID */
    NOB("-install-cert-compression-algs"), NOP("-install-one-cert-compression-alg"),
    NOP("-delegated-credential"), NOB("-expect-delegated-credential-used"),
    NOB("-permute-extensions"),       /* BoringSSL ClientHello shaping */
    NOB("-allow-unknown-alpn-protos"), /* BoringSSL's SSL_CTX_set_allow_unknown_alpn_protos */
    NOB("-use-early-callback"), NOB("-fail-early-callback"), /* BoringSSL's select_certificate_cb */
    NOB("-install-ddos-callback"), NOB("-fail-ddos-callback"),
    NOP("-expect-certificate-types"),
    NOP("-expect-peer-verify-pref"),
    NOP("-ticket-key"), NOP("-expect-ticket-age-skew"),
    NOP("-resumption-delay"),         /* BoringSSL's clock override */
    NOB("-retain-only-sha256-client-cert"), NOB("-expect-sha256-client-cert"),
    NOB("-jdk11-workaround"),
    NOP("-expect-msg-callback"),      /* BoringSSL's message-callback trace format */
    NOB("-handshake-never-done"), NOB("-handshake-twice"),
    NOP("-expect-late-alpn"), NOP("-early-write-after-message"), NOB("-wait-for-debugger"),
    NOP("-write-settings"),           /* BoringSSL's handshake-settings transcripts */
};

static const struct flag *find_flag(const char *name)
{
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(flags[i].name, name) == 0)
            return &flags[i];
    return NULL;
}

static int b64_decode(const char *in, struct blob *out)
{
    size_t n = strlen(in);
    out->p = malloc(n / 4 * 3 + 4);
    if (out->p == NULL)
        return 0;
    if (n == 0) {
        out->n = 0;
        out->set = 1;
        return 1;
    }
    int len = EVP_DecodeBlock(out->p, (const unsigned char *)in, (int)n);
    if (len < 0 || n % 4 != 0)
        return 0;
    /* EVP_DecodeBlock counts padding as zero bytes. */
    if (in[n - 1] == '=')
        len--;
    if (n > 1 && in[n - 2] == '=')
        len--;
    out->n = (size_t)len;
    out->set = 1;
    return 1;
}

static int set_value(struct config *c, const struct flag *f, const char *param)
{
    char *base = (char *)c;
    if (f->support == FLAG_NO) {
        if (c->unimplemented == NULL)
            c->unimplemented = f->name;
        return 1;
    }
    switch (f->kind) {
    case K_BOOL:
        *(int *)(base + f->off) = 1;
        return 1;
    case K_INT: {
        char *end;
        errno = 0;
        long v = strtol(param, &end, 10);
        if (errno != 0 || *end != '\0' || end == param)
            return 0;
        *(int *)(base + f->off) = (int)v;
        return 1;
    }
    case K_U64: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(param, &end, 10);
        if (errno != 0 || *end != '\0' || end == param)
            return 0;
        *(uint64_t *)(base + f->off) = v;
        c->shim_id_set = 1;
        return 1;
    }
    case K_STR:
        *(const char **)(base + f->off) = param;
        return 1;
    case K_INTS: {
        struct intlist *l = (struct intlist *)(base + f->off);
        char *end;
        errno = 0;
        long v = strtol(param, &end, 10);
        if (errno != 0 || *end != '\0' || end == param || l->n == sizeof(l->v) / sizeof(l->v[0]))
            return 0;
        l->v[l->n++] = (int)v;
        return 1;
    }
    case K_B64:
        return b64_decode(param, (struct blob *)(base + f->off));
    }
    return 0;
}

/* Strips "<prefix>-" down to "-...": returns 1 if it was there. */
static int remove_prefix(const char **name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(*name, prefix, n) == 0 && (*name)[n] == '-') {
        *name += n;
        return 1;
    }
    return 0;
}

static void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    c->quic_use_legacy_codepoint = -1;
}

/* The flag the shim does not know, for the exit-89 report. */
static const char *unknown_flag;

/*
 * Parses argv into the three configurations BoringSSL's shim keeps: the
 * initial connection, resumptions, and the retry after a 0-RTT rejection.
 * Returns 0 on a malformed command line, -1 on an unknown flag (unknown_flag).
 */
static int parse_config(int argc, char **argv, struct config *initial, struct config *resume,
                        struct config *retry)
{
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        int skip = 0;
        if (remove_prefix(&name, "-on-shim")) {
            /* applies to the shim */
        } else if (remove_prefix(&name, "-on-handshaker")) {
            skip = 1;
        }
        struct config *only = NULL;
        if (remove_prefix(&name, "-on-initial"))
            only = initial;
        else if (remove_prefix(&name, "-on-resume"))
            only = resume;
        else if (remove_prefix(&name, "-on-retry"))
            only = retry;
        const struct flag *f = find_flag(name);
        if (f == NULL) {
            unknown_flag = argv[i];
            return -1;
        }
        const char *param = NULL;
        if (f->kind != K_BOOL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "Missing parameter for %s\n", name);
                return 0;
            }
            param = argv[++i];
        }
        if (skip)
            continue;
        struct config *targets[3] = {initial, resume, retry};
        for (int t = 0; t < 3; t++) {
            if (only != NULL && only != targets[t])
                continue;
            if (!set_value(targets[t], f, param)) {
                fprintf(stderr, "Invalid parameter for %s: %s\n", name, param);
                return 0;
            }
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* Connection state and the mock QUIC transport                        */
/* ------------------------------------------------------------------ */

enum { LEVEL_INITIAL = 0, LEVEL_EARLY = 1, LEVEL_HANDSHAKE = 2, LEVEL_APP = 3, NUM_LEVELS = 4 };
enum { RT_ALERT = 21, RT_HANDSHAKE = 22, RT_APP_DATA = 23 };

struct level_keys {
    uint16_t cipher;
    uint8_t secret[64];
    size_t len;
    int set;
};

/* The first bytes the runner sent, where its hello is (version_refused()). */
struct runner_bytes {
    uint8_t rx[16384];
    size_t rx_len;
};

/* A byte stream of handshake messages at the initial level, to spot a HelloRetryRequest. */
struct msg_stream {
    uint8_t *buf;
    size_t len;
};

struct conn {
    const struct config *cfg;
    const struct config *retry_cfg; /* a client's configuration once its 0-RTT is rejected */
    int is_resume;
    int cert_verified;           /* BoringSSL's TestState::cert_verified */
    int in_retry;                /* verification has moved to retry_cfg */
    int new_session_at_handshake; /* got_new_session when the handshake completed */
    int fd;
    int tcp;                     /* TLS over TCP: the socket is qtls's transport */
    struct async_quota *quota;   /* TCP with -async: the quotas of the async BIO */
    struct runner_bytes runner_bytes; /* TCP: what the runner sent first */
    SSL *ssl;
    struct level_keys rd[NUM_LEVELS], wr[NUM_LEVELS];
    struct msg_stream initial_in, initial_out;
    int saw_hrr;
    int early_written;           /* client: the 0-RTT "hello" went out */
    size_t early_len;            /* TCP client: how much of it (at most the ticket's limit) */
    int alpn_select_done;
    int ticket_decrypt_done;
    int cert_ready;              /* -async: the certificate callback may now install the pair */
    int got_new_session;
    SSL_SESSION *new_session;
    uint8_t *early_in;           /* server: 0-RTT application data received */
    size_t early_in_len;
    /* application data read but not yet consumed */
    uint8_t *pending;
    size_t pending_len, pending_off;
    char failure[512];           /* why the shim itself gave up, printed on failure */
    const char *setup_unimplemented; /* new_ssl met a configuration qtls cannot take */
    uint8_t traffic_secret[2][64]; /* -export-traffic-secrets: client's, server's (keylog) */
    size_t traffic_secret_len[2];
};


static struct conn *conn_of(const SSL *ssl) { return SSL_get_app_data(ssl); }

static const char *level_name(int level)
{
    static const char *names[] = {"initial", "early_data", "handshake", "application"};
    return level >= 0 && level < NUM_LEVELS ? names[level] : "?";
}

static void fail_note(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_note(struct conn *c, const char *fmt, ...)
{
    if (c->failure[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->failure, sizeof(c->failure), fmt, ap);
    va_end(ap);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

/* 1 on success, 0 on EOF before any byte, -1 on error or EOF mid-way. */
static int read_all(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, p + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return got == 0 ? 0 : -1;
        if (r < 0)
            return -1;
        got += (size_t)r;
    }
    return 1;
}

static int write_record(struct conn *c, int level, uint8_t type, const uint8_t *data, size_t len)
{
    const struct level_keys *k = &c->wr[level];
    if (level != LEVEL_INITIAL && !k->set) {
        fail_note(c, "qtls wrote at level %s before installing its write secret",
                  level_name(level));
        return 0;
    }
    size_t body = k->len + len;
    uint8_t h[8] = {type, (uint8_t)level, (uint8_t)(k->cipher >> 8), (uint8_t)k->cipher,
                    (uint8_t)(body >> 24), (uint8_t)(body >> 16), (uint8_t)(body >> 8),
                    (uint8_t)body};
    if (!write_all(c->fd, h, 8) || !write_all(c->fd, k->secret, k->len) ||
        !write_all(c->fd, data, len)) {
        fail_note(c, "socket write failed");
        return 0;
    }
    return 1;
}

/*
 * Reads a record header and the sender's secret, checking them against the
 * read keys qtls installed. Early-data records arriving without early read
 * keys are skipped (0-RTT rejected), as in BoringSSL's mock transport.
 * Returns 1 with the type, level and payload length; 0 at EOF; -1 on error.
 */
static int read_header(struct conn *c, uint8_t *type, int *level, size_t *len)
{
    for (;;) {
        uint8_t h[8];
        int r = read_all(c->fd, h, 8);
        if (r <= 0) {
            if (r < 0)
                fail_note(c, "error reading record header");
            return r;
        }
        *type = h[0];
        int lv = h[1];
        uint16_t suite = (uint16_t)(h[2] << 8 | h[3]);
        size_t remaining = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 | h[7];
        if (lv >= NUM_LEVELS) {
            fail_note(c, "Error parsing record header.");
            return -1;
        }
        const struct level_keys *k = &c->rd[lv];
        if (lv != LEVEL_INITIAL && !k->set) {
            if (lv == LEVEL_EARLY) {
                uint8_t *discard = malloc(remaining ? remaining : 1);
                int ok = discard != NULL && read_all(c->fd, discard, remaining) == 1;
                free(discard);
                if (!ok && remaining > 0) {
                    fail_note(c, "error skipping an early data record");
                    return -1;
                }
                continue;
            }
            fail_note(c, "Got record at level %s, but keys were not configured.", level_name(lv));
            return -1;
        }
        if (suite != k->cipher) {
            fail_note(c, "Got cipher suite 0x%04x at level %s, wanted 0x%04x.", suite,
                      level_name(lv), k->cipher);
            return -1;
        }
        if (remaining < k->len) {
            fail_note(c, "Record at level %s too small.", level_name(lv));
            return -1;
        }
        uint8_t secret[64];
        if (k->len > 0 && read_all(c->fd, secret, k->len) != 1) {
            fail_note(c, "Error reading record secret.");
            return -1;
        }
        if (k->len > 0 && memcmp(secret, k->secret, k->len) != 0) {
            fail_note(c, "Encryption secret at level %s did not match.", level_name(lv));
            return -1;
        }
        *level = lv;
        *len = remaining - k->len;
        return 1;
    }
}

static uint8_t *read_payload(struct conn *c, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    if (buf == NULL)
        return NULL;
    if (len > 0 && read_all(c->fd, buf, len) != 1) {
        fail_note(c, "error reading record payload");
        free(buf);
        return NULL;
    }
    return buf;
}

/* HelloRetryRequest detection: ServerHello.random == SHA-256("HelloRetryRequest"). */
static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

static void observe_initial(struct conn *c, struct msg_stream *s, const uint8_t *p, size_t n)
{
    uint8_t *nb = realloc(s->buf, s->len + n);
    if (nb == NULL)
        return;
    memcpy(nb + s->len, p, n);
    s->buf = nb;
    s->len += n;
    size_t off = 0;
    while (s->len - off >= 4) {
        size_t body = (size_t)s->buf[off + 1] << 16 | (size_t)s->buf[off + 2] << 8 | s->buf[off + 3];
        if (s->len - off < 4 + body)
            break;
        if (s->buf[off] == 2 /* ServerHello */ && body >= 34 &&
            memcmp(s->buf + off + 4 + 2, hrr_random, 32) == 0)
            c->saw_hrr = 1;
        off += 4 + body;
    }
    memmove(s->buf, s->buf + off, s->len - off);
    s->len -= off;
}

/* ---- SSL_QUIC_METHOD ---- */

static int store_secret(struct conn *c, struct level_keys *k, int level, const SSL_CIPHER *cipher,
                        const uint8_t *secret, size_t len, const char *dir)
{
    if (cipher == NULL) {
        fail_note(c, "%s secret for level %s came with no cipher", dir, level_name(level));
        return 0;
    }
    if (len > sizeof(k->secret)) {
        fail_note(c, "%s secret for level %s is too long (%zu)", dir, level_name(level), len);
        return 0;
    }
    k->cipher = (uint16_t)SSL_CIPHER_get_protocol_id(cipher);
    memcpy(k->secret, secret, len);
    k->len = len;
    k->set = 1;
    return 1;
}

static int set_read_secret(SSL *ssl, enum ssl_encryption_level_t level, const SSL_CIPHER *cipher,
                           const uint8_t *secret, size_t len)
{
    struct conn *c = conn_of(ssl);
    if ((int)level < 0 || (int)level >= NUM_LEVELS)
        return 0;
    return store_secret(c, &c->rd[level], level, cipher, secret, len, "read");
}

static int set_write_secret(SSL *ssl, enum ssl_encryption_level_t level,
                            const SSL_CIPHER *cipher, const uint8_t *secret, size_t len)
{
    struct conn *c = conn_of(ssl);
    if ((int)level < 0 || (int)level >= NUM_LEVELS)
        return 0;
    return store_secret(c, &c->wr[level], level, cipher, secret, len, "write");
}

/* The quictls-style callback: the suite comes from the connection. */
static int set_encryption_secrets(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *read,
                                  const uint8_t *write, size_t len)
{
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    if (cipher == NULL)
        cipher = SSL_get_pending_cipher(ssl);
    if (write != NULL && !set_write_secret(ssl, level, cipher, write, len))
        return 0;
    if (read != NULL && !set_read_secret(ssl, level, cipher, read, len))
        return 0;
    return 1;
}

static int add_handshake_data(SSL *ssl, enum ssl_encryption_level_t level, const uint8_t *data,
                              size_t len)
{
    struct conn *c = conn_of(ssl);
    if ((int)level < 0 || (int)level >= NUM_LEVELS)
        return 0;
    if ((int)level == LEVEL_INITIAL)
        observe_initial(c, &c->initial_out, data, len);
    return write_record(c, level, RT_HANDSHAKE, data, len);
}

static int flush_flight(SSL *ssl)
{
    (void)ssl; /* records go straight to the socket (TCP_NODELAY) */
    return 1;
}

static int send_alert(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert)
{
    struct conn *c = conn_of(ssl);
    const uint8_t msg[2] = {2, alert};
    if ((int)level < 0 || (int)level >= NUM_LEVELS)
        return 0;
    return write_record(c, level, RT_ALERT, msg, sizeof(msg));
}

static const SSL_QUIC_METHOD quictls_method = {
    .set_encryption_secrets = set_encryption_secrets,
    .add_handshake_data = add_handshake_data,
    .flush_flight = flush_flight,
    .send_alert = send_alert,
};

/* ------------------------------------------------------------------ */
/* TLS over TCP: the socket as qtls's transport                        */
/* ------------------------------------------------------------------ */

/*
 * -async over TCP: BoringSSL's AsyncBio, a filter BIO on the socket BIO that lets bytes through
 * only as the shim allows them: after each want-read or want-write, one more byte on that side.
 * qtls's record layer then meets a short read or write at every byte of the handshake.
 */
struct async_quota {
    size_t read, write;
    int enforce_write;
};

static int async_bio_write(BIO *b, const char *in, int inl)
{
    struct async_quota *q = BIO_get_data(b);
    BIO *next = BIO_next(b);
    if (q == NULL || next == NULL)
        return 0;
    if (!q->enforce_write)
        return BIO_write(next, in, inl);
    BIO_clear_retry_flags(b);
    if (q->write == 0) {
        BIO_set_retry_write(b);
        errno = EAGAIN;
        return -1;
    }
    if ((size_t)inl > q->write)
        inl = (int)q->write;
    int ret = BIO_write(next, in, inl);
    if (ret <= 0)
        BIO_copy_next_retry(b);
    else
        q->write -= (size_t)ret;
    return ret;
}

static int async_bio_read(BIO *b, char *out, int outl)
{
    struct async_quota *q = BIO_get_data(b);
    BIO *next = BIO_next(b);
    if (q == NULL || next == NULL)
        return 0;
    BIO_clear_retry_flags(b);
    if (q->read == 0) {
        BIO_set_retry_read(b);
        errno = EAGAIN;
        return -1;
    }
    if ((size_t)outl > q->read)
        outl = (int)q->read;
    int ret = BIO_read(next, out, outl);
    if (ret <= 0)
        BIO_copy_next_retry(b);
    else
        q->read -= (size_t)ret;
    return ret;
}

static long async_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    BIO *next = BIO_next(b);
    if (next == NULL)
        return 0;
    BIO_clear_retry_flags(b);
    long ret = BIO_ctrl(next, cmd, num, ptr);
    BIO_copy_next_retry(b);
    return ret;
}

static int async_bio_create(BIO *b)
{
    struct async_quota *q = calloc(1, sizeof(*q));
    if (q == NULL)
        return 0;
    q->enforce_write = 1;
    BIO_set_data(b, q);
    BIO_set_init(b, 1);
    return 1;
}

static int async_bio_destroy(BIO *b)
{
    free(BIO_get_data(b));
    BIO_set_data(b, NULL);
    BIO_set_init(b, 0);
    return 1;
}

static BIO *async_bio_new(void)
{
    static BIO_METHOD *method;
    if (method == NULL) {
        method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_FILTER, "async bio");
        if (method == NULL || !BIO_meth_set_write(method, async_bio_write) ||
            !BIO_meth_set_read(method, async_bio_read) ||
            !BIO_meth_set_ctrl(method, async_bio_ctrl) ||
            !BIO_meth_set_create(method, async_bio_create) ||
            !BIO_meth_set_destroy(method, async_bio_destroy))
            return NULL;
    }
    return BIO_new(method);
}

/* The socket BIO's callback: keeps the first bytes read from the runner. */
static long record_runner_bytes(BIO *b, int oper, const char *argp, size_t len, int argi,
                                long argl, int ret, size_t *processed)
{
    (void)len;
    (void)argi;
    (void)argl;
    struct runner_bytes *rb = (struct runner_bytes *)BIO_get_callback_arg(b);
    if (rb != NULL && oper == (BIO_CB_READ | BIO_CB_RETURN) && ret > 0 && processed != NULL) {
        size_t room = sizeof(rb->rx) - rb->rx_len, n = *processed < room ? *processed : room;
        memcpy(rb->rx + rb->rx_len, argp, n);
        rb->rx_len += n;
    }
    return ret;
}

/*
 * Attaches the socket to the connection: SSL_set_fd, or with -async a socket BIO under the
 * async BIO (SSL_set_bio). The socket BIO keeps what the runner sends first.
 */
static int tcp_attach(struct conn *c)
{
    BIO *sock;
    if (!c->cfg->async) {
        if (!SSL_set_fd(c->ssl, c->fd) || (sock = SSL_get_rbio(c->ssl)) == NULL)
            return 0;
    } else {
        BIO *a = async_bio_new();
        sock = BIO_new_socket(c->fd, BIO_NOCLOSE);
        if (sock == NULL || a == NULL) {
            BIO_free(sock);
            BIO_free(a);
            return 0;
        }
        c->quota = BIO_get_data(a);
        BIO *bio = BIO_push(a, sock);
        SSL_set_bio(c->ssl, bio, bio);
    }
    BIO_set_callback_arg(sock, (char *)&c->runner_bytes);
    BIO_set_callback_ex(sock, record_runner_bytes);
    return 1;
}

/*
 * The highest version the runner's first hello names: a ClientHello's supported_versions (or
 * legacy_version), a ServerHello's selected version (or legacy_version). 0 if there is none.
 */
static int runner_hello_version(const struct runner_bytes *q)
{
    /* The first handshake message, out of the plaintext records at the start. */
    uint8_t msg[8192];
    size_t n = 0, off = 0;
    while (off + 5 <= q->rx_len && q->rx[off] != 22)
        off += 5 + (q->rx[off + 3] << 8 | q->rx[off + 4]); /* a change_cipher_spec, an alert */
    while (off + 5 <= q->rx_len && q->rx[off] == 22) {
        size_t len = q->rx[off + 3] << 8 | q->rx[off + 4];
        size_t have = q->rx_len - off - 5 < len ? q->rx_len - off - 5 : len;
        if (n + have > sizeof(msg))
            have = sizeof(msg) - n;
        memcpy(msg + n, q->rx + off + 5, have);
        n += have;
        off += 5 + len;
        if (n >= 4 && n >= 4 + (size_t)(msg[1] << 16 | msg[2] << 8 | msg[3]))
            break;
    }
    if (n < 4 + 2 + 32 + 1 || (msg[0] != 1 && msg[0] != 2))
        return 0;
    int client_hello = msg[0] == 1;
    size_t end = 4 + (size_t)(msg[1] << 16 | msg[2] << 8 | msg[3]);
    if (end > n)
        end = n;
    /* Without supported_versions, a hello negotiates at most TLS 1.2 (RFC 8446 §4.2.1). */
    int version = msg[4] << 8 | msg[5];
    if (version > TLS1_2_VERSION)
        version = TLS1_2_VERSION;
    size_t p = 4 + 2 + 32;
    p += 1 + msg[p]; /* session id */
    if (client_hello) {
        if (p + 2 > end)
            return version;
        p += 2 + (msg[p] << 8 | msg[p + 1]); /* cipher suites */
        if (p + 1 > end)
            return version;
        p += 1 + msg[p]; /* compression methods */
    } else {
        p += 3; /* cipher suite, compression method */
    }
    if (p + 2 > end)
        return version;
    size_t ext_end = p + 2 + (msg[p] << 8 | msg[p + 1]);
    if (ext_end > end)
        ext_end = end;
    for (p += 2; p + 4 <= ext_end;) {
        int type = msg[p] << 8 | msg[p + 1];
        size_t len = msg[p + 2] << 8 | msg[p + 3];
        p += 4;
        if (p + len > ext_end)
            break;
        if (type == 43 /* supported_versions */) {
            if (!client_hello)
                return len == 2 ? msg[p] << 8 | msg[p + 1] : version;
            int best = 0;
            size_t list = len > 0 ? msg[p] : 0;
            for (size_t i = 1; i + 2 <= 1 + list && i + 2 <= len; i += 2) {
                int v = msg[p + i] << 8 | msg[p + i + 1];
                if (v >= SSL3_VERSION && v <= TLS1_3_VERSION && v > best)
                    best = v;
            }
            return best != 0 ? best : version;
        }
        p += len;
    }
    return version;
}

/*
 * BoringSSL's RetryAsync: after a call that did not finish, whether to call again. Only -async
 * retries: a want-read or want-write lets one more byte through, a paused certificate callback
 * may go on. A blocking socket never wants either.
 */
static int retry_async(struct conn *c, int ret)
{
    if (ret > 0 || !c->cfg->async)
        return 0;
    switch (SSL_get_error(c->ssl, ret)) {
    case SSL_ERROR_WANT_READ:
        if (c->quota == NULL)
            return 0;
        c->quota->read++;
        return 1;
    case SSL_ERROR_WANT_WRITE:
        if (c->quota == NULL)
            return 0;
        c->quota->write++;
        return 1;
    case SSL_ERROR_WANT_X509_LOOKUP:
        if (c->cert_ready)
            return 0;
        c->cert_ready = 1;
        return 1;
    default:
        return 0;
    }
}

/* BoringSSL's WriteAll: SSL_write until all of it went, resolving the retries. */
static int tcp_write_all(struct conn *c, const uint8_t *p, size_t n)
{
    int ret;
    do {
        ret = SSL_write(c->ssl, p, (int)n);
        if (ret > 0) {
            p += ret;
            n -= (size_t)ret;
        }
    } while (retry_async(c, ret) || (ret > 0 && n > 0));
    if (ret <= 0)
        fail_note(c, "SSL_write failed (SSL_get_error %d)", SSL_get_error(c->ssl, ret));
    return ret > 0;
}

/*
 * BoringSSL's DoRead: SSL_read (or SSL_peek then SSL_read with -peek-then-read), the write
 * quota lifted meanwhile (a read may answer a KeyUpdate). Returns the SSL_read result.
 */
static int tcp_read(struct conn *c, uint8_t *out, size_t max)
{
    int ret;
    do {
        if (c->quota != NULL)
            c->quota->enforce_write = 0;
        ret = c->cfg->peek_then_read ? SSL_peek(c->ssl, out, (int)max)
                                     : SSL_read(c->ssl, out, (int)max);
        if (c->quota != NULL)
            c->quota->enforce_write = 1;
    } while (retry_async(c, ret));
    if (c->cfg->peek_then_read && ret > 0) {
        uint8_t *again = malloc((size_t)ret);
        if (again == NULL)
            return -1;
        /* A second SSL_peek gives the same data; SSL_read then gives it once more and takes it. */
        int r2 = SSL_peek(c->ssl, again, ret);
        if (r2 != ret || memcmp(again, out, (size_t)ret) != 0) {
            fail_note(c, "First and second SSL_peek did not match.");
            free(again);
            return -1;
        }
        r2 = SSL_read(c->ssl, again, ret);
        if (r2 != ret || memcmp(again, out, (size_t)ret) != 0) {
            fail_note(c, "SSL_peek and SSL_read did not match.");
            free(again);
            return -1;
        }
        free(again);
    }
    return ret;
}

/* The message callback: a HelloRetryRequest sent or received (-expect-hrr, -expect-no-hrr). */
static void tcp_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    (void)write_p;
    (void)version;
    (void)arg;
    const uint8_t *p = buf;
    struct conn *c = conn_of(ssl);
    if (c == NULL || content_type != SSL3_RT_HANDSHAKE || len < 4 + 2 + 32)
        return;
    if (p[0] == 2 /* ServerHello */ && memcmp(p + 4 + 2, hrr_random, 32) == 0)
        c->saw_hrr = 1;
}

/*
 * Server with -enable-early-data: OpenSSL's way to accept 0-RTT is to read it with
 * SSL_read_early_data, and to answer it before the handshake completes (half-RTT data, which
 * the runner waits for) with SSL_write_early_data. Returns 1, or 0 on failure.
 */
static int tcp_server_early_data(struct conn *c)
{
    uint8_t buf[16384];
    for (;;) {
        size_t n = 0;
        int r = SSL_read_early_data(c->ssl, buf, sizeof(buf), &n);
        if (r == SSL_READ_EARLY_DATA_FINISH)
            return 1;
        if (r == SSL_READ_EARLY_DATA_ERROR) {
            if (retry_async(c, -1))
                continue;
            return 0;
        }
        if (c->cfg->expect_reject_early_data) {
            fail_note(c, "qtls accepted early data (SSL_read_early_data) when the test expects "
                         "a rejection");
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            buf[i] ^= 0xff;
        size_t off = 0;
        while (off < n) {
            size_t w = 0;
            int ok = SSL_write_early_data(c->ssl, buf + off, n - off, &w);
            if (ok <= 0) {
                if (retry_async(c, -1))
                    continue;
                fail_note(c, "SSL_write_early_data (server, half-RTT data) failed");
                return 0;
            }
            off += w;
        }
    }
}

/*
 * Client resuming with -enable-early-data and a ticket that allows 0-RTT (BoringSSL's client
 * then offers it by itself): an OpenSSL client offers early data by writing it with
 * SSL_write_early_data, -shim-writes-first's "hello", or nothing (zero bytes: the offer alone).
 * qtls may decline in that call (the session cannot carry 0-RTT with this configuration, an
 * ALPN mismatch): the ClientHello then went out without it, and the handshake goes on.
 * Returns 1, or 0 on failure.
 */
static int tcp_client_early_data(struct conn *c, SSL_SESSION *offer)
{
    if (c->cfg->is_server || !c->is_resume || !c->cfg->enable_early_data || offer == NULL ||
        SSL_SESSION_get_max_early_data(offer) == 0)
        return 1;
    static const char hello[] = "hello";
    /* BoringSSL writes what the ticket allows as early data, the rest after the handshake. */
    size_t n = c->cfg->shim_writes_first ? 5 : 0, w = 0;
    if (n > SSL_SESSION_get_max_early_data(offer))
        n = SSL_SESSION_get_max_early_data(offer);
    int ok;
    do {
        ok = SSL_write_early_data(c->ssl, hello, n, &w);
    } while (ok <= 0 && retry_async(c, -1));
    if (ok <= 0) {
        unsigned long e = ERR_peek_last_error();
        if (SSL_in_before(c->ssl) || (ERR_GET_REASON(e) != SSL_R_INCONSISTENT_EARLY_DATA_ALPN &&
                                      ERR_GET_REASON(e) != ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED)) {
            fail_note(c, "SSL_write_early_data failed");
            return 0;
        }
        ERR_clear_error(); /* declined: no 0-RTT in this ClientHello */
        return 1;
    }
    if (c->cfg->expect_no_offer_early_data) {
        fail_note(c, "Client unexpectedly offered early data.");
        return 0;
    }
    if (w != n) {
        fail_note(c, "SSL_write_early_data wrote %zu bytes of %zu", w, n);
        return 0;
    }
    c->early_written = n > 0;
    c->early_len = n;
    return 1;
}

/* The handshake over TCP, early data first where it applies. */
static int tcp_handshake(struct conn *c, SSL_SESSION *offer)
{
    if (c->cfg->is_server && c->cfg->enable_early_data) {
        if (!tcp_server_early_data(c))
            return 0;
    } else if (!tcp_client_early_data(c, offer)) {
        return 0;
    }
    if (c->cfg->implicit_handshake)
        return 1; /* SSL_read or SSL_write runs it */
    int ret;
    do {
        ret = SSL_do_handshake(c->ssl);
    } while (retry_async(c, ret));
    return ret == 1;
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                           */
/* ------------------------------------------------------------------ */

static int alpn_select_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                          const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)arg;
    struct conn *c = conn_of(ssl);
    const struct config *cfg = c->cfg;
    if (c->alpn_select_done) {
        fprintf(stderr, "AlpnSelectCallback called after completion.\n");
        exit(1);
    }
    c->alpn_select_done = 1;
    if (cfg->decline_alpn)
        return SSL_TLSEXT_ERR_NOACK;
    if (cfg->reject_alpn)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    if (cfg->expect_advertised_alpn != NULL &&
        (strlen(cfg->expect_advertised_alpn) != inlen ||
         memcmp(cfg->expect_advertised_alpn, in, inlen) != 0)) {
        fprintf(stderr, "bad ALPN select callback inputs.\n");
        exit(1);
    }
    const char *sel = cfg->select_alpn != NULL ? cfg->select_alpn : "";
    *out = (const unsigned char *)sel;
    *outlen = (unsigned char)strlen(sel);
    return SSL_TLSEXT_ERR_OK;
}

static int servername_cb(SSL *ssl, int *alert, void *arg)
{
    (void)alert;
    (void)arg;
    const struct config *cfg = conn_of(ssl)->cfg;
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (name == NULL || strcmp(name, cfg->expect_server_name) != 0) {
        fprintf(stderr, "servername mismatch (got %s; want %s).\n", name ? name : "(null)",
                cfg->expect_server_name);
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;
}

/*
 * The runner's certificates are self-signed test certificates, and
 * BoringSSL's shim accepts any chain unless -verify-fail: this callback does
 * the same through the OpenSSL verify callback, clearing errors so that
 * SSL_get_verify_result reports X509_V_OK. With -trust-cert (newer runners)
 * the chain is verified for real.
 */
/*
 * The configuration certificate verification runs under. BoringSSL's shim resets a client
 * whose 0-RTT was rejected and goes on with the retry configuration (-on-retry-*); qtls goes
 * on in the same handshake, so a verification that runs once qtls reports the rejection
 * (SSL_get_early_data_status) is the retry's, and it starts the retry's count.
 */
static const struct config *verify_config(struct conn *c)
{
    if (!c->cfg->is_server && c->is_resume && c->retry_cfg != NULL && !c->in_retry &&
        SSL_get_early_data_status(c->ssl) == SSL_EARLY_DATA_REJECTED) {
        c->in_retry = 1;
        c->cert_verified = 0;
    }
    return c->in_retry ? c->retry_cfg : c->cfg;
}

/* BoringSSL's CheckVerifyCallback: the staple is there, and verification runs once. */
static int check_verify_callback(struct conn *c, const struct config *cfg)
{
    if (cfg->expect_ocsp_response.set) {
        const unsigned char *resp;
        if (SSL_get_tlsext_status_ocsp_resp(c->ssl, &resp) <= 0) {
            fail_note(c, "OCSP response not available in verify callback.");
            return 0;
        }
    }
    if (c->cert_verified) {
        fail_note(c, "Certificate verified twice.");
        return 0;
    }
    return 1;
}

/*
 * -use-custom-verify-callback: the application's verification replaces qtls's
 * (SSL_CTX_set_cert_verify_callback). A refusal sets no X509 error, which qtls, as OpenSSL,
 * answers with certificate_unknown: the alert of BoringSSL's custom verify callback.
 */
static int cert_verify_cb(X509_STORE_CTX *store, void *arg)
{
    (void)arg;
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    if (ssl == NULL) {
        fprintf(stderr, "no SSL in the X509_STORE_CTX of the verify callback\n");
        return 0;
    }
    struct conn *c = conn_of(ssl);
    const struct config *cfg = verify_config(c);
    if (!check_verify_callback(c, cfg))
        return 0;
    c->cert_verified = 1;
    return cfg->verify_fail ? 0 : 1;
}

static int verify_cb(int preverify_ok, X509_STORE_CTX *store)
{
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    const struct config *cfg = ssl != NULL ? verify_config(conn_of(ssl)) : NULL;
    if (cfg == NULL)
        return preverify_ok;
    if (cfg->expect_ocsp_response.set && X509_STORE_CTX_get_error_depth(store) == 0) {
        const unsigned char *resp;
        if (SSL_get_tlsext_status_ocsp_resp(ssl, &resp) <= 0) {
            fail_note(conn_of(ssl), "OCSP response not available in verify callback.");
            return 0;
        }
    }
    if (cfg->verify_fail) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    if (cfg->trust_cert != NULL)
        return preverify_ok;
    if (!preverify_ok)
        X509_STORE_CTX_set_error(store, X509_V_OK);
    return 1;
}

static int load_cert_and_key(const char *cert_file, const char *key_file, X509 **x509,
                             EVP_PKEY **pkey)
{
    *x509 = NULL;
    *pkey = NULL;
    FILE *f;
    if (cert_file != NULL) {
        if ((f = fopen(cert_file, "r")) == NULL)
            return 0;
        *x509 = PEM_read_X509(f, NULL, NULL, NULL);
        fclose(f);
        if (*x509 == NULL)
            return 0;
    }
    if (key_file != NULL) {
        if ((f = fopen(key_file, "r")) == NULL)
            return 0;
        *pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
        fclose(f);
        if (*pkey == NULL)
            return 0;
    }
    return 1;
}

static int client_cert_cb(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
    const struct config *cfg = conn_of(ssl)->cfg;
    if (cfg->cert_file == NULL)
        return 0;
    if (!load_cert_and_key(cfg->cert_file, cfg->key_file, x509, pkey)) {
        X509_free(*x509);
        EVP_PKEY_free(*pkey);
        return -1;
    }
    return 1;
}

static int new_session_cb(SSL *ssl, SSL_SESSION *session)
{
    struct conn *c = conn_of(ssl);
    c->got_new_session = 1;
    if (c->new_session != NULL)
        SSL_SESSION_free(c->new_session);
    c->new_session = session;
    return 1; /* keeps the reference */
}

/*
 * -async: BoringSSL's CertCallback. The first call pauses the handshake; the retry installs the
 * certificate and key the context did not get.
 */
static int async_cert_cb(SSL *ssl, void *arg)
{
    struct conn *c = conn_of(ssl);
    const struct config *cfg = c->cfg;
    if (cfg->fail_cert_callback)
        return 0;
    if (!c->cert_ready)
        return -1;
    if (cfg->cert_file != NULL && SSL_use_certificate_chain_file(ssl, cfg->cert_file) != 1)
        return 0;
    if (cfg->key_file != NULL && SSL_use_PrivateKey_file(ssl, cfg->key_file, SSL_FILETYPE_PEM) != 1)
        return 0;
    return 1;
}

/* BoringSSL's TicketKeyCallback, on OpenSSL 3's EVP interface: an all-zero key. */
static int ticket_key_cb(SSL *ssl, unsigned char key_name[16], unsigned char *iv,
                         EVP_CIPHER_CTX *ctx, EVP_MAC_CTX *hctx, int enc)
{
    struct conn *c = conn_of(ssl);
    static const uint8_t zeros[16] = {0};
    if (!enc) {
        if (c->ticket_decrypt_done) {
            fprintf(stderr, "TicketKeyCallback called after completion.\n");
            return -1;
        }
        c->ticket_decrypt_done = 1;
    }
    if (enc) {
        memcpy(key_name, zeros, 16);
        if (RAND_bytes(iv, 16) != 1)
            return -1;
    } else if (memcmp(key_name, zeros, 16) != 0) {
        return 0;
    }
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_MAC_init(hctx, zeros, sizeof(zeros), params) ||
        !EVP_CipherInit_ex(ctx, EVP_aes_128_cbc(), NULL, zeros, iv, enc))
        return -1;
    if (!enc)
        return c->cfg->renew_ticket ? 2 : 1;
    return 1;
}

/*
 * The status callback (SSL_CTX_set_tlsext_status_cb), BoringSSL's LegacyOCSPCallback. The
 * client's judges the staple (1 accept, 0 refuse). A server staples through it in OpenSSL's
 * API, so the shim installs it whenever it has a response; the response is set before the
 * handshake (as BoringSSL's SSL_set_ocsp_response) unless -set-ocsp-in-callback.
 */
static int status_cb(SSL *ssl, void *arg)
{
    (void)arg;
    const struct config *cfg = conn_of(ssl)->cfg;
    if (!SSL_is_server(ssl))
        return !cfg->fail_ocsp_callback;
    if (cfg->use_ocsp_callback && cfg->set_ocsp_in_callback && cfg->ocsp_response.set) {
        unsigned char *copy = OPENSSL_memdup(cfg->ocsp_response.p, cfg->ocsp_response.n);
        if (copy == NULL || !SSL_set_tlsext_status_ocsp_resp(ssl, copy, (long)cfg->ocsp_response.n))
            return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    if (cfg->use_ocsp_callback && cfg->fail_ocsp_callback)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    if (cfg->use_ocsp_callback && cfg->decline_ocsp_callback)
        return SSL_TLSEXT_ERR_NOACK;
    return SSL_TLSEXT_ERR_OK;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/*
 * BoringSSL's default verify preferences (kVerifySignatureAlgorithms, less what TLS 1.3 cannot
 * use): no Ed25519, no P-521. Over TCP the shim gives them to qtls when a test sets none, as
 * the tests of defaults expect (a peer that signs with another scheme is refused). A client's
 * own signatures keep every scheme (its client_sigalgs).
 */
#define BORINGSSL_VERIFY_DEFAULT                                                                 \
    "ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256:ecdsa_secp384r1_sha384:rsa_pss_rsae_sha384:"     \
    "rsa_pss_rsae_sha512"
#define QTLS_SIGN_ALL                                                                            \
    "ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256:ecdsa_secp384r1_sha384:rsa_pss_rsae_sha384:"     \
    "ecdsa_secp521r1_sha512:rsa_pss_rsae_sha512:ed25519:ed448:rsa_pss_pss_sha256:"                \
    "rsa_pss_pss_sha384:rsa_pss_pss_sha512"

/* -use-client-ca-list, -expect-client-ca-list: DER names in hex, ',' between (BoringSSL's). */
static STACK_OF(X509_NAME) *decode_hex_names(const char *hex)
{
    STACK_OF(X509_NAME) *names = sk_X509_NAME_new_null();
    while (names != NULL && *hex != '\0') {
        const char *end = strchr(hex, ',');
        size_t n = end != NULL ? (size_t)(end - hex) : strlen(hex);
        uint8_t der[1024];
        size_t len = n / 2;
        X509_NAME *name = NULL;
        int ok = n % 2 == 0 && len <= sizeof(der);
        for (size_t i = 0; ok && i < len; i++) {
            unsigned v;
            ok = sscanf(hex + 2 * i, "%2x", &v) == 1;
            der[i] = (uint8_t)v;
        }
        const unsigned char *p = der;
        if (ok)
            name = d2i_X509_NAME(NULL, &p, (long)len);
        if (name == NULL || p != der + len || !sk_X509_NAME_push(names, name)) {
            X509_NAME_free(name);
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            return NULL;
        }
        hex += n + (end != NULL);
    }
    return names;
}

/* NPN's callbacks (BoringSSL's NextProtosAdvertisedCallback, NextProtoSelectCallback). */
static int npn_advertised_cb(SSL *ssl, const unsigned char **out, unsigned int *outlen, void *arg)
{
    (void)arg;
    const struct config *cfg = conn_of(ssl)->cfg;
    if (cfg->advertise_npn == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    *out = (const unsigned char *)cfg->advertise_npn;
    *outlen = (unsigned int)strlen(cfg->advertise_npn);
    return SSL_TLSEXT_ERR_OK;
}

static int npn_select_cb(SSL *ssl, unsigned char **out, unsigned char *outlen,
                         const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)in;
    (void)inlen;
    (void)arg;
    const struct config *cfg = conn_of(ssl)->cfg;
    *out = (unsigned char *)cfg->select_next_proto;
    *outlen = (unsigned char)strlen(cfg->select_next_proto);
    return SSL_TLSEXT_ERR_OK;
}

/* BoringSSL's EVP_has_aes_hardware, for -expect-cipher-aes / -expect-cipher-no-aes. */
static int has_aes_hardware(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes");
#else
    return 0;
#endif
}

/* -export-traffic-secrets: the application traffic secrets, as the keylog callback names them. */
static void keylog_cb(const SSL *ssl, const char *line)
{
    struct conn *c = conn_of(ssl);
    static const char *const labels[2] = {"CLIENT_TRAFFIC_SECRET_0 ", "SERVER_TRAFFIC_SECRET_0 "};
    for (int i = 0; c != NULL && i < 2; i++) {
        size_t l = strlen(labels[i]);
        if (strncmp(line, labels[i], l) != 0)
            continue;
        const char *hex = strchr(line + l, ' '); /* past the client random */
        if (hex == NULL)
            return;
        hex++;
        size_t n = strlen(hex) / 2;
        if (n > sizeof(c->traffic_secret[i]))
            return;
        for (size_t j = 0; j < n; j++) {
            unsigned v;
            if (sscanf(hex + 2 * j, "%2x", &v) != 1)
                return;
            c->traffic_secret[i][j] = (uint8_t)v;
        }
        c->traffic_secret_len[i] = n;
    }
}

/* TLS group IDs (BoringSSL's SSL_CURVE_*) and the NIDs OpenSSL's API takes: the groups qtls
   implements. The runner's others (P-224, P-521, CECPQ2) make the shim answer 89. */
static const struct {
    int id, nid;
} groups[] = {
    {23, NID_X9_62_prime256v1}, {24, NID_secp384r1}, {29, NID_X25519}, {30, NID_X448},
};

static int group_nid(int id)
{
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        if (groups[i].id == id)
            return groups[i].nid;
    return NID_undef;
}

static int group_id(int nid)
{
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        if (groups[i].nid == nid)
            return groups[i].id;
    return 0;
}

/* Signature schemes: the code point, OpenSSL's name, and what SSL_get_peer_signature_type_nid
   and SSL_get_peer_signature_nid report for it. */
static const struct {
    int id;
    const char *name;
    int type_nid, hash_nid;
} sigschemes[] = {
    {0x0201, "rsa_pkcs1_sha1", EVP_PKEY_RSA, NID_sha1},
    {0x0401, "rsa_pkcs1_sha256", EVP_PKEY_RSA, NID_sha256},
    {0x0501, "rsa_pkcs1_sha384", EVP_PKEY_RSA, NID_sha384},
    {0x0601, "rsa_pkcs1_sha512", EVP_PKEY_RSA, NID_sha512},
    {0x0203, "ecdsa_sha1", EVP_PKEY_EC, NID_sha1},
    {0x0403, "ecdsa_secp256r1_sha256", EVP_PKEY_EC, NID_sha256},
    {0x0503, "ecdsa_secp384r1_sha384", EVP_PKEY_EC, NID_sha384},
    {0x0603, "ecdsa_secp521r1_sha512", EVP_PKEY_EC, NID_sha512},
    {0x0804, "rsa_pss_rsae_sha256", EVP_PKEY_RSA_PSS, NID_sha256},
    {0x0805, "rsa_pss_rsae_sha384", EVP_PKEY_RSA_PSS, NID_sha384},
    {0x0806, "rsa_pss_rsae_sha512", EVP_PKEY_RSA_PSS, NID_sha512},
    {0x0807, "ed25519", EVP_PKEY_ED25519, NID_undef},
    {0x0808, "ed448", EVP_PKEY_ED448, NID_undef},
    {0x0809, "rsa_pss_pss_sha256", EVP_PKEY_RSA_PSS, NID_sha256},
    {0x080a, "rsa_pss_pss_sha384", EVP_PKEY_RSA_PSS, NID_sha384},
    {0x080b, "rsa_pss_pss_sha512", EVP_PKEY_RSA_PSS, NID_sha512},
};

static const char *sigscheme_name(int id)
{
    for (size_t i = 0; i < sizeof(sigschemes) / sizeof(sigschemes[0]); i++)
        if (sigschemes[i].id == id)
            return sigschemes[i].name;
    return NULL;
}

/* The first scheme with these NIDs (rsae before pss: the runner's RSA keys are rsaEncryption). */
static int sigscheme_id(int type_nid, int hash_nid)
{
    for (size_t i = 0; i < sizeof(sigschemes) / sizeof(sigschemes[0]); i++)
        if (sigschemes[i].type_nid == type_nid &&
            (sigschemes[i].hash_nid == hash_nid || sigschemes[i].hash_nid == NID_undef))
            return sigschemes[i].id;
    return 0;
}

/* An OpenSSL sigalgs list ("rsa_pss_rsae_sha256:ed25519") from code points; 0 if one is unknown. */
static int sigalgs_list(const struct intlist *l, char *out, size_t outlen)
{
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const char *name = sigscheme_name(l->v[i]);
        if (name == NULL || strlen(out) + strlen(name) + 2 > outlen)
            return 0;
        if (i > 0)
            strcat(out, ":");
        strcat(out, name);
    }
    return 1;
}

static int have_sessions(void)
{
    return SSL_set_session != NULL && SSL_SESSION_free != NULL && SSL_session_reused != NULL &&
           SSL_CTX_sess_set_new_cb != NULL;
}

/*
 * Whether qtls can run a connection with this configuration: the flags it
 * cannot honour and the functions it lacks. Returns the reason for 89, or
 * NULL. Checked for the first connection before it starts, and for each
 * resumption before it starts: a test whose first handshake fails still
 * counts (the runner checks that failure), and one whose first handshake
 * passes is reported unimplemented only when it needs a resumption that
 * qtls cannot do yet.
 */
static const char *blocker(const struct config *k, int is_resume)
{
    static char why[128];
    if (k->unimplemented != NULL) {
        snprintf(why, sizeof(why), "flag %s", k->unimplemented);
        return why;
    }
    if (k->is_quic && (k->key_update || k->peek_then_read || k->check_close_notify))
        return "a TCP-only flag in QUIC mode";
    if (is_resume && !have_sessions())
        return "session resumption (no SSL_set_session/SSL_session_reused in qtls yet)";
    if (is_resume && (k->expect_accept_early_data || k->expect_reject_early_data) &&
        SSL_get_early_data_status == NULL)
        return "0-RTT (no SSL_get_early_data_status in qtls yet)";
    if (k->use_ticket_callback && SSL_CTX_set_tlsext_ticket_key_evp_cb == NULL)
        return "ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb)";
    if (k->use_old_client_cert_callback && SSL_CTX_set_client_cert_cb == NULL)
        return "SSL_CTX_set_client_cert_cb";
    if (k->send_alert && SSL_send_fatal_alert == NULL)
        return "sending an alert on demand (no SSL_send_fatal_alert)";
    if (k->srtp_profiles != NULL && SSL_set_tlsext_use_srtp == NULL)
        return "SRTP (no SSL_set_tlsext_use_srtp)";
    for (size_t i = 0; i < k->curves.n; i++)
        if (group_nid(k->curves.v[i]) == NID_undef) {
            int id = k->curves.v[i];
            snprintf(why, sizeof(why), "key exchange group %s, which qtls does not implement",
                     id == 21 ? "P-224" : id == 25 ? "P-521" : id == 16696 ? "CECPQ2" : "?");
            return why;
        }
    char list[512];
    if (!sigalgs_list(&k->signing_prefs, list, sizeof(list)) ||
        !sigalgs_list(&k->verify_prefs, list, sizeof(list)))
        return "a signature scheme qtls does not know (-signing-prefs / -verify-prefs)";
    if (k->is_quic && k->implicit_handshake)
        return "flag -implicit-handshake";
    if (k->is_quic && k->read_with_unfinished_write)
        return "flag -read-with-unfinished-write";
    if (k->is_quic && k->export_traffic_secrets)
        return "flag -export-traffic-secrets";
    if (!k->is_quic && k->max_version != 0 && k->max_version < TLS1_3_VERSION)
        return TLS12_ONLY;
    if (k->shim_shuts_down && k->is_quic)
        return "-shim-shuts-down (QUIC has no close_notify)";
    return NULL;
}

/*
 * Over TCP, a handshake that failed because the runner speaks only TLS 1.0-1.2 in this test
 * (qtls refused the version, or the runner refused qtls's TLS 1.3-only hello) needs TLS 1.2
 * from qtls: 89, unless the test configured the shim to refuse those versions itself
 * (-min-version TLS 1.3), which is what the test then checks.
 */
static int version_refused(const struct conn *c, const struct config *cfg)
{
    unsigned long first = ERR_peek_error();
    if (cfg->is_quic || ERR_GET_LIB(first) != ERR_LIB_SSL ||
        (ERR_GET_REASON(first) != SSL_R_UNSUPPORTED_PROTOCOL &&
         ERR_GET_REASON(first) != SSL_R_TLSV1_ALERT_PROTOCOL_VERSION))
        return 0;
    /* The lowest version BoringSSL's shim would accept with these flags (TLS 1.0 by default). */
    int min = cfg->min_version != 0 ? cfg->min_version : TLS1_VERSION;
    if (min == TLS1_VERSION && cfg->no_tls1)
        min = TLS1_1_VERSION;
    if (min == TLS1_1_VERSION && cfg->no_tls11)
        min = TLS1_2_VERSION;
    if (min == TLS1_2_VERSION && cfg->no_tls12)
        min = TLS1_3_VERSION;
    /* The version the runner speaks; a runner that refused our hello speaks none of ours. */
    int v = runner_hello_version(&c->runner_bytes);
    if (v == 0 && !cfg->is_server)
        v = TLS1_2_VERSION;
    return v < TLS1_3_VERSION && v >= min;
}

/*
 * Reports why the test cannot run; returns 89. With QTLS_BOGO_UNIMPLEMENTED_LOG
 * set, the reason is also appended there (run.sh counts them).
 */
static int unimplemented(const char *why)
{
    fprintf(stderr, "unimplemented: %s\n", why);
    const char *log = getenv("QTLS_BOGO_UNIMPLEMENTED_LOG");
    FILE *f = log != NULL ? fopen(log, "a") : NULL;
    if (f != NULL) {
        fprintf(f, "%s\n", why);
        fclose(f);
    }
    return EXIT_UNIMPLEMENTED;
}

static SSL_CTX *setup_ctx(const struct config *cfg)
{
    SSL_CTX *ctx = SSL_CTX_new(cfg->is_server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL)
        return NULL;
    if (cfg->is_quic && !SSL_CTX_set_quic_method(ctx, &quictls_method))
        goto err;
    /* With -use-old-client-cert-callback or -async the certificate comes from a callback. */
    int install = !cfg->use_old_client_cert_callback && !cfg->async;
    if (install && cfg->cert_file != NULL &&
        SSL_CTX_use_certificate_chain_file(ctx, cfg->cert_file) != 1)
        goto err;
    if (install && cfg->key_file != NULL &&
        SSL_CTX_use_PrivateKey_file(ctx, cfg->key_file, SSL_FILETYPE_PEM) != 1)
        goto err;
    if (cfg->trust_cert != NULL && !SSL_CTX_load_verify_locations(ctx, cfg->trust_cert, NULL))
        goto err;
    if (cfg->cipher != NULL && !SSL_CTX_set_cipher_list(ctx, cfg->cipher))
        goto err;
    if (cfg->server_preference)
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (cfg->max_cert_list > 0)
        SSL_CTX_set_max_cert_list(ctx, cfg->max_cert_list);
    if (cfg->advertise_npn != NULL)
        SSL_CTX_set_next_protos_advertised_cb(ctx, npn_advertised_cb, NULL);
    if (cfg->select_next_proto != NULL)
        SSL_CTX_set_next_proto_select_cb(ctx, npn_select_cb, NULL);
    if (cfg->export_traffic_secrets)
        SSL_CTX_set_keylog_callback(ctx, keylog_cb);
    if (cfg->use_client_ca_list != NULL) {
        STACK_OF(X509_NAME) *names = NULL;
        if (strcmp(cfg->use_client_ca_list, "<EMPTY>") == 0)
            names = sk_X509_NAME_new_null();
        else if (strcmp(cfg->use_client_ca_list, "<NULL>") != 0 &&
                 (names = decode_hex_names(cfg->use_client_ca_list)) == NULL)
            goto err;
        SSL_CTX_set_client_CA_list(ctx, names);
    }
    if (cfg->select_alpn != NULL || cfg->decline_alpn || cfg->reject_alpn ||
        cfg->select_empty_alpn || cfg->expect_advertised_alpn != NULL)
        SSL_CTX_set_alpn_select_cb(ctx, alpn_select_cb, NULL);
    if (cfg->expect_server_name != NULL)
        SSL_CTX_set_tlsext_servername_callback(ctx, servername_cb);
    if (have_sessions()) {
        /* A server's callback tells whether it cached a session statefully
           (-expect-session-id / -expect-no-session-id). */
        if (!cfg->is_server)
            SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT);
        SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
    }
    if (cfg->use_ocsp_callback || (cfg->is_server && cfg->ocsp_response.set))
        SSL_CTX_set_tlsext_status_cb(ctx, status_cb);
    if (cfg->use_custom_verify_callback)
        SSL_CTX_set_cert_verify_callback(ctx, cert_verify_cb, NULL);
    if (cfg->use_ticket_callback)
        SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb);
    if (cfg->use_old_client_cert_callback)
        SSL_CTX_set_client_cert_cb(ctx, client_cert_cb);
    return ctx;
err:
    SSL_CTX_free(ctx);
    return NULL;
}

static SSL *new_ssl(SSL_CTX *ctx, struct conn *c, SSL_SESSION *session)
{
    const struct config *cfg = c->cfg;
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL)
        return NULL;
    c->ssl = ssl;
    SSL_set_app_data(ssl, c);
    if (cfg->is_server)
        SSL_set_accept_state(ssl);
    else
        SSL_set_connect_state(ssl);
    if (cfg->min_version != 0 && !SSL_set_min_proto_version(ssl, cfg->min_version))
        return NULL;
    if (cfg->max_version != 0 && !SSL_set_max_proto_version(ssl, cfg->max_version))
        return NULL;
    if (cfg->no_tls1)
        SSL_set_options(ssl, SSL_OP_NO_TLSv1);
    if (cfg->no_tls11)
        SSL_set_options(ssl, SSL_OP_NO_TLSv1_1);
    if (cfg->no_tls12)
        SSL_set_options(ssl, SSL_OP_NO_TLSv1_2);
    if (cfg->no_ticket)
        SSL_set_options(ssl, SSL_OP_NO_TICKET);
    if (cfg->curves.n > 0) {
        int nids[32];
        for (size_t i = 0; i < cfg->curves.n; i++)
            nids[i] = group_nid(cfg->curves.v[i]);
        if (!SSL_set1_groups(ssl, nids, (int)cfg->curves.n))
            return NULL;
    }
    /*
     * BoringSSL's signing and verify preferences, in OpenSSL's two lists (ssl/t1_lib.c's
     * tls12_get_psigalgs): a client signs with client_sigalgs and offers sigalgs; a server
     * signs with sigalgs and offers client_sigalgs in its CertificateRequest.
     */
    char list[512];
    if (!cfg->is_quic && !cfg->is_server && cfg->verify_prefs.n == 0 &&
        !SSL_set1_sigalgs_list(ssl, BORINGSSL_VERIFY_DEFAULT))
        return NULL;
    if (!cfg->is_quic && !cfg->is_server && cfg->signing_prefs.n == 0 &&
        !SSL_set1_client_sigalgs_list(ssl, QTLS_SIGN_ALL))
        return NULL;
    if (!cfg->is_quic && cfg->is_server && cfg->verify_prefs.n == 0 &&
        !SSL_set1_client_sigalgs_list(ssl, BORINGSSL_VERIFY_DEFAULT))
        return NULL;
    if (!cfg->is_quic && cfg->is_server)
        SSL_set_grease_enabled(ssl, 1); /* BoringSSL's TLS 1.3 servers always GREASE */
    if ((cfg->signing_prefs.n > 0 && sigalgs_list(&cfg->signing_prefs, list, sizeof(list)) &&
         !(cfg->is_server ? SSL_set1_sigalgs_list(ssl, list)
                          : SSL_set1_client_sigalgs_list(ssl, list))) ||
        (cfg->verify_prefs.n > 0 && sigalgs_list(&cfg->verify_prefs, list, sizeof(list)) &&
         !(cfg->is_server ? SSL_set1_client_sigalgs_list(ssl, list)
                          : SSL_set1_sigalgs_list(ssl, list)))) {
        /* qtls keeps what TLS 1.3 can sign with and refuses a list left empty (PKCS#1 v1.5,
           SHA-1): BoringSSL takes it, so the test needs TLS 1.2 or a failed handshake. */
        c->setup_unimplemented = "signature preferences of TLS 1.2 algorithms only (qtls refuses "
                                 "a list with nothing TLS 1.3 can use)";
        return NULL;
    }
    if (!cfg->is_quic) {
        SSL_set_msg_callback(ssl, tcp_msg_cb);
        if (!cfg->check_close_notify)
            SSL_set_quiet_shutdown(ssl, 1);
        /* BoringSSL's server accepts up to 14336 bytes of 0-RTT and says so in its tickets. */
        if (cfg->is_server && cfg->enable_early_data &&
            (!SSL_set_max_early_data(ssl, 14336) || !SSL_set_recv_max_early_data(ssl, 14336)))
            return NULL;
    }
    if (cfg->quic_use_legacy_codepoint != -1)
        SSL_set_quic_use_legacy_codepoint(ssl, cfg->quic_use_legacy_codepoint);
    if (cfg->quic_tp.set && !SSL_set_quic_transport_params(ssl, cfg->quic_tp.p, cfg->quic_tp.n))
        return NULL;
    if (cfg->advertise_alpn != NULL &&
        SSL_set_alpn_protos(ssl, (const unsigned char *)cfg->advertise_alpn,
                            (unsigned int)strlen(cfg->advertise_alpn)) != 0)
        return NULL;
    if (cfg->host_name != NULL && !SSL_set_tlsext_host_name(ssl, cfg->host_name))
        return NULL;
    int mode = SSL_VERIFY_NONE;
    if (cfg->require_any_client_certificate)
        mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    if (cfg->verify_peer)
        mode = SSL_VERIFY_PEER;
    /* The custom callback replaces verification, verify callback included (BoringSSL). */
    SSL_set_verify(ssl, mode, cfg->use_custom_verify_callback ? NULL : verify_cb);
    SSL_CTX_set_reverify_on_resume(ctx, cfg->reverify_on_resume);
    if (cfg->enable_ocsp_stapling && !SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp))
        return NULL;
    if (cfg->is_server && cfg->ocsp_response.set && !cfg->set_ocsp_in_callback) {
        unsigned char *copy = OPENSSL_memdup(cfg->ocsp_response.p, cfg->ocsp_response.n);
        if (copy == NULL || !SSL_set_tlsext_status_ocsp_resp(ssl, copy, (long)cfg->ocsp_response.n))
            return NULL;
    }
    if (cfg->enable_signed_cert_timestamps)
        SSL_enable_signed_cert_timestamps(ssl);
    if (cfg->enable_grease)
        SSL_set_grease_enabled(ssl, 1);
    if ((cfg->async || cfg->fail_cert_callback) && !cfg->use_old_client_cert_callback)
        SSL_set_cert_cb(ssl, async_cert_cb, NULL);
    if (cfg->signed_cert_timestamps.set &&
        !SSL_set_signed_cert_timestamp_list(ssl, cfg->signed_cert_timestamps.p,
                                            cfg->signed_cert_timestamps.n))
        return NULL;
    if (cfg->srtp_profiles != NULL && SSL_set_tlsext_use_srtp(ssl, cfg->srtp_profiles) != 0)
        return NULL;
    if (cfg->enable_early_data && cfg->is_quic)
        SSL_set_quic_early_data_enabled(ssl, 1);
    if (cfg->quic_early_data_context != NULL &&
        !SSL_set_quic_early_data_context(ssl, (const uint8_t *)cfg->quic_early_data_context,
                                         strlen(cfg->quic_early_data_context)))
        return NULL;
    if (session != NULL && !SSL_set_session(ssl, session))
        return NULL;
    return ssl;
}

static int connect_to_runner(const struct config *cfg)
{
    int families[2] = {AF_INET6, AF_INET};
    int n = cfg->ipv6 ? 1 : 2;
    for (int i = 0; i < n; i++) {
        int fd = socket(families[i], SOCK_STREAM, 0);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct sockaddr_storage ss;
        socklen_t len;
        memset(&ss, 0, sizeof(ss));
        if (families[i] == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            s6->sin6_family = AF_INET6;
            s6->sin6_port = htons((uint16_t)cfg->port);
            s6->sin6_addr = in6addr_loopback;
            len = sizeof(*s6);
        } else {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            s4->sin_family = AF_INET;
            s4->sin_port = htons((uint16_t)cfg->port);
            s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            len = sizeof(*s4);
        }
        if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
            if (cfg->shim_id_set) {
                uint8_t id[8];
                for (int b = 0; b < 8; b++)
                    id[b] = (uint8_t)(cfg->shim_id >> (8 * b));
                if (!write_all(fd, id, 8)) {
                    close(fd);
                    return -1;
                }
            }
            return fd;
        }
        close(fd);
    }
    perror("connect");
    return -1;
}

static void close_socket(int fd)
{
    /* Half-close and drain, as BoringSSL's shim does, so the runner sees a clean end. */
    shutdown(fd, SHUT_WR);
    uint8_t buf[1024];
    while (recv(fd, buf, sizeof(buf), 0) > 0) {
    }
    close(fd);
}

/* ------------------------------------------------------------------ */
/* Running a connection                                                */
/* ------------------------------------------------------------------ */

static int write_app_data(struct conn *c, const uint8_t *p, size_t n)
{
    int level = LEVEL_APP;
    if (!c->cfg->is_server && !SSL_is_init_finished(c->ssl) && c->wr[LEVEL_EARLY].set)
        level = LEVEL_EARLY;
    return write_record(c, level, RT_APP_DATA, p, n);
}

/* Application data out: the mock QUIC transport's record, or SSL_write over TCP. */
static int app_write(struct conn *c, const uint8_t *p, size_t n)
{
    return c->tcp ? tcp_write_all(c, p, n) : write_app_data(c, p, n);
}

static int echo(struct conn *c, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] ^= 0xff;
    return app_write(c, p, n);
}

/*
 * During the handshake: one record from the runner. Handshake records go to
 * SSL_provide_quic_data; 0-RTT application data (server) is kept to be
 * echoed as half-RTT data. Returns 1, or 0 on failure.
 */
static int read_handshake_record(struct conn *c)
{
    uint8_t type;
    int level;
    size_t len;
    int r = read_header(c, &type, &level, &len);
    if (r <= 0) {
        if (r == 0)
            fail_note(c, "the runner closed the connection during the handshake");
        return 0;
    }
    uint8_t *buf = read_payload(c, len);
    if (buf == NULL)
        return 0;
    if (type == RT_APP_DATA && level == LEVEL_EARLY && c->cfg->is_server) {
        uint8_t *nb = realloc(c->early_in, c->early_in_len + len);
        if (nb == NULL) {
            free(buf);
            return 0;
        }
        memcpy(nb + c->early_in_len, buf, len);
        c->early_in = nb;
        c->early_in_len += len;
        free(buf);
        /* Half-RTT: answer as soon as the 1-RTT write key is there. */
        if (c->wr[LEVEL_APP].set) {
            int ok = echo(c, c->early_in, c->early_in_len);
            free(c->early_in);
            c->early_in = NULL;
            c->early_in_len = 0;
            return ok;
        }
        return 1;
    }
    if (type != RT_HANDSHAKE) {
        if (type == RT_ALERT && len == 2)
            fail_note(c, "the runner sent alert %d at level %s", buf[1], level_name(level));
        else
            fail_note(c, "unexpected record type %d at level %s during the handshake", type,
                      level_name(level));
        free(buf);
        return 0;
    }
    if (level == LEVEL_INITIAL)
        observe_initial(c, &c->initial_in, buf, len);
    int ok = SSL_provide_quic_data(c->ssl, (OSSL_ENCRYPTION_LEVEL)level, buf, len);
    free(buf);
    return ok == 1;
}

static int do_handshake(struct conn *c)
{
    for (;;) {
        int ret = SSL_do_handshake(c->ssl);
        if (ret == 1)
            return 1;
        int err = SSL_get_error(c->ssl, ret);
        if (err == SSL_ERROR_WANT_X509_LOOKUP && c->cfg->async && !c->cert_ready) {
            c->cert_ready = 1; /* the "asynchronous work" is done: retry */
            continue;
        }
        if (err != SSL_ERROR_WANT_READ)
            return 0;
        /* A client with 0-RTT keys writes its early data now. */
        if (!c->cfg->is_server && c->wr[LEVEL_EARLY].set && !c->early_written) {
            if (c->is_resume && c->cfg->expect_no_offer_early_data) {
                fail_note(c, "Client unexpectedly offered early data.");
                return 0;
            }
            if (c->cfg->shim_writes_first) {
                if (!write_app_data(c, (const uint8_t *)"hello", 5))
                    return 0;
            }
            c->early_written = 1;
        }
        if (!read_handshake_record(c))
            return 0;
    }
}

/*
 * After the handshake: the next application data, processing post-handshake
 * messages (NewSessionTicket) on the way. Returns the byte count, 0 at EOF,
 * -1 on failure.
 */
static long read_app_data(struct conn *c, uint8_t *out, size_t max)
{
    if (c->pending_len > c->pending_off) {
        size_t n = c->pending_len - c->pending_off;
        if (n > max)
            n = max;
        memcpy(out, c->pending + c->pending_off, n);
        c->pending_off += n;
        return (long)n;
    }
    for (;;) {
        uint8_t type;
        int level;
        size_t len;
        int r = read_header(c, &type, &level, &len);
        if (r <= 0)
            return r;
        uint8_t *buf = read_payload(c, len);
        if (buf == NULL)
            return -1;
        if (type == RT_APP_DATA && len == 0) {
            free(buf); /* an empty record is not the end of the stream */
            continue;
        }
        if (type == RT_APP_DATA) {
            free(c->pending);
            c->pending = buf;
            c->pending_len = len;
            c->pending_off = 0;
            return read_app_data(c, out, max);
        }
        if (type != RT_HANDSHAKE) {
            if (type == RT_ALERT && len == 2)
                fail_note(c, "the runner sent alert %d at level %s", buf[1], level_name(level));
            else
                fail_note(c, "unexpected record type %d at level %s", type, level_name(level));
            free(buf);
            return -1;
        }
        int ok = SSL_provide_quic_data(c->ssl, (OSSL_ENCRYPTION_LEVEL)level, buf, len);
        free(buf);
        if (ok != 1)
            return -1;
        if (SSL_process_quic_post_handshake(c->ssl) != 1)
            return -1;
    }
}

static int load_chain(const char *file, X509 **leaf, STACK_OF(X509) **chain)
{
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return 0;
    *leaf = PEM_read_X509(f, NULL, NULL, NULL);
    *chain = sk_X509_new_null();
    X509 *x;
    while ((x = PEM_read_X509(f, NULL, NULL, NULL)) != NULL)
        sk_X509_push(*chain, x);
    ERR_clear_error();
    fclose(f);
    return *leaf != NULL && *chain != NULL;
}

static int check_peer_cert_file(struct conn *c)
{
    const struct config *cfg = c->cfg;
    X509 *leaf = NULL;
    STACK_OF(X509) *want = NULL;
    int ok = 0;
    if (!load_chain(cfg->expect_peer_cert_file, &leaf, &want)) {
        fail_note(c, "cannot read %s", cfg->expect_peer_cert_file);
        goto out;
    }
    /* Clients report a chain with the leaf, servers without (OpenSSL and BoringSSL alike). */
    if (!cfg->is_server) {
        X509_up_ref(leaf);
        sk_X509_unshift(want, leaf);
    }
    X509 *got = SSL_get1_peer_certificate != NULL ? SSL_get1_peer_certificate(c->ssl) : NULL;
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(c->ssl);
    if (got == NULL || X509_cmp(got, leaf) != 0) {
        fail_note(c, "Received a different leaf certificate than expected.");
        X509_free(got);
        goto out;
    }
    X509_free(got);
    if (sk_X509_num(chain) != sk_X509_num(want)) {
        fail_note(c, "Received a chain of length %d instead of %d.", sk_X509_num(chain),
                  sk_X509_num(want));
        goto out;
    }
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (X509_cmp(sk_X509_value(chain, i), sk_X509_value(want, i)) != 0) {
            fail_note(c, "Chain certificate %d did not match.", i + 1);
            goto out;
        }
    ok = 1;
out:
    X509_free(leaf);
    sk_X509_pop_free(want, X509_free);
    return ok;
}

/* BoringSSL's CheckHandshakeProperties, for what qtls exposes. */
static int check_handshake(struct conn *c)
{
    const struct config *cfg = c->cfg;
    SSL *ssl = c->ssl;
    if (SSL_get_current_cipher(ssl) == NULL) {
        fail_note(c, "null cipher after handshake");
        return 0;
    }
    int suite = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(ssl));
    if (cfg->expect_cipher != 0 && suite != cfg->expect_cipher) {
        fail_note(c, "Cipher ID was %04x, wanted %04x", suite, cfg->expect_cipher);
        return 0;
    }
    int aes = has_aes_hardware();
    if ((aes && cfg->expect_cipher_aes != 0 && suite != cfg->expect_cipher_aes) ||
        (!aes && cfg->expect_cipher_no_aes != 0 && suite != cfg->expect_cipher_no_aes)) {
        fail_note(c, "Cipher ID was %04x, wanted %04x (%s AES hardware)", suite,
                  aes ? cfg->expect_cipher_aes : cfg->expect_cipher_no_aes, aes ? "has" : "no");
        return 0;
    }
    if (cfg->expect_next_proto != NULL) {
        const unsigned char *proto;
        unsigned int len;
        SSL_get0_next_proto_negotiated(ssl, &proto, &len);
        if (len != strlen(cfg->expect_next_proto) ||
            (len > 0 && memcmp(proto, cfg->expect_next_proto, len) != 0)) {
            fail_note(c, "negotiated next proto mismatch");
            return 0;
        }
    }
    if (cfg->expect_client_ca_list != NULL) {
        STACK_OF(X509_NAME) *want = decode_hex_names(cfg->expect_client_ca_list);
        STACK_OF(X509_NAME) *got = SSL_get_client_CA_list(ssl);
        int same = want != NULL && sk_X509_NAME_num(want) == sk_X509_NAME_num(got);
        for (int i = 0; same && i < sk_X509_NAME_num(want); i++)
            same = X509_NAME_cmp(sk_X509_NAME_value(want, i), sk_X509_NAME_value(got, i)) == 0;
        sk_X509_NAME_pop_free(want, X509_NAME_free);
        if (!same) {
            fail_note(c, "names in CertificateRequest differ (%d received)", sk_X509_NAME_num(got));
            return 0;
        }
    }
    if (cfg->expect_curve_id != 0) {
        int id = group_id(SSL_get_negotiated_group(ssl));
        if (id != cfg->expect_curve_id) {
            fail_note(c, "curve_id was %04x, wanted %04x", id, cfg->expect_curve_id);
            return 0;
        }
    }
    /* OpenSSL reports the signature of this handshake: a resumption has none (BoringSSL's
       answers the session's). */
    if (cfg->expect_peer_signature_algorithm != 0 && !(c->tcp && SSL_session_reused(ssl))) {
        int type = NID_undef, hash = NID_undef;
        SSL_get_peer_signature_type_nid(ssl, &type);
        SSL_get_peer_signature_nid(ssl, &hash);
        int id = sigscheme_id(type, hash);
        if (id != cfg->expect_peer_signature_algorithm) {
            fail_note(c, "Peer signature algorithm was %04x, wanted %04x.", id,
                      cfg->expect_peer_signature_algorithm);
            return 0;
        }
    }
    if (cfg->expect_version != 0 && SSL_version(ssl) != cfg->expect_version) {
        fail_note(c, "want version %04x, got %04x", cfg->expect_version, SSL_version(ssl));
        return 0;
    }
    if (have_sessions()) {
        int expect_resume = c->is_resume && !cfg->expect_session_miss;
        if (!!SSL_session_reused(ssl) != expect_resume) {
            fail_note(c, "session unexpectedly was%s reused", SSL_session_reused(ssl) ? "" : " not");
            return 0;
        }
    }
    if (cfg->expect_server_name != NULL) {
        const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        if (name == NULL || strcmp(name, cfg->expect_server_name) != 0) {
            fail_note(c, "servername mismatch (got %s; want %s)", name ? name : "(null)",
                      cfg->expect_server_name);
            return 0;
        }
    }
    /* -expect-advertised-alpn is checked in the select callback: it must have run. */
    if (cfg->is_server && cfg->expect_advertised_alpn != NULL && !c->alpn_select_done) {
        fail_note(c, "the ALPN select callback did not run (-expect-advertised-alpn)");
        return 0;
    }
    /* The server reports what its callback selected; the client what the test expects. */
    const char *want_alpn = cfg->is_server ? cfg->select_alpn : cfg->expect_alpn;
    if (want_alpn == NULL)
        want_alpn = "";
    const unsigned char *alpn;
    unsigned int alpn_len;
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    if (alpn_len != strlen(want_alpn) ||
        (alpn_len > 0 && memcmp(alpn, want_alpn, alpn_len) != 0)) {
        fail_note(c, "negotiated alpn proto mismatch (got '%.*s', want '%s')", (int)alpn_len,
                  alpn ? (const char *)alpn : "", want_alpn);
        return 0;
    }
    if (cfg->expect_quic_tp.set && cfg->expect_quic_tp.n > 0) {
        const uint8_t *tp;
        size_t tp_len;
        SSL_get_peer_quic_transport_params(ssl, &tp, &tp_len);
        if (tp_len != cfg->expect_quic_tp.n || memcmp(tp, cfg->expect_quic_tp.p, tp_len) != 0) {
            fail_note(c, "QUIC transport params mismatch");
            return 0;
        }
    }
    if (cfg->expect_accept_early_data || cfg->expect_reject_early_data) {
        int accepted = SSL_get_early_data_status(ssl) == SSL_EARLY_DATA_ACCEPTED;
        if ((cfg->expect_accept_early_data && !accepted) ||
            (cfg->expect_reject_early_data && accepted)) {
            fail_note(c, "Early data was%s accepted, but we expected the opposite",
                      accepted ? "" : " not");
            return 0;
        }
    }
    if (cfg->expect_early_data_reason != NULL) {
        const char *reason = SSL_early_data_reason_string(SSL_get_early_data_reason(ssl));
        if (reason == NULL)
            reason = "(out of range)";
        if (strcmp(reason, cfg->expect_early_data_reason) != 0) {
            fail_note(c, "Early data reason was \"%s\", expected \"%s\"", reason,
                      cfg->expect_early_data_reason);
            return 0;
        }
    }
    if (!cfg->is_server || cfg->require_any_client_certificate) {
        if (SSL_get_peer_cert_chain(ssl) == NULL) {
            fail_note(c, "Received no peer certificate but expected one.");
            return 0;
        }
    }
    if (cfg->expect_verify_result) {
        long want = cfg->verify_fail ? X509_V_ERR_APPLICATION_VERIFICATION : X509_V_OK;
        if (SSL_get_verify_result(ssl) != want) {
            fail_note(c, "Wrong certificate verification result (%ld, want %ld)",
                      SSL_get_verify_result(ssl), want);
            return 0;
        }
    }
    if (cfg->expect_peer_cert_file != NULL && !check_peer_cert_file(c))
        return 0;
    if ((cfg->expect_hrr && !c->saw_hrr) || (cfg->expect_no_hrr && c->saw_hrr)) {
        fail_note(c, "Got %sHRR, but wanted opposite.", c->saw_hrr ? "" : "no ");
        return 0;
    }
    /*
     * Sessions at the end of the handshake, as BoringSSL's CheckHandshakeProperties: a TLS 1.3
     * client has none yet (tickets come after it; -expect-ticket-renewal only matters below
     * TLS 1.3), and a server that caches a session statefully announces it through the
     * new-session callback: -expect-session-id wants it, -expect-no-session-id (tickets) not.
     */
    c->new_session_at_handshake = c->got_new_session;
    if (!cfg->is_server) {
        int expect_new = !cfg->expect_no_session &&
                         (!SSL_session_reused(ssl) || cfg->expect_ticket_renewal) &&
                         SSL_version(ssl) < TLS1_3_VERSION;
        if (expect_new != c->got_new_session) {
            fail_note(c, "new session was%s cached, but we expected the opposite",
                      c->got_new_session ? "" : " not");
            return 0;
        }
    }
    if (!c->is_resume) {
        if (cfg->expect_session_id && !c->got_new_session) {
            fail_note(c, "session was not cached on the server.");
            return 0;
        }
        if (cfg->expect_no_session_id && c->got_new_session) {
            fail_note(c, "session was unexpectedly cached on the server.");
            return 0;
        }
    }
    /*
     * The stapled OCSP response. OpenSSL's SSL_get_tlsext_status_ocsp_resp is the response of
     * this handshake: a resumption has none (BoringSSL's answers the session's).
     */
    if (cfg->expect_ocsp_response.set) {
        const unsigned char *resp;
        long n = SSL_get_tlsext_status_ocsp_resp(ssl, &resp);
        if (SSL_session_reused(ssl)) {
            if (n > 0) {
                fail_note(c, "OCSP response on a resumption");
                return 0;
            }
        } else if (n < 0 || (size_t)n != cfg->expect_ocsp_response.n ||
                   memcmp(resp, cfg->expect_ocsp_response.p, (size_t)n) != 0) {
            fail_note(c, "OCSP response mismatch");
            return 0;
        }
    }
    /* The server's SCT list; on a resumption the session's (BoringSSL's behaviour, and qtls's). */
    if (cfg->expect_signed_cert_timestamps.set) {
        const uint8_t *list;
        size_t n;
        SSL_get0_signed_cert_timestamp_list(ssl, &list, &n);
        if (n != cfg->expect_signed_cert_timestamps.n ||
            (n > 0 && memcmp(list, cfg->expect_signed_cert_timestamps.p, n) != 0)) {
            fail_note(c, "SCT list mismatch");
            return 0;
        }
    }
    return 1;
}

/*
 * One connection: handshake, checks, the echo loop, and the session for the
 * next one. Returns 1 on success, 0 on failure, -1 if it turned out to need
 * something qtls does not do.
 */
static int do_connection(SSL_CTX *ctx, const struct config *cfg, const struct config *retry_cfg,
                         int is_resume, SSL_SESSION *offer, SSL_SESSION **out_session)
{
    struct conn c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.retry_cfg = retry_cfg;
    c.is_resume = is_resume;
    c.fd = connect_to_runner(cfg);
    if (c.fd < 0)
        return 0;
    int ok = 0;
    if (new_ssl(ctx, &c, offer) == NULL) {
        if (c.setup_unimplemented != NULL) {
            unimplemented(c.setup_unimplemented);
            ok = -1;
            goto out;
        }
        fail_note(&c, "setting up the SSL failed");
        goto out;
    }
    c.tcp = !cfg->is_quic;
    if (c.tcp && !tcp_attach(&c)) {
        fail_note(&c, "attaching the socket failed");
        goto out;
    }
    if (!(c.tcp ? tcp_handshake(&c, offer) : do_handshake(&c)))
        goto out;

    /* A client whose 0-RTT was rejected goes on under the retry configuration. */
    if (!cfg->is_server && is_resume && cfg->expect_reject_early_data) {
        if (SSL_get_early_data_status(c.ssl) == SSL_EARLY_DATA_ACCEPTED) {
            fail_note(&c, "0-RTT exchange unexpectedly succeeded.");
            goto out;
        }
        /* BoringSSL checks the resumption's expectations in its early state, before the
           rejection; an OpenSSL client has no such state to show (its handshake is complete
           now, under the retry's expectations), so over TCP only the retry's are checked. */
        if (!c.tcp && !check_handshake(&c))
            goto out;
        /* BoringSSL's shim: reasons belong to the retry, the connection after the rejection. */
        if (cfg->expect_early_data_reason != NULL) {
            fail_note(&c, "Test error: client reject -expect-early-data-reason flags should be "
                          "configured with -on-retry, not -on-resume.");
            goto out;
        }
        const char *why = blocker(retry_cfg, 1);
        if (why != NULL) {
            unimplemented(why);
            ok = -1;
            goto out;
        }
        c.cfg = cfg = retry_cfg;
        if (c.tcp)
            c.early_written = 0; /* rejected: the retry writes anew */
    }
    if (!cfg->implicit_handshake && !check_handshake(&c))
        goto out;
    if (c.tcp && cfg->no_op_extra_handshake && SSL_do_handshake(c.ssl) != 1) {
        fail_note(&c, "Extra SSL_do_handshake was not a no-op.");
        goto out;
    }

    if (cfg->export_keying_material > 0) {
        size_t n = (size_t)cfg->export_keying_material;
        uint8_t *km = malloc(n);
        const char *label = cfg->export_label ? cfg->export_label : "";
        const char *context = cfg->export_context ? cfg->export_context : "";
        if (km == NULL ||
            !SSL_export_keying_material(c.ssl, km, n, label, strlen(label),
                                        (const unsigned char *)context, strlen(context),
                                        cfg->use_export_context)) {
            fail_note(&c, "failed to export keying material");
            free(km);
            goto out;
        }
        int w = app_write(&c, km, n);
        free(km);
        if (!w)
            goto out;
    }

    if (cfg->export_traffic_secrets) {
        /* The runner reads a little-endian u16 length, the shim's read secret, its write one. */
        int server = cfg->is_server;
        size_t n = c.traffic_secret_len[0];
        uint8_t len[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
        if (n == 0 || c.traffic_secret_len[1] != n || !app_write(&c, len, 2) ||
            !app_write(&c, c.traffic_secret[server ? 0 : 1], n) ||
            !app_write(&c, c.traffic_secret[server ? 1 : 0], n)) {
            fail_note(&c, "failed to export traffic secrets");
            goto out;
        }
    }

    if (cfg->send_alert) {
        if (SSL_send_fatal_alert(c.ssl, SSL_AD_DECOMPRESSION_FAILURE) < 0)
            goto out;
        ok = 1;
        goto out;
    }

    /* BoringSSL's -read-with-unfinished-write: "hello" stays unfinished (one byte goes) while
       the shim reads; the retry, same buffer, comes after the first read. */
    static const char initial_write[] = "hello";
    int pending_initial_write = 0;
    if (c.tcp && cfg->read_with_unfinished_write) {
        if (!cfg->async || c.quota == NULL) {
            fail_note(&c, "-read-with-unfinished-write requires -async.");
            goto out;
        }
        c.quota->write += 1;
        int r = SSL_write(c.ssl, initial_write, 5);
        if (SSL_get_error(c.ssl, r) != SSL_ERROR_WANT_WRITE) {
            fail_note(&c, "Failed to leave unfinished write.");
            goto out;
        }
        pending_initial_write = 1;
    /* Early data already carried the client's first write. */
    } else if (cfg->shim_writes_first && !(is_resume && c.early_written)) {
        if (!app_write(&c, (const uint8_t *)"hello", 5))
            goto out;
    } else if (c.tcp && c.early_written && c.early_len < 5) {
        if (!app_write(&c, (const uint8_t *)"hello" + c.early_len, 5 - c.early_len))
            goto out;
    }
    if (c.early_in_len > 0) {
        if (!echo(&c, c.early_in, c.early_in_len))
            goto out;
        c.early_in_len = 0;
    }

    size_t read_size = cfg->read_size > 0 ? (size_t)cfg->read_size : 512;
    uint8_t *buf = malloc(read_size);
    if (buf == NULL)
        goto out;
    for (; c.tcp && !cfg->shim_shuts_down;) {
        /* BoringSSL's loop: stop at the peer's close_notify or at a bare EOF. */
        int n = tcp_read(&c, buf, read_size);
        int err = SSL_get_error(c.ssl, n);
        if (err == SSL_ERROR_ZERO_RETURN || (n == 0 && err == SSL_ERROR_SYSCALL))
            break;
        if (err != SSL_ERROR_NONE || n <= 0) {
            fail_note(&c, "SSL_read failed (SSL_get_error %d)", err);
            free(buf);
            goto out;
        }
        if (pending_initial_write) {
            if (!tcp_write_all(&c, (const uint8_t *)initial_write, 5)) {
                free(buf);
                goto out;
            }
            pending_initial_write = 0;
        }
        if (cfg->key_update && !SSL_key_update(c.ssl, SSL_KEY_UPDATE_NOT_REQUESTED)) {
            fail_note(&c, "SSL_key_update failed.");
            free(buf);
            goto out;
        }
        if (!echo(&c, buf, (size_t)n)) {
            free(buf);
            goto out;
        }
    }
    for (; !c.tcp;) {
        long n = read_app_data(&c, buf, read_size);
        if (n == 0)
            break; /* the runner closed: done */
        if (n < 0) {
            free(buf);
            goto out;
        }
        if (!echo(&c, buf, (size_t)n)) {
            free(buf);
            goto out;
        }
    }
    free(buf);

    /* TLS 1.3 clients get their sessions after the handshake. */
    if (!cfg->is_server && have_sessions()) {
        int expect_new = !cfg->expect_no_session && !cfg->shim_shuts_down;
        if (expect_new != c.got_new_session) {
            fail_note(&c, "new session was%s cached, but we expected the opposite",
                      c.got_new_session ? "" : " not");
            goto out;
        }
        if (expect_new && SSL_SESSION_get_max_early_data != NULL) {
            int early = SSL_SESSION_get_max_early_data(c.new_session) != 0;
            if (early != cfg->expect_ticket_supports_early_data) {
                fail_note(&c, "new session did%s support early data, but we expected the opposite",
                          early ? "" : " not");
                goto out;
            }
        }
    }
    if (out_session != NULL) {
        *out_session = c.new_session;
        c.new_session = NULL;
    }
    if (c.tcp) {
        /* Quiet unless -check-close-notify: then the shim that shuts down first gets 0 (its
           close_notify went), then 1 (the runner's came). */
        int r;
        do {
            r = SSL_shutdown(c.ssl);
        } while (retry_async(&c, r));
        if (cfg->shim_shuts_down && cfg->check_close_notify) {
            if (r != 0) {
                fail_note(&c, "Unexpected SSL_shutdown result: %d != 0", r);
                goto out;
            }
            do {
                r = SSL_shutdown(c.ssl);
            } while (retry_async(&c, r));
        }
        if (r != 1) {
            fail_note(&c, "Unexpected SSL_shutdown result: %d != 1", r);
            goto out;
        }
    }
    ok = 1;
out:
    if (ok == 0 && c.tcp && version_refused(&c, cfg)) {
        unimplemented(TLS12_ONLY);
        ok = -1;
    }
    if (ok == 0) {
        if (c.failure[0] != '\0')
            fprintf(stderr, "%s\n", c.failure);
        if (c.ssl != NULL) {
            int e = SSL_get_error(c.ssl, -1);
            if (e != SSL_ERROR_NONE && e != SSL_ERROR_SSL)
                fprintf(stderr, "SSL error: %d\n", e);
        }
    }
    if (c.new_session != NULL)
        SSL_SESSION_free(c.new_session);
    SSL_free(c.ssl);
    close_socket(c.fd);
    free(c.initial_in.buf);
    free(c.initial_out.buf);
    free(c.early_in);
    free(c.pending);
    return ok;
}

static void done_marker(void)
{
    /* Anything after this line is tool output (sanitizers), as in BoringSSL's shim. */
    fprintf(stderr, "--- DONE ---\n");
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    atexit(done_marker);

    static struct config initial, resume, retry;
    config_defaults(&initial);
    config_defaults(&resume);
    config_defaults(&retry);
    int p = parse_config(argc, argv, &initial, &resume, &retry);
    if (p < 0) {
        char why[256];
        snprintf(why, sizeof(why), "unknown flag %s", unknown_flag);
        return unimplemented(why);
    }
    if (p == 0)
        return 1;
    if (initial.is_handshaker_supported) {
        printf("No\n");
        return 0;
    }
    const char *why = blocker(&initial, 0);
    if (why != NULL)
        return unimplemented(why);

    SSL_CTX *ctx = NULL;
    SSL_SESSION *session = NULL;
    int rc = 0;
    for (int i = 0; i <= initial.resume_count; i++) {
        int is_resume = i > 0;
        const struct config *cfg = is_resume ? &resume : &initial;
        if (is_resume && (why = blocker(cfg, 1)) != NULL) {
            rc = unimplemented(why);
            break;
        }
        /* One context for all connections: it holds the server's ticket keys. */
        if (ctx == NULL && (ctx = setup_ctx(cfg)) == NULL) {
            ERR_print_errors_fp(stderr);
            rc = 1;
            break;
        }
        if (is_resume && !initial.is_server && session == NULL) {
            fprintf(stderr, "No session to offer.\n");
            rc = 1;
            break;
        }
        SSL_SESSION *offer = session;
        session = NULL;
        int ok = do_connection(ctx, cfg, &retry, is_resume, offer, &session);
        if (offer != NULL)
            SSL_SESSION_free(offer);
        if (ok < 0) {
            rc = EXIT_UNIMPLEMENTED;
            break;
        }
        if (!ok) {
            fprintf(stderr, "Connection %d failed.\n", i + 1);
            ERR_print_errors_fp(stderr);
            rc = 1;
            break;
        }
    }
    if (session != NULL)
        SSL_SESSION_free(session);
    SSL_CTX_free(ctx);
    return rc;
}
