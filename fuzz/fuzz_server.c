/*
 * A qtls server in one of fuzz_common.h's configurations (first input byte)
 * reads the rest as the client's records (fuzz_play): the ClientHello
 * (resuming with a ticket the fuzzing build's fixed keys open, offering
 * 0-RTT), a second ClientHello after HelloRetryRequest, then the client's
 * Certificate, CertificateVerify and Finished, which the fuzzing build
 * accepts whatever their signature and MAC.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct mock_side server;
    fuzz_ssl_new_cfg(&server, 1, data[0]);
    fuzz_play(&server, data + 1, size - 1);
    fuzz_side_free(&server);
    return 0;
}
