package training

import (
	"net/netip"
	"net/url"
	"testing"
)

// TestPublicAddr: every address a server may not reach unasked is not public,
// in each spelling IPv6 gives it.
func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "127.255.0.9": false, "::1": false, "0.0.0.0": false, "::": false, "0.1.2.3": false,
		"10.1.2.3": false, "172.16.0.1": false, "172.31.255.255": false, "192.168.1.1": false,
		"100.64.0.1": false, "100.127.255.254": false, // carrier-grade NAT
		"169.254.169.254": false, "169.254.0.1": false, "fe80::1": false, "fd00:ec2::254": false, // link-local, metadata
		"fd00::1": false, "fc00::1": false, "fec0::1": false, // unique and site local
		"224.0.0.1": false, "ff02::1": false, "255.255.255.255": false, "240.0.0.1": false, // multicast, reserved, broadcast
		"198.18.0.1": false, "192.0.2.1": false, "2001:db8::1": false, "192.0.0.8": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:169.254.169.254": false, "::ffff:0.0.0.0": false, // v4-mapped
		"::127.0.0.1": false, "64:ff9b::7f00:1": false, "64:ff9b::a9fe:a9fe": false, "2002:7f00:1::1": false, "2001:0:4136:e378:8000:63bf:80ff:fffe": false,
		"8.8.8.8": true, "1.1.1.1": true, "100.63.255.255": true, "100.128.0.1": true, "172.32.0.1": true, "169.253.255.255": true,
		"2606:4700:4700::1111": true, "::ffff:8.8.8.8": true, "64:ff9b::808:808": true,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestHostPolicy: which URLs an allow-list lets through by their host, and
// which addresses a connection may then reach.
func TestHostPolicy(t *testing.T) {
	p, err := parseHostPolicy([]string{"data.example.com", "*.bucket.example", "files.example:8443", "10.0.0.5", "[fd00::7]:9000", "192.168.0.0/16", " "})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://data.example.com/x.jsonl":        true,
		"http://DATA.example.com.:8080/x":         true,
		"https://a.b.bucket.example/x":            true,
		"https://bucket.example/x":                false,
		"https://evilbucket.example/x":            false,
		"https://files.example:8443/x":            true,
		"https://files.example/x":                 false,
		"http://10.0.0.5/x":                       true,
		"http://[::ffff:10.0.0.5]/x":              true,
		"http://10.0.0.6/x":                       false,
		"http://[fd00::7]:9000/x":                 true,
		"http://[fd00::7]:9001/x":                 false,
		"http://192.168.44.1/x":                   true,
		"http://127.0.0.1/x":                      false,
		"http://localhost/x":                      false,
		"http://8.8.8.8/x":                        false, // public, but not listed
		"ftp://data.example.com/x":                false,
		"https://user:pw@data.example.com/x":      false,
		"https://data.example.com@127.0.0.1/x":    false,
		"https://data.example.com.evil.example/x": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.allowsURL(u); got != want {
			t.Errorf("allowsURL(%s) = %v, want %v", raw, got, want)
		}
	}
	for addr, want := range map[string]bool{
		"93.184.216.34:443": true, // what a listed name resolves to: public
		"127.0.0.1:443":     false, "[::1]:443": false, "169.254.169.254:80": false, "10.0.0.6:80": false,
		"10.0.0.5:80": true, "[::ffff:10.0.0.5]:80": true, "[fd00::7]:9000": true, "[fd00::7]:9001": false, "192.168.3.3:1": true,
	} {
		if got := p.control("tcp", addr, nil) == nil; got != want {
			t.Errorf("control(%s) allowed = %v, want %v", addr, got, want)
		}
	}
	for _, bad := range []string{"exa mple.com", "*", "host:0", "host:99999", "a/b"} {
		if _, err := parseHostPolicy([]string{bad}); err == nil {
			t.Errorf("parseHostPolicy(%q) accepted it", bad)
		}
	}
}
