//go:build go1.24

// Go 1.24's post-quantum hybrid, for tests/pq/run.sh (built there with Debian 13's Go 1.24;
// tests/tcp/run.sh's Go 1.19 leaves this file out): --groups takes X25519MLKEM768 (OpenSSL
// 3.5's spelling), and the wire parser names it. crypto/tls 1.24 keeps its own order of
// CurvePreferences (the hybrid first, sent with an X25519 key share beside its own).
//
// The go:debug line keeps Go 1.24's default, the hybrid offered when --groups is not given,
// which go.mod's "go 1.19" would otherwise turn off (tlsmlkem=0 for modules older than 1.24).

//go:debug tlsmlkem=1

package main

import "crypto/tls"

func init() {
	curves["X25519MLKEM768"] = tls.X25519MLKEM768
	groupNames[uint16(tls.X25519MLKEM768)] = "X25519MLKEM768"
}
