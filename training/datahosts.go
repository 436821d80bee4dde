package training

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errDataHostRefused is why the server did not fetch a training data URL: its
// host is not one the operator allows, or it (or a redirect) leads to an
// address the operator did not allow. Its text is the whole of what a job's
// training_failed says about it, the same whatever the far side would have
// answered, so that a job cannot probe which ports of the server's network are
// open.
var errDataHostRefused = errors.New("training data URL refused: this server downloads training data only from the hosts its operator lists " +
	"(-training-data-hosts), and from a loopback, private or link-local address only when that address is listed; " +
	"publish the data as a weft artifact (wandb-artifact:///…) instead")

// hostPolicy says which http(s) URLs SFT data may be downloaded from
// ([Config].DataHosts). A URL's host must match an entry, by name or address;
// every connection, to the URL and to each redirect, must then go to a public
// address (as resolved) or to one an address entry covers. A name entry thus
// never opens a private address: DNS cannot smuggle one past the list.
type hostPolicy struct {
	names []nameEntry
	nets  []netEntry
}

// nameEntry allows host (or, with wildcard, its subdomains) on port ("" for
// any port).
type nameEntry struct {
	host     string
	wildcard bool
	port     string
}

// netEntry allows the addresses of prefix on port (0 for any port).
type netEntry struct {
	prefix netip.Prefix
	port   uint16
}

// parseHostPolicy reads DataHosts entries: example.com, *.example.com,
// example.com:8443, 10.0.0.5, [fd00::1]:9000, 10.0.0.0/8, fd00::/8.
func parseHostPolicy(entries []string) (*hostPolicy, error) {
	p := &hostPolicy{}
	for _, raw := range entries {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if prefix, err := netip.ParsePrefix(e); err == nil {
			p.nets = append(p.nets, netEntry{prefix: prefix.Masked()})
			continue
		}
		host, port := e, ""
		if h, pt, err := net.SplitHostPort(e); err == nil {
			if n, err := strconv.ParseUint(pt, 10, 16); err != nil || n == 0 {
				return nil, fmt.Errorf("training: data host %q: bad port", raw)
			}
			host, port = h, pt
		}
		if addr, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			n, _ := strconv.ParseUint(port, 10, 16)
			addr = addr.Unmap()
			p.nets = append(p.nets, netEntry{prefix: netip.PrefixFrom(addr, addr.BitLen()), port: uint16(n)})
			continue
		}
		name := nameEntry{host: strings.TrimSuffix(host, "."), port: port}
		if rest, ok := strings.CutPrefix(name.host, "*."); ok {
			name.host, name.wildcard = rest, true
		}
		if name.host == "" || strings.ContainsAny(name.host, "/*[]@ ") {
			return nil, fmt.Errorf("training: data host %q is not a host name, address or network", raw)
		}
		p.names = append(p.names, name)
	}
	return p, nil
}

// none reports whether the policy allows no URL at all.
func (p *hostPolicy) none() bool { return len(p.names) == 0 && len(p.nets) == 0 }

// allowsURL is the check of a URL's host against the entries, before any
// name is resolved.
func (p *hostPolicy) allowsURL(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" || u.User != nil {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		n, _ := strconv.ParseUint(port, 10, 16)
		return p.allowsAddr(netip.AddrPortFrom(addr.Unmap(), uint16(n)), false)
	}
	for _, e := range p.names {
		if e.port != "" && e.port != port {
			continue
		}
		if e.wildcard && strings.HasSuffix(host, "."+e.host) || !e.wildcard && host == e.host {
			return true
		}
	}
	return false
}

// allowsAddr is the check of an address: one an address entry covers, or,
// when public is true, any public address.
func (p *hostPolicy) allowsAddr(ap netip.AddrPort, public bool) bool {
	addr := ap.Addr().Unmap()
	for _, e := range p.nets {
		if e.prefix.Contains(addr) && (e.port == 0 || e.port == ap.Port()) {
			return true
		}
	}
	return public && publicAddr(addr)
}

// control is the dialer's hook: it runs after the name is resolved, for every
// address the dialer tries, so it sees what the connection really reaches.
func (p *hostPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !p.allowsAddr(ap, true) {
		return errDataHostRefused
	}
	return nil
}

// client returns the HTTP client that downloads SFT data under the policy:
// no proxy (a proxy would make the connection for it), every dial checked,
// every redirect's URL checked, at most 10 redirects, timeout for the whole
// download.
func (p *hostPolicy) client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("training data URL: more than 10 redirects")
		}
		if !p.allowsURL(req.URL) {
			return errDataHostRefused
		}
		return nil
	}}
}

// notPublic are the networks no public server is on: this host, private
// networks, link-local (cloud metadata services at 169.254.169.254 and
// fd00:ec2::254), shared address space (carrier-grade NAT), benchmarking,
// documentation, multicast, reserved and broadcast addresses, and the IPv6
// transition forms that lead to an IPv4 address chosen by the URL
// (IPv4-compatible, 6to4, Teredo). IPv4-mapped and NAT64 addresses are checked
// by the IPv4 address they carry.
var notPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/96", "::1/128", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// publicAddr reports whether addr is an address on the public Internet.
func publicAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	if embedded, ok := embeddedIPv4(addr); ok {
		return publicAddr(embedded)
	}
	for _, p := range notPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// embeddedIPv4 returns the IPv4 address a NAT64 address (64:ff9b::a.b.c.d)
// reaches.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	if !addr.Is6() {
		return netip.Addr{}, false
	}
	b := addr.As16()
	if [12]byte(b[:12]) == [12]byte{0, 0x64, 0xff, 0x9b} {
		return netip.AddrFrom4([4]byte(b[12:])), true
	}
	return netip.Addr{}, false
}

// checkDataHost refuses, when a job is created, an http(s) URL whose host the
// policy does not list (the address checks follow when the job downloads).
func (s *Store) checkDataHost(ref dataRef) error {
	if ref.url == "" {
		return nil
	}
	u, err := url.Parse(ref.url)
	if err != nil || !s.hosts.allowsURL(u) {
		return fieldErrorf("training_data_url", "%s", errDataHostRefused)
	}
	return nil
}

// downloadError is the job's error for a failed download of u: the policy's
// own words when the policy refused it (nothing of the URL or of what the far
// side said), the context's error when the job was cancelled or the server is
// stopping (the attempt is not the data's fault), else what went wrong with
// an allowed host.
func downloadError(ctx context.Context, u string, err error) error {
	switch {
	case errors.Is(err, errDataHostRefused):
		return &dataError{msg: errDataHostRefused.Error()}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return dataErrorf("training data could not be downloaded from %s: %v", u, err)
}
