/*
 * A qtls client in one of fuzz_common.h's configurations (first input byte:
 * client certificate, HelloRetryRequest, 0-RTT, resumption, ticket callback)
 * sends its ClientHello, then reads the rest as the server's records
 * (fuzz_play): ServerHello, a second ServerHello after HelloRetryRequest, the
 * handshake flight, then post-handshake messages (NewSessionTicket). The
 * fuzzing build accepts any CertificateVerify and Finished, so each state is
 * reachable.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct mock_side client;
    fuzz_ssl_new_cfg(&client, 0, data[0]);
    fuzz_play(&client, data + 1, size - 1);
    fuzz_side_free(&client);
    return 0;
}
