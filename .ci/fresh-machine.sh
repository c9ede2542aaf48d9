#!/bin/bash
# fresh-machine.sh: proves the README's set-up on a machine that lacks what
# make demo and make check must install themselves (issue 8). As root:
#
#   1. Removes the Debian packages those two commands need (the Makefile's own
#      lists: make print-deps-demo, print-deps-check), except any whose removal
#      would take other packages with it (a bare Debian 12 has those anyway),
#      then the libraries only they had pulled in.
#   2. As a user (nobody), in a fresh clone: make demo and make check each
#      exit non-zero, name every missing package in one "sudo apt-get install
#      -y" line and build nothing.
#   3. As root, in another fresh clone: make demo, make check, then both
#      again. Each must succeed, the check summary must report no failure,
#      and no output may mention a skip.
#
# Every command's output is kept in $DRILL (default /tmp/qtls-drill); the
# last lines of each are shown.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
DRILL=${DRILL:-/tmp/qtls-drill}
export DEBIAN_FRONTEND=noninteractive

say() { printf '\n== drill: %s\n' "$*"; }
die() { printf 'drill FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root"
rm -rf "$DRILL"
mkdir -p "$DRILL"
chmod 755 "$DRILL"

installed() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }
autoremovable() { apt-get -s autoremove 2>/dev/null | sed -n 's/^Remv \([^ ]*\) .*/\1/p' | sort; }

# ---- 1. make the machine fresh -------------------------------------------------------
needed=$(cd "$REPO" && { make -s print-deps-demo; make -s print-deps-check; } | sort -u)
remove=""
for pkg in $needed; do
    installed "$pkg" || continue
    if ! sim=$(apt-get -s remove "$pkg" 2>&1); then
        echo "kept $pkg (apt-get refuses to remove it: $(echo "$sim" | grep '^E:' | head -n 1))"
        continue
    fi
    takes=$(echo "$sim" | sed -n 's/^Remv \([^ ]*\) .*/\1/p')
    extra=$(comm -23 <(echo "$takes" | sort) <(echo "$needed"))
    if [ -n "$extra" ]; then
        echo "kept $pkg (removing it would also remove: $(echo $extra))"
    else
        remove="$remove $pkg"
    fi
done
say "removing:$remove"
auto_before=$(autoremovable)
# shellcheck disable=SC2086 # one word per package
[ -z "$remove" ] || apt-get remove -y -q $remove >"$DRILL/apt-remove.log" 2>&1 ||
    die "apt-get remove failed (log: $DRILL/apt-remove.log)"
orphans=$(comm -13 <(echo "$auto_before") <(autoremovable) | tr '\n' ' ')
if [ -n "${orphans// /}" ]; then
    say "removing the libraries only they pulled in: $orphans"
    # shellcheck disable=SC2086
    apt-get remove -y -q $orphans >>"$DRILL/apt-remove.log" 2>&1 || die "apt-get remove of orphans failed"
fi
for pkg in $remove; do
    ! installed "$pkg" || die "$pkg is still installed"
done

# fresh_clone DIR: a clone of the commit under test, nothing built.
fresh_clone() {
    rm -rf "$1"
    git clone -q "$REPO" "$1"
    git -C "$1" checkout -q "$(git -C "$REPO" rev-parse HEAD)"
}

# ---- 2. a user without root: told what to install, nothing built ---------------------
USER_CLONE=$DRILL/user/qtls
fresh_clone "$USER_CLONE"
chown -R nobody:nogroup "$DRILL/user"
for goal in demo check; do
    say "as nobody: make $goal"
    want=$(for p in $(cd "$REPO" && make -s "print-deps-$goal"); do installed "$p" || echo "$p"; done)
    log=$DRILL/user-$goal.log
    if (cd "$USER_CLONE" && runuser -u nobody -- env HOME="$DRILL/user" make "$goal") >"$log" 2>&1; then
        die "make $goal as a user succeeded with packages missing (log: $log)"
    fi
    tail -n 3 "$log"
    line=$(grep '^ *sudo apt-get install -y ' "$log" | head -n 1) ||
        die "make $goal as a user printed no 'sudo apt-get install -y' line (log: $log)"
    [ "$(grep -c 'sudo apt-get install' "$log")" -eq 1 ] || die "more than one install line in $log"
    for p in $want; do
        case " $line " in *" $p "*) ;; *) die "make $goal as a user did not name $p: $line" ;; esac
    done
    [ ! -e "$USER_CLONE/build" ] || die "make $goal as a user built something before stopping"
done

# ---- 3. root, first and second run ---------------------------------------------------
CLONE=$DRILL/root/qtls
fresh_clone "$CLONE"
# run_goal GOAL N: make GOAL in the clone; must succeed and never mention a skip.
run_goal() {
    local goal=$1 n=$2 log=$DRILL/root-$1-$2.log
    say "as root: make $goal (run $n)"
    if ! (cd "$CLONE" && make "$goal") >"$log" 2>&1; then
        tail -n 40 "$log"
        die "make $goal (run $n) failed (log: $log)"
    fi
    tail -n 4 "$log"
    # Whole words only: test names such as scheme_skips_unknown_legacy are not skips.
    if grep -Eqiw 'skip|skipping|skipped' "$log"; then
        grep -Eiw 'skip|skipping|skipped' "$log" | head -n 5
        die "make $goal (run $n) skipped something (log: $log)"
    fi
    case $goal in
    check) tail -n 1 "$log" | grep -Eq '^[0-9]+ passed, 0 failed$' ||
        die "make check (run $n): the last line is not 'N passed, 0 failed'" ;;
    demo) grep -q '^all [0-9]* HTTP/3 connections succeeded$' "$log" ||
        die "make demo (run $n): the HTTP/3 part did not finish" ;;
    esac
}
run_goal demo 1
grep -q '^deps.sh: installed ' "$DRILL/root-demo-1.log" || die "make demo (run 1) installed nothing"
run_goal check 1
run_goal demo 2
run_goal check 2
for pkg in $remove; do
    installed "$pkg" || die "$pkg was not reinstalled by make demo / make check"
done
say "passed: removed$remove; make demo and make check succeeded twice each, nothing skipped"
