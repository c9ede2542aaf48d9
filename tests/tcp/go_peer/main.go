// go_peer: the TCP interop peer on Go's crypto/tls (Go 1.19, standard library only), with
// tls_peer.c's command line, data flow and result lines (tests/tcp/README.md).
//
// What crypto/tls 1.19 cannot do, this peer refuses on the command line (exit status 2), and
// tests/tcp/run.sh lists those cases as skipped for Go:
//
//	--early-data, --max-early-data, --reject-early-data-from   no 0-RTT in crypto/tls
//	--key-update-after    no API to send a KeyUpdate (it answers one, update_requested included)
//	--post-handshake-auth neither side: the client never offers it, the server cannot ask
//
// --ciphersuites is accepted and ignored: TLS 1.3 suites are not configurable in crypto/tls
// (Config.CipherSuites is for TLS 1.2); the suite is set by the other side of each case.
//
// What crypto/tls does not report is read off the wire: this peer's connection is wrapped so
// that the plaintext records in both directions are parsed, which gives the ServerHello (the
// key share's group, and whether there was a HelloRetryRequest) and plaintext alerts. A
// received alert that came encrypted is read from the error (net.OpError "remote error",
// whose Err is crypto/tls's alert type, a uint8). KeyUpdates, tickets and CertificateRequests
// travel encrypted: keyupdates_*, tickets and certreq_sent print as n/a; certreq_recv counts
// the calls of Config.GetClientCertificate.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
)

const chunk = 16384

type options struct {
	server                              bool
	port, connections                   int
	echo, requireClientCert, closeFirst bool
	expectIn                            int64
	connect, connect2, servername       string
	clientCert, clientKey               string
	expectEcho, resume, waitClose       bool
	expect, send                        int64
	cert, key, ca, ciphersuites, groups string
	tls12Only, tls13Only, verbose       bool
	timeout                             time.Duration
}

var opt options
var out = bufio.NewWriter(os.Stdout)

// ---- the pattern (peer_common.c makes the same bytes) ----

func splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func streamSeed(client bool) uint64 {
	if client {
		return 0x636c69656e740000
	}
	return 0x7365727665720000
}

func pattern(seed, off uint64, buf []byte) {
	block, w := ^uint64(0), uint64(0)
	for i := range buf {
		pos := off + uint64(i)
		if pos>>3 != block {
			block = pos >> 3
			w = splitmix64(seed ^ block)
		}
		buf[i] = byte(w >> (8 * (pos & 7)))
	}
}

type flow struct {
	seed uint64
	off  int64
}

func (f *flow) check(buf []byte, r *report) error {
	want := make([]byte, len(buf))
	pattern(f.seed, uint64(f.off), want)
	for i := range buf {
		if buf[i] != want[i] {
			return r.fail("verify", fmt.Errorf("byte %d of the stream is 0x%02x, not 0x%02x",
				f.off+int64(i), buf[i], want[i]))
		}
	}
	f.off += int64(len(buf))
	return nil
}

// ---- the report ----

type report struct {
	ok                            bool
	stage, err                    string
	version, suite, group         string
	hrr, resumed                  int
	early                         string
	earlyBytes, bytesIn, bytesOut int64
	certreqRecv                   int
	clientCert                    string
	closeSent, closeRecv          bool
	alertSent, alertRecv          int
}

func newReport() *report {
	return &report{ok: true, stage: "-", version: "-", suite: "-", group: "-", hrr: -1,
		early: "not_sent", clientCert: "-", alertSent: -1, alertRecv: -1}
}

func (r *report) fail(stage string, err error) error {
	if r.ok {
		r.ok = false
		r.stage = stage
		r.err = err.Error()
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			v := reflect.ValueOf(op.Err)
			if v.Kind() == reflect.Uint8 { // crypto/tls's alert
				if op.Op == "remote error" && r.alertRecv < 0 {
					r.alertRecv = int(v.Uint())
				} else if op.Op == "local error" && r.alertSent < 0 {
					r.alertSent = int(v.Uint())
				}
			}
		}
	}
	return err
}

func na(v int) string {
	if v < 0 {
		return "n/a"
	}
	return strconv.Itoa(v)
}

func alertStr(v int) string {
	if v < 0 {
		return "-"
	}
	return strconv.Itoa(v)
}

func (r *report) fields() string {
	closeState := "none"
	switch {
	case r.closeSent && r.closeRecv:
		closeState = "ok"
	case r.closeSent:
		closeState = "sent_only"
	case r.closeRecv:
		closeState = "received_only"
	}
	alert := r.alertSent
	if alert < 0 {
		alert = r.alertRecv
	}
	certreqRecv := "n/a"
	if !opt.server {
		certreqRecv = strconv.Itoa(r.certreqRecv)
	}
	return fmt.Sprintf(" version=%s suite=%s group=%s hrr=%s resumed=%s early=%s early_bytes=%d"+
		" bytes_in=%d bytes_out=%d keyupdates_sent=n/a keyupdates_recv=n/a"+
		" certreq_sent=n/a certreq_recv=%s tickets=n/a client_cert=%s close=%s alert=%s"+
		" alert_sent=%s alert_recv=%s err_alert=-",
		r.version, r.suite, r.group, na(r.hrr), na(r.resumed), r.early, r.earlyBytes,
		r.bytesIn, r.bytesOut, certreqRecv, r.clientCert, closeState, alertStr(alert),
		alertStr(r.alertSent), alertStr(r.alertRecv))
}

func (r *report) line(prefix string) string {
	if r.ok {
		return prefix + " ok" + r.fields()
	}
	return prefix + " fail " + stageWord(prefix) + r.stage + r.fields() + " err=" + r.err
}

func stageWord(prefix string) string {
	if strings.HasPrefix(prefix, "conn") {
		return "stage="
	}
	return ""
}

func (r *report) print(prefix string) {
	fmt.Fprintln(out, r.line(prefix))
	out.Flush()
}

// ---- the wire: plaintext records in each direction ----

var hrrRandom = []byte{0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02,
	0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09,
	0xe2, 0xc8, 0xa8, 0x33, 0x9c}

var groupNames = map[uint16]string{0x0017: "P-256", 0x0018: "P-384", 0x0019: "P-521",
	0x001d: "X25519", 0x001e: "X448"}

// records follows the record framing of one direction; of the plaintext records it keeps
// the handshake messages (until the first encrypted one) and the alerts.
type records struct {
	hdr       []byte
	left      int // body bytes of the current record still to come
	typ       byte
	body      []byte
	hs        []byte
	encrypted bool
	r         **report
	sent      bool
}

func (p *records) feed(b []byte) {
	for len(b) > 0 {
		if p.left == 0 {
			need := 5 - len(p.hdr)
			if need > len(b) {
				need = len(b)
			}
			p.hdr = append(p.hdr, b[:need]...)
			b = b[need:]
			if len(p.hdr) < 5 {
				return
			}
			p.typ = p.hdr[0]
			p.left = int(binary.BigEndian.Uint16(p.hdr[3:5]))
			p.hdr = p.hdr[:0]
			p.body = p.body[:0]
			if p.typ == 23 {
				p.encrypted = true
			}
			if p.left == 0 {
				continue
			}
		}
		n := p.left
		if n > len(b) {
			n = len(b)
		}
		if p.typ == 21 || (p.typ == 22 && !p.encrypted) {
			p.body = append(p.body, b[:n]...)
		}
		b = b[n:]
		p.left -= n
		if p.left == 0 {
			p.record()
		}
	}
}

func (p *records) record() {
	r := *p.r
	if r == nil {
		return
	}
	switch p.typ {
	case 21:
		if len(p.body) == 2 && p.body[1] != 0 {
			if p.sent && r.alertSent < 0 {
				r.alertSent = int(p.body[1])
			} else if !p.sent && r.alertRecv < 0 {
				r.alertRecv = int(p.body[1])
			}
		}
	case 22:
		p.hs = append(p.hs, p.body...)
		for len(p.hs) >= 4 {
			n := int(p.hs[1])<<16 | int(p.hs[2])<<8 | int(p.hs[3])
			if len(p.hs) < 4+n {
				return
			}
			if p.hs[0] == 2 {
				serverHello(p.hs[4:4+n], r)
			}
			p.hs = p.hs[4+n:]
		}
	}
}

// serverHello: legacy_version, random, session id, suite, compression, extensions.
func serverHello(m []byte, r *report) {
	if len(m) < 35 {
		return
	}
	hrr := string(m[2:34]) == string(hrrRandom)
	if hrr {
		r.hrr = 1
	} else if r.hrr < 0 {
		r.hrr = 0
	}
	i := 34 + 1 + int(m[34]) + 3
	if len(m) < i+2 {
		return
	}
	ext := m[i+2:]
	for len(ext) >= 4 {
		typ := binary.BigEndian.Uint16(ext)
		n := int(binary.BigEndian.Uint16(ext[2:]))
		if len(ext) < 4+n {
			return
		}
		if typ == 51 && n >= 2 && !hrr { // key_share: the group the handshake used
			g := binary.BigEndian.Uint16(ext[4:])
			if name, ok := groupNames[g]; ok {
				r.group = name
			} else {
				r.group = fmt.Sprintf("0x%04x", g)
			}
		}
		ext = ext[4+n:]
	}
}

type wireConn struct {
	net.Conn
	in, out records
	r       *report
}

func newWireConn(c net.Conn) *wireConn {
	w := &wireConn{Conn: c}
	w.in.r, w.out.r = &w.r, &w.r
	w.out.sent = true
	return w
}

func (w *wireConn) Read(b []byte) (int, error) {
	n, err := w.Conn.Read(b)
	w.in.feed(b[:n])
	return n, err
}

func (w *wireConn) Write(b []byte) (int, error) {
	w.out.feed(b)
	return w.Conn.Write(b)
}

// ---- TLS ----

var config *tls.Config

func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", file)
	}
	return pool, nil
}

var curves = map[string]tls.CurveID{"X25519": tls.X25519, "P-256": tls.CurveP256,
	"P-384": tls.CurveP384, "P-521": tls.CurveP521, "prime256v1": tls.CurveP256,
	"secp384r1": tls.CurveP384, "secp521r1": tls.CurveP521}

var suites13 = map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true,
	"TLS_CHACHA20_POLY1305_SHA256": true}

var cur *report // the connection GetClientCertificate reports to

func setup() error {
	config = &tls.Config{}
	if opt.ca != "" {
		pool, err := loadPool(opt.ca)
		if err != nil {
			return err
		}
		if opt.server {
			config.ClientCAs = pool
		} else {
			config.RootCAs = pool
		}
	}
	if opt.server {
		c, err := tls.LoadX509KeyPair(opt.cert, opt.key)
		if err != nil {
			return err
		}
		config.Certificates = []tls.Certificate{c}
		if opt.requireClientCert {
			config.ClientAuth = tls.RequireAndVerifyClientCert
		}
	} else {
		config.ServerName = opt.servername
		config.ClientSessionCache = tls.NewLRUClientSessionCache(8)
		var own *tls.Certificate
		if opt.clientCert != "" {
			c, err := tls.LoadX509KeyPair(opt.clientCert, opt.clientKey)
			if err != nil {
				return err
			}
			own = &c
		}
		config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if cur != nil {
				cur.certreqRecv++
			}
			if own == nil {
				return &tls.Certificate{}, nil
			}
			return own, nil
		}
	}
	if opt.groups != "" {
		for _, g := range strings.Split(opt.groups, ":") {
			id, ok := curves[g]
			if !ok {
				return fmt.Errorf("group %s: not in crypto/tls", g)
			}
			config.CurvePreferences = append(config.CurvePreferences, id)
		}
	}
	if opt.ciphersuites != "" {
		for _, s := range strings.Split(opt.ciphersuites, ":") {
			if !suites13[s] {
				return fmt.Errorf("cipher suite %s: not a TLS 1.3 suite of crypto/tls", s)
			}
		}
		fmt.Fprintln(os.Stderr, "go_peer: --ciphersuites ignored: crypto/tls has no TLS 1.3 suite configuration")
	}
	if opt.tls12Only {
		config.MaxVersion = tls.VersionTLS12
	}
	if opt.tls13Only {
		config.MinVersion = tls.VersionTLS13
	}
	return nil
}

type conn struct {
	tc *tls.Conn
	r  *report
}

func (c *conn) deadline() { c.tc.SetDeadline(time.Now().Add(opt.timeout)) }

func (c *conn) handshake() error {
	c.deadline()
	if err := c.tc.Handshake(); err != nil {
		return c.r.fail("handshake", err)
	}
	st := c.tc.ConnectionState()
	switch st.Version {
	case tls.VersionTLS13:
		c.r.version = "TLSv1.3"
	case tls.VersionTLS12:
		c.r.version = "TLSv1.2"
	default:
		c.r.version = fmt.Sprintf("0x%04x", st.Version)
	}
	c.r.suite = tls.CipherSuiteName(st.CipherSuite)
	c.r.resumed = 0
	if st.DidResume {
		c.r.resumed = 1
	}
	return nil
}

func (c *conn) write(b []byte) error {
	c.deadline()
	if _, err := c.tc.Write(b); err != nil {
		return c.r.fail("write", err)
	}
	return nil
}

// read: n > 0 bytes, or 0 at the peer's close_notify (io.EOF: crypto/tls returns it only for
// close_notify; a TCP close without one is io.ErrUnexpectedEOF).
func (c *conn) read(b []byte) (int, error) {
	for {
		c.deadline()
		n, err := c.tc.Read(b)
		if n > 0 {
			return n, nil
		}
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, c.r.fail("read", err)
		}
	}
}

func (c *conn) shutdown() error {
	c.deadline()
	if err := c.tc.CloseWrite(); err != nil {
		return c.r.fail("shutdown", err)
	}
	return nil
}

// ---- the data flow (as in peer_common.c) ----

func readUntil(c *conn, f *flow, until int64, buf []byte) error {
	for f.off < until {
		n, err := c.read(buf)
		if err != nil {
			return err
		}
		if n == 0 {
			c.r.closeRecv = true
			return c.r.fail("read", fmt.Errorf("close_notify after %d of %d bytes", f.off, until))
		}
		if err := f.check(buf[:n], c.r); err != nil {
			return err
		}
		c.r.bytesIn += int64(n)
	}
	return nil
}

func closePhase(c *conn, first bool, f *flow, buf []byte) error {
	if first {
		if err := c.shutdown(); err != nil {
			return err
		}
		c.r.closeSent = true
	}
	for {
		n, err := c.read(buf)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if err := f.check(buf[:n], c.r); err != nil {
			return err
		}
		c.r.bytesIn += int64(n)
	}
	c.r.closeRecv = true
	if !first {
		if err := c.shutdown(); err != nil {
			return err
		}
		c.r.closeSent = true
	}
	return nil
}

func clientConn(c *conn) error {
	buf := make([]byte, chunk)
	seed := streamSeed(true)
	echo, push := flow{seed, 0}, flow{streamSeed(false), 0}
	if err := c.handshake(); err != nil {
		return err
	}
	total, off := opt.send, int64(0)
	for off < total {
		n := int64(chunk)
		if total-off < n {
			n = total - off
		}
		pattern(seed, uint64(off), buf[:n])
		if err := c.write(buf[:n]); err != nil {
			return err
		}
		off += n
		c.r.bytesOut = off
		if opt.expectEcho {
			if err := readUntil(c, &echo, off, buf); err != nil {
				return err
			}
		}
	}
	if opt.expect > 0 {
		if err := readUntil(c, &push, opt.expect, buf); err != nil {
			return err
		}
	}
	f := &push
	if opt.expectEcho {
		f = &echo
	}
	if err := closePhase(c, !opt.waitClose, f, buf); err != nil {
		return err
	}
	want := opt.expect
	if opt.expectEcho {
		want += total
	}
	if c.r.bytesIn != want {
		return c.r.fail("verify", fmt.Errorf("received %d bytes, expected %d", c.r.bytesIn, want))
	}
	return nil
}

func serverConn(c *conn) error {
	buf := make([]byte, chunk)
	in := flow{streamSeed(true), 0}
	c.r.clientCert = "none"
	if err := c.handshake(); err != nil {
		return err
	}
	st := c.tc.ConnectionState()
	if len(st.PeerCertificates) > 0 && len(st.VerifiedChains) > 0 {
		c.r.clientCert = "handshake"
	}
	seed := streamSeed(false)
	for off := int64(0); off < opt.send; {
		n := int64(chunk)
		if opt.send-off < n {
			n = opt.send - off
		}
		pattern(seed, uint64(off), buf[:n])
		if err := c.write(buf[:n]); err != nil {
			return err
		}
		off += n
		c.r.bytesOut = off
	}
	if opt.closeFirst {
		if err := c.shutdown(); err != nil {
			return err
		}
		c.r.closeSent = true
	}
	for {
		n, err := c.read(buf)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if err := in.check(buf[:n], c.r); err != nil {
			return err
		}
		c.r.bytesIn += int64(n)
		if opt.echo {
			if err := c.write(buf[:n]); err != nil {
				return err
			}
			c.r.bytesOut += int64(n)
		}
	}
	c.r.closeRecv = true
	if !opt.closeFirst {
		if err := c.shutdown(); err != nil {
			return err
		}
		c.r.closeSent = true
	}
	if opt.expectIn >= 0 && c.r.bytesIn != opt.expectIn {
		return c.r.fail("verify", fmt.Errorf("received %d bytes, expected %d", c.r.bytesIn,
			opt.expectIn))
	}
	return nil
}

func runClient() int {
	conns := 1
	if opt.resume {
		conns = 2
	}
	var r *report
	for i := 1; i <= conns; i++ {
		r = newReport()
		cur = r
		addr := opt.connect
		if i == 2 && opt.connect2 != "" {
			addr = opt.connect2
		}
		raw, err := net.DialTimeout("tcp", addr, opt.timeout)
		if err != nil {
			r.fail("connect", err)
		} else {
			w := newWireConn(raw)
			w.r = r
			c := &conn{tc: tls.Client(w, config), r: r}
			clientConn(c)
			c.tc.Close()
		}
		r.print(fmt.Sprintf("conn %d", i))
		if !r.ok {
			break
		}
	}
	r.print("result")
	if r.ok {
		return 0
	}
	return 1
}

func runServer() int {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", opt.port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_peer:", err)
		return 1
	}
	defer l.Close()
	fmt.Fprintf(out, "port %d\n", l.Addr().(*net.TCPAddr).Port)
	out.Flush()
	var r *report
	for i := 1; i <= opt.connections; i++ {
		r = newReport()
		l.(*net.TCPListener).SetDeadline(time.Now().Add(opt.timeout))
		raw, err := l.Accept()
		if err != nil {
			r.fail("accept", err)
		} else {
			w := newWireConn(raw)
			w.r = r
			c := &conn{tc: tls.Server(w, config), r: r}
			serverConn(c)
			c.tc.Close()
		}
		r.print(fmt.Sprintf("conn %d", i))
		if !r.ok {
			break
		}
	}
	r.print("result")
	if r.ok {
		return 0
	}
	return 1
}

// ---- the command line ----

func size(s string) (int64, error) {
	m := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		m, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		m, s = 1024*1024, s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * m, nil
}

var unsupported = map[string]string{
	"--early-data":             "crypto/tls (Go 1.19) has no 0-RTT",
	"--max-early-data":         "crypto/tls (Go 1.19) has no 0-RTT",
	"--reject-early-data-from": "crypto/tls (Go 1.19) has no 0-RTT",
	"--key-update-after":       "crypto/tls (Go 1.19) cannot send a KeyUpdate",
	"--key-updates":            "crypto/tls (Go 1.19) cannot send a KeyUpdate",
	"--post-handshake-auth":    "crypto/tls (Go 1.19) has no post-handshake authentication",
}

func parse(args []string) error {
	opt = options{connections: 1, expectIn: -1, servername: "localhost", timeout: 15 * time.Second}
	if len(args) < 1 || (args[0] != "server" && args[0] != "client") {
		return errors.New("server or client?")
	}
	opt.server = args[0] == "server"
	strs := map[string]*string{"--connect": &opt.connect, "--connect2": &opt.connect2,
		"--servername": &opt.servername, "--client-cert": &opt.clientCert,
		"--client-key": &opt.clientKey, "--cert": &opt.cert, "--key": &opt.key, "--ca": &opt.ca,
		"--ciphersuites": &opt.ciphersuites, "--groups": &opt.groups}
	flags := map[string]*bool{"--echo": &opt.echo, "--require-client-cert": &opt.requireClientCert,
		"--close-first": &opt.closeFirst, "--expect-echo": &opt.expectEcho,
		"--resume": &opt.resume, "--wait-close": &opt.waitClose, "--tls12-only": &opt.tls12Only,
		"--tls13-only": &opt.tls13Only, "--verbose": &opt.verbose}
	var expect int64
	for i := 1; i < len(args); i++ {
		a := args[i]
		if why, ok := unsupported[a]; ok {
			return fmt.Errorf("%s: %s", a, why)
		}
		if p, ok := flags[a]; ok {
			*p = true
			continue
		}
		if i+1 >= len(args) {
			return fmt.Errorf("%s: no value", a)
		}
		v := args[i+1]
		i++
		if p, ok := strs[a]; ok {
			*p = v
			continue
		}
		n, err := size(v)
		if err != nil {
			return err
		}
		switch a {
		case "--port":
			opt.port = int(n)
		case "--connections":
			opt.connections = int(n)
		case "--send":
			opt.send = n
		case "--expect":
			expect = n
		case "--timeout":
			opt.timeout = time.Duration(n) * time.Second
		default:
			return fmt.Errorf("unknown option %s", a)
		}
	}
	if opt.server {
		if expect > 0 {
			opt.expectIn = expect
		}
		if opt.cert == "" || opt.key == "" || opt.connections < 1 {
			return errors.New("a server needs --cert and --key")
		}
	} else {
		opt.expect = expect
		if opt.connect == "" || (opt.expectEcho && opt.expect > 0) {
			return errors.New("a client needs --connect, and not both --expect-echo and --expect")
		}
		if (opt.clientCert == "") != (opt.clientKey == "") {
			return errors.New("--client-cert and --client-key go together")
		}
	}
	if opt.tls12Only && opt.tls13Only {
		return errors.New("--tls12-only or --tls13-only")
	}
	return nil
}

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "version" {
		fmt.Printf("lib=go-%s peer=go_peer\n", strings.TrimPrefix(runtime.Version(), "go"))
		return
	}
	if err := parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "go_peer:", err)
		fmt.Fprintln(os.Stderr, "usage: the options of tls_peer (tests/tcp/README.md)")
		os.Exit(2)
	}
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "go_peer:", err)
		fmt.Fprintln(out, "result fail setup version=- err=see stderr")
		out.Flush()
		os.Exit(1)
	}
	if opt.server {
		os.Exit(runServer())
	}
	os.Exit(runClient())
}
