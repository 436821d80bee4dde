package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"
)

// cookieOptions say when browsers reach the server over HTTPS, which makes
// the web UI's session cookie Secure (webui.Config).
type cookieOptions struct {
	secure         bool
	trustedProxies prefixList
}

func cookieFlags(fs *flag.FlagSet, c *cookieOptions) {
	fs.BoolVar(&c.secure, "secure-cookies", false, "browsers reach the server only over HTTPS (a TLS-terminating proxy in front): the web UI's session cookie is a Secure __Host- cookie")
	fs.Var(&c.trustedProxies, "trusted-proxies", "comma-separated addresses and networks (CIDR) of reverse proxies whose X-Forwarded-Proto: https gives a request a Secure __Host- session cookie (default none: the header is ignored)")
}

// prefixList is the -trusted-proxies flag: comma-separated addresses
// (127.0.0.1, ::1) and networks (10.0.0.0/8).
type prefixList []netip.Prefix

func (l *prefixList) String() string {
	s := make([]string, len(*l))
	for i, p := range *l {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Set adds each comma-separated address or network of v.
func (l *prefixList) Set(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			addr, addrErr := netip.ParseAddr(item)
			if addrErr != nil {
				return fmt.Errorf("%q is neither an IP address nor a network (CIDR)", item)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		*l = append(*l, p.Masked())
	}
	return nil
}
