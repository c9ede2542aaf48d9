// go_side: Go 1.24's crypto/tls through its QUIC API (tls.QUICClient / tls.QUICServer,
// QUICConn.HandleData and its events) over the records of tests/pq/quic/frame.h, with
// qtls_side.c's command line and result line:
//
//	go_side client|server --in FIFO --out FIFO [--groups LIST] [--cert PEM --key PEM]
//	        [--ca PEM] [--tp STRING] [--timeout SECONDS]
//
// --groups (OpenSSL's spelling, ":"-separated: X25519MLKEM768, X25519, P-256, P-384, P-521)
// sets Config.CurvePreferences; without it crypto/tls's default is used, which for this module
// (go.mod says "go 1.24", so tlsmlkem defaults to 1) is X25519MLKEM768, X25519, P-256, P-384,
// P-521, the hybrid sent with an X25519 key share beside it.
//
// crypto/tls 1.24 exports no negotiated group (ConnectionState.CurveID came in 1.25), so the
// result line says group=n/a and the group is read off the wire: wire_group is the key share
// of the ServerHello in the initial-level bytes (sent by the server, received by the client),
// as the C sides read it too; hrr says whether a HelloRetryRequest came first.
//
// crypto/tls takes handshake bytes only at its current read level: the peer's records are
// kept per level and handed over once QUICSetReadSecret has moved to theirs. A server sends one
// session ticket (QUICConn.SendSessionTicket) once the handshake is done; a client has a
// session cache, so that it offers psk_key_exchange_modes and servers send it tickets.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	frData   = 1
	frDone   = 2
	frAlert  = 3
	frDigest = 4
)

type frame struct {
	kind, level byte
	data        []byte
	err         error // io.EOF at the end
}

var (
	server                             bool
	in, out, groups, cert, key, ca, tp string
	timeout                            = 10 * time.Second
	outFile                            *os.File
	secrets                            [2][4][]byte // [0] client's, [1] server's, per level
	wireBuf                            []byte
	alertSent                          = -1
	curveNames                         = map[string]tls.CurveID{
		"X25519MLKEM768": tls.X25519MLKEM768, "X25519": tls.X25519, "x25519": tls.X25519,
		"P-256": tls.CurveP256, "secp256r1": tls.CurveP256, "prime256v1": tls.CurveP256,
		"P-384": tls.CurveP384, "secp384r1": tls.CurveP384, "P-521": tls.CurveP521,
		"secp521r1": tls.CurveP521,
	}
)

func usage(why string) {
	fmt.Fprintf(os.Stderr, "go_side: %s\nusage: go_side client|server --in FIFO --out FIFO "+
		"[--groups LIST] [--cert PEM --key PEM] [--ca PEM] [--tp STRING] [--timeout SECONDS]\n", why)
	os.Exit(2)
}

func parse() {
	a := os.Args[1:]
	if len(a) < 1 || (a[0] != "client" && a[0] != "server") {
		usage("the role first")
	}
	server = a[0] == "server"
	for i := 1; i < len(a); i += 2 {
		if i+1 >= len(a) {
			usage(a[i] + " wants a value")
		}
		v := a[i+1]
		switch a[i] {
		case "--in":
			in = v
		case "--out":
			out = v
		case "--groups":
			groups = v
		case "--cert":
			cert = v
		case "--key":
			key = v
		case "--ca":
			ca = v
		case "--tp":
			tp = v
		case "--timeout":
			n, err := strconv.Atoi(v)
			if err != nil {
				usage("--timeout " + v)
			}
			timeout = time.Duration(n) * time.Second
		default:
			usage("unknown option " + a[i])
		}
	}
	if in == "" || out == "" || (server && (cert == "" || key == "")) {
		usage("missing --in, --out, or a server's --cert/--key")
	}
	if tp == "" {
		tp = "tp-go124-" + a[0]
	}
}

func fail(format string, args ...any) {
	fmt.Printf("result fail "+format+"\n", args...)
	os.Exit(1)
}

func writeFrame(kind, level byte, data []byte) {
	h := []byte{kind, level, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[2:], uint32(len(data)))
	if _, err := outFile.Write(append(h, data...)); err != nil {
		fail("writing to the peer: %v", err)
	}
}

// tlsFailed tells the peer the alert (when the error carries one) and ends.
func tlsFailed(what string, err error, level tls.QUICEncryptionLevel) {
	var ae tls.AlertError
	if errors.As(err, &ae) {
		alertSent = int(ae)
		writeFrame(frAlert, byte(level), []byte{byte(ae)})
	}
	fail("%s: %v alert_sent=%d", what, err, alertSent)
}

func reader(f *os.File, ch chan<- frame) {
	for {
		var h [6]byte
		if _, err := io.ReadFull(f, h[:]); err != nil {
			if err == io.ErrUnexpectedEOF {
				err = errors.New("a record cut short")
			}
			ch <- frame{err: err}
			return
		}
		n := binary.BigEndian.Uint32(h[2:])
		if n > 65536 || h[1] > 3 {
			ch <- frame{err: fmt.Errorf("a bad record header % x", h)}
			return
		}
		d := make([]byte, n)
		if _, err := io.ReadFull(f, d); err != nil {
			ch <- frame{err: errors.New("a record cut short")}
			return
		}
		ch <- frame{kind: h[0], level: h[1], data: d}
	}
}

var hrrRandom, _ = hex.DecodeString("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")

// wire reads the ServerHello(s) in the initial-level stream from the server.
func wire() (hrr bool, group uint16) {
	b := wireBuf
	for len(b) >= 4 {
		n := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			break
		}
		typ, m := b[0], b[4:4+n]
		b = b[4+n:]
		if typ != 2 || len(m) < 35 { // ServerHello
			continue
		}
		isHRR := bytes.Equal(m[2:34], hrrRandom)
		at := 34
		at += 1 + int(m[at])
		at += 3
		if len(m) < at+2 {
			continue
		}
		end := at + 2 + int(binary.BigEndian.Uint16(m[at:]))
		at += 2
		if end > len(m) {
			continue
		}
		for at+4 <= end {
			typ := binary.BigEndian.Uint16(m[at:])
			l := int(binary.BigEndian.Uint16(m[at+2:]))
			at += 4
			if at+l > end {
				break
			}
			if typ == 51 && l >= 2 {
				if isHRR {
					hrr = true
				} else {
					group = binary.BigEndian.Uint16(m[at:])
				}
			}
			at += l
		}
	}
	return
}

func groupName(id uint16) string {
	switch id {
	case 0x11ec:
		return "X25519MLKEM768"
	case 0x001d:
		return "X25519"
	case 0x0017:
		return "P-256"
	case 0x0018:
		return "P-384"
	case 0:
		return "none"
	}
	return fmt.Sprintf("0x%04x", id)
}

func secretHash(s []byte) string {
	if len(s) == 0 {
		return "none"
	}
	d := sha256.Sum256(s)
	return hex.EncodeToString(d[:])
}

func apDigest() []byte {
	if len(secrets[0][3]) == 0 || len(secrets[1][3]) == 0 {
		return nil
	}
	c, s := sha256.Sum256(secrets[0][3]), sha256.Sum256(secrets[1][3])
	return append(c[:], s[:]...)
}

func printable(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return "0x" + hex.EncodeToString(b)
		}
	}
	return string(b)
}

func main() {
	parse()
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{"h3"}}
	if groups != "" {
		for _, g := range strings.Split(groups, ":") {
			id, ok := curveNames[g]
			if !ok {
				usage("group " + g + " is not in Go 1.24's crypto/tls")
			}
			cfg.CurvePreferences = append(cfg.CurvePreferences, id)
		}
	}
	if server {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			fail("loading %s: %v", cert, err)
		}
		cfg.Certificates = []tls.Certificate{c}
	} else {
		cfg.ServerName = "localhost"
		// without a cache crypto/tls offers no psk_key_exchange_modes, and servers then send
		// no tickets (RFC 8446 4.2.9): with one, the server's tickets are asked for
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		if ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				fail("reading %s: %v", ca, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				fail("no certificate in %s", ca)
			}
			cfg.RootCAs = pool
		} else {
			cfg.InsecureSkipVerify = true
		}
	}
	qc := &tls.QUICConfig{TLSConfig: cfg}
	var conn *tls.QUICConn
	if server {
		conn = tls.QUICServer(qc)
	} else {
		conn = tls.QUICClient(qc)
	}
	conn.SetTransportParameters([]byte(tp))

	// the server reads first, the client writes first (frame.h: side_open)
	var inFile *os.File
	var err error
	if server {
		if inFile, err = os.OpenFile(in, os.O_RDONLY, 0); err == nil {
			outFile, err = os.OpenFile(out, os.O_WRONLY, 0)
		}
	} else {
		if outFile, err = os.OpenFile(out, os.O_WRONLY, 0); err == nil {
			inFile, err = os.OpenFile(in, os.O_RDONLY, 0)
		}
	}
	if err != nil {
		fail("cannot open %s / %s: %v", in, out, err)
	}
	frames := make(chan frame, 64)
	go reader(inFile, frames)

	if err := conn.Start(context.Background()); err != nil {
		tlsFailed("Start", err, tls.QUICEncryptionLevelInitial)
	}
	var pending [4][]byte
	var peerTP []byte
	var peerDigest []byte
	appIn := 0
	readLevel, writeLevel := tls.QUICEncryptionLevelInitial, tls.QUICEncryptionLevelInitial
	hsDone, sentDone, gotDone := false, false, false
	role := 0
	if server {
		role = 1
	}

	drain := func() {
		for {
			e := conn.NextEvent()
			switch e.Kind {
			case tls.QUICNoEvent:
				return
			case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
				write := e.Kind == tls.QUICSetWriteSecret
				fmt.Fprintf(os.Stderr, "go_side: secret level %d write=%v (%d bytes)\n", e.Level, write, len(e.Data))
				// a client writes with the client's secret, a server with the server's
				whose := role
				if !write {
					whose = 1 - role
				}
				secrets[whose][e.Level] = bytes.Clone(e.Data)
				if write {
					writeLevel = e.Level
				} else {
					readLevel = e.Level
				}
			case tls.QUICWriteData:
				fmt.Fprintf(os.Stderr, "go_side: send level %d, %d bytes\n", e.Level, len(e.Data))
				if server && e.Level == tls.QUICEncryptionLevelInitial {
					wireBuf = append(wireBuf, e.Data...)
				}
				writeFrame(frData, byte(e.Level), e.Data)
			case tls.QUICTransportParameters:
				peerTP = bytes.Clone(e.Data)
			case tls.QUICTransportParametersRequired:
				conn.SetTransportParameters([]byte(tp))
			case tls.QUICHandshakeDone:
				fmt.Fprintf(os.Stderr, "go_side: handshake done\n")
				hsDone = true
				if server {
					if err := conn.SendSessionTicket(tls.QUICSessionTicketOptions{}); err != nil {
						tlsFailed("SendSessionTicket", err, writeLevel)
					}
				}
			}
		}
	}
	// hands over what is pending at the read level, as long as the level moves on
	feed := func() {
		for len(pending[readLevel]) > 0 {
			l := readLevel
			d := pending[l]
			pending[l] = nil
			if err := conn.HandleData(l, d); err != nil {
				tlsFailed("HandleData", err, writeLevel)
			}
			drain()
		}
	}

	drain()
	for {
		if hsDone && !sentDone {
			d := apDigest()
			if d == nil {
				fail("handshake done without both 1-RTT secrets")
			}
			writeFrame(frDigest, 3, d)
			writeFrame(frDone, 3, nil)
			sentDone = true
		}
		if sentDone && gotDone {
			break
		}
		var f frame
		select {
		case f = <-frames:
		case <-time.After(timeout):
			fail("no record from the peer in %v", timeout)
		}
		if f.err == io.EOF {
			fail("the peer closed before its DONE")
		} else if f.err != nil {
			fail("reading from the peer: %v", f.err)
		}
		switch f.kind {
		case frData:
			fmt.Fprintf(os.Stderr, "go_side: recv level %d, %d bytes\n", f.level, len(f.data))
			if f.level == 3 {
				appIn += len(f.data)
			}
			if !server && f.level == 0 {
				wireBuf = append(wireBuf, f.data...)
			}
			pending[f.level] = append(pending[f.level], f.data...)
			feed()
		case frDigest:
			if len(f.data) != 64 {
				fail("a DIGEST record of %d bytes", len(f.data))
			}
			peerDigest = f.data
		case frAlert:
			a := -1
			if len(f.data) == 1 {
				a = int(f.data[0])
			}
			fail("the peer's TLS failed with alert (%d) alert_sent=-1", a)
		case frDone:
			gotDone = true
		default:
			fail("a record of unknown kind %d", f.kind)
		}
	}
	for l, p := range pending {
		if len(p) > 0 {
			fail("%d bytes left at level %d", len(p), l)
		}
	}

	st := conn.ConnectionState()
	hrr, group := wire()
	pd := "none"
	if peerDigest != nil {
		if bytes.Equal(peerDigest, apDigest()) {
			pd = "match"
		} else {
			pd = "mismatch"
		}
	}
	alpn := st.NegotiatedProtocol
	if alpn == "" {
		alpn = "none"
	}
	h := 0
	if hrr {
		h = 1
	}
	fmt.Printf("result ok impl=go124 role=%s group=n/a wire_group=%s hrr=%d suite=%s alpn=%s tp=%s "+
		"peer_tp=%s c_hs=%s s_hs=%s c_ap=%s s_ap=%s peer_digest=%s app_in=%d\n",
		map[bool]string{false: "client", true: "server"}[server], groupName(group), h,
		tls.CipherSuiteName(st.CipherSuite), alpn, tp, printable(peerTP),
		secretHash(secrets[0][2]), secretHash(secrets[1][2]), secretHash(secrets[0][3]),
		secretHash(secrets[1][3]), pd, appIn)
	conn.Close()
}
