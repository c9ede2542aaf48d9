/*
 * Extensions: one table of codepoints and the messages each may appear in
 * (RFC 8446 §4.2), a generic loop that splits an extension block and
 * enforces the table, and the per-extension rules for SNI, ALPN,
 * signature_algorithms and quic_transport_parameters. supported_versions,
 * supported_groups and key_share belong to the hello logic in client.c and
 * server.c.
 */
#include "internal.h"

#include <string.h>

/* RFC 8446 §4.2 (and RFC 9001 §8.2 for the transport parameters). */
static const struct {
    uint16_t type;
    uint8_t allowed; /* enum ext_msg mask */
} ext_table[EXT_COUNT] = {
    [EXT_SERVER_NAME] = {0, EM_CH | EM_EE},
    [EXT_STATUS_REQUEST] = {5, EM_CH | EM_CR | EM_CT},
    [EXT_SUPPORTED_GROUPS] = {10, EM_CH | EM_EE},
    [EXT_SIGNATURE_ALGORITHMS] = {13, EM_CH | EM_CR},
    [EXT_ALPN] = {16, EM_CH | EM_EE},
    [EXT_PADDING] = {21, EM_CH},
    [EXT_PRE_SHARED_KEY] = {41, EM_CH | EM_SH},
    [EXT_EARLY_DATA] = {42, EM_CH | EM_EE | EM_NST},
    [EXT_SUPPORTED_VERSIONS] = {43, EM_CH | EM_SH | EM_HRR},
    [EXT_COOKIE] = {44, EM_CH | EM_HRR},
    [EXT_PSK_KEY_EXCHANGE_MODES] = {45, EM_CH},
    [EXT_CERTIFICATE_AUTHORITIES] = {47, EM_CH | EM_CR},
    [EXT_SIGNATURE_ALGORITHMS_CERT] = {50, EM_CH | EM_CR},
    [EXT_KEY_SHARE] = {51, EM_CH | EM_SH | EM_HRR},
    [EXT_QUIC_TP] = {TLSEXT_TYPE_quic_transport_parameters, EM_CH | EM_EE},
    [EXT_QUIC_TP_DRAFT] = {TLSEXT_TYPE_quic_transport_parameters_draft, EM_CH | EM_EE},
    [EXT_COMPRESS_CERTIFICATE] = {TLSEXT_TYPE_compress_certificate, EM_CH | EM_CR}, /* RFC 8879 */
};

uint16_t ext_codepoint(enum ext_idx i) { return ext_table[i].type; }

static int ext_index(uint16_t type)
{
    for (int i = 0; i < EXT_COUNT; i++)
        if (ext_table[i].type == type)
            return i;
    return -1;
}

/* §4.2: no extension type twice in one block, known or not. */
static int has_duplicates(struct rd list)
{
    uint8_t seen[65536 / 8] = {0};
    uint16_t type;
    struct rd body;
    while (rd_u16(&list, &type) && rd_vec16(&list, &body)) {
        if (seen[type / 8] & (1u << (type % 8)))
            return 1;
        seen[type / 8] |= (uint8_t)(1u << (type % 8));
    }
    return 0;
}

int ext_split(SSL *c, enum ext_msg msg, struct rd list, uint32_t offered, struct ext_set *out)
{
    if (has_duplicates(list))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION);
    /* NewSessionTicket extensions answer nothing: like requests, unknown ones are ignored. */
    int is_request = msg == EM_CH || msg == EM_CR || msg == EM_NST;
    memset(out, 0, sizeof(*out));
    while (!rd_empty(&list)) {
        uint16_t type;
        struct rd body;
        if (!rd_u16(&list, &type) || !rd_vec16(&list, &body))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
        /* §4.2.11: pre_shared_key must be the last extension of a ClientHello. */
        if (ext_has(out, EXT_PRE_SHARED_KEY) && msg == EM_CH)
            return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_EXTENSION);
        int i = ext_index(type);
        if (i < 0) {
            if (is_request || custom_ext_claims(c, type))
                continue; /* §4.2: unknown extensions in requests are ignored; custom_ext.c */
            return qtls_fail(c, SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION);
        }
        if (!(ext_table[i].allowed & msg))
            return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION);
        /* §4.2: a response may only carry what the client offered, bar the HRR cookie. */
        if (!is_request && !((offered >> i) & 1) && !(msg == EM_HRR && i == EXT_COOKIE))
            return qtls_fail(c, SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION);
        out->present |= 1u << i;
        out->body[i] = body;
    }
    return 1;
}

/* Opens extension `i` in w and marks it offered. */
size_t ext_open(struct wr *w, enum ext_idx i, uint32_t *offered)
{
    wr_u16(w, ext_table[i].type);
    *offered |= 1u << i;
    return wr_open_vec(w, 2);
}

void ext_close(struct wr *w, size_t at) { wr_close_vec(w, at, 2); }

static void write_transport_params(SSL *c, struct wr *w, enum ext_idx i, uint32_t *offered)
{
    size_t at = ext_open(w, i, offered);
    wr_bytes(w, c->local_tp, c->local_tp_len);
    ext_close(w, at);
}

/* ---- ClientHello (client side) ---- */

/* BoringSSL's API: off by default, as quictls. SSL_new copies the context's setting. */
void SSL_CTX_set_grease_enabled(SSL_CTX *ctx, int enabled) { ctx->grease_enabled = enabled != 0; }

void SSL_set_grease_enabled(SSL *ssl, int enabled) { ssl->grease_enabled = enabled != 0; }

/*
 * RFC 8701 §2: 0x0A0A, 0x1A1A, ... 0xFAFA, and for PSK modes 0x0B + 0x1F * n. Each field reads its
 * own byte of the per-connection seed (BoringSSL's scheme), so values differ between connections
 * and stay the same in the ClientHello that answers a HelloRetryRequest.
 */
uint16_t grease_value(const SSL *c, enum grease_idx i)
{
    const uint8_t *seed = c->hs->grease_seed;
    if (i == GREASE_PSK_MODE)
        return (uint16_t)(0x0B + 0x1F * (seed[i] % 8));
    uint16_t v = (uint16_t)((seed[i] & 0xf0) | 0x0a);
    v |= (uint16_t)(v << 8);
    /* The two extensions must have distinct codepoints (§4.2: no type twice). */
    if (i == GREASE_EXT2 && v == grease_value(c, GREASE_EXT1))
        v ^= 0x1010;
    return v;
}

/* §3: an empty GREASE extension and one with a one-byte body, as BoringSSL sends them. */
static void write_grease_ext(SSL *c, struct wr *w, enum grease_idx i)
{
    wr_u16(w, grease_value(c, i));
    size_t at = wr_open_vec(w, 2);
    if (i == GREASE_EXT2)
        wr_u8(w, 0);
    wr_close_vec(w, at, 2);
}

int ext_write_client_hello_extensions(SSL *c, struct wr *w)
{
    struct hs *hs = c->hs;
    uint32_t *off = &hs->offered;
    size_t at, inner;
    *off = 0;
    if (c->grease_enabled)
        write_grease_ext(c, w, GREASE_EXT1);
    if (c->hostname != NULL) {
        /* RFC 6066 §3: ServerNameList with one host_name entry */
        at = ext_open(w, EXT_SERVER_NAME, off);
        inner = wr_open_vec(w, 2);
        wr_u8(w, TLSEXT_NAMETYPE_host_name);
        size_t name = wr_open_vec(w, 2);
        wr_bytes(w, c->hostname, strlen(c->hostname));
        wr_close_vec(w, name, 2);
        wr_close_vec(w, inner, 2);
        ext_close(w, at);
    }
    ocsp_client_write_request(c, w, off);
    cert_comp_write_request(c, w); /* cert_comp.c */
    ca_list_client_write(c, w, off);
    at = ext_open(w, EXT_SUPPORTED_GROUPS, off);
    inner = wr_open_vec(w, 2);
    if (c->grease_enabled)
        wr_u16(w, grease_value(c, GREASE_GROUP));
    for (size_t i = 0; i < c->n_groups; i++)
        if (seclevel_group_ok(c, c->groups[i])) /* seclevel.c: none below the level */
            wr_u16(w, c->groups[i]);
    wr_close_vec(w, inner, 2);
    ext_close(w, at);

    at = ext_open(w, EXT_SIGNATURE_ALGORITHMS, off);
    sigalgs_write(c, w, c->grease_enabled ? grease_value(c, GREASE_SIGALG) : 0); /* sigalgs.c */
    ext_close(w, at);

    at = ext_open(w, EXT_ALPN, off);
    inner = wr_open_vec(w, 2);
    wr_bytes(w, c->alpn, c->alpn_len);
    wr_close_vec(w, inner, 2);
    ext_close(w, at);

    if (c->grease_enabled) /* mid-list, never last: pre_shared_key must be (§4.2.11) */
        write_grease_ext(c, w, GREASE_EXT2);

    at = ext_open(w, EXT_SUPPORTED_VERSIONS, off);
    inner = wr_open_vec(w, 1);
    if (c->grease_enabled)
        wr_u16(w, grease_value(c, GREASE_VERSION));
    wr_u16(w, TLS1_3_VERSION);
    wr_close_vec(w, inner, 1);
    ext_close(w, at);

    /* psk_dhe_ke only: lets the server issue tickets (§4.2.9) */
    at = ext_open(w, EXT_PSK_KEY_EXCHANGE_MODES, off);
    inner = wr_open_vec(w, 1);
    if (c->grease_enabled)
        wr_u8(w, (uint8_t)grease_value(c, GREASE_PSK_MODE));
    wr_u8(w, 1);
    wr_close_vec(w, inner, 1);
    ext_close(w, at);

    at = ext_open(w, EXT_KEY_SHARE, off);
    inner = wr_open_vec(w, 2);
    /* RFC 8701 §3.1: a one-byte share for the GREASE group; not after HelloRetryRequest, whose
     * answer carries exactly the one share asked for (§4.2.8). */
    if (c->grease_enabled && !hs->hrr_done) {
        wr_u16(w, grease_value(c, GREASE_GROUP));
        wr_u16(w, 1);
        wr_u8(w, 0);
    }
    wr_u16(w, hs->kex_group->id);
    size_t ke = wr_open_vec(w, 2);
    wr_bytes(w, hs->my_share, hs->my_share_len);
    wr_close_vec(w, ke, 2);
    wr_close_vec(w, inner, 2);
    ext_close(w, at);

    if (hs->cookie.len > 0) {
        at = ext_open(w, EXT_COOKIE, off);
        inner = wr_open_vec(w, 2);
        wr_bytes(w, hs->cookie.buf, hs->cookie.len);
        wr_close_vec(w, inner, 2);
        ext_close(w, at);
    }

    /* The codepoint rules of the contract: 0 sends both, otherwise only the one set. */
    if (c->local_tp_len > 0) {
        if (c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters_draft)
            write_transport_params(c, w, EXT_QUIC_TP, off);
        if (c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters)
            write_transport_params(c, w, EXT_QUIC_TP_DRAFT, off);
    }
    if (!custom_ext_write(c, SSL_EXT_CLIENT_HELLO, w)) /* the application's (custom_ext.c) */
        return 0;
    /* early_data and pre_shared_key follow, from resumption.c (client.c writes them last). */
    return 1;
}

/* ---- EncryptedExtensions (client side) ---- */

/* RFC 7301 §3.1: the server's list holds exactly one name, one we offered. */
static int client_take_alpn(SSL *c, struct rd body)
{
    struct rd list, name, offer, cand;
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || !rd_vec8(&list, &name) ||
        !rd_empty(&list) || rd_empty(&name))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    rd_init(&offer, c->alpn, c->alpn_len);
    while (rd_vec8(&offer, &cand)) {
        if (cand.n == name.n && memcmp(cand.p, name.p, name.n) == 0) {
            memcpy(c->alpn_selected, name.p, name.n);
            c->alpn_selected_len = name.n;
            return 1;
        }
    }
    return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INVALID_ALPN_PROTOCOL);
}

int ext_process_encrypted_extensions(SSL *c, const struct ext_set *e)
{
    /* RFC 9001 §8.1: QUIC requires ALPN; a server that ignored ours is fatal. */
    if (!ext_has(e, EXT_ALPN))
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    if (!client_take_alpn(c, e->body[EXT_ALPN]))
        return 0;
    /* RFC 6066 §3: the server's acknowledgement of SNI is empty. */
    if (ext_has(e, EXT_SERVER_NAME) && !rd_empty(&e->body[EXT_SERVER_NAME]))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return quic_take_peer_tp(c, e);
}

/* ---- ClientHello (server side) ---- */

/* RFC 6066 §3: struct { NameType name_type; HostName name; } ServerName; */
static int server_take_sni(SSL *c, struct rd body)
{
    struct rd list, name;
    uint8_t type;
    /* Exactly one name, a host_name: no other type exists and duplicates are forbidden. */
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || !rd_u8(&list, &type) ||
        !rd_vec16(&list, &name) || !rd_empty(&list) || type != TLSEXT_NAMETYPE_host_name)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (name.n == 0 || name.n > 255 || memchr(name.p, 0, name.n) != NULL)
        return qtls_fail(c, SSL_AD_UNRECOGNIZED_NAME, SSL_R_BAD_EXTENSION);
    c->hostname = OPENSSL_strndup((const char *)name.p, name.n);
    if (c->hostname == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    return 1;
}

/* The application's servername callback may switch SSL_CTX (certificate by SNI). */
static int run_servername_cb(SSL *c)
{
    SSL_CTX *ctx = c->ctx;
    int al = SSL_AD_UNRECOGNIZED_NAME;
    if (ctx->servername_cb == NULL)
        return 1;
    int r = ctx->servername_cb(c, &al, ctx->servername_arg);
    if (r == SSL_TLSEXT_ERR_ALERT_FATAL)
        return qtls_fail(c, al, SSL_R_CALLBACK_FAILED);
    return 1;
}

/* RFC 7301 §3.2 with RFC 9001 §8.1: no common protocol is no_application_protocol. */
static int server_select_alpn(SSL *c, const struct ext_set *e)
{
    struct rd body = e->body[EXT_ALPN], list, probe, name;
    const unsigned char *out = NULL;
    unsigned char out_len = 0;
    SSL_CTX *ctx = c->ctx;
    if (!ext_has(e, EXT_ALPN))
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || rd_empty(&list))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    for (probe = list; !rd_empty(&probe);)
        if (!rd_vec8(&probe, &name) || rd_empty(&name))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (ctx->alpn_select_cb == NULL ||
        ctx->alpn_select_cb(c, &out, &out_len, list.p, (unsigned)list.n,
                            ctx->alpn_select_arg) != SSL_TLSEXT_ERR_OK)
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    if (out == NULL || out_len == 0) /* the callback said yes to nothing */
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_INVALID_ALPN_PROTOCOL);
    memcpy(c->alpn_selected, out, out_len);
    c->alpn_selected_len = out_len;
    return 1;
}

/* RFC 8446 §4.2.3: SignatureSchemeList supported_signature_algorithms<2..2^16-2>. */
static int server_take_sigalgs(SSL *c, const struct ext_set *e)
{
    struct hs *hs = c->hs;
    struct rd body = e->body[EXT_SIGNATURE_ALGORITHMS], list;
    if (!ext_has(e, EXT_SIGNATURE_ALGORITHMS))
        return qtls_fail(c, SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_SIGALGS_EXTENSION);
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || list.n == 0 || list.n % 2 != 0)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    hs->n_peer_sigschemes = 0;
    uint16_t id;
    while (rd_u16(&list, &id)) {
        /* Kept: the schemes both sides allow (OpenSSL's shared list; sigalgs.c). */
        if (hs->n_peer_sigschemes < sizeof(hs->peer_sigschemes) / sizeof(hs->peer_sigschemes[0]) &&
            sigalgs_we_sign_with(c, id))
            hs->peer_sigschemes[hs->n_peer_sigschemes++] = id;
    }
    return 1;
}

int ext_process_client_hello(SSL *c, const struct ext_set *e)
{
    if (ext_has(e, EXT_SERVER_NAME) && c->hostname == NULL &&
        !server_take_sni(c, e->body[EXT_SERVER_NAME]))
        return 0;
    sigalgs_take_peer_groups(c, e);
    return run_servername_cb(c) && quic_take_peer_tp(c, e) && server_take_sigalgs(c, e) &&
           server_select_alpn(c, e) && ocsp_server_take_request(c, e) &&
           cert_comp_take_offer(c, e);
}

/* ---- EncryptedExtensions (server side) ---- */

int ext_write_encrypted_extensions(SSL *c, struct wr *w)
{
    uint32_t off = 0;
    size_t at, list;
    at = ext_open(w, EXT_ALPN, &off);
    list = wr_open_vec(w, 2);
    size_t name = wr_open_vec(w, 1);
    wr_bytes(w, c->alpn_selected, c->alpn_selected_len);
    wr_close_vec(w, name, 1);
    wr_close_vec(w, list, 2);
    ext_close(w, at);
    if (c->early_data_status == SSL_EARLY_DATA_ACCEPTED) {
        wr_u16(w, ext_codepoint(EXT_EARLY_DATA));
        wr_u16(w, 0);
    }
    /* quictls: no transport parameters set, none sent; the client will fail */
    if (c->local_tp_len > 0 && (c->hs->tp_codepoint_reply & 1))
        write_transport_params(c, w, EXT_QUIC_TP, &off);
    if (c->local_tp_len > 0 && (c->hs->tp_codepoint_reply & 2))
        write_transport_params(c, w, EXT_QUIC_TP_DRAFT, &off);
    return custom_ext_write(c, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS, w); /* custom_ext.c */
}
