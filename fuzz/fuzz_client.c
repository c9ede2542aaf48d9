/*
 * A qtls client that sends its ClientHello and then gets the input as the
 * server's flight: the first two bytes (big-endian) are the length of the
 * initial-level part (ServerHello), the rest is handshake-level data
 * (EncryptedExtensions .. Finished).
 */
#include "fuzz_common.h"

static SSL_CTX *client_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    client_ctx = fuzz_client_ctx();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t initial_len = (size_t)data[0] << 8 | data[1];
    data += 2;
    size -= 2;
    if (initial_len > size)
        initial_len = size;

    struct mock_side client;
    SSL *ssl = fuzz_ssl_new(client_ctx, &client, 0);
    SSL_set_tlsext_host_name(ssl, "localhost");
    if (SSL_do_handshake(ssl) == 1) /* cannot complete without a server */
        abort();
    fuzz_side_discard_output(&client);

    if (SSL_provide_quic_data(ssl, ssl_encryption_initial, data, initial_len)) {
        int r = SSL_do_handshake(ssl);
        if (r == 1 || SSL_get_error(ssl, r) == SSL_ERROR_WANT_READ) {
            if (SSL_provide_quic_data(ssl, ssl_encryption_handshake, data + initial_len,
                                      size - initial_len))
                (void)SSL_do_handshake(ssl);
        }
    }
    fuzz_side_free(&client);
    return 0;
}
