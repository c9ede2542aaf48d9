/*
 * TLS 1.3 over TCP: the record layer (src/transport/record.c) and libssl's I/O API on it
 * (src/api/tcp.c). A qtls client or server (input byte 1) in one of fuzz_common.h's
 * configurations (input byte 0: suites, certificates, client certificate, HelloRetryRequest,
 * resumption with a ticket the fuzzing build's fixed keys open, 0-RTT), with read-ahead,
 * SSL_MODE_AUTO_RETRY, RELEASE_BUFFERS, middlebox compatibility and the EOF options on or off,
 * reads the rest as the peer's byte stream, in segments of any size through a memory BIO, and
 * runs SSL_do_handshake / SSL_read_early_data / SSL_write_early_data, SSL_read / SSL_peek /
 * SSL_write, SSL_key_update and SSL_shutdown as each segment's control byte says, until it
 * fails or the input is used up (fuzz_tcp_play, fuzz_common.h, has the format). The fuzzing
 * build's record protection is transparent and it accepts any Finished, CertificateVerify and
 * binder, so every state past the ServerHello is reachable; its output is discarded.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_tcp_play(data, size, NULL);
    return 0;
}
