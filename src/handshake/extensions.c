/*
 * Extensions (RFC 8446 §4.2): one table, one row per extension, BoringSSL's kExtensions shape.
 * A row gives the codepoint, the messages the extension may appear in, and a function for each
 * message it is written in and each it is read in (body NULL: the peer left it out, the row's
 * "missing" rule). The loops below frame what the rows write, split and check a received block
 * (duplicates, where each may appear, replies only to what was offered), and call every row.
 *
 * A row's functions live in the file of its concern (ocsp.c, ca_list.c, sigalgs.c, quic.c,
 * resumption.c) or here (post_handshake_auth's: post_auth.c calls this file, so its row, which
 * only records the offer, stays here). supported_versions, supported_groups, key_share, cookie
 * and the PSK rows hand what they read to the hello logic (hs->hello), which client.c, server.c
 * and resumption.c decide on. Adding an extension: a row here, its enum ext_idx, its tests.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <string.h>

/* The row of one extension. */
struct ext_row {
    uint8_t allowed;                 /* enum ext_msg mask */
    ext_write_fn *write[MSG_COUNT];  /* we send it in this message */
    ext_parse_fn *parse[MSG_COUNT];  /* we read it in this message (CH: the first, negotiated) */
    ext_parse_fn *hello;             /* server: every ClientHello, right after the split */
};

/* ---- GREASE (RFC 8701), in the ClientHello around the rows ---- */

/* BoringSSL's API: off by default, as quictls. SSL_new copies the context's setting. */
void SSL_CTX_set_grease_enabled(SSL_CTX *ctx, int enabled) { ctx->grease_enabled = enabled != 0; }

void SSL_set_grease_enabled(SSL *ssl, int enabled) { ssl->grease_enabled = enabled != 0; }

/*
 * RFC 8701 §2: 0x0A0A, 0x1A1A, ... 0xFAFA, and for PSK modes 0x0B + 0x1F * n. Each field reads its
 * own byte of the per-connection seed (BoringSSL's scheme), so values differ between connections
 * and stay the same in the ClientHello that answers a HelloRetryRequest.
 */
static uint16_t grease_from_byte(uint8_t b)
{
    uint16_t v = (uint16_t)((b & 0xf0) | 0x0a);
    return (uint16_t)(v | v << 8);
}

uint16_t grease_value(const SSL *c, enum grease_idx i)
{
    const uint8_t *seed = c->hs->grease_seed;
    if (i == GREASE_PSK_MODE)
        return (uint16_t)(0x0B + 0x1F * (seed[i] % 8));
    uint16_t v = grease_from_byte(seed[i]);
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

/*
 * RFC 8701 §3.2: a server may GREASE its NewSessionTicket extensions. BoringSSL sends one empty
 * extension after the rows; its value is drawn per ticket (a server has no ClientHello seed).
 */
static int write_grease_nst(SSL *c, struct wr *w)
{
    uint8_t b;
    if (!crypto_random(&b, 1))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    wr_u16(w, grease_from_byte(b));
    wr_u16(w, 0);
    return 1;
}


/* ---- server_name (RFC 6066 §3) ---- */

static int write_sni(SSL *c, struct wr *w)
{
    if (c->hostname == NULL)
        return EXT_NOT_SENT;
    /* ServerNameList with one host_name entry */
    size_t list = wr_open_vec(w, 2);
    wr_u8(w, TLSEXT_NAMETYPE_host_name);
    size_t name = wr_open_vec(w, 2);
    wr_bytes(w, c->hostname, strlen(c->hostname));
    wr_close_vec(w, name, 2);
    wr_close_vec(w, list, 2);
    return 1;
}

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


/* The name if sent, then the servername callback, which may switch SSL_CTX. */
static int parse_sni_ch(SSL *c, const struct rd *body)
{
    if (body != NULL && c->hostname == NULL && !server_take_sni(c, *body))
        return 0;
    return run_servername_cb(c);
}

/* The server's acknowledgement of SNI is empty. */
static int parse_sni_ee(SSL *c, const struct rd *body)
{
    if (body != NULL && !rd_empty(body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* ---- supported_groups (RFC 8446 §4.2.7) ---- */

static int write_groups(SSL *c, struct wr *w)
{
    size_t list = wr_open_vec(w, 2);
    if (c->grease_enabled)
        wr_u16(w, grease_value(c, GREASE_GROUP));
    for (size_t i = 0; i < c->n_groups; i++)
        if (seclevel_group_ok(c, c->groups[i])) /* seclevel.c: none below the level */
            wr_u16(w, c->groups[i]);
    wr_close_vec(w, list, 2);
    return 1;
}

/* NamedGroup named_group_list<2..2^16-1>, for choosing the group (server.c). */
static int hello_groups(SSL *c, const struct rd *body)
{
    struct rd b, list;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_vec16(&b, &list) || !rd_empty(&b) || list.n == 0 || list.n % 2 != 0)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    c->hs->hello.groups = list;
    return 1;
}

/* ---- signature_algorithms (RFC 8446 §4.2.3) ---- */

static int write_sigalgs_ch(SSL *c, struct wr *w)
{
    sigalgs_write(c, w, c->grease_enabled ? grease_value(c, GREASE_SIGALG) : 0); /* sigalgs.c */
    return 1;
}

static int write_sigalgs_cr(SSL *c, struct wr *w)
{
    sigalgs_write(c, w, 0); /* client_sigalgs, else sigalgs, else the default (sigalgs.c) */
    return 1;
}

/*
 * RFC 8446 §4.2.3: SignatureSchemeList supported_signature_algorithms<2..2^16-2>, of a
 * ClientHello (server) or a CertificateRequest (client): the schemes to sign with.
 */
static int take_sigalgs(SSL *c, const struct rd *b)
{
    struct hs *hs = c->hs;
    struct rd body, list;
    if (b == NULL)
        return qtls_fail(c, SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_SIGALGS_EXTENSION);
    body = *b;
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


/* ---- ALPN (RFC 7301), required by QUIC (RFC 9001 §8.1) ---- */

static int write_alpn_ch(SSL *c, struct wr *w)
{
    if (c->alpn_len == 0) /* none configured (QUIC requires one: do_send_client_hello) */
        return EXT_NOT_SENT;
    size_t list = wr_open_vec(w, 2);
    wr_bytes(w, c->alpn, c->alpn_len);
    wr_close_vec(w, list, 2);
    return 1;
}

static int write_alpn_ee(SSL *c, struct wr *w)
{
    if (sbuf_len(&c->alpn_selected) == 0) /* over TCP a server may select none */
        return EXT_NOT_SENT;
    size_t list = wr_open_vec(w, 2);
    size_t name = wr_open_vec(w, 1);
    wr_bytes(w, sbuf_data(&c->alpn_selected), sbuf_len(&c->alpn_selected));
    wr_close_vec(w, name, 1);
    wr_close_vec(w, list, 2);
    return 1;
}

/*
 * RFC 7301 §3.1: the server's list holds exactly one name, one we offered. RFC 9001 §8.1: QUIC
 * requires ALPN; a server that ignored ours is fatal.
 */
static int client_take_alpn(SSL *c, const struct rd *b)
{
    struct rd body, list, name, offer, cand;
    if (b == NULL && c->tcp) /* over TCP a server may ignore ALPN */
        return 1;
    if (b == NULL)
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    body = *b;
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || !rd_vec8(&list, &name) ||
        !rd_empty(&list) || rd_empty(&name))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    rd_init(&offer, c->alpn, c->alpn_len);
    while (rd_vec8(&offer, &cand)) {
        if (cand.n == name.n && memcmp(cand.p, name.p, name.n) == 0) {
            if (!sbuf_set(&c->alpn_selected, name.p, name.n))
                return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
            return 1;
        }
    }
    return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INVALID_ALPN_PROTOCOL);
}

/* RFC 7301 §3.2 with RFC 9001 §8.1: no common protocol is no_application_protocol. */
static int server_select_alpn(SSL *c, const struct rd *b)
{
    struct rd body, list, probe, name;
    const unsigned char *out = NULL;
    unsigned char out_len = 0;
    SSL_CTX *ctx = c->ctx;
    if (b == NULL && c->tcp) /* over TCP a client may offer none */
        return 1;
    if (b == NULL)
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    body = *b;
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || rd_empty(&list))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    for (probe = list; !rd_empty(&probe);)
        if (!rd_vec8(&probe, &name) || rd_empty(&name))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    int r = ctx->alpn_select_cb == NULL
                ? SSL_TLSEXT_ERR_NOACK
                : ctx->alpn_select_cb(c, &out, &out_len, list.p, (unsigned)list.n,
                                      ctx->alpn_select_arg);
    /* Over TCP, as OpenSSL: no callback, or its NOACK, leaves ALPN out (RFC 7301 §3.2). */
    if (r == SSL_TLSEXT_ERR_NOACK && c->tcp)
        return 1;
    if (r != SSL_TLSEXT_ERR_OK)
        return qtls_fail(c, SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL);
    if (out == NULL || out_len == 0) /* the callback said yes to nothing */
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_INVALID_ALPN_PROTOCOL);
    if (!sbuf_set(&c->alpn_selected, out, out_len))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    return 1;
}


/* ---- supported_versions (RFC 8446 §4.2.1): TLS 1.3 is negotiated by it alone ---- */

static int write_versions_ch(SSL *c, struct wr *w)
{
    size_t list = wr_open_vec(w, 1);
    if (c->grease_enabled)
        wr_u16(w, grease_value(c, GREASE_VERSION));
    wr_u16(w, TLS1_3_VERSION);
    wr_close_vec(w, list, 1);
    return 1;
}

static int write_versions_sh(SSL *c, struct wr *w)
{
    wr_u16(w, TLS1_3_VERSION);
    return 1;
}

/* ProtocolVersion versions<2..254>, for the version check (server.c). */
static int hello_versions(SSL *c, const struct rd *body)
{
    struct rd b, list;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_vec8(&b, &list) || !rd_empty(&b) || list.n == 0 || list.n % 2 != 0)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    c->hs->hello.versions = list;
    return 1;
}

/* ProtocolVersion selected_version, for the version check (client.c). */
static int parse_versions_sh(SSL *c, const struct rd *body)
{
    struct rd b;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_u16(&b, &c->hs->hello.version) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* ---- psk_key_exchange_modes (RFC 8446 §4.2.9) ---- */

/* psk_dhe_ke only: lets the server issue tickets */
static int write_psk_modes(SSL *c, struct wr *w)
{
    size_t list = wr_open_vec(w, 1);
    if (c->grease_enabled)
        wr_u8(w, (uint8_t)grease_value(c, GREASE_PSK_MODE));
    wr_u8(w, 1);
    wr_close_vec(w, list, 1);
    return 1;
}

/* Kept for the PSK choice (resumption.c). */
static int hello_psk_modes(SSL *c, const struct rd *body)
{
    if (body != NULL)
        c->hs->hello.psk_modes = *body;
    return 1;
}

/* ---- key_share (RFC 8446 §4.2.8) ---- */

static int write_key_share_ch(SSL *c, struct wr *w)
{
    struct hs *hs = c->hs;
    size_t list = wr_open_vec(w, 2);
    /* RFC 8701 §3.1: a one-byte share for the GREASE group; not after HelloRetryRequest, whose
     * answer carries exactly the one share asked for (§4.2.8). */
    if (c->grease_enabled && !hs->hrr_done) {
        wr_u16(w, grease_value(c, GREASE_GROUP));
        wr_u16(w, 1);
        wr_u8(w, 0);
    }
    wr_bytes(w, hs->my_share.buf, wr_len(&hs->my_share)); /* the entries, client.c */
    wr_close_vec(w, list, 2);
    return 1;
}

static int write_key_share_sh(SSL *c, struct wr *w)
{
    wr_u16(w, c->hs->kex_group->id);
    size_t ke = wr_open_vec(w, 2);
    wr_bytes(w, c->hs->my_share.buf, wr_len(&c->hs->my_share));
    wr_close_vec(w, ke, 2);
    return 1;
}

/* HelloRetryRequest: NamedGroup selected_group. */
static int write_key_share_hrr(SSL *c, struct wr *w)
{
    wr_u16(w, c->hs->kex_group->id);
    return 1;
}

/* KeyShareEntry client_shares<0..2^16-1>, each well formed, for the group choice (server.c). */
static int hello_key_share(SSL *c, const struct rd *body)
{
    struct rd b, shares, scan, ke;
    uint16_t gid;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_vec16(&b, &shares) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    for (scan = shares; !rd_empty(&scan);)
        if (!rd_u16(&scan, &gid) || !rd_vec16(&scan, &ke) || rd_empty(&ke))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    c->hs->hello.shares = shares;
    return 1;
}

/* ServerHello: KeyShareEntry server_share, for the key exchange (client.c). */
static int parse_key_share_sh(SSL *c, const struct rd *body)
{
    struct rd b;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_u16(&b, &c->hs->hello.group) || !rd_vec16(&b, &c->hs->hello.share) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* HelloRetryRequest: NamedGroup selected_group (client.c). */
static int parse_key_share_hrr(SSL *c, const struct rd *body)
{
    struct rd b;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_u16(&b, &c->hs->hello.group) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* ---- cookie (RFC 8446 §4.2.2): the client echoes the HelloRetryRequest's ---- */

static int write_cookie(SSL *c, struct wr *w)
{
    struct hs *hs = c->hs;
    if (hs->cookie.len == 0)
        return EXT_NOT_SENT;
    size_t v = wr_open_vec(w, 2);
    wr_bytes(w, hs->cookie.buf, hs->cookie.len);
    wr_close_vec(w, v, 2);
    return 1;
}

/* opaque cookie<1..2^16-1>, kept for the second ClientHello. */
static int parse_cookie_hrr(SSL *c, const struct rd *body)
{
    struct rd b, cookie;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_vec16(&b, &cookie) || !rd_empty(&b) || rd_empty(&cookie))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    wr_reset(&c->hs->cookie);
    wr_bytes(&c->hs->cookie, cookie.p, cookie.n);
    return wr_ok(&c->hs->cookie) || qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
}

/* ---- quic_transport_parameters (RFC 9001 §8.2), and the draft codepoint ---- */

/* The codepoint rules of the contract: 0 sends both, otherwise only the one set. */
static int write_tp_ch(SSL *c, struct wr *w)
{
    if (c->local_tp_len == 0 || c->quic_tp_version == TLSEXT_TYPE_quic_transport_parameters_draft)
        return EXT_NOT_SENT;
    wr_bytes(w, c->local_tp, c->local_tp_len);
    return 1;
}

static int write_tp_draft_ch(SSL *c, struct wr *w)
{
    if (c->local_tp_len == 0 || c->quic_tp_version == TLSEXT_TYPE_quic_transport_parameters)
        return EXT_NOT_SENT;
    wr_bytes(w, c->local_tp, c->local_tp_len);
    return 1;
}

/* quictls: no transport parameters set, none sent; the client will fail */
static int write_tp_ee(SSL *c, struct wr *w)
{
    if (c->local_tp_len == 0 || !(c->hs->tp_codepoint_reply & 1))
        return EXT_NOT_SENT;
    wr_bytes(w, c->local_tp, c->local_tp_len);
    return 1;
}

static int write_tp_draft_ee(SSL *c, struct wr *w)
{
    if (c->local_tp_len == 0 || !(c->hs->tp_codepoint_reply & 2))
        return EXT_NOT_SENT;
    wr_bytes(w, c->local_tp, c->local_tp_len);
    return 1;
}

/* Kept for the draft row, which decides between the two (the row after this one). */
static int parse_tp(SSL *c, const struct rd *body)
{
    c->hs->hello.present &= ~(1u << EXT_QUIC_TP);
    if (body != NULL) {
        c->hs->hello.tp = *body;
        c->hs->hello.present |= 1u << EXT_QUIC_TP;
    }
    return 1;
}

/* Both codepoints read: quic.c takes one, or fails with missing_extension for neither. Over
   TCP there are no transport parameters: either codepoint is unsupported_extension. */
static int parse_tp_draft(SSL *c, const struct rd *body)
{
    int v1 = hello_has(c, EXT_QUIC_TP);
    if (c->tcp && (v1 || body != NULL))
        return qtls_fail(c, SSL_AD_UNSUPPORTED_EXTENSION, QTLS_R_UNEXPECTED_EXTENSION);
    if (c->tcp)
        return 1;
    return quic_take_peer_tp(c, v1 ? &c->hs->hello.tp : NULL, body);
}

/* ---- post_handshake_auth (RFC 8446 §4.2.6): TLS over TCP only (RFC 9001 §4.4) ---- */

/* struct {} PostHandshakeAuth, when SSL_set_post_handshake_auth asked for it (post_auth.c). */
static int write_pha(SSL *c, struct wr *w)
{
    return c->tcp && cold_peek(c)->post_handshake_auth ? 1 : EXT_NOT_SENT;
}

/*
 * Server: the client's offer, kept in hs->offered (on a server, what the client offered that
 * outlives the ClientHello) for post_auth.c at the handshake's end. A QUIC client must not offer
 * it: over QUIC it is ignored, and post-handshake authentication refused (post_auth.c).
 */
static int take_pha(SSL *c, const struct rd *body)
{
    if (body == NULL)
        return 1;
    if (!rd_empty(body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_POST_HANDSHAKE_AUTH_ENCODING_ERR);
    if (c->tcp)
        c->hs->offered |= 1u << EXT_POST_HANDSHAKE_AUTH;
    return 1;
}

/* ---- early_data (RFC 8446 §4.2.10), pre_shared_key (§4.2.11): resumption.c ---- */

/* In a ClientHello, early_data is struct {} Empty; kept for the 0-RTT decision. */
static int hello_early_data(SSL *c, const struct rd *body)
{
    if (body != NULL && !rd_empty(body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* Kept for the PSK choice (resumption.c). */
static int hello_psk(SSL *c, const struct rd *body)
{
    if (body != NULL)
        c->hs->hello.psk = *body;
    return 1;
}

/* ServerHello: uint16 selected_identity, for resumption.c. */
static int parse_psk_sh(SSL *c, const struct rd *body)
{
    struct rd b;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_u16(&b, &c->hs->hello.psk_identity) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    return 1;
}

/* ---- the table ---- */

#define W(m, f) [MSG_##m] = (f)
static const struct ext_row ext_table[EXT_COUNT] = {
    /* RFC 6066 §3 */
    [EXT_SERVER_NAME] = {EM_CH | EM_EE, .write = {W(CH, write_sni)},
                         .parse = {W(CH, parse_sni_ch), W(EE, parse_sni_ee)}},
    /* RFC 8446 §4.4.2.1, RFC 6066 §8: OCSP stapling (ocsp.c) */
    [EXT_STATUS_REQUEST] = {EM_CH | EM_CR | EM_CT,
                            .write = {W(CH, ocsp_client_write_request),
                                      W(CT, ocsp_server_write_response)},
                            .parse = {W(CH, ocsp_server_take_request),
                                      W(CT, ocsp_client_take_response)}},
    /* RFC 6962 §3.3, RFC 8446 §4.4.2.1: SCT lists (sct.c) */
    [EXT_SCT] = {EM_CH | EM_CR | EM_CT,
                 .write = {W(CH, sct_client_write_request), W(CT, sct_server_write_list)},
                 .parse = {W(CH, sct_server_take_request), W(CT, sct_client_take_list)}},
    /* RFC 8446 §4.2.4 (ca_list.c) */
    [EXT_CERTIFICATE_AUTHORITIES] = {EM_CH | EM_CR,
                                     .write = {W(CH, ca_list_client_write),
                                               W(CR, ca_list_server_write)},
                                     .parse = {W(CH, ca_list_take), W(CR, ca_list_take)}},
    /* RFC 8446 §4.2.7 */
    [EXT_SUPPORTED_GROUPS] = {EM_CH | EM_EE, .write = {W(CH, write_groups)},
                              .parse = {W(CH, sigalgs_take_peer_groups)}, .hello = hello_groups},
    /* RFC 8446 §4.2.3 */
    [EXT_SIGNATURE_ALGORITHMS] = {EM_CH | EM_CR,
                                  .write = {W(CH, write_sigalgs_ch), W(CR, write_sigalgs_cr)},
                                  .parse = {W(CH, take_sigalgs), W(CR, take_sigalgs)}},
    /* RFC 7301 §3, RFC 9001 §8.1 */
    [EXT_ALPN] = {EM_CH | EM_EE, .write = {W(CH, write_alpn_ch), W(EE, write_alpn_ee)},
                  .parse = {W(CH, server_select_alpn), W(EE, client_take_alpn)}},
    /* RFC 8446 §4.2.1 */
    [EXT_SUPPORTED_VERSIONS] = {EM_CH | EM_SH | EM_HRR,
                                .write = {W(CH, write_versions_ch), W(SH, write_versions_sh),
                                          W(HRR, write_versions_sh)},
                                .parse = {W(SH, parse_versions_sh), W(HRR, parse_versions_sh)},
                                .hello = hello_versions},
    /* RFC 8446 §4.2.9 */
    [EXT_PSK_KEY_EXCHANGE_MODES] = {EM_CH, .write = {W(CH, write_psk_modes)},
                                    .hello = hello_psk_modes},
    /* RFC 8446 §4.2.8 */
    [EXT_KEY_SHARE] = {EM_CH | EM_SH | EM_HRR,
                       .write = {W(CH, write_key_share_ch), W(SH, write_key_share_sh),
                                 W(HRR, write_key_share_hrr)},
                       .parse = {W(SH, parse_key_share_sh), W(HRR, parse_key_share_hrr)},
                       .hello = hello_key_share},
    /* RFC 8446 §4.2.2 */
    [EXT_COOKIE] = {EM_CH | EM_HRR, .write = {W(CH, write_cookie)},
                    .parse = {W(HRR, parse_cookie_hrr)}},
    /* RFC 9001 §8.2 */
    [EXT_QUIC_TP] = {EM_CH | EM_EE,
                     .write = {W(CH, write_tp_ch), W(EE, write_tp_ee)},
                     .parse = {W(CH, parse_tp), W(EE, parse_tp)}},
    [EXT_QUIC_TP_DRAFT] = {EM_CH | EM_EE,
                           .write = {W(CH, write_tp_draft_ch), W(EE, write_tp_draft_ee)},
                           .parse = {W(CH, parse_tp_draft), W(EE, parse_tp_draft)}},
    /* RFC 8879 §3: certificate compression (cert_comp.c) */
    [EXT_COMPRESS_CERTIFICATE] = {EM_CH | EM_CR,
                                  .write = {W(CH, cert_comp_write_request),
                                            W(CR, cert_comp_write_request)},
                                  .parse = {W(CH, cert_comp_take_offer),
                                            W(CR, cert_comp_take_offer)}},
    /* RFC 8446 §4.2.6, over TCP only (RFC 9001 §4.4): the exchanges are post_auth.c's */
    [EXT_POST_HANDSHAKE_AUTH] = {EM_CH, .write = {W(CH, write_pha)}, .parse = {W(CH, take_pha)}},
    /* RFC 8446 §4.2.10, RFC 9001 §4.6.1 (resumption.c) */
    [EXT_EARLY_DATA] = {EM_CH | EM_EE | EM_NST,
                        .write = {W(CH, psk_write_early_data_offer),
                                  W(EE, psk_write_early_data_accepted),
                                  W(NST, psk_write_ticket_early_data)},
                        .parse = {W(EE, psk_take_early_data_answer),
                                  W(NST, psk_take_ticket_early_data)},
                        .hello = hello_early_data},
    /* RFC 8446 §4.2.11 (resumption.c); written last */
    [EXT_PRE_SHARED_KEY] = {EM_CH | EM_SH,
                            .write = {W(CH, psk_write_offer), W(SH, psk_write_selected)},
                            .parse = {W(SH, parse_psk_sh)}, .hello = hello_psk},
    /* RFC 7685: never sent (QUIC pads its packets) */
    [EXT_PADDING] = {.allowed = EM_CH},
    /* RFC 8446 §4.2.3: the client's signature_algorithms covers certificates too */
    [EXT_SIGNATURE_ALGORITHMS_CERT] = {.allowed = EM_CH | EM_CR},
};
#undef W


/* ---- the loops ---- */

/* Row i's extension in msg, framed here: type, length, what the row writes. */
static int write_row(SSL *c, struct wr *w, int i, enum ext_msg_idx msg, uint32_t *sent)
{
    ext_write_fn *fn = ext_table[i].write[msg];
    if (fn == NULL)
        return 1;
    size_t start = wr_len(w);
    wr_u16(w, ext_codepoint((enum ext_idx)i));
    size_t body = wr_open_vec(w, 2);
    int r = fn(c, w);
    if (r == EXT_NOT_SENT) {
        wr_truncate(w, start);
        return 1;
    }
    wr_close_vec(w, body, 2);
    *sent |= 1u << i;
    return r;
}

int ext_write_client_hello(SSL *c, struct wr *w)
{
    uint32_t *sent = &c->hs->offered;
    *sent = 0;
    if (c->grease_enabled)
        write_grease_ext(c, w, GREASE_EXT1);
    for (int i = 0; i < EXT_COUNT; i++) {
        /* mid-list, never last: pre_shared_key must be (§4.2.11) */
        if (i == EXT_SUPPORTED_VERSIONS && c->grease_enabled)
            write_grease_ext(c, w, GREASE_EXT2);
        /* the application's (custom_ext.c), before early_data and pre_shared_key */
        if (i == EXT_EARLY_DATA && !custom_ext_write(c, SSL_EXT_CLIENT_HELLO, w))
            return 0;
        if (!write_row(c, w, i, MSG_CH, sent))
            return 0;
    }
    return 1;
}

int ext_write(SSL *c, enum ext_msg_idx msg, struct wr *w)
{
    uint32_t sent = 0;
    for (int i = 0; i < EXT_COUNT; i++)
        if (!write_row(c, w, i, msg, &sent))
            return 0;
    if (msg == MSG_EE) /* the application's answers (custom_ext.c) */
        return custom_ext_write(c, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS, w);
    if (msg == MSG_NST && c->grease_enabled)
        return write_grease_nst(c, w);
    return 1;
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


/* The SSL_EXT_* context that custom extensions (custom_ext.c) name a TLS 1.3 message by. */
static unsigned custom_context(enum ext_msg msg)
{
    switch (msg) {
    case EM_CH:
        return SSL_EXT_CLIENT_HELLO;
    case EM_SH:
        return SSL_EXT_TLS1_3_SERVER_HELLO;
    case EM_HRR:
        return SSL_EXT_TLS1_3_HELLO_RETRY_REQUEST;
    case EM_EE:
        return SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS;
    case EM_CT:
        return SSL_EXT_TLS1_3_CERTIFICATE;
    case EM_CR:
        return SSL_EXT_TLS1_3_CERTIFICATE_REQUEST;
    case EM_NST:
        return SSL_EXT_TLS1_3_NEW_SESSION_TICKET;
    }
    return 0;
}

/*
 * Splits an Extension list: rejects duplicates and extensions not allowed in `msg`
 * (illegal_parameter), and in a reply (anything but a ClientHello, CertificateRequest or
 * NewSessionTicket) extensions the client did not offer (unsupported_extension). Unknown
 * extensions are ignored in those requests and rejected elsewhere; an application's custom
 * extension passes where it was added for the message and is illegal_parameter elsewhere.
 */
static int split(SSL *c, enum ext_msg msg, struct rd list, uint32_t offered, struct ext_set *out)
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
            int custom = custom_ext_claims(c, type, custom_context(msg));
            /* §4.2: a known extension in a message it is not for (OpenSSL's verify_extension). */
            if (custom < 0)
                return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_EXTENSION);
            if (is_request || custom)
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

/* Every row's parser for msg, in table order, with its body or NULL. */
static int parse_rows(SSL *c, enum ext_msg_idx msg, const struct ext_set *e)
{
    for (int i = 0; i < EXT_COUNT; i++) {
        ext_parse_fn *fn = ext_table[i].parse[msg];
        if (fn != NULL && !fn(c, ext_has(e, (enum ext_idx)i) ? &e->body[i] : NULL))
            return 0;
    }
    return 1;
}

int ext_parse(SSL *c, enum ext_msg_idx msg, struct rd list)
{
    struct ext_set e;
    /* What may answer: the client's offer (a ClientHello's rows), nothing for requests. */
    uint32_t offered = c->server || c->hs == NULL ? 0 : c->hs->offered;
    if (!split(c, (enum ext_msg)(1u << msg), list, offered, &e))
        return 0;
    if (c->hs != NULL) { /* NewSessionTicket comes after the handshake */
        memset(&c->hs->hello, 0, sizeof(c->hs->hello));
        c->hs->hello.present = e.present;
    }
    if (!parse_rows(c, msg, &e))
        return 0;
    if (msg == MSG_EE) /* the application's (custom_ext.c) */
        return custom_ext_parse(c, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS, list);
    return 1;
}

int ext_read_client_hello(SSL *c, struct rd list, struct ext_set *e)
{
    memset(&c->hs->hello, 0, sizeof(c->hs->hello));
    if (!split(c, EM_CH, list, 0, e))
        return 0;
    c->hs->hello.present = e->present;
    for (int i = 0; i < EXT_COUNT; i++) {
        ext_parse_fn *fn = ext_table[i].hello;
        if (fn != NULL && !fn(c, ext_has(e, (enum ext_idx)i) ? &e->body[i] : NULL))
            return 0;
    }
    return 1;
}

int ext_parse_client_hello(SSL *c, const struct ext_set *e, struct rd list, int first)
{
    if (first && !parse_rows(c, MSG_CH, e))
        return 0;
    return custom_ext_parse(c, SSL_EXT_CLIENT_HELLO, list); /* each ClientHello, as OpenSSL */
}
