/*
 * Errors: the reason strings for ERR_LIB_SSL and the alert texts.
 *
 * libcrypto knows the library name ("SSL routines") and the common ERR_R_*
 * reasons, but the SSL_R_* strings live in libssl, which a qtls program does
 * not load; so qtls registers its own, in OpenSSL's exact words (lowercase
 * name of the macro), so that ERR_error_string and log lines read the same.
 */
#include "internal.h"
#include "base/base.h"

#define R(reason, text) {ERR_PACK(ERR_LIB_SSL, 0, (reason)), (text)}

static const ERR_STRING_DATA reasons[] = {
    /* the system sslerr.h reasons the engine raises or may raise */
    R(SSL_R_BAD_CIPHER, "bad cipher"),
    R(SSL_R_BAD_DECOMPRESSION, "bad decompression"),
    R(SSL_R_COMPRESSION_FAILURE, "compression failure"),
    R(SSL_R_DUPLICATE_COMPRESSION_ID, "duplicate compression id"),
    R(SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM, "unsupported compression algorithm"),
    R(SSL_R_BAD_DATA, "bad data"),
    R(SSL_R_BAD_EARLY_DATA, "bad early data"),
    R(SSL_R_BAD_ECPOINT, "bad ecpoint"),
    R(SSL_R_BAD_EXTENSION, "bad extension"),
    R(SSL_R_BAD_HANDSHAKE_LENGTH, "bad handshake length"),
    R(SSL_R_BAD_HANDSHAKE_STATE, "bad handshake state"),
    R(SSL_R_BAD_HELLO_REQUEST, "bad hello request"),
    R(SSL_R_BAD_HRR_VERSION, "bad hrr version"),
    R(SSL_R_BAD_KEY_SHARE, "bad key share"),
    R(SSL_R_BAD_LEGACY_VERSION, "bad legacy version"),
    R(SSL_R_BAD_LENGTH, "bad length"),
    R(SSL_R_BAD_PACKET, "bad packet"),
    R(SSL_R_BAD_PROTOCOL_VERSION_NUMBER, "bad protocol version number"),
    R(SSL_R_BAD_PSK, "bad psk"),
    R(SSL_R_BAD_PSK_IDENTITY, "bad psk identity"),
    R(SSL_R_BAD_SIGNATURE, "bad signature"),
    R(SSL_R_BAD_SSL_FILETYPE, "bad ssl filetype"),
    R(SSL_R_BAD_VALUE, "bad value"),
    R(SSL_R_BINDER_DOES_NOT_VERIFY, "binder does not verify"),
    R(SSL_R_CALLBACK_FAILED, "callback failed"),
    R(SSL_R_CANNOT_CHANGE_CIPHER, "cannot change cipher"),
    R(SSL_R_CA_DN_LENGTH_MISMATCH, "ca dn length mismatch"),
    R(SSL_R_CA_KEY_TOO_SMALL, "ca key too small"),
    R(SSL_R_CA_MD_TOO_WEAK, "ca md too weak"),
    R(SSL_R_CCS_RECEIVED_EARLY, "ccs received early"),
    R(SSL_R_CERTIFICATE_VERIFY_FAILED, "certificate verify failed"),
    R(SSL_R_CERT_LENGTH_MISMATCH, "cert length mismatch"),
    R(SSL_R_CLIENTHELLO_TLSEXT, "clienthello tlsext"),
    R(SSL_R_DECRYPTION_FAILED, "decryption failed"),
    R(SSL_R_DH_KEY_TOO_SMALL, "dh key too small"),
    R(SSL_R_DIGEST_CHECK_FAILED, "digest check failed"),
    R(SSL_R_EE_KEY_TOO_SMALL, "ee key too small"),
    R(SSL_R_ERROR_IN_RECEIVED_CIPHER_LIST, "error in received cipher list"),
    R(SSL_R_EXCESSIVE_MESSAGE_SIZE, "excessive message size"),
    R(SSL_R_EXTENSION_NOT_RECEIVED, "extension not received"),
    R(SSL_R_EXT_LENGTH_MISMATCH, "ext length mismatch"),
    R(SSL_R_INCONSISTENT_EARLY_DATA_ALPN, "inconsistent early data alpn"),
    R(SSL_R_INCONSISTENT_EARLY_DATA_SNI, "inconsistent early data sni"),
    R(SSL_R_INCONSISTENT_EXTMS, "inconsistent extms"),
    R(SSL_R_INVALID_ALERT, "invalid alert"),
    R(SSL_R_INVALID_CERTIFICATE_OR_ALG, "invalid certificate or alg"),
    R(SSL_R_INVALID_COMMAND, "invalid command"),
    R(SSL_R_INVALID_MAX_EARLY_DATA, "invalid max early data"),
    R(SSL_R_INVALID_NULL_CMD_NAME, "invalid null cmd name"),
    R(SSL_R_INVALID_SESSION_ID, "invalid session id"),
    R(SSL_R_INVALID_SERVERINFO_DATA, "invalid serverinfo data"),
    R(SSL_R_INVALID_STATUS_RESPONSE, "invalid status response"),
    R(SSL_R_INVALID_TICKET_KEYS_LENGTH, "invalid ticket keys length"),
    R(SSL_R_LENGTH_MISMATCH, "length mismatch"),
    R(SSL_R_LENGTH_TOO_LONG, "length too long"),
    R(SSL_R_LENGTH_TOO_SHORT, "length too short"),
    R(SSL_R_MISSING_FATAL, "missing fatal"),
    R(SSL_R_MISSING_PSK_KEX_MODES_EXTENSION, "missing psk kex modes extension"),
    R(SSL_R_MISSING_SIGALGS_EXTENSION, "missing sigalgs extension"),
    R(SSL_R_MISSING_SUPPORTED_GROUPS_EXTENSION, "missing supported groups extension"),
    R(SSL_R_NOT_REPLACING_CERTIFICATE, "not replacing certificate"),
    R(SSL_R_NOT_SERVER, "not server"),
    R(SSL_R_NO_APPLICATION_PROTOCOL, "no application protocol"),
    R(SSL_R_NO_CERTIFICATES_RETURNED, "no certificates returned"),
    R(SSL_R_NO_CERTIFICATE_ASSIGNED, "no certificate assigned"),
    R(SSL_R_NO_CERTIFICATE_SET, "no certificate set"),
    R(SSL_R_NO_CIPHERS_SPECIFIED, "no ciphers specified"),
    R(SSL_R_NO_CIPHER_MATCH, "no cipher match"),
    R(SSL_R_NO_PRIVATE_KEY_ASSIGNED, "no private key assigned"),
    R(SSL_R_NO_PROTOCOLS_AVAILABLE, "no protocols available"),
    R(SSL_R_NO_SHARED_CIPHER, "no shared cipher"),
    R(SSL_R_NO_SHARED_GROUPS, "no shared groups"),
    R(SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS, "no shared signature algorithms"),
    R(SSL_R_NO_SUITABLE_GROUPS, "no suitable groups"),
    R(SSL_R_NO_SUITABLE_KEY_SHARE, "no suitable key share"),
    R(SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM, "no suitable signature algorithm"),
    R(SSL_R_NULL_SSL_CTX, "null ssl ctx"),
    R(SSL_R_NULL_SSL_METHOD_PASSED, "null ssl method passed"),
    R(SSL_R_OCSP_CALLBACK_FAILURE, "ocsp callback failure"),
    R(SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE, "peer did not return a certificate"),
    R(SSL_R_PEM_NAME_BAD_PREFIX, "pem name bad prefix"),
    R(SSL_R_PEM_NAME_TOO_SHORT, "pem name too short"),
    R(SSL_R_PRIVATE_KEY_MISMATCH, "private key mismatch"),
    R(SSL_R_PROTOCOL_IS_SHUTDOWN, "protocol is shutdown"),
    R(SSL_R_PSK_IDENTITY_NOT_FOUND, "psk identity not found"),
    R(SSL_R_SESSION_ID_CONTEXT_UNINITIALIZED, "session id context uninitialized"),
    R(SSL_R_SHUTDOWN_WHILE_IN_INIT, "shutdown while in init"),
    R(SSL_R_SSL3_EXT_INVALID_SERVERNAME, "ssl3 ext invalid servername"),
    R(SSL_R_SSL3_EXT_INVALID_SERVERNAME_TYPE, "ssl3 ext invalid servername type"),
    R(SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, "sslv3 alert bad certificate"),
    R(SSL_R_SSLV3_ALERT_BAD_RECORD_MAC, "sslv3 alert bad record mac"),
    R(SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, "sslv3 alert certificate expired"),
    R(SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED, "sslv3 alert certificate revoked"),
    R(SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, "sslv3 alert certificate unknown"),
    R(SSL_R_SSLV3_ALERT_DECOMPRESSION_FAILURE, "sslv3 alert decompression failure"),
    R(SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE, "sslv3 alert handshake failure"),
    R(SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER, "sslv3 alert illegal parameter"),
    R(SSL_R_SSLV3_ALERT_NO_CERTIFICATE, "sslv3 alert no certificate"),
    R(SSL_R_SSLV3_ALERT_UNEXPECTED_MESSAGE, "sslv3 alert unexpected message"),
    R(SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, "sslv3 alert unsupported certificate"),
    R(SSL_R_SSL_HANDSHAKE_FAILURE, "ssl handshake failure"),
    R(SSL_R_SSL_SECTION_EMPTY, "ssl section empty"),
    R(SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG, "ssl session id context too long"),
    R(SSL_R_SSL_SESSION_ID_HAS_BAD_LENGTH, "ssl session id has bad length"),
    R(SSL_R_SSL_SESSION_ID_TOO_LONG, "ssl session id too long"),
    R(SSL_R_SSL_SESSION_VERSION_MISMATCH, "ssl session version mismatch"),
    R(SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, "tlsv13 alert certificate required"),
    R(SSL_R_TLSV13_ALERT_MISSING_EXTENSION, "tlsv13 alert missing extension"),
    R(SSL_R_TLSV1_ALERT_ACCESS_DENIED, "tlsv1 alert access denied"),
    R(SSL_R_TLSV1_ALERT_DECODE_ERROR, "tlsv1 alert decode error"),
    R(SSL_R_TLSV1_ALERT_DECRYPTION_FAILED, "tlsv1 alert decryption failed"),
    R(SSL_R_TLSV1_ALERT_DECRYPT_ERROR, "tlsv1 alert decrypt error"),
    R(SSL_R_TLSV1_ALERT_EXPORT_RESTRICTION, "tlsv1 alert export restriction"),
    R(SSL_R_TLSV1_ALERT_INAPPROPRIATE_FALLBACK, "tlsv1 alert inappropriate fallback"),
    R(SSL_R_TLSV1_ALERT_INSUFFICIENT_SECURITY, "tlsv1 alert insufficient security"),
    R(SSL_R_TLSV1_ALERT_INTERNAL_ERROR, "tlsv1 alert internal error"),
    R(SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL, "tlsv1 alert no application protocol"),
    R(SSL_R_TLSV1_ALERT_NO_RENEGOTIATION, "tlsv1 alert no renegotiation"),
    R(SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, "tlsv1 alert protocol version"),
    R(SSL_R_TLSV1_ALERT_RECORD_OVERFLOW, "tlsv1 alert record overflow"),
    R(SSL_R_TLSV1_ALERT_UNKNOWN_CA, "tlsv1 alert unknown ca"),
    R(SSL_R_TLSV1_ALERT_UNKNOWN_PSK_IDENTITY, "tlsv1 alert unknown psk identity"),
    R(SSL_R_TLSV1_ALERT_USER_CANCELLED, "tlsv1 alert user cancelled"),
    R(SSL_R_TLSV1_BAD_CERTIFICATE_HASH_VALUE, "tlsv1 bad certificate hash value"),
    R(SSL_R_TLSV1_BAD_CERTIFICATE_STATUS_RESPONSE, "tlsv1 bad certificate status response"),
    R(SSL_R_TLSV1_CERTIFICATE_UNOBTAINABLE, "tlsv1 certificate unobtainable"),
    R(SSL_R_TLSV1_UNRECOGNIZED_NAME, "tlsv1 unrecognized name"),
    R(SSL_R_TLSV1_UNSUPPORTED_EXTENSION, "tlsv1 unsupported extension"),
    R(SSL_R_TOO_MUCH_EARLY_DATA, "too much early data"),
    R(SSL_R_UNEXPECTED_MESSAGE, "unexpected message"),
    R(SSL_R_UNINITIALIZED, "uninitialized"),
    R(SSL_R_UNKNOWN_CERTIFICATE_TYPE, "unknown certificate type"),
    R(SSL_R_UNKNOWN_CIPHER_RETURNED, "unknown cipher returned"),
    R(SSL_R_UNKNOWN_CMD_NAME, "unknown cmd name"),
    R(SSL_R_UNKNOWN_CIPHER_TYPE, "unknown cipher type"),
    R(SSL_R_UNKNOWN_KEY_EXCHANGE_TYPE, "unknown key exchange type"),
    R(SSL_R_UNKNOWN_PKEY_TYPE, "unknown pkey type"),
    R(SSL_R_UNKNOWN_PROTOCOL, "unknown protocol"),
    R(SSL_R_UNKNOWN_SSL_VERSION, "unknown ssl version"),
    R(SSL_R_UNSOLICITED_EXTENSION, "unsolicited extension"),
    R(SSL_R_UNSUPPORTED_ELLIPTIC_CURVE, "unsupported elliptic curve"),
    R(SSL_R_UNSUPPORTED_PROTOCOL, "unsupported protocol"),
    R(SSL_R_UNSUPPORTED_SSL_VERSION, "unsupported ssl version"),
    R(SSL_R_UNSUPPORTED_STATUS_TYPE, "unsupported status type"),
    R(SSL_R_VERSION_TOO_HIGH, "version too high"),
    R(SSL_R_VERSION_TOO_LOW, "version too low"),
    R(SSL_R_WRONG_CIPHER_RETURNED, "wrong cipher returned"),
    R(SSL_R_WRONG_CURVE, "wrong curve"),
    R(SSL_R_WRONG_SIGNATURE_TYPE, "wrong signature type"),
    R(SSL_R_X509_LIB, "x509 lib"),
    /* quictls's reasons (include/qtls/quic.h) */
    R(SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED, "wrong encryption level received"),
    R(SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION,
      "missing quic transport parameters extension"),
    /* OpenSSL 3.5's SSL_set_quic_tls_cbs (include/qtls/quic_tls35.h) */
    R(SSL_R_MISSING_QUIC_TLS_FUNCTIONS, "missing quic tls functions"),
    /* qtls's own (internal.h) */
    R(QTLS_R_QUIC_API_MIXED, "quictls and openssl 3.5 quic apis mixed on one connection"),
    R(QTLS_R_DUPLICATE_EXTENSION, "duplicate extension"),
    R(QTLS_R_UNEXPECTED_EXTENSION, "unexpected extension"),
    R(QTLS_R_KEY_UPDATE_NOT_ALLOWED, "key update not allowed in quic"),
    R(QTLS_R_EXCESS_HANDSHAKE_DATA, "excess handshake data"),
    R(QTLS_R_UNEXPECTED_COMPATIBILITY_MODE, "unexpected compatibility mode"),
    R(QTLS_R_NOT_QUIC, "not a quic connection"),
    /* the record layer (transport/record.c) and libssl's I/O calls (api/tcp.c) */
    R(SSL_R_UNEXPECTED_RECORD, "unexpected record"),
    R(SSL_R_UNEXPECTED_CCS_MESSAGE, "unexpected ccs message"),
    R(SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC, "decryption failed or bad record mac"),
    R(SSL_R_ENCRYPTED_LENGTH_TOO_LONG, "encrypted length too long"),
    R(SSL_R_DATA_LENGTH_TOO_LONG, "data length too long"),
    R(SSL_R_WRONG_VERSION_NUMBER, "wrong version number"),
    R(SSL_R_BAD_KEY_UPDATE, "bad key update"),
    R(SSL_R_BAD_RECORD_TYPE, "bad record type"),
    R(SSL_R_BAD_WRITE_RETRY, "bad write retry"),
    R(SSL_R_BIO_NOT_SET, "bio not set"),
    R(SSL_R_UNEXPECTED_EOF_WHILE_READING, "unexpected eof while reading"),
    R(SSL_R_INVALID_KEY_UPDATE_TYPE, "invalid key update type"),
    R(SSL_R_STILL_IN_INIT, "still in init"),
    /* post-handshake authentication (handshake/post_auth.c) */
    R(SSL_R_WRONG_SSL_VERSION, "wrong ssl version"),
    R(SSL_R_REQUEST_PENDING, "request pending"),
    R(SSL_R_REQUEST_SENT, "request sent"),
    R(SSL_R_INVALID_CONFIG, "invalid config"),
    R(SSL_R_INVALID_CONTEXT, "invalid context"),
    R(SSL_R_POST_HANDSHAKE_AUTH_ENCODING_ERR, "post handshake auth encoding err"),
    R(SSL_R_NOT_ON_RECORD_BOUNDARY, "not on record boundary"),
    R(SSL_R_RECORD_TOO_SMALL, "record too small"),
    R(SSL_R_TOO_MANY_KEY_UPDATES, "too many key updates"),
    R(SSL_R_CERT_CB_ERROR, "cert cb error"),
    R(SSL_R_TOO_MANY_WARN_ALERTS, "too many warn alerts"),
    R(SSL_R_HTTP_REQUEST, "http request"),
    R(SSL_R_HTTPS_PROXY_REQUEST, "https proxy request"),
    R(QTLS_R_DECODE_ERROR, "decode error"),
    R(QTLS_R_QUIC_CALLBACK_FAILED, "quic callback failed"),
    R(QTLS_R_INCONSISTENT_CLIENT_HELLO, "inconsistent client hello"),
    R(QTLS_R_MISSING_EXTENSION, "missing extension"),
    R(QTLS_R_INVALID_ALPN_PROTOCOL, "invalid alpn protocol"),
    R(QTLS_R_NO_QUIC_METHOD, "no quic method set"),
    R(QTLS_R_CHANGE_CIPHER_SPEC_NOT_ALLOWED, "change cipher spec not allowed in quic"),
    R(QTLS_R_UNSUPPORTED_GROUP, "unsupported group"),
    R(QTLS_R_HANDSHAKE_FAILED_BEFORE, "handshake failed before"),
    R(QTLS_R_BAD_SESSION, "bad session encoding"),
    R(QTLS_R_TLS_OVER_TCP_UNSUPPORTED, "TLS over TCP is not supported"),
    R(QTLS_R_NOT_IMPLEMENTED, "not implemented"),
    R(QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC, "post-handshake authentication is not allowed in quic"),
    R(QTLS_R_INVALID_SCT_LIST, "invalid sct list"),
    R(QTLS_R_OCSP_CB_ERROR, "ocsp cb error"),
    R(QTLS_R_KEY_USAGE_BIT_INCORRECT, "key usage bit incorrect"),
    R(QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY, "extension handled internally"),
    R(QTLS_R_CUSTOM_EXT_DUPLICATE, "custom extension already added"),
    {0, NULL},
};

void err_load_strings(void)
{
    /* Idempotent: the table is const and loading twice replaces entries with themselves. */
    ERR_load_strings_const(reasons);
}

void qtls_set_alert(SSL *c, uint8_t alert)
{
    /* The first alert is the one that explains the failure; later ones are consequences. */
    if (c != NULL && c->alert == 0)
        c->alert = alert;
}

int qtls_fail_raise(SSL *c, int alert, int reason)
{
    ERR_set_error(ERR_LIB_SSL, reason, NULL);
    qtls_set_alert(c, (uint8_t)alert);
    return 0;
}

int qtls_not_implemented(const char *setting)
{
    ERR_raise_data(ERR_LIB_SSL, QTLS_R_NOT_IMPLEMENTED, "%s is not implemented by qtls", setting);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Alert texts (OpenSSL's ssl_stat.c wording)                          */
/* ------------------------------------------------------------------ */

/*
 * OpenSSL 3.0 answers "UK"/"unknown" for the TLS 1.3 alerts 109 and 116 and
 * for 86; qtls, which sends missing_extension in QUIC, names them instead.
 */
static const struct {
    int value;
    const char *code, *text;
} alerts[] = {
    {SSL3_AD_CLOSE_NOTIFY, "CN", "close notify"},
    {SSL3_AD_UNEXPECTED_MESSAGE, "UM", "unexpected_message"},
    {SSL3_AD_BAD_RECORD_MAC, "BM", "bad record mac"},
    {TLS1_AD_DECRYPTION_FAILED, "DC", "decryption failed"},
    {TLS1_AD_RECORD_OVERFLOW, "RO", "record overflow"},
    {SSL3_AD_DECOMPRESSION_FAILURE, "DF", "decompression failure"},
    {SSL3_AD_HANDSHAKE_FAILURE, "HF", "handshake failure"},
    {SSL3_AD_NO_CERTIFICATE, "NC", "no certificate"},
    {SSL3_AD_BAD_CERTIFICATE, "BC", "bad certificate"},
    {SSL3_AD_UNSUPPORTED_CERTIFICATE, "UC", "unsupported certificate"},
    {SSL3_AD_CERTIFICATE_REVOKED, "CR", "certificate revoked"},
    {SSL3_AD_CERTIFICATE_EXPIRED, "CE", "certificate expired"},
    {SSL3_AD_CERTIFICATE_UNKNOWN, "CU", "certificate unknown"},
    {SSL3_AD_ILLEGAL_PARAMETER, "IP", "illegal parameter"},
    {TLS1_AD_UNKNOWN_CA, "CA", "unknown CA"},
    {TLS1_AD_ACCESS_DENIED, "AD", "access denied"},
    {TLS1_AD_DECODE_ERROR, "DE", "decode error"},
    {TLS1_AD_DECRYPT_ERROR, "CY", "decrypt error"},
    {TLS1_AD_EXPORT_RESTRICTION, "ER", "export restriction"},
    {TLS1_AD_PROTOCOL_VERSION, "PV", "protocol version"},
    {TLS1_AD_INSUFFICIENT_SECURITY, "IS", "insufficient security"},
    {TLS1_AD_INTERNAL_ERROR, "IE", "internal error"},
    {TLS1_AD_INAPPROPRIATE_FALLBACK, "IF", "inappropriate fallback"},
    {TLS1_AD_USER_CANCELLED, "US", "user canceled"},
    {TLS1_AD_NO_RENEGOTIATION, "NR", "no renegotiation"},
    {TLS13_AD_MISSING_EXTENSION, "ME", "missing extension"},
    {TLS1_AD_UNSUPPORTED_EXTENSION, "UE", "unsupported extension"},
    {TLS1_AD_CERTIFICATE_UNOBTAINABLE, "CO", "certificate unobtainable"},
    {TLS1_AD_UNRECOGNIZED_NAME, "UN", "unrecognized name"},
    {TLS1_AD_BAD_CERTIFICATE_STATUS_RESPONSE, "BR", "bad certificate status response"},
    {TLS1_AD_BAD_CERTIFICATE_HASH_VALUE, "BH", "bad certificate hash value"},
    {TLS1_AD_UNKNOWN_PSK_IDENTITY, "UP", "unknown PSK identity"},
    {TLS13_AD_CERTIFICATE_REQUIRED, "CQ", "certificate required"},
    {TLS1_AD_NO_APPLICATION_PROTOCOL, "UK", "no application protocol"},
};

/* OpenSSL's alert callbacks pass (level << 8) | description; the low byte is the alert. */
static int alert_index(int value)
{
    for (size_t i = 0; i < sizeof(alerts) / sizeof(alerts[0]); i++)
        if (alerts[i].value == (value & 0xff))
            return (int)i;
    return -1;
}

const char *SSL_alert_desc_string(int value)
{
    int i = alert_index(value);
    return i < 0 ? "UK" : alerts[i].code;
}

const char *SSL_alert_desc_string_long(int value)
{
    int i = alert_index(value);
    return i < 0 ? "unknown" : alerts[i].text;
}

const char *SSL_alert_type_string(int value)
{
    switch (value >> 8) {
    case SSL3_AL_WARNING:
        return "W";
    case SSL3_AL_FATAL:
        return "F";
    default:
        return "U";
    }
}

const char *SSL_alert_type_string_long(int value)
{
    switch (value >> 8) {
    case SSL3_AL_WARNING:
        return "warning";
    case SSL3_AL_FATAL:
        return "fatal";
    default:
        return "unknown";
    }
}
