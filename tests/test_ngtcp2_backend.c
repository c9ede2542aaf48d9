/*
 * libqtls_ngtcp2: the ngtcp2 0.12 crypto backend on qtls, driven by ngtcp2
 * itself (libngtcp2-dev).
 *
 *   - Initial keys: the backend's ngtcp2_crypto_derive_and_install_initial_key
 *     gives RFC 9001 A.1's secrets and keys; its AEAD and header protection
 *     reproduce A.2's protected client Initial; an ngtcp2 server whose keys it
 *     installed opens the RFC's A.2 packet and finds the ClientHello in it;
 *     HKDF against RFC 5869; key derivation against qtls's own helpers.
 *   - Whole connections: an ngtcp2 client and server, each with qtls as TLS
 *     through the backend's callbacks and SSL_QUIC_METHOD, exchange packets in
 *     memory until both complete the handshake, then a request and a response
 *     on a stream, across 1-RTT key updates; per suite, with a Retry, in the
 *     QUIC v2 draft, with resumption and accepted 0-RTT, and a refused ALPN
 *     that ends in a CRYPTO_ERROR carrying the TLS alert.
 *   - Tokens: Retry and NEW_TOKEN tokens round-trip and any change fails;
 *     stateless reset tokens are deterministic, and equal to those of
 *     libngtcp2_crypto_gnutls when that library can be loaded (dlopen).
 *   - The small API: level mapping, context configuration, refusals.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include "mock_quic.h"
#include "ngtcp2/backend.h"
#include "qtls/ngtcp2_crypto_qtls.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex) / 2;
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

static void assert_hex(const uint8_t *got, size_t len, const char *want_hex)
{
    uint8_t want[2048];
    assert_int_equal(unhex(want_hex, want, sizeof(want)), len);
    assert_memory_equal(got, want, len);
}

static ngtcp2_cid cid_from_hex(const char *hex)
{
    uint8_t b[NGTCP2_MAX_CIDLEN];
    ngtcp2_cid cid;
    ngtcp2_cid_init(&cid, b, unhex(hex, b, sizeof(b)));
    return cid;
}

static ngtcp2_cid random_cid(size_t len)
{
    uint8_t b[NGTCP2_MAX_CIDLEN];
    ngtcp2_cid cid;
    assert_int_equal(RAND_bytes(b, (int)len), 1);
    ngtcp2_cid_init(&cid, b, len);
    return cid;
}

static void fill_random(uint8_t *dest, size_t destlen, const ngtcp2_rand_ctx *rand_ctx)
{
    (void)rand_ctx;
    assert_int_equal(RAND_bytes(dest, (int)destlen), 1);
}

static const uint8_t static_secret[32] = "qtls ngtcp2 backend test secret";

static int get_new_connection_id(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token,
                                 size_t cidlen, void *user_data)
{
    (void)conn;
    (void)user_data;
    *cid = random_cid(cidlen);
    return ngtcp2_crypto_generate_stateless_reset_token(token, static_secret,
                                                        sizeof(static_secret), cid) == 0
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
}

struct peer;
static const char *peer_name(const struct peer *p);

/* ngtcp2's log (QTLS_NGTCP2_LOG=1); its user data is the connection's, a struct peer. */
static void log_printf(void *user_data, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[%s] ", user_data != NULL ? peer_name(user_data) : "-");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* RFC 9001 A.1-A.3: the client's Destination Connection ID. */
static const char DCID[] = "8394c8f03e515708";

/* RFC 9001 A.2: the client's CRYPTO frame (ClientHello), zero-padded to a 1162-byte payload. */
static const char A2_CRYPTO[] =
    "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
    "04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
    "616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
    "04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
    "baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
    "0d0010000e0403050306030203080408050806002d00020101001c0002400100"
    "3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
    "75300901100f088394c8f03e51570806048000ffff";

/* RFC 9001 A.2: the protected client Initial, all 1200 bytes. */
static const char A2_PACKET[] =
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
    "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
    "1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
    "8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
    "30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
    "457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208"
    "4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec"
    "4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3"
    "485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db"
    "059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c"
    "7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
    "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556"
    "be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74"
    "68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a"
    "c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00"
    "f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632"
    "291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964"
    "25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd"
    "14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff"
    "ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198"
    "e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd"
    "c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
    "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f"
    "cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e"
    "fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade"
    "a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047"
    "90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2"
    "162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4"
    "40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0"
    "6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e"
    "8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0"
    "be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400"
    "54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
    "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9"
    "f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4"
    "056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064"
    "7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241"
    "e221af44860018ab0856972e194cd934";

/* RFC 9001 A.1 */
static const char A1_INITIAL_SECRET[] =
    "7db5df06e7a69e432496adedb00851923595221596ae2ae9fb8115c1e9ed0a44";
static const char A1_CLIENT_SECRET[] =
    "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea";
static const char A1_CLIENT_KEY[] = "1f369613dd76d5467730efcbe3b1a22d";
static const char A1_CLIENT_IV[] = "fa044b2f42a3fd3b46fb255c";
static const char A1_CLIENT_HP[] = "9f50449e04a0e810283a1e9933adedd2";
static const char A1_SERVER_SECRET[] =
    "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b";
static const char A1_SERVER_KEY[] = "cf3a5331653c364c88f0f379b6067e37";
static const char A1_SERVER_IV[] = "0ac1493ca1905853b0bba03e";
static const char A1_SERVER_HP[] = "c206b8d9b9f0f37644430b490eeaa314";

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

struct peer {
    const char *name;
    int server;
    ngtcp2_conn *conn;
    SSL *ssl;
    ngtcp2_crypto_conn_ref ref;
    struct sockaddr_in addr, peer_addr;
    /* one stream of application data each way */
    int64_t stream_id;
    uint8_t tx[8192];
    size_t tx_len, tx_off;
    int tx_fin, tx_fin_sent;
    uint8_t rx[8192];
    size_t rx_len;
    int rx_fin;
    size_t rx_before_handshake; /* stream bytes received before the handshake completed */
    int crypto_levels_seen;     /* bit per ngtcp2_crypto_level of recv_crypto_data */
    int read_error;             /* the first ngtcp2_conn_read_pkt error */
    int key_updates;            /* update_key callbacks */
};

struct world {
    ngtcp2_tstamp ts;
    SSL_CTX *cctx, *sctx;
    struct peer client, server;
    uint32_t version;
    int use_retry, retry_sent;
    int log;
    /* what the server was configured with, after a Retry */
    ngtcp2_cid odcid, retry_scid;
    int have_retry_scid;
    /* the early-data (0-RTT) setup of the client */
    SSL_SESSION *session;
    ngtcp2_transport_params early_params;
    int have_early_params;
    const char *early_request;
};

static const char *peer_name(const struct peer *p) { return p->name; }

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct peer *)ref->user_data)->conn;
}

static int recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
                            uint64_t offset, const uint8_t *data, size_t datalen,
                            void *user_data, void *stream_user_data)
{
    struct peer *p = user_data;
    (void)stream_user_data;
    assert_true(offset + datalen <= sizeof(p->rx));
    memcpy(p->rx + offset, data, datalen);
    if (offset + datalen > p->rx_len)
        p->rx_len = (size_t)(offset + datalen);
    if (!ngtcp2_conn_get_handshake_completed(conn))
        p->rx_before_handshake += datalen;
    if (flags & NGTCP2_STREAM_DATA_FLAG_FIN)
        p->rx_fin = 1;
    p->stream_id = stream_id;
    ngtcp2_conn_extend_max_stream_offset(conn, stream_id, datalen);
    ngtcp2_conn_extend_max_offset(conn, datalen);
    return 0;
}

/* Wraps the backend's callback to record which levels carried CRYPTO data. */
static int recv_crypto_data(ngtcp2_conn *conn, ngtcp2_crypto_level level, uint64_t offset,
                            const uint8_t *data, size_t datalen, void *user_data)
{
    struct peer *p = user_data;
    p->crypto_levels_seen |= 1 << level;
    return ngtcp2_crypto_recv_crypto_data_cb(conn, level, offset, data, datalen, user_data);
}

/* Wraps the backend's callback to count key generations. */
static int update_key(ngtcp2_conn *conn, uint8_t *rx_secret, uint8_t *tx_secret,
                      ngtcp2_crypto_aead_ctx *rx_aead_ctx, uint8_t *rx_iv,
                      ngtcp2_crypto_aead_ctx *tx_aead_ctx, uint8_t *tx_iv,
                      const uint8_t *current_rx_secret, const uint8_t *current_tx_secret,
                      size_t secretlen, void *user_data)
{
    struct peer *p = user_data;
    if (p != NULL)
        p->key_updates++;
    return ngtcp2_crypto_update_key_cb(conn, rx_secret, tx_secret, rx_aead_ctx, rx_iv,
                                       tx_aead_ctx, tx_iv, current_rx_secret, current_tx_secret,
                                       secretlen, user_data);
}

static void set_callbacks(ngtcp2_callbacks *cb, int server)
{
    memset(cb, 0, sizeof(*cb));
    if (server)
        cb->recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
    else {
        cb->client_initial = ngtcp2_crypto_client_initial_cb;
        cb->recv_retry = ngtcp2_crypto_recv_retry_cb;
    }
    cb->recv_crypto_data = recv_crypto_data;
    cb->encrypt = ngtcp2_crypto_encrypt_cb;
    cb->decrypt = ngtcp2_crypto_decrypt_cb;
    cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb->recv_stream_data = recv_stream_data;
    cb->rand = fill_random;
    cb->get_new_connection_id = get_new_connection_id;
    cb->update_key = update_key;
    cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
}

static void settings_and_params(struct world *w, struct peer *p, ngtcp2_settings *settings,
                                ngtcp2_transport_params *params)
{
    ngtcp2_settings_default(settings);
    settings->initial_ts = w->ts;
    if (w->log)
        settings->log_printf = log_printf;
    ngtcp2_transport_params_default(params);
    params->initial_max_streams_bidi = 4;
    params->initial_max_stream_data_bidi_local = 256 * 1024;
    params->initial_max_stream_data_bidi_remote = 256 * 1024;
    params->initial_max_data = 1024 * 1024;
    params->max_idle_timeout = 30 * NGTCP2_SECONDS;
    (void)p;
}

static void addr_init(struct sockaddr_in *sa, uint16_t port)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void path_of(struct peer *p, ngtcp2_path *path)
{
    path->local.addr = (ngtcp2_sockaddr *)&p->addr;
    path->local.addrlen = sizeof(p->addr);
    path->remote.addr = (ngtcp2_sockaddr *)&p->peer_addr;
    path->remote.addrlen = sizeof(p->peer_addr);
    path->user_data = NULL;
}

static void peer_ssl(struct peer *p, SSL_CTX *ctx)
{
    p->ssl = SSL_new(ctx);
    assert_non_null(p->ssl);
    p->ref.get_conn = get_conn;
    p->ref.user_data = p;
    SSL_set_app_data(p->ssl, &p->ref);
    ngtcp2_conn_set_tls_native_handle(p->conn, p->ssl);
}

static void client_new(struct world *w)
{
    struct peer *c = &w->client;
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_path path;
    ngtcp2_cid dcid = random_cid(18), scid = random_cid(8);

    c->name = "client";
    c->stream_id = -1;
    addr_init(&c->addr, 40000);
    addr_init(&c->peer_addr, 4433);
    path_of(c, &path);
    set_callbacks(&cb, 0);
    settings_and_params(w, c, &settings, &params);
    assert_int_equal(ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &path, w->version, &cb,
                                            &settings, &params, NULL, c),
                     0);
    peer_ssl(c, w->cctx);
    SSL_set_connect_state(c->ssl);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
    if (w->session != NULL) {
        assert_int_equal(SSL_set_session(c->ssl, w->session), 1);
        SSL_set_quic_early_data_enabled(c->ssl, 1);
        assert_true(w->have_early_params);
        ngtcp2_conn_set_early_remote_transport_params(c->conn, &w->early_params);
    }
}

/*
 * A server connection for the client's first Initial (RFC 9000 §7.2: the
 * server's first DCID is the client's SCID; its original_dcid parameter is
 * the client's first DCID, and after a Retry retry_scid is the Retry's SCID).
 */
static void server_new(struct world *w, const ngtcp2_pkt_hd *hd)
{
    struct peer *s = &w->server;
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_path path;
    ngtcp2_cid scid = random_cid(8);

    s->name = "server";
    s->server = 1;
    s->stream_id = -1;
    addr_init(&s->addr, 4433);
    addr_init(&s->peer_addr, 40000);
    path_of(s, &path);
    set_callbacks(&cb, 1);
    settings_and_params(w, s, &settings, &params);
    settings.token = hd->token;
    params.stateless_reset_token_present = 1;
    assert_int_equal(ngtcp2_crypto_generate_stateless_reset_token(
                         params.stateless_reset_token, static_secret, sizeof(static_secret),
                         &scid),
                     0);
    if (w->have_retry_scid) {
        params.original_dcid = w->odcid;
        params.retry_scid = w->retry_scid;
        params.retry_scid_present = 1;
    } else {
        params.original_dcid = hd->dcid;
    }
    assert_int_equal(ngtcp2_conn_server_new(&s->conn, &hd->scid, &scid, &path, hd->version, &cb,
                                            &settings, &params, NULL, s),
                     0);
    peer_ssl(s, w->sctx);
    SSL_set_accept_state(s->ssl);
    SSL_set_quic_early_data_enabled(s->ssl, 1);
}

static void deliver(struct world *w, struct peer *to, const uint8_t *pkt, size_t len);

/* RFC 9000 §8.1.2: a Retry carrying a token that proves the client's address. */
static void server_send_retry(struct world *w, const ngtcp2_pkt_hd *hd)
{
    uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN], pkt[1500];
    ngtcp2_cid retry_scid = random_cid(8);
    struct sockaddr_in client_addr;
    ngtcp2_ssize tokenlen, n;

    addr_init(&client_addr, 40000);
    tokenlen = ngtcp2_crypto_generate_retry_token(
        token, static_secret, sizeof(static_secret), hd->version,
        (const ngtcp2_sockaddr *)&client_addr, sizeof(client_addr), &retry_scid, &hd->dcid, w->ts);
    assert_int_equal(tokenlen, NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN);
    n = ngtcp2_crypto_write_retry(pkt, sizeof(pkt), hd->version, &hd->scid, &retry_scid, &hd->dcid,
                                  token, (size_t)tokenlen);
    assert_true(n > 0);
    w->retry_sent = 1;
    deliver(w, &w->client, pkt, (size_t)n);
}

/* The server's stateless front: Retry first if asked to, then a connection. */
static void server_accept(struct world *w, const uint8_t *pkt, size_t len)
{
    ngtcp2_pkt_hd hd;
    struct sockaddr_in client_addr;

    assert_int_equal(ngtcp2_accept(&hd, pkt, len), 0);
    if (w->use_retry && hd.token.len == 0) {
        server_send_retry(w, &hd);
        return;
    }
    if (w->use_retry) {
        addr_init(&client_addr, 40000);
        assert_int_equal(hd.token.base[0], NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY);
        assert_int_equal(ngtcp2_crypto_verify_retry_token(
                             &w->odcid, hd.token.base, hd.token.len, static_secret,
                             sizeof(static_secret), hd.version,
                             (const ngtcp2_sockaddr *)&client_addr, sizeof(client_addr), &hd.dcid,
                             10 * NGTCP2_SECONDS, w->ts),
                         0);
        w->retry_scid = hd.dcid;
        w->have_retry_scid = 1;
    }
    server_new(w, &hd);
}

static void deliver(struct world *w, struct peer *to, const uint8_t *pkt, size_t len)
{
    ngtcp2_path path;
    int rv;

    if (to->server && to->conn == NULL) {
        server_accept(w, pkt, len);
        if (to->conn == NULL)
            return; /* answered statelessly */
    }
    path_of(to, &path);
    rv = ngtcp2_conn_read_pkt(to->conn, &path, NULL, pkt, len, w->ts);
    if (rv != 0 && to->read_error == 0)
        to->read_error = rv;
    if (rv != 0 && w->log)
        fprintf(stderr, "%s: read_pkt: %s\n", to->name, ngtcp2_strerror(rv));
}

/* Writes everything `from` has to send (stream data first) and delivers it to `to`. */
static int flush(struct world *w, struct peer *from, struct peer *to)
{
    for (int i = 0; i < 64; i++) {
        uint8_t buf[1452];
        ngtcp2_path path;
        ngtcp2_vec v = {from->tx + from->tx_off, from->tx_len - from->tx_off};
        int pending = from->tx_off < from->tx_len || (from->tx_fin && !from->tx_fin_sent);
        int64_t sid = pending ? from->stream_id : -1;
        uint32_t flags = from->tx_fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0;
        ngtcp2_ssize datalen = -1, n;

        path_of(from, &path);
        n = ngtcp2_conn_writev_stream(from->conn, &path, NULL, buf, sizeof(buf), &datalen, flags,
                                      sid, &v, sid >= 0 ? 1 : 0, w->ts);
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR ||
            n == NGTCP2_ERR_STREAM_NOT_FOUND) {
            n = ngtcp2_conn_write_pkt(from->conn, &path, NULL, buf, sizeof(buf), w->ts);
            datalen = -1;
        }
        if (n < 0)
            return (int)n;
        if (datalen >= 0) {
            from->tx_off += (size_t)datalen;
            if (from->tx_off == from->tx_len && from->tx_fin)
                from->tx_fin_sent = 1;
        }
        if (n == 0)
            return 0;
        deliver(w, to, buf, (size_t)n);
    }
    return 0;
}

static void expire(struct world *w, struct peer *p)
{
    if (p->conn != NULL && ngtcp2_conn_get_expiry(p->conn) <= w->ts)
        ngtcp2_conn_handle_expiry(p->conn, w->ts);
}

/* One round trip of the simulated network: 1 ms passes, each side sends what it has. */
static int step(struct world *w)
{
    int rv;
    w->ts += NGTCP2_MILLISECONDS;
    expire(w, &w->client);
    expire(w, &w->server);
    if ((rv = flush(w, &w->client, &w->server)) != 0)
        return rv;
    if (w->server.conn != NULL && (rv = flush(w, &w->server, &w->client)) != 0)
        return rv;
    return 0;
}

static int both_completed(struct world *w)
{
    return w->server.conn != NULL && ngtcp2_conn_get_handshake_completed(w->client.conn) &&
           ngtcp2_conn_get_handshake_completed(w->server.conn);
}

/* Steps until done(w) or a limit; returns the number of steps, or -1. */
static int run_until(struct world *w, int (*done)(struct world *), int limit)
{
    for (int i = 0; i < limit; i++) {
        if (done(w))
            return i;
        int rv = step(w);
        if (rv != 0) {
            if (w->log)
                fprintf(stderr, "step: %s\n", ngtcp2_strerror(rv));
            return -1;
        }
    }
    return done(w) ? limit : -1;
}

static struct world *current_world; /* for the session callback */

static int new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
    struct world *w = current_world;
    (void)ssl;
    if (w->session != NULL)
        SSL_SESSION_free(w->session);
    w->session = sess;
    return 1; /* keep it */
}

static void peers_init(struct world *w)
{
    memset(&w->client, 0, sizeof(w->client));
    memset(&w->server, 0, sizeof(w->server));
    w->client.name = "client";
    w->server.name = "server";
    w->server.server = 1;
    w->client.stream_id = w->server.stream_id = -1;
}

static void world_init(struct world *w, const char *suites)
{
    memset(w, 0, sizeof(*w));
    current_world = w;
    peers_init(w);
    w->ts = 1000 * NGTCP2_SECONDS;
    w->version = NGTCP2_PROTO_VER_V1;
    w->log = getenv("QTLS_NGTCP2_LOG") != NULL;
    w->cctx = mock_client_ctx();
    w->sctx = mock_server_ctx("ecdsa256");
    assert_non_null(w->cctx);
    assert_non_null(w->sctx);
    assert_int_equal(ngtcp2_crypto_qtls_configure_client_context(w->cctx), 0);
    assert_int_equal(ngtcp2_crypto_qtls_configure_server_context(w->sctx), 0);
    /* As ngtcp2's example server: every QUIC suite, CCM included (not in OpenSSL's default). */
    assert_int_equal(SSL_CTX_set_ciphersuites(w->sctx, "TLS_AES_128_GCM_SHA256:"
                                                       "TLS_AES_256_GCM_SHA384:"
                                                       "TLS_CHACHA20_POLY1305_SHA256:"
                                                       "TLS_AES_128_CCM_SHA256"),
                     1);
    if (suites != NULL)
        assert_int_equal(SSL_CTX_set_ciphersuites(w->cctx, suites), 1);
    SSL_CTX_set_session_cache_mode(w->cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(w->cctx, new_session_cb);
    SSL_CTX_set_max_early_data(w->sctx, UINT32_MAX);
}

static void peer_free(struct peer *p)
{
    ngtcp2_conn_del(p->conn);
    SSL_free(p->ssl);
    p->conn = NULL;
    p->ssl = NULL;
}

/* Ends one connection, keeping the contexts and the client's session. */
static void world_reset_conns(struct world *w)
{
    peer_free(&w->client);
    peer_free(&w->server);
    peers_init(w);
    w->retry_sent = 0;
    w->have_retry_scid = 0;
}

static void world_free(struct world *w)
{
    world_reset_conns(w);
    SSL_SESSION_free(w->session);
    SSL_CTX_free(w->cctx);
    SSL_CTX_free(w->sctx);
}

static void queue_tx(struct peer *p, const char *text, int fin)
{
    size_t n = strlen(text);
    assert_true(p->tx_len + n <= sizeof(p->tx));
    memcpy(p->tx + p->tx_len, text, n);
    p->tx_len += n;
    p->tx_fin = fin;
}

static int exchange_done(struct world *w)
{
    return w->server.rx_fin && w->client.rx_fin && w->client.tx_fin_sent &&
           w->server.tx_fin_sent;
}

static int request_arrived(struct world *w) { return w->server.rx_fin; }

/*
 * The client sends a request on a new bidirectional stream; the server
 * answers on it; each side then has the other's bytes and FIN.
 */
static void reset_stream(struct peer *p)
{
    p->stream_id = -1;
    p->tx_len = p->tx_off = p->rx_len = 0;
    p->tx_fin = p->tx_fin_sent = p->rx_fin = 0;
}

static void request_response(struct world *w, const char *request, const char *response)
{
    reset_stream(&w->client);
    reset_stream(&w->server);
    assert_int_equal(ngtcp2_conn_open_bidi_stream(w->client.conn, &w->client.stream_id, NULL), 0);
    queue_tx(&w->client, request, 1);
    assert_true(run_until(w, request_arrived, 200) >= 0);
    assert_int_equal(w->server.rx_len, strlen(request));
    assert_memory_equal(w->server.rx, request, strlen(request));
    queue_tx(&w->server, response, 1);
    assert_true(run_until(w, exchange_done, 200) >= 0);
    assert_int_equal(w->client.rx_len, strlen(response));
    assert_memory_equal(w->client.rx, response, strlen(response));
    assert_int_equal(w->client.rx_fin, 1);
}

static void handshake(struct world *w)
{
    client_new(w);
    int steps = run_until(w, both_completed, 200);
    assert_true(steps >= 0);
    /* The handshake went through every level, and the server's SSL agrees it is done. */
    assert_true(w->client.crypto_levels_seen & (1 << NGTCP2_CRYPTO_LEVEL_INITIAL));
    assert_true(w->client.crypto_levels_seen & (1 << NGTCP2_CRYPTO_LEVEL_HANDSHAKE));
    assert_true(w->server.crypto_levels_seen & (1 << NGTCP2_CRYPTO_LEVEL_HANDSHAKE));
    assert_int_equal(SSL_is_init_finished(w->server.ssl), 1);
    assert_int_equal(SSL_is_init_finished(w->client.ssl), 1);
    assert_int_equal(ngtcp2_conn_get_negotiated_version(w->client.conn), w->version);
}

/* Both sides' 1-RTT AEAD is the suite TLS negotiated. */
static void assert_suite(struct world *w, uint32_t suite)
{
    assert_int_equal(SSL_CIPHER_get_id(SSL_get_current_cipher(w->client.ssl)), suite);
    assert_int_equal(qn_aead_suite(&ngtcp2_conn_get_crypto_ctx(w->client.conn)->aead), suite);
    assert_int_equal(qn_aead_suite(&ngtcp2_conn_get_crypto_ctx(w->server.conn)->aead), suite);
}

/* RFC 9001 §6: the client updates keys, data flows, then the server updates too. */
static void key_updates(struct world *w)
{
    /* A key update needs the handshake confirmed on the initiator, and ngtcp2 allows the
     * next one only 3 PTOs after the previous one (RFC 9001 §6.5): wait 300 ms each time. */
    int before_c = w->client.key_updates, before_s = w->server.key_updates;
    for (int i = 0; i < 300; i++)
        assert_int_equal(step(w), 0);
    assert_int_equal(ngtcp2_conn_initiate_key_update(w->client.conn, w->ts), 0);
    request_response(w, "during the first update", "ok");
    for (int i = 0; i < 300; i++)
        assert_int_equal(step(w), 0);
    assert_int_equal(ngtcp2_conn_initiate_key_update(w->server.conn, w->ts), 0);
    request_response(w, "during the second update", "ok");
    for (int i = 0; i < 300; i++)
        assert_int_equal(step(w), 0);
    /* Each update makes each side derive the next generation (update_key callback). */
    assert_true(w->client.key_updates >= before_c + 2);
    assert_true(w->server.key_updates >= before_s + 2);
}

/* ------------------------------------------------------------------ */
/* Initial keys (RFC 9001 A.1, A.2), HKDF (RFC 5869)                   */
/* ------------------------------------------------------------------ */

/* A connection object only as a place to install keys in (no TLS, nothing written). */
static ngtcp2_conn *bare_conn(int server, const ngtcp2_cid *dcid, void *user_data)
{
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    struct sockaddr_in a, b;
    ngtcp2_path path;
    ngtcp2_cid scid = random_cid(8);
    ngtcp2_conn *conn;

    addr_init(&a, 1);
    addr_init(&b, 2);
    path.local.addr = (ngtcp2_sockaddr *)&a;
    path.local.addrlen = sizeof(a);
    path.remote.addr = (ngtcp2_sockaddr *)&b;
    path.remote.addrlen = sizeof(b);
    path.user_data = NULL;
    set_callbacks(&cb, server);
    ngtcp2_settings_default(&settings);
    ngtcp2_transport_params_default(&params);
    if (server) {
        params.original_dcid = *dcid;
        assert_int_equal(ngtcp2_conn_server_new(&conn, &scid, dcid, &path, NGTCP2_PROTO_VER_V1,
                                                &cb, &settings, &params, NULL, user_data),
                         0);
    } else {
        assert_int_equal(ngtcp2_conn_client_new(&conn, dcid, &scid, &path, NGTCP2_PROTO_VER_V1,
                                                &cb, &settings, &params, NULL, user_data),
                         0);
    }
    return conn;
}

struct initial_out {
    uint8_t rx_secret[32], tx_secret[32], initial_secret[32];
    uint8_t rx_key[16], rx_iv[12], rx_hp[16], tx_key[16], tx_iv[12], tx_hp[16];
};

static void install_initial(ngtcp2_conn *conn, const ngtcp2_cid *dcid, struct initial_out *o)
{
    assert_int_equal(ngtcp2_crypto_derive_and_install_initial_key(
                         conn, o->rx_secret, o->tx_secret, o->initial_secret, o->rx_key, o->rx_iv,
                         o->rx_hp, o->tx_key, o->tx_iv, o->tx_hp, NGTCP2_PROTO_VER_V1, dcid),
                     0);
}

/* RFC 9001 A.1, as installed by each role: the client seals with the client keys. */
static void test_initial_keys_rfc9001_a1(void **state)
{
    (void)state;
    ngtcp2_cid dcid = cid_from_hex(DCID);
    struct initial_out o;

    ngtcp2_conn *client = bare_conn(0, &dcid, NULL);
    install_initial(client, &dcid, &o);
    assert_hex(o.initial_secret, 32, A1_INITIAL_SECRET);
    assert_hex(o.tx_secret, 32, A1_CLIENT_SECRET);
    assert_hex(o.tx_key, 16, A1_CLIENT_KEY);
    assert_hex(o.tx_iv, 12, A1_CLIENT_IV);
    assert_hex(o.tx_hp, 16, A1_CLIENT_HP);
    assert_hex(o.rx_secret, 32, A1_SERVER_SECRET);
    assert_hex(o.rx_key, 16, A1_SERVER_KEY);
    assert_hex(o.rx_iv, 12, A1_SERVER_IV);
    assert_hex(o.rx_hp, 16, A1_SERVER_HP);
    /* The initial context is AES-128-GCM / SHA-256 / AES-128 header protection. */
    const ngtcp2_crypto_ctx *ctx = ngtcp2_conn_get_initial_crypto_ctx(client);
    assert_int_equal(qn_aead_suite(&ctx->aead), QTLS_QUIC_SUITE_AES_128_GCM_SHA256);
    assert_int_equal(ngtcp2_crypto_md_hashlen(&ctx->md), 32);
    assert_int_equal(ctx->aead.max_overhead, 16);
    ngtcp2_conn_del(client);

    ngtcp2_conn *server = bare_conn(1, &dcid, NULL);
    install_initial(server, &dcid, &o);
    assert_hex(o.rx_secret, 32, A1_CLIENT_SECRET);
    assert_hex(o.rx_key, 16, A1_CLIENT_KEY);
    assert_hex(o.tx_secret, 32, A1_SERVER_SECRET);
    assert_hex(o.tx_hp, 16, A1_SERVER_HP);
    ngtcp2_conn_del(server);

    /* And the lower-level derivation from the client secret alone. */
    uint8_t secret[32], key[16], iv[12], hp[16];
    ngtcp2_crypto_ctx ictx;
    ngtcp2_crypto_ctx_initial(&ictx);
    unhex(A1_CLIENT_SECRET, secret, sizeof(secret));
    assert_int_equal(ngtcp2_crypto_derive_packet_protection_key(
                         key, iv, hp, NGTCP2_PROTO_VER_V1, &ictx.aead, &ictx.md, secret, 32),
                     0);
    assert_hex(key, 16, A1_CLIENT_KEY);
    assert_hex(iv, 12, A1_CLIENT_IV);
    assert_hex(hp, 16, A1_CLIENT_HP);
}

/*
 * RFC 9001 A.2 through the backend's per-packet primitives: the payload
 * sealed with the A.1 key and the packet-number nonce is the RFC's
 * ciphertext; the sample's mask is the RFC's; it opens again, and a changed
 * byte does not (leaving nothing on the OpenSSL error queue).
 */
static void test_client_initial_rfc9001_a2(void **state)
{
    (void)state;
    static const char header_hex[] = "c300000001088394c8f03e5157080000449e00000002";
    uint8_t header[32], payload[1162] = {0}, want[1200], out[1200], back[1200];
    uint8_t key[16], iv[12], hp_key[16], nonce[12], sample[16], mask[16];
    ngtcp2_crypto_ctx ctx;
    ngtcp2_crypto_aead_ctx actx;
    ngtcp2_crypto_cipher_ctx hctx;
    size_t hlen = unhex(header_hex, header, sizeof(header));

    unhex(A2_CRYPTO, payload, sizeof(payload));
    unhex(A2_PACKET, want, sizeof(want));
    unhex(A1_CLIENT_KEY, key, sizeof(key));
    unhex(A1_CLIENT_IV, iv, sizeof(iv));
    unhex(A1_CLIENT_HP, hp_key, sizeof(hp_key));
    ngtcp2_crypto_ctx_initial(&ctx);
    assert_int_equal(ngtcp2_crypto_aead_keylen(&ctx.aead), 16);
    assert_int_equal(ngtcp2_crypto_aead_noncelen(&ctx.aead), 12);
    assert_int_equal(ngtcp2_crypto_packet_protection_ivlen(&ctx.aead), 12);

    /* RFC 9001 §5.3: nonce = IV XOR packet number (2). */
    memcpy(nonce, iv, 12);
    nonce[11] ^= 2;
    assert_int_equal(ngtcp2_crypto_aead_ctx_encrypt_init(&actx, &ctx.aead, key, 12), 0);
    assert_int_equal(ngtcp2_crypto_encrypt(out, &ctx.aead, &actx, payload, sizeof(payload), nonce,
                                           12, header, hlen),
                     0);
    assert_memory_equal(out, want + hlen, sizeof(payload) + 16);
    /* In place, as ngtcp2 seals packets. */
    memcpy(back, payload, sizeof(payload));
    assert_int_equal(ngtcp2_crypto_encrypt_cb(back, &ctx.aead, &actx, back, sizeof(payload),
                                              nonce, 12, header, hlen),
                     0);
    assert_memory_equal(back, want + hlen, sizeof(payload) + 16);
    ngtcp2_crypto_aead_ctx_free(&actx);

    /* §5.4.2: the sample starts 4 bytes after the packet number's start (offset 18). */
    assert_int_equal(ngtcp2_crypto_cipher_ctx_encrypt_init(&hctx, &ctx.hp, hp_key), 0);
    memcpy(sample, want + 18 + 4, 16);
    assert_hex(sample, 16, "d1b1c98dd7689fb8ec11d242b123dc9b");
    assert_int_equal(ngtcp2_crypto_hp_mask_cb(mask, &ctx.hp, &hctx, sample), 0);
    assert_hex(mask, 5, "437b9aec36");
    ngtcp2_crypto_cipher_ctx_free(&hctx);

    /* The server's side opens it. */
    assert_int_equal(ngtcp2_crypto_aead_ctx_decrypt_init(&actx, &ctx.aead, key, 12), 0);
    ERR_clear_error();
    assert_int_equal(ngtcp2_crypto_decrypt_cb(back, &ctx.aead, &actx, want + hlen,
                                              sizeof(payload) + 16, nonce, 12, header, hlen),
                     0);
    assert_memory_equal(back, payload, sizeof(payload));
    want[hlen + 100] ^= 1;
    assert_int_equal(ngtcp2_crypto_decrypt_cb(back, &ctx.aead, &actx, want + hlen,
                                              sizeof(payload) + 16, nonce, 12, header, hlen),
                     NGTCP2_ERR_DECRYPT);
    want[hlen + 100] ^= 1;
    assert_int_equal(ngtcp2_crypto_decrypt(back, &ctx.aead, &actx, want + hlen, 15, nonce, 12,
                                           header, hlen),
                     -1);
    assert_int_equal(ERR_peek_error(), 0);
    /* A nonce that is not 12 bytes is refused (all QUIC AEADs use 12). */
    assert_int_equal(ngtcp2_crypto_decrypt(back, &ctx.aead, &actx, want + hlen,
                                           sizeof(payload) + 16, nonce, 8, header, hlen),
                     -1);
    ngtcp2_crypto_aead_ctx_free(&actx);
}

static int a2_crypto_seen;

static int a2_recv_crypto_data(ngtcp2_conn *conn, ngtcp2_crypto_level level, uint64_t offset,
                               const uint8_t *data, size_t datalen, void *user_data)
{
    (void)conn;
    (void)user_data;
    assert_int_equal(level, NGTCP2_CRYPTO_LEVEL_INITIAL);
    assert_int_equal(offset, 0);
    assert_int_equal(datalen, 241); /* the ClientHello: 4-byte header + 0xed */
    assert_hex(data, 8, "010000ed0303ebf8");
    a2_crypto_seen = 1;
    return 0;
}

/*
 * An ngtcp2 server reads the RFC's protected client Initial: ngtcp2 calls
 * the backend's recv_client_initial callback, which installs the Initial
 * keys for its DCID; the backend's header protection and AEAD then open the
 * packet and ngtcp2 hands over the ClientHello.
 */
static void test_server_opens_rfc9001_a2(void **state)
{
    (void)state;
    uint8_t pkt[1200];
    ngtcp2_pkt_hd hd;
    ngtcp2_callbacks cb;
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    struct sockaddr_in a, b;
    ngtcp2_path path;
    ngtcp2_conn *conn;
    ngtcp2_cid scid = random_cid(8);

    unhex(A2_PACKET, pkt, sizeof(pkt));
    assert_int_equal(ngtcp2_accept(&hd, pkt, sizeof(pkt)), 0);
    assert_int_equal(hd.version, NGTCP2_PROTO_VER_V1);
    addr_init(&a, 443);
    addr_init(&b, 40000);
    path.local.addr = (ngtcp2_sockaddr *)&a;
    path.local.addrlen = sizeof(a);
    path.remote.addr = (ngtcp2_sockaddr *)&b;
    path.remote.addrlen = sizeof(b);
    path.user_data = NULL;
    set_callbacks(&cb, 1);
    cb.recv_crypto_data = a2_recv_crypto_data;
    ngtcp2_settings_default(&settings);
    ngtcp2_transport_params_default(&params);
    params.original_dcid = hd.dcid;
    assert_int_equal(ngtcp2_conn_server_new(&conn, &hd.scid, &scid, &path, hd.version, &cb,
                                            &settings, &params, NULL, NULL),
                     0);
    a2_crypto_seen = 0;
    assert_int_equal(ngtcp2_conn_read_pkt(conn, &path, NULL, pkt, sizeof(pkt), 1), 0);
    assert_int_equal(a2_crypto_seen, 1);
    ngtcp2_conn_del(conn);
}

/* RFC 5869 A.1 (test case 1, SHA-256) through the three HKDF entry points. */
static void test_hkdf_rfc5869(void **state)
{
    (void)state;
    uint8_t ikm[22], salt[13], info[10], prk[32], okm[42];
    ngtcp2_crypto_md md;
    memset(ikm, 0x0b, sizeof(ikm));
    unhex("000102030405060708090a0b0c", salt, sizeof(salt));
    unhex("f0f1f2f3f4f5f6f7f8f9", info, sizeof(info));
    ngtcp2_crypto_md_sha256(&md);
    assert_int_equal(ngtcp2_crypto_hkdf_extract(prk, &md, ikm, sizeof(ikm), salt, sizeof(salt)),
                     0);
    assert_hex(prk, 32, "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5");
    static const char want[] = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                               "34007208d5b887185865";
    assert_int_equal(
        ngtcp2_crypto_hkdf_expand(okm, sizeof(okm), &md, prk, sizeof(prk), info, sizeof(info)), 0);
    assert_hex(okm, 42, want);
    memset(okm, 0, sizeof(okm));
    assert_int_equal(ngtcp2_crypto_hkdf(okm, sizeof(okm), &md, ikm, sizeof(ikm), salt,
                                        sizeof(salt), info, sizeof(info)),
                     0);
    assert_hex(okm, 42, want);
    /* ngtcp2_crypto_md_init takes an EVP_MD, as the quictls backend's does. */
    ngtcp2_crypto_md_init(&md, (void *)EVP_sha384());
    assert_int_equal(ngtcp2_crypto_md_hashlen(&md), 48);
}

/*
 * Every suite's 1-RTT keys and key update, against qtls's own derivation
 * (the labels of RFC 9001 §5.1 and §6.1), for a random secret.
 */
static void test_keys_match_qtls_helpers(void **state)
{
    (void)state;
    static const uint32_t ids[] = {
        QTLS_QUIC_SUITE_AES_128_GCM_SHA256, QTLS_QUIC_SUITE_AES_256_GCM_SHA384,
        QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256, QTLS_QUIC_SUITE_AES_128_CCM_SHA256};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        ngtcp2_crypto_ctx ctx;
        uint8_t secret[48], key[32], iv[12], hp[32], key2[32], iv2[12], hp2[32], ku[48], ku2[48];
        size_t slen = qtls_quic_suite_secret_len(ids[i]), klen = qtls_quic_suite_key_len(ids[i]);
        qn_ctx_for_suite(&ctx, ids[i]);
        assert_int_equal(ngtcp2_crypto_md_hashlen(&ctx.md), slen);
        assert_int_equal(ngtcp2_crypto_aead_keylen(&ctx.aead), klen);
        assert_int_equal(qn_hp_suite(&ctx.hp) != 0, 1);
        assert_true(ctx.max_encryption > 0 && ctx.max_decryption_failure > 0);
        assert_int_equal(RAND_bytes(secret, (int)slen), 1);
        assert_int_equal(ngtcp2_crypto_derive_packet_protection_key(
                             key, iv, hp, NGTCP2_PROTO_VER_V1, &ctx.aead, &ctx.md, secret, slen),
                         0);
        assert_int_equal(qtls_quic_derive_packet_keys(QTLS_QUIC_VERSION_1, ids[i], secret, slen,
                                                      key2, iv2, hp2),
                         1);
        assert_memory_equal(key, key2, klen);
        assert_memory_equal(iv, iv2, 12);
        assert_memory_equal(hp, hp2, klen);
        assert_int_equal(ngtcp2_crypto_update_traffic_secret(ku, &ctx.md, secret, slen), 0);
        assert_int_equal(
            qtls_quic_key_update_secret(QTLS_QUIC_VERSION_1, ids[i], secret, slen, ku2), 1);
        assert_memory_equal(ku, ku2, slen);
    }
    /* TLS_AES_128_CCM_8_SHA256 is not a QUIC suite: no context. */
    ngtcp2_crypto_ctx ctx;
    qn_ctx_for_suite(&ctx, 0x03001305);
    assert_null(ctx.aead.native_handle);
}

/* ------------------------------------------------------------------ */
/* Whole connections                                                   */
/* ------------------------------------------------------------------ */

static void connection_case(const char *suites, uint32_t suite)
{
    struct world w;
    world_init(&w, suites);
    handshake(&w);
    assert_suite(&w, suite);
    request_response(&w, "GET /index.html", "<html>qtls over ngtcp2</html>");
    key_updates(&w);
    /* And data still flows on a new stream after both updates. */
    request_response(&w, "GET /after-key-update", "still here");
    /* Nothing stale on the error queue (it would turn SSL_get_error's WANT_READ into an error). */
    assert_int_equal(ERR_peek_error(), 0);
    world_free(&w);
}

static void test_connection_aes128gcm(void **state)
{
    (void)state;
    connection_case("TLS_AES_128_GCM_SHA256", QTLS_QUIC_SUITE_AES_128_GCM_SHA256);
}

static void test_connection_aes256gcm(void **state)
{
    (void)state;
    connection_case("TLS_AES_256_GCM_SHA384", QTLS_QUIC_SUITE_AES_256_GCM_SHA384);
}

static void test_connection_chacha20(void **state)
{
    (void)state;
    connection_case("TLS_CHACHA20_POLY1305_SHA256", QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256);
}

static void test_connection_aes128ccm(void **state)
{
    (void)state;
    connection_case("TLS_AES_128_CCM_SHA256", QTLS_QUIC_SUITE_AES_128_CCM_SHA256);
}

/* RFC 9000 §8.1.2: the server answers the first Initial with a Retry; the client's second
 * Initial carries the token, which the server verifies before it makes a connection. */
static void test_connection_retry(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, NULL);
    w.use_retry = 1;
    handshake(&w);
    assert_int_equal(w.retry_sent, 1);
    assert_true(w.have_retry_scid);
    assert_int_equal(ngtcp2_conn_after_retry(w.client.conn), 1);
    request_response(&w, "after retry", "ok");
    world_free(&w);
}

/* ngtcp2 0.12's provisional QUIC v2 (draft-ietf-quic-v2-01): its salt and "quicv2" labels. */
static void test_connection_v2_draft(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, NULL);
    w.version = NGTCP2_PROTO_VER_V2_DRAFT;
    handshake(&w);
    request_response(&w, "v2", "draft");
    world_free(&w);
}

/*
 * A first connection gets a session ticket; the second resumes it and sends
 * its request in 0-RTT packets, which the server opens with the early keys
 * the backend installed before the handshake completed.
 */
static void test_connection_resumption_0rtt(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, NULL);
    handshake(&w);
    request_response(&w, "first", "one");
    for (int i = 0; i < 10; i++)
        assert_int_equal(step(&w), 0);
    assert_non_null(w.session);
    w.early_params = *ngtcp2_conn_get_remote_transport_params(w.client.conn);
    w.have_early_params = 1;
    world_reset_conns(&w);

    client_new(&w);
    assert_int_equal(ngtcp2_conn_open_bidi_stream(w.client.conn, &w.client.stream_id, NULL), 0);
    queue_tx(&w.client, "early request", 1);
    assert_true(run_until(&w, both_completed, 200) >= 0);
    assert_int_equal(SSL_session_reused(w.client.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(w.client.ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_true(run_until(&w, request_arrived, 200) >= 0);
    assert_memory_equal(w.server.rx, "early request", 13);
    assert_int_equal(w.server.rx_before_handshake, 13); /* all of it arrived as 0-RTT */
    assert_non_null(ngtcp2_conn_get_early_crypto_ctx(w.server.conn)->aead.native_handle);
    queue_tx(&w.server, "early response", 1);
    assert_true(run_until(&w, exchange_done, 200) >= 0);
    assert_memory_equal(w.client.rx, "early response", 14);
    world_free(&w);
}

/*
 * RFC 9001 §4.8: a TLS alert closes the connection with CRYPTO_ERROR
 * 0x100 + alert. The client offers only ALPN "h2", which the server's
 * selector refuses: no_application_protocol (120).
 */
static void test_connection_alert(void **state)
{
    (void)state;
    static const unsigned char h2[] = {2, 'h', '2'};
    struct world w;
    ngtcp2_connection_close_error ccerr;
    uint8_t pkt[1500];
    ngtcp2_path path;
    world_init(&w, NULL);
    assert_int_equal(SSL_CTX_set_alpn_protos(w.cctx, h2, sizeof(h2)), 0);
    client_new(&w);
    for (int i = 0; i < 10 && w.server.read_error == 0; i++)
        if (step(&w) != 0)
            break;
    assert_false(ngtcp2_conn_get_handshake_completed(w.client.conn));
    assert_non_null(w.server.conn);
    /* The backend's send_alert recorded the alert; the CRYPTO data callback failed. */
    assert_int_equal(ngtcp2_conn_get_tls_alert(w.server.conn), 120);
    assert_int_equal(w.server.read_error, NGTCP2_ERR_CRYPTO);
    /* The server application closes with it, as ngtcp2's examples do. */
    ngtcp2_connection_close_error_set_transport_error_tls_alert(
        &ccerr, ngtcp2_conn_get_tls_alert(w.server.conn), NULL, 0);
    path_of(&w.server, &path);
    ngtcp2_ssize n = ngtcp2_conn_write_connection_close(w.server.conn, &path, NULL, pkt,
                                                        sizeof(pkt), &ccerr, w.ts);
    assert_true(n > 0);
    deliver(&w, &w.client, pkt, (size_t)n);
    assert_int_equal(w.client.read_error, NGTCP2_ERR_DRAINING);
    memset(&ccerr, 0, sizeof(ccerr));
    ngtcp2_conn_get_connection_close_error(w.client.conn, &ccerr);
    assert_int_equal(ccerr.type, NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT);
    assert_int_equal(ccerr.error_code, NGTCP2_CRYPTO_ERROR | 120);
    world_free(&w);
}

/* ------------------------------------------------------------------ */
/* Tokens                                                              */
/* ------------------------------------------------------------------ */

static void addr6_init(struct sockaddr_in6 *sa, uint16_t port)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(port);
    sa->sin6_addr = in6addr_loopback;
}

static void test_retry_token(void **state)
{
    (void)state;
    uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
    struct sockaddr_in addr, other;
    const ngtcp2_sockaddr *sa = (const ngtcp2_sockaddr *)&addr;
    ngtcp2_cid odcid = random_cid(18), scid = random_cid(8), got, other_scid = random_cid(8);
    const ngtcp2_tstamp ts = 5000 * NGTCP2_SECONDS, timeout = 10 * NGTCP2_SECONDS;
    const uint32_t v = NGTCP2_PROTO_VER_V1;
    const uint8_t *secret = static_secret;
    const size_t sl = sizeof(static_secret);

    ERR_clear_error();
    addr_init(&addr, 40000);
    addr_init(&other, 40001);
    ngtcp2_ssize n = ngtcp2_crypto_generate_retry_token(token, secret, sl, v, sa, sizeof(addr),
                                                        &scid, &odcid, ts);
    assert_int_equal(n, NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN);
    assert_int_equal(token[0], NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &scid, timeout, ts + 1),
                     0);
    assert_true(ngtcp2_cid_eq(&got, &odcid));

    /* Every single-bit change anywhere in the token is caught. */
    for (size_t i = 0; i < (size_t)n; i++) {
        token[i] ^= 0x10;
        assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v,
                                                          sa, sizeof(addr), &scid, timeout, ts),
                         -1);
        token[i] ^= 0x10;
    }
    /* Another address, port, Retry SCID, version, secret; expired; from the future; cut. */
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v,
                                                      (const ngtcp2_sockaddr *)&other,
                                                      sizeof(other), &scid, timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &other_scid, timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl,
                                                      NGTCP2_PROTO_VER_V2_DRAFT, sa, sizeof(addr),
                                                      &scid, timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl - 1, v,
                                                      sa, sizeof(addr), &scid, timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &scid, timeout, ts + timeout),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &scid, timeout, ts - 1),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n - 1, secret, sl, v,
                                                      sa, sizeof(addr), &scid, timeout, ts),
                     -1);
    /* Two tokens for the same inputs differ (random salt), and both verify. */
    uint8_t token2[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
    assert_int_equal(ngtcp2_crypto_generate_retry_token(token2, secret, sl, v, sa, sizeof(addr),
                                                        &scid, &odcid, ts),
                     n);
    assert_memory_not_equal(token, token2, (size_t)n);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token2, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &scid, timeout, ts),
                     0);
    /* A zero-length original DCID round-trips too. */
    ngtcp2_cid empty;
    ngtcp2_cid_init(&empty, NULL, 0);
    assert_int_equal(ngtcp2_crypto_generate_retry_token(token, secret, sl, v, sa, sizeof(addr),
                                                        &scid, &empty, ts),
                     n);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl, v, sa,
                                                      sizeof(addr), &scid, timeout, ts),
                     0);
    assert_int_equal(got.datalen, 0);
    assert_int_equal(ERR_peek_error(), 0);
}

static void test_regular_token(void **state)
{
    (void)state;
    uint8_t token[NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN];
    struct sockaddr_in addr, new_port, other;
    struct sockaddr_in6 addr6;
    const ngtcp2_tstamp ts = 5000 * NGTCP2_SECONDS, timeout = 3600 * NGTCP2_SECONDS;
    const uint8_t *secret = static_secret;
    const size_t sl = sizeof(static_secret);

    ERR_clear_error();
    addr_init(&addr, 40000);
    addr_init(&new_port, 50000);
    addr_init(&other, 40000);
    other.sin_addr.s_addr = htonl(0x7f000002);
    ngtcp2_ssize n = ngtcp2_crypto_generate_regular_token(
        token, secret, sl, (const ngtcp2_sockaddr *)&addr, sizeof(addr), ts);
    assert_int_equal(n, NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN);
    assert_int_equal(token[0], NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&addr,
                                                        sizeof(addr), timeout, ts + 1),
                     0);
    /* A later connection comes from another port: still valid (RFC 9000 §8.1.3). */
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&new_port,
                                                        sizeof(new_port), timeout, ts + 1),
                     0);
    for (size_t i = 0; i < (size_t)n; i++) {
        token[i] ^= 0x01;
        assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                            (const ngtcp2_sockaddr *)&addr,
                                                            sizeof(addr), timeout, ts),
                         -1);
        token[i] ^= 0x01;
    }
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&other,
                                                        sizeof(other), timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&addr,
                                                        sizeof(addr), timeout, ts + timeout),
                     -1);
    /* A Retry token is not a regular token, nor the reverse. */
    uint8_t rtoken[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
    ngtcp2_cid scid = random_cid(8), odcid = random_cid(8), got;
    ngtcp2_ssize rn = ngtcp2_crypto_generate_retry_token(
        rtoken, secret, sl, NGTCP2_PROTO_VER_V1, (const ngtcp2_sockaddr *)&addr, sizeof(addr),
        &scid, &odcid, ts);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(rtoken, (size_t)rn, secret, sl,
                                                        (const ngtcp2_sockaddr *)&addr,
                                                        sizeof(addr), timeout, ts),
                     -1);
    assert_int_equal(ngtcp2_crypto_verify_retry_token(&got, token, (size_t)n, secret, sl,
                                                      NGTCP2_PROTO_VER_V1,
                                                      (const ngtcp2_sockaddr *)&addr,
                                                      sizeof(addr), &scid, timeout, ts),
                     -1);
    /* IPv6 */
    addr6_init(&addr6, 443);
    n = ngtcp2_crypto_generate_regular_token(token, secret, sl, (const ngtcp2_sockaddr *)&addr6,
                                             sizeof(addr6), ts);
    assert_int_equal(n, NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&addr6,
                                                        sizeof(addr6), timeout, ts),
                     0);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(token, (size_t)n, secret, sl,
                                                        (const ngtcp2_sockaddr *)&addr,
                                                        sizeof(addr), timeout, ts),
                     -1);
    assert_int_equal(ERR_peek_error(), 0);
}

/*
 * libngtcp2_crypto_gnutls (Debian's libngtcp2-crypto-gnutls2); the test fails
 * when it is not installed. RTLD_LOCAL keeps its symbols out of ours, and its own
 * calls to ngtcp2_crypto_* stay inside it, because this executable does not
 * export its static copies (no -rdynamic; and RTLD_DEEPBIND is not usable
 * under AddressSanitizer).
 */
static void *gnutls_backend(void)
{
    static void *h;
    if (h == NULL)
        h = dlopen("libngtcp2_crypto_gnutls.so.2", RTLD_NOW | RTLD_LOCAL);
    /* The ngtcp2 suite's packages (scripts/deps.sh, group ngtcp2) bring it: its absence is a
     * failure, never a skipped comparison. */
    if (h == NULL) {
        const char *why = dlerror();
        fail_msg("libngtcp2_crypto_gnutls.so.2 is not loadable (%s): apt-get install "
                 "libngtcp2-crypto-gnutls-dev",
                 why != NULL ? why : "?");
    }
    return h;
}

typedef int (*reset_token_fn)(uint8_t *, const uint8_t *, size_t, const ngtcp2_cid *);
typedef int (*verify_regular_fn)(const uint8_t *, size_t, const uint8_t *, size_t,
                                 const ngtcp2_sockaddr *, ngtcp2_socklen, ngtcp2_duration,
                                 ngtcp2_tstamp);
typedef ngtcp2_ssize (*generate_regular_fn)(uint8_t *, const uint8_t *, size_t,
                                            const ngtcp2_sockaddr *, ngtcp2_socklen,
                                            ngtcp2_tstamp);

/* RFC 9000 §10.3.2: the same secret and CID give the same token, so any server of a fleet can
 * send the reset; another CID or secret gives another. */
static void test_stateless_reset_token(void **state)
{
    (void)state;
    uint8_t a[16], b[16], c[16], d[16];
    ngtcp2_cid cid = cid_from_hex("0102030405060708"), cid2 = cid_from_hex("0102030405060709");
    assert_int_equal(
        ngtcp2_crypto_generate_stateless_reset_token(a, static_secret, sizeof(static_secret), &cid),
        0);
    assert_int_equal(
        ngtcp2_crypto_generate_stateless_reset_token(b, static_secret, sizeof(static_secret), &cid),
        0);
    assert_memory_equal(a, b, 16);
    assert_int_equal(ngtcp2_crypto_generate_stateless_reset_token(c, static_secret,
                                                                  sizeof(static_secret), &cid2),
                     0);
    assert_memory_not_equal(a, c, 16);
    assert_int_equal(ngtcp2_crypto_generate_stateless_reset_token(d, static_secret,
                                                                  sizeof(static_secret) - 1, &cid),
                     0);
    assert_memory_not_equal(a, d, 16);
    /* HKDF(SHA-256, ikm = secret, salt = CID, info = "stateless_reset"), as ngtcp2 defines it. */
    ngtcp2_crypto_md md;
    assert_int_equal(ngtcp2_crypto_hkdf(c, 16, ngtcp2_crypto_md_sha256(&md), static_secret,
                                        sizeof(static_secret), cid.data, cid.datalen,
                                        (const uint8_t *)"stateless_reset", 15),
                     0);
    assert_memory_equal(a, c, 16);

    void *h = gnutls_backend();
    reset_token_fn theirs =
        (reset_token_fn)dlsym(h, "ngtcp2_crypto_generate_stateless_reset_token");
    assert_non_null(theirs);
    assert_true(theirs != ngtcp2_crypto_generate_stateless_reset_token);
    assert_int_equal(theirs(d, static_secret, sizeof(static_secret), &cid), 0);
    assert_memory_equal(a, d, 16);
}

/* NEW_TOKEN tokens are interchangeable with ngtcp2's GnuTLS backend: each verifies the other's. */
static void test_regular_token_matches_gnutls_backend(void **state)
{
    (void)state;
    void *h = gnutls_backend();
    generate_regular_fn gen =
        (generate_regular_fn)dlsym(h, "ngtcp2_crypto_generate_regular_token");
    verify_regular_fn ver = (verify_regular_fn)dlsym(h, "ngtcp2_crypto_verify_regular_token");
    assert_non_null(gen);
    assert_non_null(ver);
    assert_true(gen != ngtcp2_crypto_generate_regular_token);
    uint8_t ours[NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN], theirs[NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN];
    struct sockaddr_in addr;
    const ngtcp2_sockaddr *sa = (const ngtcp2_sockaddr *)&addr;
    const ngtcp2_tstamp ts = 77 * NGTCP2_SECONDS, timeout = 60 * NGTCP2_SECONDS;
    addr_init(&addr, 1234);
    ngtcp2_ssize n = ngtcp2_crypto_generate_regular_token(ours, static_secret,
                                                          sizeof(static_secret), sa,
                                                          sizeof(addr), ts);
    assert_int_equal(gen(theirs, static_secret, sizeof(static_secret), sa, sizeof(addr), ts), n);
    assert_int_equal(ver(ours, (size_t)n, static_secret, sizeof(static_secret), sa, sizeof(addr),
                         timeout, ts + 1),
                     0);
    assert_int_equal(ngtcp2_crypto_verify_regular_token(theirs, (size_t)n, static_secret,
                                                        sizeof(static_secret), sa, sizeof(addr),
                                                        timeout, ts + 1),
                     0);
    theirs[5] ^= 1;
    assert_int_equal(ngtcp2_crypto_verify_regular_token(theirs, (size_t)n, static_secret,
                                                        sizeof(static_secret), sa, sizeof(addr),
                                                        timeout, ts + 1),
                     -1);
}

/*
 * A server refusing a connection before it has one: an Initial with
 * CONNECTION_CLOSE under the server's Initial keys for the client's DCID,
 * which ngtcp2 parses, unprotects and opens with the same keys (our hp_mask
 * and decrypt as its callbacks).
 */
static void test_write_connection_close(void **state)
{
    (void)state;
    uint8_t pkt[1500], secret[32];
    ngtcp2_cid dcid = random_cid(8), scid = cid_from_hex(DCID);
    ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(pkt, sizeof(pkt), NGTCP2_PROTO_VER_V1,
                                                          &dcid, &scid, NGTCP2_CONNECTION_REFUSED,
                                                          (const uint8_t *)"busy", 4);
    assert_true(n > 0);
    /* Long header: flags, version, DCID, SCID, token length 0, Length, packet number. */
    size_t off = 1 + 4;
    assert_int_equal(pkt[off], dcid.datalen);
    off += 1 + dcid.datalen;
    assert_int_equal(pkt[off], scid.datalen);
    assert_memory_equal(pkt + off + 1, scid.data, scid.datalen);
    off += 1 + scid.datalen;
    assert_int_equal(pkt[off++], 0);
    off += (size_t)1 << (pkt[off] >> 6); /* the Length varint */
    /* Open it with the server Initial keys of RFC 9001 A.1 (the same DCID). */
    unhex(A1_SERVER_SECRET, secret, sizeof(secret));
    struct qtls_quic_aead *a = qtls_quic_aead_new_from_secret(
        QTLS_QUIC_VERSION_1, QTLS_QUIC_SUITE_AES_128_GCM_SHA256, secret, 32);
    struct qtls_quic_hp *h = qtls_quic_hp_new_from_secret(
        QTLS_QUIC_VERSION_1, QTLS_QUIC_SUITE_AES_128_GCM_SHA256, secret, 32);
    uint64_t pn;
    size_t hdr_len, payload_len, i;
    assert_int_equal(qtls_quic_packet_unprotect(a, h, -1, pkt, (size_t)n, off, &pn, &hdr_len,
                                                &payload_len),
                     1);
    assert_int_equal(pkt[0] & 0xf0, 0xc0); /* Initial */
    /* Skip PADDING; then CONNECTION_CLOSE (0x1c), error CONNECTION_REFUSED, frame type,
     * reason "busy" (RFC 9000 §19.19). */
    for (i = hdr_len; i < hdr_len + payload_len && pkt[i] == 0; i++)
        ;
    assert_int_equal(pkt[i], 0x1c);
    assert_int_equal(pkt[i + 1], NGTCP2_CONNECTION_REFUSED);
    assert_int_equal(pkt[i + 3], 4);
    assert_memory_equal(pkt + i + 4, "busy", 4);
    qtls_quic_aead_free(a);
    qtls_quic_hp_free(h);
}

/* ------------------------------------------------------------------ */
/* The small API                                                       */
/* ------------------------------------------------------------------ */

static void test_levels(void **state)
{
    (void)state;
    static const struct {
        OSSL_ENCRYPTION_LEVEL ossl;
        ngtcp2_crypto_level ng;
    } map[] = {
        {ssl_encryption_initial, NGTCP2_CRYPTO_LEVEL_INITIAL},
        {ssl_encryption_early_data, NGTCP2_CRYPTO_LEVEL_EARLY},
        {ssl_encryption_handshake, NGTCP2_CRYPTO_LEVEL_HANDSHAKE},
        {ssl_encryption_application, NGTCP2_CRYPTO_LEVEL_APPLICATION},
    };
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(ngtcp2_crypto_qtls_from_ossl_encryption_level(map[i].ossl), map[i].ng);
        assert_int_equal(ngtcp2_crypto_qtls_from_ngtcp2_crypto_level(map[i].ng), map[i].ossl);
    }
    assert_int_equal(ngtcp2_crypto_qtls_from_ossl_encryption_level((OSSL_ENCRYPTION_LEVEL)7),
                     (ngtcp2_crypto_level)-1);
    assert_int_equal(ngtcp2_crypto_qtls_from_ngtcp2_crypto_level((ngtcp2_crypto_level)7),
                     (OSSL_ENCRYPTION_LEVEL)-1);
}

static void test_configure_and_refusals(void **state)
{
    (void)state;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(ngtcp2_crypto_qtls_configure_client_context(ctx), 0);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_3_VERSION);
    assert_int_equal(ngtcp2_crypto_qtls_configure_server_context(NULL), -1);

    /* Before a handshake an SSL has no suite: a context with no handles, not a crash. */
    SSL *ssl = SSL_new(ctx);
    ngtcp2_crypto_ctx c;
    ngtcp2_crypto_ctx_tls(&c, ssl);
    assert_null(c.aead.native_handle);
    assert_null(c.md.native_handle);
    assert_int_equal(ngtcp2_crypto_aead_keylen(&c.aead), 0);
    SSL_free(ssl);
    SSL_CTX_free(ctx);

    /* Contexts for unknown ciphers, nonce lengths or missing keys are refused. */
    ngtcp2_crypto_aead aead;
    ngtcp2_crypto_aead_ctx actx;
    ngtcp2_crypto_cipher hp = {(void *)EVP_aes_128_cbc()};
    ngtcp2_crypto_cipher_ctx hctx;
    static const uint8_t key[32];
    ngtcp2_crypto_aead_init(&aead, (void *)EVP_aes_128_cbc());
    assert_int_equal(aead.max_overhead, 0);
    assert_int_equal(ngtcp2_crypto_aead_ctx_encrypt_init(&actx, &aead, key, 12), -1);
    ngtcp2_crypto_aead_aes_128_gcm(&aead);
    assert_int_equal(ngtcp2_crypto_aead_ctx_encrypt_init(&actx, &aead, key, 8), -1);
    assert_int_equal(ngtcp2_crypto_aead_ctx_encrypt_init(&actx, &aead, NULL, 12), -1);
    assert_int_equal(ngtcp2_crypto_cipher_ctx_encrypt_init(&hctx, &hp, key), -1);
    ERR_clear_error();
    /* Freeing a never-initialised (NULL) context is harmless, as ngtcp2 may do. */
    actx.native_handle = NULL;
    hctx.native_handle = NULL;
    ngtcp2_crypto_aead_ctx_free(&actx);
    ngtcp2_crypto_cipher_ctx_free(&hctx);

    uint8_t data[NGTCP2_PATH_CHALLENGE_DATALEN] = {0}, zero[NGTCP2_PATH_CHALLENGE_DATALEN] = {0};
    assert_int_equal(ngtcp2_crypto_get_path_challenge_data_cb(NULL, data, NULL), 0);
    assert_memory_not_equal(data, zero, sizeof(data));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_keys_rfc9001_a1),
        cmocka_unit_test(test_client_initial_rfc9001_a2),
        cmocka_unit_test(test_server_opens_rfc9001_a2),
        cmocka_unit_test(test_hkdf_rfc5869),
        cmocka_unit_test(test_keys_match_qtls_helpers),
        cmocka_unit_test(test_connection_aes128gcm),
        cmocka_unit_test(test_connection_aes256gcm),
        cmocka_unit_test(test_connection_chacha20),
        cmocka_unit_test(test_connection_aes128ccm),
        cmocka_unit_test(test_connection_retry),
        cmocka_unit_test(test_connection_v2_draft),
        cmocka_unit_test(test_connection_resumption_0rtt),
        cmocka_unit_test(test_connection_alert),
        cmocka_unit_test(test_retry_token),
        cmocka_unit_test(test_regular_token),
        cmocka_unit_test(test_stateless_reset_token),
        cmocka_unit_test(test_regular_token_matches_gnutls_backend),
        cmocka_unit_test(test_write_connection_close),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_configure_and_refusals),
    };
    return cmocka_run_group_tests_name("ngtcp2 crypto backend on qtls", tests, NULL, NULL);
}
