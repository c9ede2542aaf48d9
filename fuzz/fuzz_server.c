/* A qtls server fed the input as the client's initial-level bytes (a ClientHello). */
#include "fuzz_common.h"

static SSL_CTX *server_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    server_ctx = fuzz_server_ctx();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mock_side server;
    SSL *ssl = fuzz_ssl_new(server_ctx, &server, 1);
    if (SSL_provide_quic_data(ssl, ssl_encryption_initial, data, size))
        (void)SSL_do_handshake(ssl);
    fuzz_side_free(&server);
    return 0;
}
