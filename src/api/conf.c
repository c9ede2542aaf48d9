/*
 * SSL_CONF (SSL_CONF_cmd(3)): configuration by command name, in the command-line form
 * ("-groups X25519") and the file form ("Groups = X25519"), with OpenSSL 3.0's table of commands,
 * its flag rules (a command marked server-only, client-only or certificate needs that flag in
 * the SSL_CONF_CTX, else it is unknown), its return values (2: the value was used, 1: a switch
 * that takes none, 0: bad value, -2: unknown command, -3: missing value) and its errors
 * (SSL_R_UNKNOWN_CMD_NAME / SSL_R_BAD_VALUE naming the command with SSL_CONF_FLAG_SHOW_ERRORS).
 *
 * Each command calls the public setter OpenSSL's calls, so it has the setter's semantics in
 * qtls: TLS 1.3 suites, groups, signature algorithms, protocol bounds and options (a bound or
 * option that excludes TLS 1.3 fails the handshake, handshake.c), the verify mode, certificates,
 * keys and CA name lists. CipherString is accepted and ignored like SSL_CTX_set_cipher_list (it
 * is the TLS 1.2-and-below list, as in OpenSSL, where a TLS 1.3-only connection ignores it too).
 * Commands whose setter qtls lacks fail with QTLS_R_NOT_IMPLEMENTED naming them.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"

#include <openssl/conf.h>
#include <openssl/pem.h>
#include <string.h>
#include <strings.h>

/* Flags of the option tables (OpenSSL's SSL_TFLAG_*). */
#define TF_INV 0x1 /* the name turns the bit off */
#define TF_CLIENT SSL_CONF_FLAG_CLIENT
#define TF_SERVER SSL_CONF_FLAG_SERVER
#define TF_BOTH (TF_CLIENT | TF_SERVER)
#define TF_OPTION 0x000 /* the bits are SSL_OP_* */
#define TF_VFY 0x200    /* the bits are SSL_VERIFY_* */
#define TF_CERT 0x100   /* certificate flags: none implemented */
#define TF_TYPE_MASK 0xf00

struct flag_tbl {
    const char *name;
    unsigned flags;
    uint64_t value;
};

struct ssl_conf_ctx_st {
    unsigned int flags;
    char *prefix;
    size_t prefixlen;
    SSL_CTX *ctx;
    SSL *ssl;
    uint64_t *options;
    int *min_version, *max_version, *verify_mode;
    char *cert_filename[CERT_SLOTS]; /* SSL_CONF_FLAG_REQUIRE_PRIVATE: where each key may be */
    STACK_OF(X509_NAME) *canames;    /* RequestCAFile / ClientCAFile, set by SSL_CONF_CTX_finish */
    const struct flag_tbl *tbl;      /* the table ssl_set_option_list reads */
    size_t ntbl;
};

/* ------------------------------------------------------------------ */
/* Options by name                                                     */
/* ------------------------------------------------------------------ */

static void set_option(SSL_CONF_CTX *cctx, unsigned flags, uint64_t value, int on)
{
    if (cctx->options == NULL)
        return; /* no SSL_CTX or SSL yet: nothing to set, as in OpenSSL */
    if (flags & TF_INV)
        on ^= 1;
    if ((flags & TF_TYPE_MASK) == TF_VFY) {
        if (cctx->ssl != NULL) /* as SSL_set_verify: it stays across SSL_set_SSL_CTX */
            cctx->ssl->set_on_ssl |= OWN_VERIFY;
        if (on)
            *cctx->verify_mode |= (int)value;
        else
            *cctx->verify_mode &= ~(int)value;
    } else if (on) {
        *cctx->options |= value;
    } else {
        *cctx->options &= ~value;
    }
}

/* One element of an Options/Protocol/VerifyMode list: [+|-]Name, case-insensitive. */
static int set_option_list(const char *elem, int len, void *arg)
{
    SSL_CONF_CTX *cctx = arg;
    int on = 1;
    if (elem == NULL || len <= 0)
        return 0;
    if (*elem == '+' || *elem == '-') {
        on = *elem == '+';
        elem++;
        len--;
    }
    for (size_t i = 0; i < cctx->ntbl; i++) {
        const struct flag_tbl *t = &cctx->tbl[i];
        /* Entries for the other role are skipped (and neither role set matches none). */
        if (!(cctx->flags & t->flags & TF_BOTH))
            continue;
        if (strlen(t->name) != (size_t)len || strncasecmp(t->name, elem, (size_t)len) != 0)
            continue;
        if ((t->flags & TF_TYPE_MASK) == TF_CERT)
            return qtls_not_implemented(t->name);
        set_option(cctx, t->flags, t->value, on);
        return 1;
    }
    return 0;
}

static int parse_flag_list(SSL_CONF_CTX *cctx, const char *value, const struct flag_tbl *tbl,
                           size_t n)
{
    cctx->tbl = tbl;
    cctx->ntbl = n;
    return CONF_parse_list(value, ',', 1, set_option_list, cctx);
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int cmd_Options(SSL_CONF_CTX *cctx, const char *value)
{
    static const struct flag_tbl list[] = {
        {"SessionTicket", TF_BOTH | TF_INV, SSL_OP_NO_TICKET},
        {"EmptyFragments", TF_BOTH | TF_INV, SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS},
        {"Bugs", TF_BOTH, SSL_OP_ALL},
        {"Compression", TF_BOTH | TF_INV, SSL_OP_NO_COMPRESSION},
        {"ServerPreference", TF_SERVER, SSL_OP_CIPHER_SERVER_PREFERENCE},
        {"NoResumptionOnRenegotiation", TF_SERVER, SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION},
        {"DHSingle", TF_SERVER, SSL_OP_SINGLE_DH_USE},
        {"ECDHSingle", TF_SERVER, SSL_OP_SINGLE_ECDH_USE},
        {"UnsafeLegacyRenegotiation", TF_BOTH, SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION},
        {"UnsafeLegacyServerConnect", TF_BOTH, SSL_OP_LEGACY_SERVER_CONNECT},
        {"ClientRenegotiation", TF_SERVER, SSL_OP_ALLOW_CLIENT_RENEGOTIATION},
        {"EncryptThenMac", TF_BOTH | TF_INV, SSL_OP_NO_ENCRYPT_THEN_MAC},
        {"NoRenegotiation", TF_BOTH, SSL_OP_NO_RENEGOTIATION},
        {"AllowNoDHEKEX", TF_BOTH, SSL_OP_ALLOW_NO_DHE_KEX},
        {"PrioritizeChaCha", TF_SERVER, SSL_OP_PRIORITIZE_CHACHA},
        {"MiddleboxCompat", TF_BOTH, SSL_OP_ENABLE_MIDDLEBOX_COMPAT},
        {"AntiReplay", TF_SERVER | TF_INV, SSL_OP_NO_ANTI_REPLAY},
        {"ExtendedMasterSecret", TF_BOTH | TF_INV, SSL_OP_NO_EXTENDED_MASTER_SECRET},
        {"CANames", TF_BOTH | TF_INV, SSL_OP_DISABLE_TLSEXT_CA_NAMES},
        {"KTLS", TF_BOTH, SSL_OP_ENABLE_KTLS},
    };
    return parse_flag_list(cctx, value, list, NELEM(list));
}

static int cmd_VerifyMode(SSL_CONF_CTX *cctx, const char *value)
{
    static const struct flag_tbl list[] = {
        {"Peer", TF_CLIENT | TF_VFY, SSL_VERIFY_PEER},
        {"Peer", TF_SERVER | TF_VFY, SSL_VERIFY_PEER},
        {"Request", TF_SERVER | TF_VFY, SSL_VERIFY_PEER},
        {"Require", TF_SERVER | TF_VFY, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT},
        {"Once", TF_SERVER | TF_VFY, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE},
        {"RequestPostHandshake", TF_SERVER | TF_VFY, SSL_VERIFY_PEER | SSL_VERIFY_POST_HANDSHAKE},
        {"RequirePostHandshake", TF_SERVER | TF_VFY,
         SSL_VERIFY_PEER | SSL_VERIFY_POST_HANDSHAKE | SSL_VERIFY_FAIL_IF_NO_PEER_CERT},
    };
    return parse_flag_list(cctx, value, list, NELEM(list));
}

static int cmd_Protocol(SSL_CONF_CTX *cctx, const char *value)
{
    static const struct flag_tbl list[] = {
        {"ALL", TF_BOTH | TF_INV, SSL_OP_NO_SSL_MASK},
        {"SSLv2", TF_BOTH | TF_INV, SSL_OP_NO_SSLv2},
        {"SSLv3", TF_BOTH | TF_INV, SSL_OP_NO_SSLv3},
        {"TLSv1", TF_BOTH | TF_INV, SSL_OP_NO_TLSv1},
        {"TLSv1.1", TF_BOTH | TF_INV, SSL_OP_NO_TLSv1_1},
        {"TLSv1.2", TF_BOTH | TF_INV, SSL_OP_NO_TLSv1_2},
        {"TLSv1.3", TF_BOTH | TF_INV, SSL_OP_NO_TLSv1_3},
        {"DTLSv1", TF_BOTH | TF_INV, SSL_OP_NO_DTLSv1},
        {"DTLSv1.2", TF_BOTH | TF_INV, SSL_OP_NO_DTLSv1_2},
    };
    return parse_flag_list(cctx, value, list, NELEM(list));
}

/* The command-line switches, each one option (OpenSSL's ssl_cmd_switches). */
static const struct flag_tbl switches[] = {
    {"no_ssl3", TF_BOTH, SSL_OP_NO_SSLv3},
    {"no_tls1", TF_BOTH, SSL_OP_NO_TLSv1},
    {"no_tls1_1", TF_BOTH, SSL_OP_NO_TLSv1_1},
    {"no_tls1_2", TF_BOTH, SSL_OP_NO_TLSv1_2},
    {"no_tls1_3", TF_BOTH, SSL_OP_NO_TLSv1_3},
    {"bugs", TF_BOTH, SSL_OP_ALL},
    {"no_comp", TF_BOTH, SSL_OP_NO_COMPRESSION},
    {"comp", TF_BOTH | TF_INV, SSL_OP_NO_COMPRESSION},
    {"ecdh_single", TF_SERVER, SSL_OP_SINGLE_ECDH_USE},
    {"no_ticket", TF_BOTH, SSL_OP_NO_TICKET},
    {"serverpref", TF_SERVER, SSL_OP_CIPHER_SERVER_PREFERENCE},
    {"legacy_renegotiation", TF_BOTH, SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION},
    {"client_renegotiation", TF_SERVER, SSL_OP_ALLOW_CLIENT_RENEGOTIATION},
    {"legacy_server_connect", TF_CLIENT, SSL_OP_LEGACY_SERVER_CONNECT},
    {"no_renegotiation", TF_BOTH, SSL_OP_NO_RENEGOTIATION},
    {"no_resumption_on_reneg", TF_SERVER, SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION},
    {"no_legacy_server_connect", TF_CLIENT | TF_INV, SSL_OP_LEGACY_SERVER_CONNECT},
    {"allow_no_dhe_kex", TF_BOTH, SSL_OP_ALLOW_NO_DHE_KEX},
    {"prioritize_chacha", TF_SERVER, SSL_OP_PRIORITIZE_CHACHA},
    {"strict", TF_BOTH | TF_CERT, 0}, /* SSL_CERT_FLAG_TLS_STRICT: Suite B, not implemented */
    {"no_middlebox", TF_BOTH | TF_INV, SSL_OP_ENABLE_MIDDLEBOX_COMPAT},
    {"anti_replay", TF_SERVER | TF_INV, SSL_OP_NO_ANTI_REPLAY},
    {"no_anti_replay", TF_SERVER, SSL_OP_NO_ANTI_REPLAY},
    {"no_etm", TF_BOTH, SSL_OP_NO_ENCRYPT_THEN_MAC},
};

/* ------------------------------------------------------------------ */
/* Commands with a value                                               */
/* ------------------------------------------------------------------ */

static int cmd_SignatureAlgorithms(SSL_CONF_CTX *cctx, const char *value)
{
    struct sigalg_list check;
    if (cctx->ssl != NULL)
        return SSL_set1_sigalgs_list(cctx->ssl, value) > 0;
    if (cctx->ctx != NULL)
        return SSL_CTX_set1_sigalgs_list(cctx->ctx, value) > 0;
    return sigalgs_parse_list(&check, value); /* no object yet: syntax check, as OpenSSL */
}

static int cmd_ClientSignatureAlgorithms(SSL_CONF_CTX *cctx, const char *value)
{
    struct sigalg_list check;
    if (cctx->ssl != NULL)
        return SSL_set1_client_sigalgs_list(cctx->ssl, value) > 0;
    if (cctx->ctx != NULL)
        return SSL_CTX_set1_client_sigalgs_list(cctx->ctx, value) > 0;
    return sigalgs_parse_list(&check, value);
}

static int cmd_Groups(SSL_CONF_CTX *cctx, const char *value)
{
    uint16_t check[QTLS_MAX_GROUPS], tuples;
    uint8_t n;
    if (cctx->ssl != NULL)
        return SSL_set1_groups_list(cctx->ssl, value) > 0;
    if (cctx->ctx != NULL)
        return SSL_CTX_set1_groups_list(cctx->ctx, value) > 0;
    return groups_parse_list(value, check, &n, &tuples);
}

/* A single group for the server; "auto"/"automatic" are 1.0.2 spellings of the default. */
static int cmd_ECDHParameters(SSL_CONF_CTX *cctx, const char *value)
{
    if ((cctx->flags & SSL_CONF_FLAG_FILE) &&
        (strcasecmp(value, "+automatic") == 0 || strcasecmp(value, "automatic") == 0))
        return 1;
    if ((cctx->flags & SSL_CONF_FLAG_CMDLINE) && strcmp(value, "auto") == 0)
        return 1;
    if (strchr(value, ':') != NULL)
        return 0;
    if (cctx->ctx != NULL)
        return SSL_CTX_set1_groups_list(cctx->ctx, value) > 0;
    if (cctx->ssl != NULL)
        return SSL_set1_groups_list(cctx->ssl, value) > 0;
    return 1;
}

/* TLS 1.2 and below: accepted and ignored, as SSL_CTX_set_cipher_list is (docs/limits.md). */
static int cmd_CipherString(SSL_CONF_CTX *cctx, const char *value)
{
    int rv = 1;
    if (cctx->ctx != NULL)
        rv = SSL_CTX_set_cipher_list(cctx->ctx, value);
    if (cctx->ssl != NULL)
        rv = SSL_set_cipher_list(cctx->ssl, value);
    return rv > 0;
}

static int cmd_Ciphersuites(SSL_CONF_CTX *cctx, const char *value)
{
    int rv = 1;
    if (cctx->ctx != NULL)
        rv = SSL_CTX_set_ciphersuites(cctx->ctx, value);
    if (cctx->ssl != NULL)
        rv = SSL_set_ciphersuites(cctx->ssl, value);
    return rv > 0;
}

/*
 * OpenSSL's protocol_from_string and ssl_set_version_bound: exact names; a DTLS version is
 * valid but leaves a TLS method's bound unchanged.
 */
static int min_max_proto(SSL_CONF_CTX *cctx, const char *value, int *bound)
{
    static const struct {
        const char *name;
        int version;
    } versions[] = {
        {"None", 0},
        {"SSLv3", SSL3_VERSION},
        {"TLSv1", TLS1_VERSION},
        {"TLSv1.1", TLS1_1_VERSION},
        {"TLSv1.2", TLS1_2_VERSION},
        {"TLSv1.3", TLS1_3_VERSION},
        {"DTLSv1", DTLS1_VERSION},
        {"DTLSv1.2", DTLS1_2_VERSION},
    };
    if (bound == NULL)
        return 0;
    for (size_t i = 0; i < NELEM(versions); i++) {
        int v = versions[i].version;
        if (strcmp(versions[i].name, value) != 0)
            continue;
        if (v == 0 || (v >= SSL3_VERSION && v <= TLS1_3_VERSION))
            *bound = v;
        return 1;
    }
    return 0;
}

static int cmd_MinProtocol(SSL_CONF_CTX *cctx, const char *value)
{
    return min_max_proto(cctx, value, cctx->min_version);
}

static int cmd_MaxProtocol(SSL_CONF_CTX *cctx, const char *value)
{
    return min_max_proto(cctx, value, cctx->max_version);
}

/* The slot a certificate went to, so that finish can load its key from the same file. */
static int current_slot(SSL_CONF_CTX *cctx)
{
    return cctx->ssl != NULL ? certset_of(cctx->ssl)->current : cctx->ctx->certs.current;
}

static int cmd_Certificate(SSL_CONF_CTX *cctx, const char *value)
{
    int rv = 1;
    if (cctx->ctx != NULL)
        rv = SSL_CTX_use_certificate_chain_file(cctx->ctx, value);
    if (cctx->ssl != NULL)
        rv = SSL_use_certificate_chain_file(cctx->ssl, value);
    if (rv > 0 && (cctx->ctx != NULL || cctx->ssl != NULL) &&
        (cctx->flags & SSL_CONF_FLAG_REQUIRE_PRIVATE)) {
        char **name = &cctx->cert_filename[current_slot(cctx)];
        OPENSSL_free(*name);
        *name = OPENSSL_strdup(value);
        if (*name == NULL)
            rv = 0;
    }
    return rv > 0;
}

static int cmd_PrivateKey(SSL_CONF_CTX *cctx, const char *value)
{
    int rv = 1;
    if (cctx->ctx != NULL)
        rv = SSL_CTX_use_PrivateKey_file(cctx->ctx, value, SSL_FILETYPE_PEM);
    if (cctx->ssl != NULL)
        rv = SSL_use_PrivateKey_file(cctx->ssl, value, SSL_FILETYPE_PEM);
    return rv > 0;
}

/* RequestCAFile and ClientCAFile: names for certificate_authorities, set at finish. */
static int cmd_RequestCAFile(SSL_CONF_CTX *cctx, const char *value)
{
    if (cctx->canames == NULL && (cctx->canames = sk_X509_NAME_new_null()) == NULL)
        return 0;
    return SSL_add_file_cert_subjects_to_stack(cctx->canames, value);
}

/* DH parameters for TLS 1.2 DHE: read (a bad file is a bad value) and stored (dh.c). */
static int cmd_DHParameters(SSL_CONF_CTX *cctx, const char *value)
{
    if (cctx->ctx == NULL && cctx->ssl == NULL)
        return 1;
    BIO *in = BIO_new_file(value, "r");
    EVP_PKEY *dh = in != NULL ? PEM_read_bio_Parameters(in, NULL) : NULL;
    BIO_free(in);
    if (dh == NULL || !EVP_PKEY_is_a(dh, "DH")) {
        EVP_PKEY_free(dh);
        return 0;
    }
    int rv = cctx->ctx != NULL ? SSL_CTX_set0_tmp_dh_pkey(cctx->ctx, dh)
                               : SSL_set0_tmp_dh_pkey(cctx->ssl, dh);
    if (!rv)
        EVP_PKEY_free(dh);
    return rv;
}

static int cmd_NumTickets(SSL_CONF_CTX *cctx, const char *value)
{
    int rv = 0, n = atoi(value);
    if (n >= 0) {
        if (cctx->ctx != NULL)
            rv = SSL_CTX_set_num_tickets(cctx->ctx, (size_t)n);
        if (cctx->ssl != NULL)
            rv = SSL_set_num_tickets(cctx->ssl, (size_t)n);
    }
    return rv;
}

/* Commands whose setter qtls lacks: never a silent success. */
#define NOT_IMPL(fn, what)                                                                         \
    static int fn(SSL_CONF_CTX *cctx, const char *value) { return qtls_not_implemented(what); }
NOT_IMPL(cmd_ServerInfoFile, "ServerInfoFile (SSL_CTX_use_serverinfo_file)")
NOT_IMPL(cmd_ChainCA, "ChainCAPath/ChainCAFile/ChainCAStore (a chain store of its own)")
NOT_IMPL(cmd_VerifyCA, "VerifyCAPath/VerifyCAFile/VerifyCAStore (a verify store of its own)")
NOT_IMPL(cmd_RequestCADir, "RequestCAPath/ClientCAPath/RequestCAStore/ClientCAStore")
NOT_IMPL(cmd_RecordPadding, "RecordPadding (QUIC has no TLS records)")

/* ------------------------------------------------------------------ */
/* The command table (OpenSSL 3.0's ssl_conf_cmds, in its order)       */
/* ------------------------------------------------------------------ */

#define CF_SERVER SSL_CONF_FLAG_SERVER
#define CF_CLIENT SSL_CONF_FLAG_CLIENT
#define CF_CERT SSL_CONF_FLAG_CERTIFICATE

struct conf_cmd {
    int (*fn)(SSL_CONF_CTX *, const char *);
    const char *file, *cmdline;
    unsigned flags;
    unsigned type;
};

static const struct conf_cmd commands[] = {
    {cmd_SignatureAlgorithms, "SignatureAlgorithms", "sigalgs", 0, SSL_CONF_TYPE_STRING},
    {cmd_ClientSignatureAlgorithms, "ClientSignatureAlgorithms", "client_sigalgs", 0,
     SSL_CONF_TYPE_STRING},
    {cmd_Groups, "Curves", "curves", 0, SSL_CONF_TYPE_STRING},
    {cmd_Groups, "Groups", "groups", 0, SSL_CONF_TYPE_STRING},
    {cmd_ECDHParameters, "ECDHParameters", "named_curve", CF_SERVER, SSL_CONF_TYPE_STRING},
    {cmd_CipherString, "CipherString", "cipher", 0, SSL_CONF_TYPE_STRING},
    {cmd_Ciphersuites, "Ciphersuites", "ciphersuites", 0, SSL_CONF_TYPE_STRING},
    {cmd_Protocol, "Protocol", NULL, 0, SSL_CONF_TYPE_STRING},
    {cmd_MinProtocol, "MinProtocol", "min_protocol", 0, SSL_CONF_TYPE_STRING},
    {cmd_MaxProtocol, "MaxProtocol", "max_protocol", 0, SSL_CONF_TYPE_STRING},
    {cmd_Options, "Options", NULL, 0, SSL_CONF_TYPE_STRING},
    {cmd_VerifyMode, "VerifyMode", NULL, 0, SSL_CONF_TYPE_STRING},
    {cmd_Certificate, "Certificate", "cert", CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_PrivateKey, "PrivateKey", "key", CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_ServerInfoFile, "ServerInfoFile", NULL, CF_SERVER | CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_ChainCA, "ChainCAPath", "chainCApath", CF_CERT, SSL_CONF_TYPE_DIR},
    {cmd_ChainCA, "ChainCAFile", "chainCAfile", CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_ChainCA, "ChainCAStore", "chainCAstore", CF_CERT, SSL_CONF_TYPE_STORE},
    {cmd_VerifyCA, "VerifyCAPath", "verifyCApath", CF_CERT, SSL_CONF_TYPE_DIR},
    {cmd_VerifyCA, "VerifyCAFile", "verifyCAfile", CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_VerifyCA, "VerifyCAStore", "verifyCAstore", CF_CERT, SSL_CONF_TYPE_STORE},
    {cmd_RequestCAFile, "RequestCAFile", "requestCAFile", CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_RequestCAFile, "ClientCAFile", NULL, CF_SERVER | CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_RequestCADir, "RequestCAPath", NULL, CF_CERT, SSL_CONF_TYPE_DIR},
    {cmd_RequestCADir, "ClientCAPath", NULL, CF_SERVER | CF_CERT, SSL_CONF_TYPE_DIR},
    {cmd_RequestCADir, "RequestCAStore", "requestCAStore", CF_CERT, SSL_CONF_TYPE_STORE},
    {cmd_RequestCADir, "ClientCAStore", NULL, CF_SERVER | CF_CERT, SSL_CONF_TYPE_STORE},
    {cmd_DHParameters, "DHParameters", "dhparam", CF_SERVER | CF_CERT, SSL_CONF_TYPE_FILE},
    {cmd_RecordPadding, "RecordPadding", "record_padding", 0, SSL_CONF_TYPE_STRING},
    {cmd_NumTickets, "NumTickets", "num_tickets", CF_SERVER, SSL_CONF_TYPE_STRING},
};

/* A switch or a command, as found by lookup. */
struct found {
    const struct flag_tbl *sw;
    const struct conf_cmd *cmd;
};

static int allowed(const SSL_CONF_CTX *cctx, unsigned need)
{
    need &= CF_SERVER | CF_CLIENT | CF_CERT;
    return (cctx->flags & need) == need;
}

/* The switches are command-line only and share the role flags of the option tables. */
static int switch_allowed(const SSL_CONF_CTX *cctx, const struct flag_tbl *t)
{
    unsigned role = t->flags & TF_BOTH;
    return role == TF_BOTH || (cctx->flags & role) == role;
}

static int lookup(const SSL_CONF_CTX *cctx, const char *cmd, struct found *out)
{
    memset(out, 0, sizeof(*out));
    if (cctx->flags & SSL_CONF_FLAG_CMDLINE) {
        for (size_t i = 0; i < NELEM(switches); i++)
            if (switch_allowed(cctx, &switches[i]) && strcmp(switches[i].name, cmd) == 0) {
                out->sw = &switches[i];
                return 1;
            }
    }
    for (size_t i = 0; i < NELEM(commands); i++) {
        const struct conf_cmd *t = &commands[i];
        if (!allowed(cctx, t->flags))
            continue;
        if ((cctx->flags & SSL_CONF_FLAG_CMDLINE) && t->cmdline != NULL &&
            strcmp(t->cmdline, cmd) == 0) {
            out->cmd = t;
            return 1;
        }
        if ((cctx->flags & SSL_CONF_FLAG_FILE) && t->file != NULL && strcasecmp(t->file, cmd) == 0) {
            out->cmd = t;
            return 1;
        }
    }
    return 0;
}

/* Strips the prefix (or the command line's '-'); 0 if the name does not carry it. */
static int skip_prefix(const SSL_CONF_CTX *cctx, const char **pcmd)
{
    if (pcmd == NULL || *pcmd == NULL)
        return 0;
    if (cctx->prefix != NULL) {
        if (strlen(*pcmd) <= cctx->prefixlen)
            return 0;
        if ((cctx->flags & SSL_CONF_FLAG_CMDLINE) &&
            strncmp(*pcmd, cctx->prefix, cctx->prefixlen) != 0)
            return 0;
        if ((cctx->flags & SSL_CONF_FLAG_FILE) &&
            strncasecmp(*pcmd, cctx->prefix, cctx->prefixlen) != 0)
            return 0;
        *pcmd += cctx->prefixlen;
    } else if (cctx->flags & SSL_CONF_FLAG_CMDLINE) {
        if (**pcmd != '-' || (*pcmd)[1] == '\0')
            return 0;
        *pcmd += 1;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* The API                                                             */
/* ------------------------------------------------------------------ */

SSL_CONF_CTX *SSL_CONF_CTX_new(void)
{
    SSL_CONF_CTX *cctx = OPENSSL_zalloc(sizeof(*cctx));
    if (cctx == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    return cctx;
}

void SSL_CONF_CTX_free(SSL_CONF_CTX *cctx)
{
    if (cctx == NULL)
        return;
    for (int i = 0; i < CERT_SLOTS; i++)
        OPENSSL_free(cctx->cert_filename[i]);
    OPENSSL_free(cctx->prefix);
    sk_X509_NAME_pop_free(cctx->canames, X509_NAME_free);
    OPENSSL_free(cctx);
}

unsigned int SSL_CONF_CTX_set_flags(SSL_CONF_CTX *cctx, unsigned int flags)
{
    return cctx->flags |= flags;
}

unsigned int SSL_CONF_CTX_clear_flags(SSL_CONF_CTX *cctx, unsigned int flags)
{
    return cctx->flags &= ~flags;
}

int SSL_CONF_CTX_set1_prefix(SSL_CONF_CTX *cctx, const char *pre)
{
    char *copy = NULL;
    if (pre != NULL && (copy = OPENSSL_strdup(pre)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    OPENSSL_free(cctx->prefix);
    cctx->prefix = copy;
    cctx->prefixlen = copy != NULL ? strlen(copy) : 0;
    return 1;
}

void SSL_CONF_CTX_set_ssl(SSL_CONF_CTX *cctx, SSL *ssl)
{
    cctx->ssl = ssl;
    cctx->ctx = NULL;
    cctx->options = ssl != NULL ? &ssl->options : NULL;
    cctx->min_version = ssl != NULL ? &ssl->min_version : NULL;
    cctx->max_version = ssl != NULL ? &ssl->max_version : NULL;
    cctx->verify_mode = ssl != NULL ? &ssl->verify_mode : NULL;
}

void SSL_CONF_CTX_set_ssl_ctx(SSL_CONF_CTX *cctx, SSL_CTX *ctx)
{
    cctx->ctx = ctx;
    cctx->ssl = NULL;
    cctx->options = ctx != NULL ? &ctx->options : NULL;
    cctx->min_version = ctx != NULL ? &ctx->min_version : NULL;
    cctx->max_version = ctx != NULL ? &ctx->max_version : NULL;
    cctx->verify_mode = ctx != NULL ? &ctx->verify_mode : NULL;
}

/* A switch: 1 (it takes no value), or 0 for one qtls does not implement. */
static int run_switch(SSL_CONF_CTX *cctx, const struct flag_tbl *sw)
{
    if ((sw->flags & TF_TYPE_MASK) == TF_CERT)
        return qtls_not_implemented(sw->name);
    set_option(cctx, sw->flags, sw->value, 1);
    return 1;
}

int SSL_CONF_cmd(SSL_CONF_CTX *cctx, const char *cmd, const char *value)
{
    struct found f;
    if (cmd == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_INVALID_NULL_CMD_NAME);
        return 0;
    }
    if (!skip_prefix(cctx, &cmd))
        return -2;
    if (lookup(cctx, cmd, &f)) {
        if (f.sw != NULL)
            return run_switch(cctx, f.sw);
        if (value == NULL)
            return -3;
        if (f.cmd->fn(cctx, value) > 0)
            return 2;
        if (cctx->flags & SSL_CONF_FLAG_SHOW_ERRORS)
            ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_VALUE, "cmd=%s, value=%s", cmd, value);
        return 0;
    }
    if (cctx->flags & SSL_CONF_FLAG_SHOW_ERRORS)
        ERR_raise_data(ERR_LIB_SSL, SSL_R_UNKNOWN_CMD_NAME, "cmd=%s", cmd);
    return -2;
}

int SSL_CONF_cmd_argv(SSL_CONF_CTX *cctx, int *pargc, char ***pargv)
{
    const char *arg = NULL, *argn = NULL;
    if (pargc != NULL && *pargc == 0)
        return 0;
    if (pargc == NULL || *pargc > 0)
        arg = **pargv;
    if (arg == NULL)
        return 0;
    if (pargc == NULL || *pargc > 1)
        argn = (*pargv)[1];
    cctx->flags &= ~SSL_CONF_FLAG_FILE;
    cctx->flags |= SSL_CONF_FLAG_CMDLINE;
    int rv = SSL_CONF_cmd(cctx, arg, argn);
    if (rv > 0) {
        /* Consumed: the switch, or the command and its value. */
        *pargv += rv;
        if (pargc != NULL)
            *pargc -= rv;
        return rv;
    }
    if (rv == -2)
        return 0; /* not ours: nothing consumed */
    if (rv == 0)
        return -1; /* a bad value is fatal */
    return rv;
}

int SSL_CONF_cmd_value_type(SSL_CONF_CTX *cctx, const char *cmd)
{
    struct found f;
    if (skip_prefix(cctx, &cmd) && lookup(cctx, cmd, &f))
        return f.sw != NULL ? SSL_CONF_TYPE_NONE : (int)f.cmd->type;
    return SSL_CONF_TYPE_UNKNOWN;
}

/* Loads the keys still missing from their certificate files, then sets the CA names. */
int SSL_CONF_CTX_finish(SSL_CONF_CTX *cctx)
{
    const struct cert_set *set = cctx->ctx != NULL   ? &cctx->ctx->certs
                                 : cctx->ssl != NULL ? certset_of(cctx->ssl)
                                                     : NULL;
    if (set != NULL && (cctx->flags & SSL_CONF_FLAG_REQUIRE_PRIVATE)) {
        for (int i = 0; i < CERT_SLOTS; i++) {
            const char *p = cctx->cert_filename[i];
            if (p != NULL && set->slot[i].pkey == NULL && !cmd_PrivateKey(cctx, p))
                return 0;
        }
    }
    if (cctx->canames != NULL) {
        if (cctx->ssl != NULL)
            SSL_set0_CA_list(cctx->ssl, cctx->canames);
        else if (cctx->ctx != NULL)
            SSL_CTX_set0_CA_list(cctx->ctx, cctx->canames);
        else
            sk_X509_NAME_pop_free(cctx->canames, X509_NAME_free);
        cctx->canames = NULL;
    }
    return 1;
}
