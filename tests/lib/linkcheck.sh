# shellcheck shell=bash
# tests/lib/linkcheck.sh: sourced by the interop scripts that build a consumer against
# `make install-compat`'s prefix (tests/haproxy, tests/nginx), after tests/lib/results.sh.
#
#   linkcheck_libs BINARY PREFIX        check links-qtls: the binary needs libqtls from
#                                       PREFIX/lib and no libssl
#   linkcheck_imports BINARY PREFIX SYSLIBSSL LOGS
#                                       check nm-u: every name it imports that the system
#                                       libssl defines, and every SSL_*/TLS_* name at all, is
#                                       libqtls's; LOGS/imports.qtls lists those it takes from
#                                       qtls

linkcheck_libs() {
    local bin=$1 prefix=$2 needed
    needed=$(ldd "$bin")
    if echo "$needed" | grep -q 'libssl\.so'; then
        fail links-qtls "the binary needs a libssl: $(echo "$needed" | grep libssl)"
    elif ! echo "$needed" | grep -q "libqtls\.so.* => $prefix/lib/"; then
        fail links-qtls "libqtls does not come from $prefix/lib: $(echo "$needed" | grep qtls)"
    else
        pass links-qtls
    fi
}

linkcheck_defined() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u; }

linkcheck_imports() {
    local bin=$1 prefix=$2 syslibssl=$3 logs=$4 only_libssl ssl_missing
    nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' | sort -u >"$logs/imports"
    linkcheck_defined "$syslibssl" >"$logs/libssl.names"
    linkcheck_defined "$prefix/lib/libssl.so" >"$logs/qtls.names"
    comm -12 "$logs/imports" "$logs/qtls.names" >"$logs/imports.qtls"
    only_libssl=$(comm -12 "$logs/imports" "$logs/libssl.names" | comm -23 - "$logs/qtls.names")
    # and every SSL_* import at all (a quictls-only name the system libssl lacks too)
    ssl_missing=$(grep -E '^(SSL|TLS|DTLS|OPENSSL_init_ssl)' "$logs/imports" |
        comm -23 - "$logs/qtls.names")
    local missing
    missing=$(echo "$only_libssl $ssl_missing" | tr '\n' ' ')
    if [ -n "$only_libssl$ssl_missing" ]; then
        fail nm-u "imports libqtls does not define: $missing"
    else
        local n
        n=$(wc -l <"$logs/imports.qtls")
        pass "nm-u ($n libssl names, all from qtls; list: $logs/imports.qtls)"
    fi
}
