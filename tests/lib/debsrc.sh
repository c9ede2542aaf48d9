# shellcheck shell=bash
# tests/lib/debsrc.sh: sourced by the interop scripts that build a real
# consumer from Debian 12's own source package (tests/ngtcp2, tests/haproxy,
# tests/bogo), or Debian 13's (trixie: nginx 1.26, OpenSSL 3.5, Go 1.24).
# Fetches through a private apt configuration under a directory
# of the caller's: the machine's apt sources are only read, to learn which
# mirror it uses, and its package lists are never touched. Nothing fetched is
# ever committed; callers keep it under build/.
#
#   debsrc_init DIR LOG [SUITE]  the private configuration lives in DIR/; apt's
#                              output is appended to LOG; SUITE is bookworm
#                              (default) or trixie, from the same mirror (one
#                              DIR per suite)
#   debsrc_source PKG DEST     PKG's source package, Debian's patches applied
#                              (dpkg-source -x), unpacked once into DEST
#   debsrc_download DIR PKG... binary packages' .debs into DIR (not installed)
#
# Each returns non-zero on failure; LOG says why. QTLS_DEBIAN_MIRROR=URL
# overrides the mirror.

# The URI of the Debian mirror the machine's apt uses for bookworm (deb822
# .sources files or one-line .list files).
debsrc_find_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
        {
            t = ""; u = ""; s = ""; e = "";
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^[ \t]*#/) continue;
                if ($i ~ /^Types:/) t = $i;
                else if ($i ~ /^URIs:/) u = $i;
                else if ($i ~ /^Suites:/) s = $i;
                else if ($i ~ /^Enabled:/) e = $i;
            }
            if (t ~ /[ \t]deb([ \t]|$)/ && s ~ /[ \t]bookworm([ \t]|$)/ && e !~ /no/) {
                sub(/^URIs:[ \t]*/, "", u); split(u, a, /[ \t]+/); print a[1]; exit
            }
        }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        awk '$1 == "deb" {
            i = 2
            if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == "bookworm") { print $i; exit }
        }' "$f"
    done
}

debsrc_init() {
    DEBSRC_DIR=$1
    DEBSRC_LOG=$2
    DEBSRC_SUITE=${3:-bookworm}
    DEBSRC_APT=(-o "Dir::Etc::SourceList=$DEBSRC_DIR/sources.list"
                -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$DEBSRC_DIR/lists"
                -o "Dir::Cache=$DEBSRC_DIR/cache"
                -o APT::Sandbox::User=root)
}

# apt-get update on the private lists, once per DIR.
debsrc_update() {
    [ -f "$DEBSRC_DIR/updated" ] && return 0
    local mirror=${QTLS_DEBIAN_MIRROR:-$(debsrc_find_mirror | head -n 1)}
    if [ -z "$mirror" ]; then
        echo "no bookworm mirror found in /etc/apt; set QTLS_DEBIAN_MIRROR" >>"$DEBSRC_LOG"
        return 1
    fi
    local opt=""
    [ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
        opt="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
    mkdir -p "$DEBSRC_DIR/lists/partial" "$DEBSRC_DIR/cache/archives/partial" || return 1
    printf 'deb-src %s%s %s main\ndeb %s%s %s main\n' \
        "$opt" "$mirror" "$DEBSRC_SUITE" "$opt" "$mirror" "$DEBSRC_SUITE" >"$DEBSRC_DIR/sources.list"
    apt-get "${DEBSRC_APT[@]}" update >>"$DEBSRC_LOG" 2>&1 && touch "$DEBSRC_DIR/updated"
}

debsrc_source() {
    local pkg=$1 dest=$2 dl=$DEBSRC_DIR/src/$1 dsc
    [ -f "$dest/.qtls-unpacked" ] && return 0
    mkdir -p "$dl" "$(dirname "$dest")" || return 1
    if ! ls "$dl"/*.dsc >/dev/null 2>&1; then
        debsrc_update || return 1
        (cd "$dl" && apt-get "${DEBSRC_APT[@]}" source --download-only "$pkg") \
            >>"$DEBSRC_LOG" 2>&1 || return 1
    fi
    dsc=$(ls "$dl"/*.dsc | head -n 1)
    rm -rf "$dest"
    dpkg-source -x "$dsc" "$dest" >>"$DEBSRC_LOG" 2>&1 && touch "$dest/.qtls-unpacked"
}

debsrc_download() {
    local dir=$1
    shift
    mkdir -p "$dir" && debsrc_update &&
        (cd "$dir" && apt-get "${DEBSRC_APT[@]}" download "$@") >>"$DEBSRC_LOG" 2>&1
}
