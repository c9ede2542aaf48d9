/*
 * The client hello callback and its accessors, and SSL_set_SSL_CTX from
 * inside it: how HAProxy and nginx choose a virtual host's certificate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

/* What one run of the callback saw, and what it should answer. */
struct seen {
    int calls;
    int answer;  /* SSL_CLIENT_HELLO_SUCCESS / _ERROR / _RETRY */
    int retries; /* answer RETRY this many times first */
    int alert;   /* set through *al when failing */
    SSL_CTX *switch_to;
    char sni[64];
    unsigned int legacy_version;
    size_t random_len, session_id_len, ciphers_len, compression_len;
    int has_aes128;
    int *exts;
    size_t n_exts;
    /* RFC 8701: the GREASE value found in each field (0 none), in enum gfield order. */
    uint16_t grease[8], first_grease[8]; /* first_grease: the first ClientHello's */
    int grease_first_cipher, grease_ext_empty, grease_ext_one_byte, grease_ext_last;
};

enum gfield { G_CIPHER, G_GROUP, G_SHARE, G_SIGALG, G_VERSION, G_PSK_MODE, G_EXT1, G_EXT2 };

static int is_grease(unsigned v) { return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff); }

/* The first GREASE value of a list of `width`-byte items after a `len`-byte length. */
static uint16_t grease_in(SSL *s, int type, size_t len, size_t width)
{
    const unsigned char *p;
    size_t n;
    if (!SSL_client_hello_get0_ext(s, (unsigned)type, &p, &n) || n < len)
        return 0;
    for (size_t i = len; i + width <= n; i += width) {
        unsigned v = width == 2 ? (unsigned)p[i] << 8 | p[i + 1] : p[i];
        if (width == 2 ? is_grease(v) : (v >= 0x0b && (v - 0x0b) % 0x1f == 0))
            return (uint16_t)v;
    }
    return 0;
}

/* RFC 8701 §3.1: a key_share entry for a GREASE group, its body one byte. */
static uint16_t grease_share(SSL *s)
{
    const unsigned char *p;
    size_t n;
    if (!SSL_client_hello_get0_ext(s, TLSEXT_TYPE_key_share, &p, &n) || n < 2)
        return 0;
    for (size_t i = 2; i + 4 <= n;) {
        unsigned g = (unsigned)p[i] << 8 | p[i + 1], len = (unsigned)p[i + 2] << 8 | p[i + 3];
        if (is_grease(g) && len == 1)
            return (uint16_t)g;
        i += 4 + len;
    }
    return 0;
}

static void read_grease(SSL *s, struct seen *seen)
{
    const unsigned char *p, *body;
    size_t n = SSL_client_hello_get0_ciphers(s, &p), blen;
    memset(seen->grease, 0, sizeof(seen->grease));
    seen->grease_first_cipher = n >= 2 && is_grease((unsigned)p[0] << 8 | p[1]);
    for (size_t i = 0; i + 1 < n; i += 2)
        if (seen->grease[G_CIPHER] == 0 && is_grease((unsigned)p[i] << 8 | p[i + 1]))
            seen->grease[G_CIPHER] = (uint16_t)(p[i] << 8 | p[i + 1]);
    seen->grease[G_GROUP] = grease_in(s, TLSEXT_TYPE_supported_groups, 2, 2);
    seen->grease[G_SHARE] = grease_share(s);
    seen->grease[G_SIGALG] = grease_in(s, TLSEXT_TYPE_signature_algorithms, 2, 2);
    seen->grease[G_VERSION] = grease_in(s, TLSEXT_TYPE_supported_versions, 1, 2);
    seen->grease[G_PSK_MODE] = grease_in(s, TLSEXT_TYPE_psk_kex_modes, 1, 1);
    seen->grease_ext_empty = seen->grease_ext_one_byte = seen->grease_ext_last = 0;
    for (size_t i = 0; i < seen->n_exts; i++) {
        if (!is_grease((unsigned)seen->exts[i]))
            continue;
        seen->grease[seen->grease[G_EXT1] == 0 ? G_EXT1 : G_EXT2] = (uint16_t)seen->exts[i];
        seen->grease_ext_last |= i + 1 == seen->n_exts;
        if (SSL_client_hello_get0_ext(s, (unsigned)seen->exts[i], &body, &blen)) {
            seen->grease_ext_empty += blen == 0;
            seen->grease_ext_one_byte += blen == 1;
        }
    }
}


/* The host_name of a server_name extension body (RFC 6066 §3), as HAProxy parses it. */
static void read_sni(SSL *s, struct seen *seen)
{
    const unsigned char *p;
    size_t n;
    if (!SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &p, &n) || n < 5)
        return;
    size_t list = (size_t)p[0] << 8 | p[1], name = (size_t)p[3] << 8 | p[4];
    if (list + 2 != n || p[2] != TLSEXT_NAMETYPE_host_name || name + 5 != n ||
        name >= sizeof(seen->sni))
        return;
    memcpy(seen->sni, p + 5, name);
    seen->sni[name] = 0;
}

static int hello_cb(SSL *s, int *al, void *arg)
{
    struct seen *seen = arg;
    const unsigned char *p;
    seen->calls++;
    seen->legacy_version = SSL_client_hello_get0_legacy_version(s);
    seen->random_len = SSL_client_hello_get0_random(s, &p);
    seen->session_id_len = SSL_client_hello_get0_session_id(s, &p);
    seen->compression_len = SSL_client_hello_get0_compression_methods(s, &p);
    seen->ciphers_len = SSL_client_hello_get0_ciphers(s, &p);
    for (size_t i = 0; i + 1 < seen->ciphers_len; i += 2)
        seen->has_aes128 |= p[i] == 0x13 && p[i + 1] == 0x01;
    OPENSSL_free(seen->exts);
    seen->exts = NULL;
    if (!SSL_client_hello_get1_extensions_present(s, &seen->exts, &seen->n_exts))
        return SSL_CLIENT_HELLO_ERROR;
    read_sni(s, seen);
    read_grease(s, seen);
    if (seen->calls == 1)
        memcpy(seen->first_grease, seen->grease, sizeof(seen->grease));
    if (seen->retries > 0) {
        seen->retries--;
        return SSL_CLIENT_HELLO_RETRY;
    }
    if (seen->answer == SSL_CLIENT_HELLO_ERROR) {
        *al = seen->alert;
        return SSL_CLIENT_HELLO_ERROR;
    }
    if (seen->switch_to != NULL && strcmp(seen->sni, "server.example") == 0 &&
        SSL_set_SSL_CTX(s, seen->switch_to) != seen->switch_to)
        return SSL_CLIENT_HELLO_ERROR;
    return SSL_CLIENT_HELLO_SUCCESS;
}

struct fixture {
    SSL_CTX *cctx, *sctx, *vhost;
    struct mock_pair p;
    struct seen seen;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx("ecdsa256");
    f->vhost = mock_server_ctx("rsa");
    if (f->cctx == NULL || f->sctx == NULL || f->vhost == NULL)
        return -1;
    f->seen.answer = SSL_CLIENT_HELLO_SUCCESS;
    SSL_CTX_set_client_hello_cb(f->sctx, hello_cb, &f->seen);
    ERR_clear_error();
    *state = f;
    return 0;
}

static int start(struct fixture *f, const char *sni)
{
    if (!mock_pair_init(&f->p, f->cctx, f->sctx))
        return 0;
    return sni == NULL || SSL_set_tlsext_host_name(f->p.client.ssl, sni) == 1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    SSL_CTX_free(f->vhost);
    OPENSSL_free(f->seen.exts);
    free(f);
    ERR_clear_error();
    return 0;
}

static int has_ext(const struct seen *seen, int type)
{
    for (size_t i = 0; i < seen->n_exts; i++)
        if (seen->exts[i] == type)
            return 1;
    return 0;
}

/* The accessors show the ClientHello as the client sent it. */
static void callback_sees_the_client_hello(void **state)
{
    struct fixture *f = *state;
    assert_true(start(f, "localhost"));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->seen.calls, 1);
    assert_int_equal(f->seen.legacy_version, TLS1_2_VERSION);
    assert_int_equal(f->seen.random_len, 32);
    assert_int_equal(f->seen.session_id_len, 0); /* RFC 9001 §8.4 */
    assert_int_equal(f->seen.compression_len, 1);
    assert_true(f->seen.ciphers_len >= 2 && f->seen.ciphers_len % 2 == 0);
    assert_true(f->seen.has_aes128);
    assert_string_equal(f->seen.sni, "localhost");
    assert_true(has_ext(&f->seen, TLSEXT_TYPE_server_name));
    assert_true(has_ext(&f->seen, TLSEXT_TYPE_supported_versions));
    assert_true(has_ext(&f->seen, TLSEXT_TYPE_key_share));
    assert_true(has_ext(&f->seen, TLSEXT_TYPE_quic_transport_parameters));
    assert_false(has_ext(&f->seen, TLSEXT_TYPE_early_data));
    /* Order as sent: server_name is the client's first extension. */
    assert_int_equal(f->seen.exts[0], TLSEXT_TYPE_server_name);
}

/* Outside the callback there is no ClientHello to show. */
static void accessors_answer_nothing_outside_the_callback(void **state)
{
    struct fixture *f = *state;
    const unsigned char *p = (const unsigned char *)"x";
    size_t n = 7;
    int *exts = NULL;
    assert_true(start(f, NULL));
    SSL *s = f->p.server.ssl;
    assert_int_equal(SSL_client_hello_get0_random(s, &p), 0);
    assert_int_equal(SSL_client_hello_get0_ciphers(s, &p), 0);
    assert_int_equal(SSL_client_hello_get0_legacy_version(s), 0);
    assert_int_equal(SSL_client_hello_get0_ext(s, 0, &p, &n), 0);
    assert_int_equal(SSL_client_hello_get1_extensions_present(s, &exts, &n), 0);
    assert_null(exts);
    assert_int_equal(SSL_client_hello_isv2(s), 0);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_client_hello_get0_ext(s, TLSEXT_TYPE_key_share, &p, &n), 0);
}

/* A name the callback does not know fails with the alert it chose. */
static void callback_error_sends_its_alert(void **state)
{
    struct fixture *f = *state;
    f->seen.answer = SSL_CLIENT_HELLO_ERROR;
    f->seen.alert = SSL_AD_UNRECOGNIZED_NAME;
    assert_true(start(f, "unknown.example"));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_UNRECOGNIZED_NAME);
    assert_int_equal(SSL_get_error(f->p.server.ssl, -1), SSL_ERROR_SSL);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CALLBACK_FAILED);
}

/* An alert outside 0..255 becomes internal_error rather than a truncated value. */
static void callback_error_with_bad_alert_is_internal_error(void **state)
{
    struct fixture *f = *state;
    f->seen.answer = SSL_CLIENT_HELLO_ERROR;
    f->seen.alert = 4096 + SSL_AD_UNRECOGNIZED_NAME;
    assert_true(start(f, NULL));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_INTERNAL_ERROR);
}

/* SSL_CLIENT_HELLO_RETRY pauses the handshake; the next call runs the callback again. */
static void retry_pauses_and_calls_again(void **state)
{
    struct fixture *f = *state;
    f->seen.retries = 2;
    assert_true(start(f, NULL));
    SSL *s = f->p.server.ssl;
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    for (int i = 1; i <= 2; i++) {
        assert_int_equal(SSL_do_handshake(s), -1);
        assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_CLIENT_HELLO_CB);
        assert_true(SSL_want_client_hello_cb(s));
        assert_int_equal(f->seen.calls, i);
        assert_int_equal(f->p.server.out_len[ssl_encryption_initial], 0); /* nothing sent yet */
    }
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->seen.calls, 3);
    assert_false(SSL_want_client_hello_cb(s));
}

/* After HelloRetryRequest the second ClientHello goes through the callback too, as in OpenSSL. */
static void callback_runs_on_both_client_hellos(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256"), 1);
    assert_true(start(f, NULL));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->seen.calls, 2);
    assert_int_equal(SSL_get_negotiated_group(f->p.server.ssl), NID_X9_62_prime256v1);
}

/* Off by default (quictls): no GREASE anywhere. */
static void no_grease_by_default(void **state)
{
    struct fixture *f = *state;
    assert_true(start(f, "localhost"));
    assert_true(mock_handshake(&f->p, 0));
    for (size_t i = 0; i < sizeof(f->seen.grease) / sizeof(f->seen.grease[0]); i++)
        assert_int_equal(f->seen.grease[i], 0);
}

static void assert_grease_everywhere(const struct seen *seen)
{
    for (size_t i = 0; i < sizeof(seen->grease) / sizeof(seen->grease[0]); i++)
        assert_int_not_equal(seen->grease[i], 0);
    assert_true(seen->grease_first_cipher);
    assert_int_equal(seen->grease[G_SHARE], seen->grease[G_GROUP]);
    assert_int_not_equal(seen->grease[G_EXT1], seen->grease[G_EXT2]);
    assert_int_equal(seen->grease_ext_empty, 1);
    assert_int_equal(seen->grease_ext_one_byte, 1);
    assert_false(seen->grease_ext_last);
}

/* RFC 8701 §3: enabled, every field carries GREASE, and a qtls server ignores it all. */
static void grease_in_every_field_and_server_ignores_it(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_grease_enabled(f->cctx, 1);
    assert_true(start(f, "localhost"));
    assert_true(mock_handshake(&f->p, 0));
    assert_grease_everywhere(&f->seen);
    assert_non_null(SSL_get_current_cipher(f->p.client.ssl));
}

/* SSL_set_grease_enabled overrides the context's setting for one connection. */
static void grease_per_connection(void **state)
{
    struct fixture *f = *state;
    assert_true(start(f, NULL));
    SSL_set_grease_enabled(f->p.client.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_grease_everywhere(&f->seen);
}

/* After HelloRetryRequest the same values again (the seed is kept), bar the key share. */
static void grease_survives_hello_retry_request(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_grease_enabled(f->cctx, 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256"), 1);
    assert_true(start(f, NULL));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->seen.calls, 2);
    assert_int_equal(SSL_get_negotiated_group(f->p.server.ssl), NID_X9_62_prime256v1);
    for (int i = 0; i < 8; i++) {
        assert_int_not_equal(f->seen.first_grease[i], 0);
        if (i == G_SHARE) /* §4.2.8: the second carries only the share asked for */
            assert_int_equal(f->seen.grease[i], 0);
        else
            assert_int_equal(f->seen.grease[i], f->seen.first_grease[i]);
    }
}

static int peer_key_type(SSL *client)
{
    X509 *peer = SSL_get1_peer_certificate(client);
    int type = peer != NULL ? EVP_PKEY_get_base_id(X509_get0_pubkey(peer)) : 0;
    X509_free(peer);
    return type;
}

/* Choosing a virtual host by SNI switches the certificate the client receives. */
static void switching_context_by_sni_switches_the_certificate(void **state)
{
    struct fixture *f = *state;
    f->seen.switch_to = f->vhost;
    assert_true(start(f, "server.example"));
    assert_true(mock_handshake(&f->p, 0));
    assert_ptr_equal(SSL_get_SSL_CTX(f->p.server.ssl), f->vhost);
    assert_int_equal(peer_key_type(f->p.client.ssl), EVP_PKEY_RSA);
}

static void other_names_keep_the_default_certificate(void **state)
{
    struct fixture *f = *state;
    f->seen.switch_to = f->vhost;
    assert_true(start(f, "localhost"));
    assert_true(mock_handshake(&f->p, 0));
    assert_ptr_equal(SSL_get_SSL_CTX(f->p.server.ssl), f->sctx);
    assert_int_equal(peer_key_type(f->p.client.ssl), EVP_PKEY_EC);
}

static int vhost_alpn_calls;
static int vhost_alpn_cb(SSL *s, const unsigned char **out, unsigned char *outlen,
                         const unsigned char *in, unsigned int inlen, void *arg)
{
    vhost_alpn_calls++;
    *out = (const unsigned char *)"h3";
    *outlen = 2;
    return SSL_TLSEXT_ERR_OK;
}

/* The virtual host's verify mode, depth, ALPN callback and ticket count apply after the switch. */
static void virtual_host_settings_follow_the_switch(void **state)
{
    struct fixture *f = *state;
    f->seen.switch_to = f->vhost;
    vhost_alpn_calls = 0;
    SSL_CTX_set_alpn_select_cb(f->vhost, vhost_alpn_cb, NULL);
    SSL_CTX_set_verify(f->vhost, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_verify_depth(f->vhost, 3);
    assert_int_equal(SSL_CTX_set_num_tickets(f->vhost, 1), 1);
    assert_int_equal(SSL_CTX_load_verify_locations(f->vhost, mock_cert_path("ca.pem"), NULL), 1);
    assert_true(start(f, "server.example"));
    /* The client has no certificate: the virtual host requires one. */
    assert_false(mock_handshake(&f->p, 0));
    SSL *s = f->p.server.ssl;
    assert_int_equal(SSL_get_verify_mode(s), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
    assert_int_equal(SSL_get_verify_depth(s), 3);
    assert_int_equal(SSL_get_num_tickets(s), 1);
    assert_int_equal(vhost_alpn_calls, 1);
    assert_int_equal(f->p.server.alert, SSL_AD_CERTIFICATE_REQUIRED);
}

/* A setting made on the connection itself survives the switch. */
static void connection_settings_survive_the_switch(void **state)
{
    struct fixture *f = *state;
    f->seen.switch_to = f->vhost;
    SSL_CTX_set_verify(f->vhost, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_set_num_tickets(f->vhost, 1), 1);
    assert_true(start(f, "server.example"));
    SSL *s = f->p.server.ssl;
    SSL_set_verify(s, SSL_VERIFY_NONE, NULL);
    assert_int_equal(SSL_set_num_tickets(s, 3), 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_ptr_equal(SSL_get_SSL_CTX(s), f->vhost);
    assert_int_equal(SSL_get_verify_mode(s), SSL_VERIFY_NONE);
    assert_int_equal(SSL_get_num_tickets(s), 3);
}

/*
 * 0-RTT settings follow a switch only when the new context set them itself: HAProxy enables
 * 0-RTT on the context its connections start from and switches to per-certificate contexts that
 * never mention it (OpenSSL keeps the connection's limit), so its tickets must still allow 0-RTT.
 */
static void early_data_limit_stays_unless_the_virtual_host_sets_one(void **state)
{
    struct fixture *f = *state;
    f->seen.switch_to = f->vhost;
    SSL_CTX_set_max_early_data(f->sctx, UINT32_MAX);
    assert_true(start(f, "server.example"));
    assert_true(mock_handshake(&f->p, 0));
    assert_ptr_equal(SSL_get_SSL_CTX(f->p.server.ssl), f->vhost);
    assert_int_equal(SSL_get_max_early_data(f->p.server.ssl), UINT32_MAX);
    SSL_SESSION *s = SSL_get0_session(f->p.client.ssl);
    assert_non_null(s);
    assert_int_equal(SSL_SESSION_get_max_early_data(s), UINT32_MAX);

    /* A virtual host that sets its own limit (here: no 0-RTT) gets it. */
    mock_pair_free(&f->p);
    SSL_CTX_set_max_early_data(f->vhost, 0);
    assert_true(start(f, "server.example"));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_max_early_data(f->p.server.ssl), 0);
    s = SSL_get0_session(f->p.client.ssl);
    assert_non_null(s);
    assert_int_equal(SSL_SESSION_get_max_early_data(s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(callback_sees_the_client_hello, setup, teardown),
        cmocka_unit_test_setup_teardown(accessors_answer_nothing_outside_the_callback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(callback_error_sends_its_alert, setup, teardown),
        cmocka_unit_test_setup_teardown(callback_error_with_bad_alert_is_internal_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(retry_pauses_and_calls_again, setup, teardown),
        cmocka_unit_test_setup_teardown(callback_runs_on_both_client_hellos, setup, teardown),
        cmocka_unit_test_setup_teardown(switching_context_by_sni_switches_the_certificate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(other_names_keep_the_default_certificate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(virtual_host_settings_follow_the_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(early_data_limit_stays_unless_the_virtual_host_sets_one,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(connection_settings_survive_the_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(no_grease_by_default, setup, teardown),
        cmocka_unit_test_setup_teardown(grease_in_every_field_and_server_ignores_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(grease_per_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(grease_survives_hello_retry_request, setup, teardown),
    };
    return cmocka_run_group_tests_name("client_hello", tests, NULL, NULL);
}
