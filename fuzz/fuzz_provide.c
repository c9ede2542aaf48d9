/*
 * Arbitrary chunking and levels of SSL_provide_quic_data, then
 * SSL_do_handshake. Input: byte 0 picks the role (bit 0: 1 = server; a
 * client first sends its ClientHello); then records of
 *   ctl (bits 0-1 level, bit 7: run SSL_do_handshake after this chunk),
 *   len (one byte), len bytes of data (truncated at the end of the input).
 */
#include "fuzz_common.h"

static SSL_CTX *server_ctx, *client_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    server_ctx = fuzz_server_ctx();
    client_ctx = fuzz_client_ctx();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int server = data[0] & 1;
    size_t off = 1;

    struct mock_side side;
    SSL *ssl = fuzz_ssl_new(server ? server_ctx : client_ctx, &side, server);
    if (!server) {
        SSL_set_tlsext_host_name(ssl, "localhost");
        (void)SSL_do_handshake(ssl);
    }
    while (off + 2 <= size) {
        uint8_t ctl = data[off], len = data[off + 1];
        off += 2;
        size_t n = len <= size - off ? len : size - off;
        if (!SSL_provide_quic_data(ssl, (OSSL_ENCRYPTION_LEVEL)(ctl & 3), data + off, n))
            break;
        off += n;
        if (ctl & 0x80) {
            int r = SSL_do_handshake(ssl);
            if (r != 1 && SSL_get_error(ssl, r) != SSL_ERROR_WANT_READ)
                break;
            fuzz_side_discard_output(&side);
        }
    }
    (void)SSL_do_handshake(ssl);
    if (SSL_is_init_finished(ssl))
        (void)SSL_process_quic_post_handshake(ssl);
    fuzz_side_free(&side);
    return 0;
}
