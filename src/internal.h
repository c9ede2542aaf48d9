/*
 * The objects every layer shares: the structures behind SSL_CTX, SSL_SESSION and SSL, the
 * settings they embed, the handshake-only state (struct hs), the handshake message types and the
 * list of extensions the engine knows. The functions live in one header per folder of src/, each
 * offering what its folder gives the layers above (README "Code layout"):
 *   base/ crypto/ session/ policy/ transport/ handshake/ api/  (calls go down this list only)
 */
#ifndef QTLS_INTERNAL_H
#define QTLS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/base.h"
#include "crypto/crypto.h"
#include "qtls/quic.h"
#include "qtls/quic_tls35.h"

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

enum method_role { ROLE_ANY, ROLE_CLIENT, ROLE_SERVER };
struct ssl_method_st {
    int version; /* TLS_ANY_VERSION for the three methods QUIC accepts */
    enum method_role role;
};

/* A certificate and its key, with the chain to send. */
struct cert_cfg {
    X509 *cert;
    EVP_PKEY *pkey;
    STACK_OF(X509) *chain; /* intermediates, leaf excluded */
};

/*
 * certset.c: OpenSSL's certificate slots, one pair per key type (its SSL_PKEY_* indexes: all EC
 * curves share one), the slot last set being the "current" one the chain ctrls act on; plus the
 * certificate callback, which travels with the certificates as in OpenSSL's CERT.
 */
enum {
    CERT_SLOT_RSA,
    CERT_SLOT_RSA_PSS,
    CERT_SLOT_EC,
    CERT_SLOT_ED25519,
    CERT_SLOT_ED448,
    CERT_SLOTS
};
struct cert_set {
    struct cert_cfg slot[CERT_SLOTS];
    int current;
    STACK_OF(X509) *extra; /* SSL_CTX_add_extra_chain_cert: sent when the slot has no chain */
    int (*cert_cb)(SSL *, void *);
    void *cert_cb_arg;
};

/* seclevel.c: the security level and callback (SSL_CTX_set_security_level(3)). */
typedef int (*qtls_sec_cb)(const SSL *, const SSL_CTX *, int, int, int, void *, void *);
struct seclevel {
    int level;
    qtls_sec_cb cb; /* NULL: OpenSSL's default rules */
    void *ex;
};

/* dh.c: the TLS 1.2 DHE settings, accepted and stored (TLS 1.3 has no DHE suites). */
struct dh_params {
    EVP_PKEY *tmp; /* SSL_CTX_set0_tmp_dh_pkey (owned) */
    int tmp_auto;  /* SSL_CTX_set_dh_auto */
};

/* cert_comp.c: the algorithms we compress with and accept, in preference order (RFC 8879). */
struct cert_comp_pref {
    uint8_t alg[CC_LIMIT - 1];
    uint8_t n; /* 0: certificate compression off */
};

/* sigalgs.c: a configured signature-algorithm list (SSL_CTX_set1_sigalgs_list); n == 0: default. */
#define QTLS_MAX_SIGALGS 16
struct sigalg_list {
    uint16_t ids[QTLS_MAX_SIGALGS];
    size_t n;
};
/*
 * A context's or connection's two configured lists, shared copy-on-write: SSL_new takes a
 * reference to its context's, and a setter on either side makes a new one for itself, so a later
 * change to the context does not reach the connection (as OpenSSL's copy at SSL_new) while most
 * connections, which set none, hold no copy. NULL: both lists empty (the defaults).
 */
struct sigalg_conf {
    int references;
    struct sigalg_list sigalgs, client_sigalgs;
};

/* custom_ext.c: the application's extensions (handshake/custom_ext.c) */
struct custom_exts;

struct ssl_ctx_st {
    int references;
    const SSL_METHOD *method;
    CRYPTO_EX_DATA ex_data;
    uint64_t options;
    uint32_t mode;
    int min_version, max_version;
    const SSL_QUIC_METHOD *quic_method;
    struct suite_list suites;
    uint16_t groups[QTLS_MAX_GROUPS];
    uint8_t n_groups;
    uint16_t group_tuples; /* OpenSSL 3.5's '/' tuples: bit i, group i begins one (i > 0) */
    struct cert_set certs; /* certset.c */
    pem_password_cb *passwd_cb; /* SSL_CTX_set_default_passwd_cb */
    void *passwd_arg;
    STACK_OF(X509_NAME) *client_ca, *ca_names; /* ca_list.c */
    X509_STORE *store;
    X509_VERIFY_PARAM *param;
    int verify_mode;
    SSL_verify_cb verify_cb;
    uint8_t *alpn; /* client offer, wire format */
    size_t alpn_len;
    SSL_CTX_alpn_select_cb_func alpn_select_cb;
    void *alpn_select_arg;
    SSL_CTX_keylog_cb_func keylog_cb;
    long session_cache_mode;
    size_t max_cert_list;
    int (*servername_cb)(SSL *, int *, void *);
    void *servername_arg;
    SSL_client_hello_cb_fn client_hello_cb; /* client_hello.c */
    void *client_hello_arg;
    int (*status_cb)(SSL *, void *); /* OCSP stapling (ocsp.c), both roles */
    void *status_arg;
    int status_type; /* copied by SSL_new: -1 or TLSEXT_STATUSTYPE_ocsp */

    /* Sessions and tickets (session.c, ticket.c) */
    long session_timeout;   /* seconds; ticket lifetime (default 7200, as OpenSSL) */
    size_t num_tickets;     /* NewSessionTickets per handshake (default 2) */
    uint32_t max_early_data; /* != 0 enables 0-RTT tickets (sent as 0xffffffff in QUIC) */
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    size_t sid_ctx_len;
    int (*new_session_cb)(SSL *, SSL_SESSION *);
    SSL_CTX_generate_session_ticket_fn ticket_gen_cb;
    SSL_CTX_decrypt_session_ticket_fn ticket_dec_cb;
    void *ticket_cb_arg;
    SSL_allow_early_data_cb_fn allow_early_data_cb;
    void *allow_early_data_arg;
    unsigned early_set_on_ctx; /* OWN_*_EARLY_DATA* bits: 0-RTT settings this context made */
    int (*ticket_key_evp_cb)(SSL *, unsigned char *, unsigned char *, EVP_CIPHER_CTX *,
                             EVP_MAC_CTX *, int);
    int (*client_cert_cb)(SSL *, X509 **, EVP_PKEY **);
    struct ticket_keys *ticket_keys; /* built-in rotating keys, made by SSL_CTX_new */
    struct slot_cache *cert_cache;   /* decoded peer certificates, reused (cert.c) */
    struct replay_filter *replay;    /* single-use 0-RTT tickets unless SSL_OP_NO_ANTI_REPLAY */
    /* Stored and reported back only: stateless tickets need no internal cache (session.c). */
    void (*remove_session_cb)(SSL_CTX *, SSL_SESSION *);
    SSL_SESSION *(*get_session_cb)(SSL *, const unsigned char *, int, int *);
    long session_cache_size;
    uint32_t recv_max_early_data; /* QUIC bounds 0-RTT by flow control, not by this */
    SSL_async_callback_fn async_cb; /* compat_tcp.c: stored, never called (no async jobs) */
    void *async_cb_arg;
    /* callbacks.c: info and message callbacks, inherited by SSL_new */
    void (*info_callback)(const SSL *, int, int);
    void (*msg_callback)(int, int, int, const void *, size_t, SSL *, void *);
    void *msg_callback_arg;
    int post_handshake_auth; /* TCP clients offer it (post_auth.c); never in QUIC, RFC 9001 §4.4 */
    struct sigalg_conf *sigalg_conf; /* sigalgs.c, shared with SSL_new's connections */
    STACK_OF(SSL_CIPHER) *cipher_stack; /* cipher_lists.c: SSL_CTX_get_ciphers' view, owned */
    /* cert.c: SSL_CTX_set_cert_verify_callback, run instead of X509_verify_cert */
    int (*app_verify_cb)(X509_STORE_CTX *, void *);
    int reverify_on_resume; /* SSL_CTX_set_reverify_on_resume */
    int grease_enabled;     /* SSL_CTX_set_grease_enabled (RFC 8701), copied by SSL_new */
    int read_ahead;         /* SSL_CTX_set_read_ahead: records read in bulk (record.c) */
    size_t read_buffer_len; /* SSL_CTX_set_default_read_buffer_len: read-ahead's size */
    int sct_requested;      /* sct.c: SSL_CTX_enable_signed_cert_timestamps, copied by SSL_new */
    uint8_t *sct_list;      /* sct.c: the server's SCT list, unless the connection has one */
    size_t sct_list_len;
    void *app_verify_arg;
    struct seclevel sec; /* seclevel.c, copied by SSL_new */
    struct dh_params dh; /* dh.c: stored only (TLS 1.2 DHE) */
    struct custom_exts *custom_exts; /* custom_ext.c: SSL_CTX_add_custom_ext and friends */
    struct cert_comp_pref cert_comp;          /* cert_comp.c: copied by SSL_new */
    struct slot_cache *cert_comp_cache; /* cert_comp.c: compressed chains, made on use */
};

/*
 * A session: what a client needs to resume (ticket + PSK) and what a server
 * seals into a ticket. Immutable once handed to the application, except
 * ticket appdata (set from the ticket-generation callback).
 */
struct ssl_session_st {
    int references;
    CRYPTO_EX_DATA ex_data;
    const SSL_CIPHER *cipher;
    struct secret psk;       /* the resumption PSK (RFC 8446 §4.6.1) */
    uint64_t time;           /* issue time, seconds since the epoch */
    uint64_t arrival_us;     /* client: the ticket's arrival in µs (kept in memory only) */
    uint64_t timeout;        /* lifetime in seconds */
    uint32_t age_add;        /* ticket_age_add */
    uint32_t max_early_data; /* 0 or 0xffffffff in QUIC */
    uint8_t *ticket;         /* client: the opaque ticket to send */
    size_t ticket_len;
    char *hostname;          /* SNI of the original connection */
    uint8_t alpn[256];
    size_t alpn_len;
    uint8_t *appdata;        /* SSL_SESSION_set1_ticket_appdata */
    size_t appdata_len;
    uint8_t *early_context;  /* SSL_set_quic_early_data_context of the issuing server */
    size_t early_context_len;
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    size_t sid_ctx_len;
    /* The peer's leaf, if any: the DER kept from d2i_SSL_SESSION or a ticket, decoded on first
     * use (session_peer) into peer, which is set once; or peer alone, from a handshake. */
    uint8_t *peer_der;
    size_t peer_der_len;
    X509 *peer;
    long verify_result;
    int not_resumable;
    uint8_t id[SSL_MAX_SSL_SESSION_ID_LENGTH]; /* SSL_SESSION_set1_id; empty unless set */
    size_t id_len;
    uint8_t *sct_list;       /* client: the server's SCT list (sct.c), for resumptions */
    size_t sct_list_len;
};

/* Where the connection is in its life. */
enum conn_phase { PHASE_BEFORE, PHASE_HANDSHAKE, PHASE_DONE, PHASE_FAILED };

/* Handshake-only state (struct hs, below) is freed when the handshake ends. */
struct hs;
struct quic_input;
struct ssl_cold;

struct tls35;
struct record;
struct pha;

/*
 * The connection. Members are grouped by concern and, within a group, laid out to leave no
 * padding (an established connection is mostly this struct: keep small flags small).
 * Handshake-only state is in struct hs, freed when the handshake ends.
 */
struct ssl_st {
    SSL_CTX *ctx;
    const SSL_METHOD *method;
    CRYPTO_EX_DATA ex_data;
    void *app_data; /* ex_data index 0 (ssl.c) */
    uint64_t options;
    uint32_t mode;
    int references;
    int min_version, max_version;
    const SSL_QUIC_METHOD *quic_method;
    uint16_t groups[QTLS_MAX_GROUPS];
    uint8_t n_groups;
    uint16_t group_tuples; /* as in ssl_ctx_st */
    struct suite_list suites;
    uint8_t server;
    uint8_t phase; /* enum conn_phase */
    X509_VERIFY_PARAM *param; /* own verify parameters, made on first use (ssl.c); NULL: ctx's */
    char *verify_host;        /* SSL_set1_host's DNS name while param is NULL */
    SSL_verify_cb verify_cb;
    int verify_mode;
    int sct_requested; /* client: ask for SCTs (sct.c) */
    char *hostname; /* client: SNI to send; server: SNI received */
    uint8_t *alpn;  /* client offer, wire format; freed when the handshake is done */
    size_t alpn_len;
    struct sbuf alpn_selected; /* the protocol both sides agreed on */

    /* QUIC glue (quic.c) */
    uint8_t *local_tp; /* until the handshake is done */
    size_t local_tp_len;
    uint8_t *peer_tp; /* the parameters kept, see quic.c */
    size_t peer_tp_len;
    struct quic_input *input; /* quic.c: the bytes received per level, while any are unread */
    struct tls35 *tls35;          /* quic_tls35.c: the OpenSSL 3.5 API in use, else NULL */
    const struct quic_hooks *quic_hooks; /* set with tls35 */
    uint8_t *early_data_context;  /* SSL_set_quic_early_data_context */
    size_t early_data_context_len;
    int quic_tp_version;      /* 0, 0x39 or 0xffa5 */
    int peer_tp_version;      /* codepoint the kept parameters came in, -1 none */
    uint8_t read_level, write_level, last_provided_level; /* OSSL_ENCRYPTION_LEVEL */
    uint8_t grease_enabled;     /* SSL_set_grease_enabled: the client GREASEs its ClientHello */
    uint8_t early_data_enabled; /* SSL_set_quic_early_data_enabled */
    uint8_t tcp;                /* the record layer carries this connection (TLS over TCP) */
    uint8_t read_ahead;         /* SSL_set_read_ahead, from the context */
    uint8_t stop_after_flight;  /* SSL_write_early_data: return once the ClientHello is out */
    uint8_t syscall_error;      /* the last I/O failed in a BIO (SSL_ERROR_SYSCALL) */

    /* Outcome */
    uint8_t session_reused;    /* SSL_session_reused */
    uint8_t early_data_status; /* SSL_EARLY_DATA_NOT_SENT / _REJECTED / _ACCEPTED */
    uint8_t early_data_reason; /* enum ssl_early_data_reason_t: why (SSL_get_early_data_reason) */
    uint16_t version;
    uint16_t group_id;
    uint16_t peer_sigscheme, own_sigscheme; /* sigalgs.c: CertificateVerify schemes, 0: none */
    const SSL_CIPHER *cipher;
    long verify_result;
    X509 *peer_cert;
    STACK_OF(X509) *peer_chain; /* as received, leaf first */
    /* A resumed connection's peer is this session's leaf, moved into peer_cert and peer_chain
     * only when asked for (session_conn_peer): most resumptions never look at it. */
    SSL_SESSION *peer_session;
    STACK_OF(X509) *peer_chain_noleaf; /* server view of SSL_get_peer_cert_chain (ssl.c) */
    uint8_t client_random[32];
    struct kept_secret exporter_secret;
    struct kept_secret resumption_secret;
    uint8_t tickets_allowed; /* nst.c: server: the client offered psk_dhe_ke (§4.2.9) */
    uint8_t verified_prefix; /* cert.c, with verified_anchor */
    int shutdown;       /* SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN (ssl.c) */
    int quiet_shutdown; /* SSL_set_quiet_shutdown (ssl.c) */
    uint8_t sid_ctx_len; /* of sid_ctx below: at most SSL_MAX_SID_CTX_LENGTH */

    /* Sessions */
    SSL_SESSION *session;   /* client: set by SSL_set_session, then the one in use */
    size_t num_tickets;     /* from the context, SSL_set_num_tickets */
    uint32_t max_early_data;
    uint32_t recv_max_early_data;
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    /* From the context; SSL_set_allow_early_data_cb replaces them for this connection. */
    SSL_allow_early_data_cb_fn allow_early_data_cb;
    void *allow_early_data_arg;

    /* Error state, certificates */
    uint8_t want_read;            /* the last SSL_do_handshake needs more data */
    uint8_t want_write;           /* ... needs the stack to take output it holds (quic_hooks) */
    uint8_t done_waits;           /* the handshake ended; its last output waits for the stack */
    uint8_t want_client_hello_cb; /* ... or the client hello callback asked to be called again */
    uint8_t want_x509_lookup; /* ... or the certificate callback did (SSL_ERROR_WANT_X509_LOOKUP) */
    uint8_t alert;            /* pending fatal alert, 0 = none */
    uint8_t alert_sent;
    int8_t cert_slot;         /* server: the slot whose certificate was sent, -1 none */
    unsigned set_on_ssl;      /* OWN_* bits: settings made on the connection, not inherited */
    int status_type;          /* client: OCSP to request; server: OCSP requested (ocsp.c) */
    struct cert_set *certs;   /* made by SSL_use_*, SSL_set_cert_cb; NULL: the context's */
    pem_password_cb *passwd_cb; /* from the context, SSL_set_default_passwd_cb */
    void *passwd_arg;
    struct ssl_cold *cold;    /* what few connections have, made on first write (cold_get) */

    /* callbacks.c: the handshake facts the callbacks and the getters report */
    uint8_t hand_state;        /* OSSL_HANDSHAKE_STATE of the last message sent or received */
    uint8_t have_server_random;
    uint8_t server_random[32]; /* of the ServerHello (never of a HelloRetryRequest) */
    /* verify_data is Hash.length (RFC 8446 §4.4.4): 48 bytes at most with TLS 1.3's suites */
    uint8_t finished_len, peer_finished_len;
    uint8_t finished[QTLS_MAX_HASH_LEN], peer_finished[QTLS_MAX_HASH_LEN];
    uint32_t ticket_max_early_data; /* nst.c: client: the early_data of the ticket being read */

    struct hs *hs;

    /* Tickets (nst.c) */
    size_t extra_tickets;      /* server: SSL_new_session_ticket requests not yet sent */
    uint64_t tickets_sent;     /* server: the nonce counter of this connection's tickets */

    struct sigalg_conf *sigalg_conf; /* sigalgs.c: the context's at SSL_new, until set here */
    /* cert.c: the chain X509_verify_cert built, or, when it is the first verified_prefix
     * certificates of peer_chain then at most verified_anchor, those two (made when asked for) */
    STACK_OF(X509) *verified_chain;
    X509 *verified_anchor;
    struct seclevel sec;            /* seclevel.c */
    uint8_t *raw_ciphers;           /* server: the ClientHello's cipher_suites (SSL_get0_raw_cipherlist) */
    uint32_t custom_ext_sent;           /* custom_ext.c: client: the custom extensions offered */
    uint32_t custom_ext_received;       /* custom_ext.c: server: the ones the client sent */
    /* The byte-aligned fields last, in one run with no padding between them. */
    uint16_t raw_ciphers_len;           /* a vector<2..2^16-2> (RFC 8446 §4.1.2) */
    struct cert_comp_pref cert_comp;    /* cert_comp.c: from the context or SSL_set1_... */
    uint8_t cert_comp_client, cert_comp_server; /* the algorithm each side's Certificate used */
    struct sbuf peer_groups; /* sigalgs.c: server: the client's supported_groups (wire form) */
};

/*
 * Settings and state few connections have, behind ssl_st.cold: a QUIC connection seldom has
 * BIOs, callbacks of its own, DH settings, CA lists, OCSP or SCT data or the cipher stack views,
 * and these 150-odd bytes are made only when one is written (cold_get). cold_peek reads them,
 * all zero when none was made. Freed with the connection (each module frees its members).
 */
struct ssl_cold {
    /* compat_tcp.c: BIOs held with OpenSSL's ownership rules, never used (QUIC has no record layer) */
    BIO *rbio, *wbio;
    /* TLS over TCP, which always has BIOs: the record layer (transport/record.c), post-handshake
       authentication (handshake/post_auth.c), SSL_set_default_read_buffer_len */
    struct record *rec;
    struct pha *pha;
    size_t read_buffer_len;
    SSL_async_callback_fn async_cb;
    void *async_cb_arg;
    /* callbacks.c: the info callback falls back to the context's at call time, as OpenSSL */
    void (*info_callback)(const SSL *, int, int);
    void (*msg_callback)(int, int, int, const void *, size_t, SSL *, void *);
    void *msg_callback_arg;
    int post_handshake_auth; /* SSL_set_post_handshake_auth: over TCP only (post_auth.c) */
    struct dh_params dh;     /* dh.c: stored only */
    STACK_OF(X509_NAME) *client_ca, *ca_names; /* set on the connection; NULL: the context's */
    STACK_OF(X509_NAME) *peer_ca_names;        /* the peer's certificate_authorities (ca_list.c) */
    unsigned char *ocsp_resp; /* ocsp.c: server: to staple; client: stapled by the server */
    size_t ocsp_resp_len;
    uint8_t *sct_list;        /* sct.c: server: SSL_set_signed_cert_timestamp_list; NULL: ctx's */
    size_t sct_list_len;
    uint8_t *peer_sct_list;   /* client: the server's SCT list, or the resumed session's */
    size_t peer_sct_list_len;
    STACK_OF(SSL_CIPHER) *cipher_stack;        /* cipher_lists.c: SSL_get_ciphers' view, owned */
    STACK_OF(SSL_CIPHER) *client_cipher_stack; /* cipher_lists.c: SSL_get_client_ciphers' */
};

static inline const struct ssl_cold *cold_peek(const SSL *s)
{
    static const struct ssl_cold none;
    return s->cold != NULL ? s->cold : &none;
}

/* The connection's cold part, made zeroed on first use; NULL (error raised) if memory ran out. */
static inline struct ssl_cold *cold_get(SSL *s)
{
    if (s->cold == NULL && (s->cold = OPENSSL_zalloc(sizeof(*s->cold))) == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    return s->cold;
}

/* The cold part to store a value in: made if `needed`, else only the existing one (NULL: none). */
static inline struct ssl_cold *cold_for(SSL *s, int needed)
{
    return needed ? cold_get(s) : s->cold;
}


/*
 * What a state function asks of the driver, and the one answer of every helper a state function
 * calls that can do more than succeed or fail (read a message, run an application callback):
 * HS_CONTINUE go on, HS_ERROR failed (alert recorded), or one of the waits. Helpers that only
 * succeed or fail return 1 or 0.
 */
enum hs_wait {
    HS_ERROR,
    HS_CONTINUE,
    HS_WANT_MESSAGE,
    HS_FLUSH, /* a flight ends here: hand it to the QUIC stack and flush, then go on */
    HS_DONE,
    HS_WANT_CLIENT_HELLO_CB,
    HS_WANT_X509_LOOKUP
};

/*
 * qtls_fail for a state function: the same error and alert, and HS_ERROR as its result, so that
 * no state function returns an int that happens to equal HS_ERROR.
 */
#define hs_fail(c, alert, reason) (qtls_fail((c), (alert), (reason)), HS_ERROR)

/*
 * The extensions the engine knows (RFC 8446 §4.2), one line each: X(name, codepoint, hrr), where
 * hrr says the extension may differ between the two ClientHellos of a HelloRetryRequest
 * (§4.1.2: key_share, early_data, cookie, pre_shared_key, padding). The list gives enum ext_idx
 * (EXT_name), ext_codepoint() and ext_may_change_after_hrr(); each row of functions is in the
 * table of handshake/extensions.c. The order is the one every message carries them in:
 * early_data and pre_shared_key stay the last a ClientHello carries (§4.2.11), so a new line
 * goes before them. Adding an extension: a line here, its row there, its tests.
 */
#define QTLS_EXTENSIONS(X)                                                                         \
    X(SERVER_NAME, TLSEXT_TYPE_server_name, 0)                         /* RFC 6066 §3 */           \
    X(STATUS_REQUEST, TLSEXT_TYPE_status_request, 0)                   /* RFC 6066 §8 */           \
    X(SCT, TLSEXT_TYPE_signed_certificate_timestamp, 0)                /* RFC 6962 §3.3 */         \
    X(CERTIFICATE_AUTHORITIES, TLSEXT_TYPE_certificate_authorities, 0) /* §4.2.4 */                \
    X(SUPPORTED_GROUPS, TLSEXT_TYPE_supported_groups, 0)               /* §4.2.7 */                \
    X(SIGNATURE_ALGORITHMS, TLSEXT_TYPE_signature_algorithms, 0)       /* §4.2.3 */                \
    X(ALPN, TLSEXT_TYPE_application_layer_protocol_negotiation, 0)     /* RFC 7301 */              \
    X(SUPPORTED_VERSIONS, TLSEXT_TYPE_supported_versions, 0)           /* §4.2.1 */                \
    X(PSK_KEY_EXCHANGE_MODES, TLSEXT_TYPE_psk_kex_modes, 0)            /* §4.2.9 */                \
    X(KEY_SHARE, TLSEXT_TYPE_key_share, 1)                             /* §4.2.8 */                \
    X(COOKIE, TLSEXT_TYPE_cookie, 1)                                   /* §4.2.2 */                \
    X(QUIC_TP, TLSEXT_TYPE_quic_transport_parameters, 0)               /* RFC 9001 §8.2 */         \
    X(QUIC_TP_DRAFT, TLSEXT_TYPE_quic_transport_parameters_draft, 0)   /* draft-ietf-quic-tls */   \
    X(COMPRESS_CERTIFICATE, TLSEXT_TYPE_compress_certificate, 0)       /* RFC 8879 §3 */           \
    X(POST_HANDSHAKE_AUTH, TLSEXT_TYPE_post_handshake_auth, 0)         /* §4.2.6, TCP only */      \
    X(EARLY_DATA, TLSEXT_TYPE_early_data, 1)                           /* §4.2.10 */               \
    X(PRE_SHARED_KEY, TLSEXT_TYPE_psk, 1)                              /* §4.2.11 */               \
    X(PADDING, TLSEXT_TYPE_padding, 1)                        /* RFC 7685: recognised, never sent */ \
    X(SIGNATURE_ALGORITHMS_CERT, TLSEXT_TYPE_signature_algorithms_cert, 0) /* recognised only */

enum ext_idx {
#define X(name, codepoint, hrr) EXT_##name,
    QTLS_EXTENSIONS(X)
#undef X
    EXT_COUNT
};

/* The codepoint of a known extension. */
static inline uint16_t ext_codepoint(enum ext_idx i)
{
    static const uint16_t codepoints[EXT_COUNT] = {
#define X(name, codepoint, hrr) codepoint,
        QTLS_EXTENSIONS(X)
#undef X
    };
    return codepoints[i];
}

/* The index of the extension with this codepoint, -1 if the engine does not know it. */
static inline int ext_index(uint16_t codepoint)
{
    for (int i = 0; i < EXT_COUNT; i++)
        if (ext_codepoint((enum ext_idx)i) == codepoint)
            return i;
    return -1;
}

/* May this extension differ in the ClientHello that answers a HelloRetryRequest (§4.1.2)? */
static inline int ext_may_change_after_hrr(uint16_t codepoint)
{
    static const uint8_t may_change[EXT_COUNT] = {
#define X(name, codepoint, hrr) hrr,
        QTLS_EXTENSIONS(X)
#undef X
    };
    int i = ext_index(codepoint);
    return i >= 0 && may_change[i];
}

/* The messages extensions may appear in (RFC 8446 §4.2 table): a row has a function per one. */
enum ext_msg_idx { MSG_CH, MSG_SH, MSG_HRR, MSG_EE, MSG_CT, MSG_CR, MSG_NST, MSG_COUNT };
enum ext_msg {
    EM_CH = 1 << MSG_CH,
    EM_SH = 1 << MSG_SH,
    EM_HRR = 1 << MSG_HRR,
    EM_EE = 1 << MSG_EE,
    EM_CT = 1 << MSG_CT,
    EM_CR = 1 << MSG_CR,
    EM_NST = 1 << MSG_NST,
};

/* The extensions of one message, split out by the generic loop. */
struct ext_set {
    uint32_t present; /* bit per enum ext_idx */
    struct rd body[EXT_COUNT];
};

static inline int ext_has(const struct ext_set *e, enum ext_idx i)
{
    return (e->present >> i) & 1;
}

/*
 * A row's function for one message. A writer writes the body of its extension (the table loop
 * writes the type and length) and returns 1, EXT_NOT_SENT to send nothing, or 0 on failure
 * (alert set). A parser gets the body, or NULL when the peer did not send the extension (its
 * "missing" rule), and returns 1 or 0 (alert set).
 */
#define EXT_NOT_SENT (-1)
typedef int ext_write_fn(SSL *c, struct wr *w);
typedef int ext_parse_fn(SSL *c, const struct rd *body);


struct hs {
    int state;
    struct transcript transcript;
    struct secret early_secret, handshake_secret, master_secret;
    struct secret client_hs, server_hs; /* traffic secrets */
    struct secret client_ap, server_ap;

    /* Output: messages packed per level, handed over when the level changes or at flush. */
    struct wr out;
    OSSL_ENCRYPTION_LEVEL out_level;
    int flight_pending;

    /* Key exchange */
    struct kex_key kex_key[2];      /* client: the private halves, one per share offered */
    const struct group *kex_group;  /* server: the group chosen; client: the first share's */
    const struct group *kex_group2; /* client: a second share's (after a post-quantum first) */
    int hrr_done;
    /* §4.1.2, §D.4: the legacy_session_id the client sent (32 random bytes over TCP in
       middlebox compatibility mode, empty in QUIC), which the server echoes */
    uint8_t session_id[32];
    uint8_t session_id_len;
    uint8_t grease_seed[8]; /* client: RFC 8701 values, one seed for both ClientHellos */
    struct wr my_share; /* client: our KeyShareEntry list; server: our key_exchange */

    /* Client */
    uint32_t offered;     /* extensions the client sent, bit per enum ext_idx (a server records
                             the client's post_handshake_auth here) */
    struct wr cookie;     /* from HelloRetryRequest */
    int cert_requested;
    struct wr cert_request_context;
    EVP_PKEY *peer_key;

    /* Server */
    struct wr peer_share;   /* the client's key_share, until ServerHello */
    uint8_t ch1_digest[32]; /* fingerprint of ClientHello1 for the §4.1.2 check */
    uint16_t sigscheme;
    struct cert_cfg cert; /* the pair chosen to authenticate with (references), certset.c */
    uint16_t peer_sigschemes[64];
    size_t n_peer_sigschemes;
    uint16_t tp_codepoint_reply; /* which codepoint(s) to answer in: bit 0 = 0x39, bit 1 = 0xffa5 */

    /* Resumption and 0-RTT (resumption.c) */
    int resumed;                   /* the PSK was accepted */
    int psk_offered;               /* client: pre_shared_key sent */
    size_t psk_binders_at;         /* client: in out, where the binders list begins ... */
    size_t psk_binder_at;          /* ... and where the one binder goes (§4.2.11.2) */
    int early_data_offered;        /* client: early_data sent */
    uint8_t early_data_answered;   /* client: EncryptedExtensions took or refused it */
    int psk_dhe_ke;                /* server: the client allows psk_dhe_ke */
    const SSL_CIPHER *hrr_cipher;  /* client: the suite of the HelloRetryRequest */
    struct secret client_early;    /* client_early_traffic_secret */
    uint16_t psk_identity;         /* server: the identity accepted */

    int staple_ocsp; /* server: the status callback gave a response to send */
    int send_sct;    /* server: the client asked for SCTs (sct.c) */

    /* cert_comp.c (RFC 8879): we sent compress_certificate (so a CompressedCertificate may
       come), and the algorithm our own Certificate is to be compressed with (0: none). */
    int cert_comp_offered;
    uint8_t cert_comp_tx;

    /* Server: the ClientHello being read, while the client hello callback runs (client_hello.c) */
    const struct client_hello *client_hello;

    /*
     * What the rows of the ClientHello (server) or ServerHello / HelloRetryRequest (client)
     * hand the hello logic: views into the message being read, valid while it is read.
     */
    struct {
        uint32_t present;           /* bit per enum ext_idx */
        struct rd versions;         /* CH: ProtocolVersion versions<2..254> */
        struct rd groups, shares;   /* CH: NamedGroupList, KeyShareEntry client_shares<> */
        struct rd psk_modes, psk;   /* CH: bodies, read by resumption.c */
        uint16_t version;           /* SH, HRR: selected_version */
        uint16_t group;             /* SH, HRR: the server's share's group / selected_group */
        struct rd share;            /* SH: its key_exchange */
        uint16_t psk_identity;      /* SH: selected_identity */
        struct rd tp;               /* CH, EE: quic_transport_parameters (0x39) */
    } hello;
    int cert_entry_is_leaf; /* while a CertificateEntry's extensions are read (ocsp.c) */
};

/* A ClientHello's fields as received (RFC 8446 §4.1.2); views into the message. */
struct client_hello {
    uint16_t legacy_version;
    struct rd random, session_id, suites, compression, exts;
    struct ext_set e;
};

/*
 * Settings an SSL_set_* call made on the connection itself (SSL.set_on_ssl); the others follow
 * SSL_set_SSL_CTX to the new context (ssl.c). The 0-RTT ones follow only when the new context
 * set them itself (SSL_CTX.early_set_on_ctx).
 */
enum {
    OWN_VERIFY = 1 << 0, /* mode and callback */
    OWN_VERIFY_DEPTH = 1 << 1,
    OWN_NUM_TICKETS = 1 << 2,
    OWN_MAX_EARLY_DATA = 1 << 3,
    OWN_RECV_MAX_EARLY_DATA = 1 << 4,
    OWN_ALLOW_EARLY_DATA_CB = 1 << 5,
};

#endif
