/*
 * policy/: what the configuration lets a connection offer, accept and present. Certificates and
 * their verification (cert.c, certset.c), signature algorithms (sigalgs.c), CA name lists
 * (ca_list.c), OCSP stapling (ocsp.c), SCT lists (sct.c), certificate compression (cert_comp.c),
 * the security level (seclevel.c), the client hello callback (client_hello.c), the cipher-list
 * views (cipher_lists.c) and the stored DH settings (dh.c). The extension rows here are called
 * through the table in handshake/extensions.c.
 */
#ifndef QTLS_POLICY_H
#define QTLS_POLICY_H

#include "internal.h"

/* sigalgs.c: the most supported_groups entries kept of a ClientHello. */
#define QTLS_MAX_PEER_GROUPS 32

void cert_cfg_free(struct cert_cfg *cc); /* certset.c */

void certset_free(struct cert_set *s);
/* The set a connection uses: its own once an SSL_use_*-style call made one, else its context's. */
struct cert_set *certset_of(const SSL *c);
/* The connection's own set, copied from its context on first use; NULL (error queued) if not. */
struct cert_set *certset_own(SSL *c);
/* SSL_CTX_ctrl / SSL_ctrl commands on certificates and chains; *handled = 0 for other commands. */
long certset_ctrl(SSL_CTX *ctx, SSL *s, int cmd, long larg, void *parg, int *handled);
QTLS_MUST_CHECK int certset_use_cert(struct cert_set *s, X509 *x);
QTLS_MUST_CHECK int certset_use_key(struct cert_set *s, EVP_PKEY *k);
/* Replaces the current slot's chain (takes `chain`, NULL clears). */
void certset_set_chain(struct cert_set *s, STACK_OF(X509) *chain);
/*
 * Picks the pair to authenticate with among the slots the peer's signature_algorithms can be
 * used with (ECDSA, then EdDSA, then RSA-PSS), with its scheme; fills *out with references
 * (chain: the slot's, else the context's extra certificates). 0 if no slot fits.
 */
QTLS_MUST_CHECK int certset_choose(SSL *c, const struct cert_set *s, const uint16_t *peer,
                                   size_t n, struct cert_cfg *out, uint16_t *scheme);
/* Runs the certificate callback (SSL_CTX_set_cert_cb): HS_CONTINUE, HS_ERROR (alert set) or
   HS_WANT_X509_LOOKUP (call again). */
enum hs_wait certset_run_cb(SSL *c);

/* Asks the callback (or the default rules) whether `bits` of security is enough for `op`. */
int seclevel_allow(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid, void *other);
/*
 * OpenSSL's ssl_security_cert: a certificate we load (vfy = 0) or chain, its key size and the
 * digest it is signed with against the level. 1 if fine, else the SSL_R_ reason (not raised).
 */
int seclevel_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee);
/* The same, raising the reason (seclevel_check_chain: every certificate, as CAs). 1 or 0. */
QTLS_MUST_CHECK int seclevel_check_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee);
QTLS_MUST_CHECK int seclevel_check_chain(const SSL *s, const SSL_CTX *ctx, STACK_OF(X509) *chain);
/* May this connection offer or accept group `id` at its level (tls_group_allowed)? */
int seclevel_group_ok(const SSL *c, uint16_t id);
/* The level in force for a connection or context (clamped to 0..5). */
int seclevel_of(const SSL *s, const SSL_CTX *ctx);

void dh_params_free(struct dh_params *d);
/* SSL_CTRL_SET_TMP_DH, SSL_CTRL_SET_TMP_DH_CB and SSL_CTRL_SET_DH_AUTO; *handled = 0 else. */
long dh_ctrl(SSL_CTX *ctx, SSL *s, int cmd, long larg, void *parg, int *handled);

/* Test hook: how many times a chain was compressed (not taken from the cache) so far. */
size_t cert_comp_test_compressions(void);

/* ------------------------------------------------------------------ */
/* Certificates (cert.c)                                              */
/* ------------------------------------------------------------------ */

/*
 * Verifies the peer chain (leaf first) against the context's store with the
 * connection's X509_VERIFY_PARAM (host name), through the verify callback.
 * Records the result in c->verify_result. Returns 1 if the handshake may go
 * on (verified, or SSL_VERIFY_NONE), 0 with an alert and error otherwise.
 */
QTLS_MUST_CHECK int cert_verify_peer_chain(SSL *c, STACK_OF(X509) *chain);
/* Frees the verified chain; before peer_chain is replaced or freed, makes it stand alone. */
void cert_verified_free(SSL *c);
void cert_verified_detach(SSL *c);
/* The X509_STORE_CTX ex_data index holding the SSL (SSL_get_ex_data_X509_STORE_CTX_idx). */
int cert_store_ctx_ssl_idx(void);
/*
 * Decodes one DER certificate exactly (all bytes used), through a small
 * per-context cache of recent certificates: a client meets the same server
 * chain again and again, and OpenSSL 3's decoder set-up is a quarter of a
 * handshake. Returns a new reference, NULL if the bytes are not a certificate.
 */
X509 *cert_decode(SSL_CTX *ctx, const uint8_t *der, size_t len);
void cert_fill_extension_cache(X509 *x);
/* RFC 8446 §4.4.2.2: a leaf that signs a CertificateVerify, when it has keyUsage, has
   digitalSignature in it; else bad_certificate. */
QTLS_MUST_CHECK int cert_check_signing_usage(SSL *c, X509 *leaf);
/* A CertificateEntry's opaque cert_data<1..2^24-1> (RFC 8446 §4.4.2): x in DER; w fails if not. */
void cert_write_der(struct wr *w, X509 *x);
/* X509_LOOKUP_hash_dir's directories, with caches filled before the store shares them. */
X509_LOOKUP_METHOD *cert_hashed_dir_lookup(void);

/* sct.c: signed certificate timestamp lists (RFC 6962 §3.3 in RFC 8446 §4.4.2.1). */
void sct_free(SSL_CTX *ctx, SSL *ssl);
ext_write_fn sct_client_write_request, sct_server_write_list; /* the extension's row */
ext_parse_fn sct_server_take_request, sct_client_take_list;
QTLS_MUST_CHECK int sct_adopt_session(SSL *c, const SSL_SESSION *s);

/*
 * cert_comp.c: certificate compression (RFC 8879). The compress_certificate extension in a
 * ClientHello or CertificateRequest (write_request marks hs->cert_comp_offered; take_offer picks
 * hs->cert_comp_tx), and the CompressedCertificate message's body both ways.
 */
ext_write_fn cert_comp_write_request;
ext_parse_fn cert_comp_take_offer;
/* Appends algorithm, uncompressed_length and the compressed `body` (from the context's cache). */
QTLS_MUST_CHECK int cert_comp_write_body(SSL *c, int alg, const uint8_t *body, size_t n,
                                         struct wr *w);
/* Decompresses a CompressedCertificate body into out (the Certificate body); alert on failure. */
QTLS_MUST_CHECK int cert_comp_read_body(SSL *c, struct rd body, struct wr *out);

/* ocsp.c: OCSP stapling (RFC 8446 §4.4.2.1). The ctrl helpers follow OpenSSL's semantics. */
int ocsp_set_status_type(int *type, long v);
long ocsp_set_response(SSL *s, unsigned char *resp, long len);
long ocsp_get_response(const SSL *s, const unsigned char **out);
QTLS_MUST_CHECK int ocsp_client_run_cb(SSL *c);
QTLS_MUST_CHECK int ocsp_server_run_cb(SSL *c);
/* The status_request row's functions (extensions.c). */
ext_write_fn ocsp_client_write_request, ocsp_server_write_response;
ext_parse_fn ocsp_server_take_request, ocsp_client_take_response;

/* ca_list.c: certificate_authorities (RFC 8446 §4.2.4) and the CA name lists. */
void ca_list_free(SSL_CTX *ctx, SSL *s);
/* The certificate_authorities row's functions (extensions.c). */
ext_write_fn ca_list_server_write, ca_list_client_write;
ext_parse_fn ca_list_take;

/*
 * client_hello.c: runs the context's client hello callback on `ch` (OpenSSL calls it first, before
 * any other ClientHello processing). HS_CONTINUE, HS_ERROR (alert recorded) or
 * HS_WANT_CLIENT_HELLO_CB: the callback asked to be called again (SSL_CLIENT_HELLO_RETRY).
 */
enum hs_wait client_hello_run_cb(SSL *c, const struct client_hello *ch);

/*
 * sigalgs.c: signature-algorithm lists (RFC 8446 §4.2.3) with OpenSSL's rules. The list we send
 * (ClientHello, or CertificateRequest) is the one the peer's CertificateVerify must use.
 */
QTLS_MUST_CHECK int sigalgs_parse_list(struct sigalg_list *dst, const char *str);
QTLS_MUST_CHECK int sigalgs_from_nids(struct sigalg_list *dst, const int *nids, long count);
long sigalgs_ctrl(struct sigalg_conf **conf, int cmd, long larg, void *parg);
/* Another holder of conf (SSL_new), and the release of one (may be NULL). */
struct sigalg_conf *sigalg_conf_ref(struct sigalg_conf *conf);
void sigalg_conf_free(struct sigalg_conf *conf);
long sigalgs_get_ctrl(SSL *s, int cmd, long larg, void *parg, int *handled);
void sigalgs_sent(const SSL *c, const uint16_t **ids, size_t *n);
/* Writes the list we send as a SignatureSchemeList. */
void sigalgs_write(const SSL *c, struct wr *w, uint16_t grease);
/* Is this scheme acceptable in the peer's CertificateVerify / one we may sign with? */
int sigalgs_we_accept(const SSL *c, uint16_t id);
int sigalgs_we_sign_with(const SSL *c, uint16_t id);
/* Picks the CertificateVerify scheme for our key among the peer's list (peer order). */
QTLS_MUST_CHECK int sigalgs_choose_scheme(EVP_PKEY *key, const uint16_t *peer, size_t n,
                                          uint16_t *out);
/* Server: the client's supported_groups, for the getters (the supported_groups row). */
ext_parse_fn sigalgs_take_peer_groups;

/* cipher_lists.c: server: keeps the ClientHello's cipher_suites bytes (alert on failure). */
QTLS_MUST_CHECK int cipher_lists_keep_raw(SSL *c, struct rd suites);
long cipher_lists_get_raw(const SSL *s, const unsigned char **out);

#endif
