/*
 * libqtls_ngtcp2: qtls as ngtcp2's TLS stack.
 *
 * Handshake bytes go both ways through qtls's QUIC API (RFC 9001 §4.1):
 * CRYPTO data from ngtcp2 enters with SSL_provide_quic_data and drives
 * SSL_do_handshake; qtls hands back traffic secrets, handshake bytes and
 * alerts through this backend's SSL_QUIC_METHOD, which installs keys in the
 * connection, submits CRYPTO data and records the alert. The SSL's app data
 * (SSL_get_app_data) is the application's ngtcp2_crypto_conn_ref.
 */
#include <openssl/ssl.h>

#include "backend.h"

/* ---- Levels ---- */

ngtcp2_crypto_level ngtcp2_crypto_qtls_from_ossl_encryption_level(OSSL_ENCRYPTION_LEVEL ossl_level)
{
    switch (ossl_level) {
    case ssl_encryption_initial:
        return NGTCP2_CRYPTO_LEVEL_INITIAL;
    case ssl_encryption_early_data:
        return NGTCP2_CRYPTO_LEVEL_EARLY;
    case ssl_encryption_handshake:
        return NGTCP2_CRYPTO_LEVEL_HANDSHAKE;
    case ssl_encryption_application:
        return NGTCP2_CRYPTO_LEVEL_APPLICATION;
    default:
        return (ngtcp2_crypto_level)-1;
    }
}

OSSL_ENCRYPTION_LEVEL ngtcp2_crypto_qtls_from_ngtcp2_crypto_level(ngtcp2_crypto_level crypto_level)
{
    switch (crypto_level) {
    case NGTCP2_CRYPTO_LEVEL_INITIAL:
        return ssl_encryption_initial;
    case NGTCP2_CRYPTO_LEVEL_EARLY:
        return ssl_encryption_early_data;
    case NGTCP2_CRYPTO_LEVEL_HANDSHAKE:
        return ssl_encryption_handshake;
    case NGTCP2_CRYPTO_LEVEL_APPLICATION:
        return ssl_encryption_application;
    default:
        return (OSSL_ENCRYPTION_LEVEL)-1;
    }
}

/* ---- Transport parameters (RFC 9001 §8.2) ---- */

int ngtcp2_crypto_set_local_transport_params(void *tls, const uint8_t *buf, size_t len)
{
    return SSL_set_quic_transport_params(tls, buf, len) == 1 ? 0 : -1;
}

/* A peer whose parameters do not decode fails the handshake with the error ngtcp2 chose
 * (ngtcp2_conn_get_tls_error), which the callbacks then report. */
int ngtcp2_crypto_set_remote_transport_params(ngtcp2_conn *conn, void *tls)
{
    const uint8_t *tp = NULL;
    size_t tplen = 0;
    int rv;

    SSL_get_peer_quic_transport_params(tls, &tp, &tplen);
    rv = ngtcp2_conn_decode_remote_transport_params(conn, tp, tplen);
    if (rv != 0) {
        ngtcp2_conn_set_tls_error(conn, rv);
        return -1;
    }
    return 0;
}

/* ---- CRYPTO data ---- */

/* SSL_get_error() after a handshake step: 0 to wait for more data, else ngtcp2's code. */
static int handshake_error(SSL *ssl, int rv)
{
    switch (SSL_get_error(ssl, rv)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        return 0;
    case SSL_ERROR_WANT_CLIENT_HELLO_CB:
        return NGTCP2_CRYPTO_QTLS_ERR_TLS_WANT_CLIENT_HELLO_CB;
    case SSL_ERROR_WANT_X509_LOOKUP:
        return NGTCP2_CRYPTO_QTLS_ERR_TLS_WANT_X509_LOOKUP;
    default:
        return -1;
    }
}

/*
 * Feeds CRYPTO data to qtls (datalen may be 0: the client's first call only
 * starts the handshake), advances the handshake, and once it is complete
 * processes post-handshake messages (NewSessionTicket) as they come.
 * SSL_do_handshake returns 1 only at true completion (the client after its
 * Finished, the server after the client's), which is when ngtcp2 must hear
 * of it.
 */
int ngtcp2_crypto_read_write_crypto_data(ngtcp2_conn *conn, ngtcp2_crypto_level crypto_level,
                                         const uint8_t *data, size_t datalen)
{
    SSL *ssl = ngtcp2_conn_get_tls_native_handle(conn);
    int rv;

    if (ssl == NULL ||
        SSL_provide_quic_data(ssl, ngtcp2_crypto_qtls_from_ngtcp2_crypto_level(crypto_level),
                              data, datalen) != 1)
        return -1;
    if (!ngtcp2_conn_get_handshake_completed(conn)) {
        rv = SSL_do_handshake(ssl);
        if (rv <= 0)
            return handshake_error(ssl, rv);
        ngtcp2_conn_handshake_completed(conn);
    }
    rv = SSL_process_quic_post_handshake(ssl);
    return rv == 1 ? 0 : handshake_error(ssl, rv);
}

/* ---- ngtcp2 callbacks ---- */

int qn_set_local_transport_params(ngtcp2_conn *conn)
{
    uint8_t buf[1024];
    ngtcp2_ssize n = ngtcp2_conn_encode_local_transport_params(conn, buf, sizeof(buf));
    if (n < 0)
        return -1;
    return ngtcp2_crypto_set_local_transport_params(ngtcp2_conn_get_tls_native_handle(conn), buf,
                                                    (size_t)n);
}

/* The client's first flight: Initial keys for its random DCID, its transport parameters in
 * the SSL, and the ClientHello. */
int ngtcp2_crypto_client_initial_cb(ngtcp2_conn *conn, void *user_data)
{
    (void)user_data;
    if (ngtcp2_crypto_derive_and_install_initial_key(
            conn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            ngtcp2_conn_get_client_chosen_version(conn), ngtcp2_conn_get_dcid(conn)) != 0 ||
        qn_set_local_transport_params(conn) != 0 ||
        ngtcp2_crypto_read_write_crypto_data(conn, NGTCP2_CRYPTO_LEVEL_INITIAL, NULL, 0) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

/* RFC 9001 §5.2: after a Retry, Initial keys come from the Retry's Source Connection ID. */
int ngtcp2_crypto_recv_retry_cb(ngtcp2_conn *conn, const ngtcp2_pkt_hd *hd, void *user_data)
{
    (void)user_data;
    if (ngtcp2_crypto_derive_and_install_initial_key(
            conn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            ngtcp2_conn_get_client_chosen_version(conn), &hd->scid) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

int ngtcp2_crypto_recv_client_initial_cb(ngtcp2_conn *conn, const ngtcp2_cid *dcid,
                                         void *user_data)
{
    (void)user_data;
    if (ngtcp2_crypto_derive_and_install_initial_key(
            conn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            ngtcp2_conn_get_client_chosen_version(conn), dcid) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

/* RFC 9368: Initial keys for the version compatible version negotiation chose. */
int ngtcp2_crypto_version_negotiation_cb(ngtcp2_conn *conn, uint32_t version,
                                         const ngtcp2_cid *client_dcid, void *user_data)
{
    (void)user_data;
    if (ngtcp2_crypto_derive_and_install_vneg_initial_key(conn, NULL, NULL, NULL, NULL, NULL, NULL,
                                                          NULL, NULL, NULL, version,
                                                          client_dcid) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

void ngtcp2_crypto_delete_crypto_aead_ctx_cb(ngtcp2_conn *conn, ngtcp2_crypto_aead_ctx *aead_ctx,
                                             void *user_data)
{
    (void)conn;
    (void)user_data;
    ngtcp2_crypto_aead_ctx_free(aead_ctx);
}

void ngtcp2_crypto_delete_crypto_cipher_ctx_cb(ngtcp2_conn *conn,
                                               ngtcp2_crypto_cipher_ctx *cipher_ctx,
                                               void *user_data)
{
    (void)conn;
    (void)user_data;
    ngtcp2_crypto_cipher_ctx_free(cipher_ctx);
}

/* A TLS failure is reported as the error ngtcp2 recorded (an alert becomes CRYPTO_ERROR
 * 0x100 + alert, RFC 9001 §4.8) or NGTCP2_ERR_CRYPTO. */
int ngtcp2_crypto_recv_crypto_data_cb(ngtcp2_conn *conn, ngtcp2_crypto_level crypto_level,
                                      uint64_t offset, const uint8_t *data, size_t datalen,
                                      void *user_data)
{
    (void)offset;
    (void)user_data;
    if (ngtcp2_crypto_read_write_crypto_data(conn, crypto_level, data, datalen) != 0) {
        int rv = ngtcp2_conn_get_tls_error(conn);
        return rv != 0 ? rv : NGTCP2_ERR_CRYPTO;
    }
    return 0;
}

/* ---- SSL_QUIC_METHOD ---- */

static ngtcp2_conn *conn_of(SSL *ssl)
{
    ngtcp2_crypto_conn_ref *ref = SSL_get_app_data(ssl);
    return ref != NULL && ref->get_conn != NULL ? ref->get_conn(ref) : NULL;
}

/* Secrets are from this endpoint's point of view; either may be NULL (0-RTT has one). */
static int set_encryption_secrets(SSL *ssl, OSSL_ENCRYPTION_LEVEL ossl_level,
                                  const uint8_t *read_secret, const uint8_t *write_secret,
                                  size_t secret_len)
{
    ngtcp2_conn *conn = conn_of(ssl);
    ngtcp2_crypto_level level = ngtcp2_crypto_qtls_from_ossl_encryption_level(ossl_level);

    if (conn == NULL)
        return 0;
    if (read_secret != NULL && ngtcp2_crypto_derive_and_install_rx_key(
                                   conn, NULL, NULL, NULL, level, read_secret, secret_len) != 0)
        return 0;
    if (write_secret != NULL && ngtcp2_crypto_derive_and_install_tx_key(
                                    conn, NULL, NULL, NULL, level, write_secret, secret_len) != 0)
        return 0;
    return 1;
}

static int add_handshake_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL ossl_level, const uint8_t *data,
                              size_t len)
{
    ngtcp2_conn *conn = conn_of(ssl);
    int rv;

    if (conn == NULL)
        return 0;
    rv = ngtcp2_conn_submit_crypto_data(
        conn, ngtcp2_crypto_qtls_from_ossl_encryption_level(ossl_level), data, len);
    if (rv != 0) {
        ngtcp2_conn_set_tls_error(conn, rv);
        return 0;
    }
    return 1;
}

/* ngtcp2 sends CRYPTO data when the application next writes packets. */
static int flush_flight(SSL *ssl)
{
    (void)ssl;
    return 1;
}

static int send_alert(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, uint8_t alert)
{
    ngtcp2_conn *conn = conn_of(ssl);
    (void)level;
    if (conn == NULL)
        return 0;
    ngtcp2_conn_set_tls_alert(conn, alert);
    return 1;
}

static const SSL_QUIC_METHOD quic_method = {
    set_encryption_secrets,
    add_handshake_data,
    flush_flight,
    send_alert,
};

/* RFC 9001 §4.2: QUIC runs TLS 1.3 only. */
static int configure_context(SSL_CTX *ssl_ctx)
{
    if (ssl_ctx == NULL || !SSL_CTX_set_min_proto_version(ssl_ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(ssl_ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_quic_method(ssl_ctx, &quic_method))
        return -1;
    return 0;
}

int ngtcp2_crypto_qtls_configure_server_context(SSL_CTX *ssl_ctx)
{
    return configure_context(ssl_ctx);
}

int ngtcp2_crypto_qtls_configure_client_context(SSL_CTX *ssl_ctx)
{
    return configure_context(ssl_ctx);
}
