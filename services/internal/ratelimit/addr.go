package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"
)

// Proxies are the proxies whose forwarding header is believed: the
// deployment's load balancers. Empty: none, and a client's address is the
// connection's.
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of CIDR prefixes or addresses
// ("10.0.0.0/16,192.168.1.7").
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR prefix", f)
			}
			f = netip.PrefixFrom(a, a.BitLen()).String()
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR prefix", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (ps Proxies) trusts(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the client address a request is limited by: its
// ClientIP, an IPv6 address counted as its /64, which one client
// controls whole. "" when nothing parses.
func (ps Proxies) ClientAddr(remoteAddr, forwarded string) string {
	return AddressKey(ps.ClientIP(remoteAddr, forwarded))
}

// AddressKey is the key an address is limited by: an IPv4 address as it
// is, an IPv6 address as its /64; "" for "" or what does not parse.
func AddressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// ClientIP is the client's IP address: the connection's peer
// (remoteAddr, "host:port"), or, when that peer is a trusted proxy, the
// rightmost address of X-Forwarded-For (forwarded) that is not one (a
// client can write whatever it likes to the left of what the proxies
// appended, never to the right). "" when nothing parses.
func (ps Proxies) ClientIP(remoteAddr, forwarded string) string {
	if a := ps.client(remoteAddr, forwarded); a.IsValid() {
		return a.String()
	}
	return ""
}

// client is ClientIP as an address (the zero Addr when nothing parses).
func (ps Proxies) client(remoteAddr, forwarded string) netip.Addr {
	ap, err := netip.ParseAddrPort(remoteAddr)
	a := ap.Addr()
	if err != nil {
		if a, err = netip.ParseAddr(remoteAddr); err != nil {
			return netip.Addr{}
		}
	}
	a = a.Unmap()
	if ps.trusts(a) && forwarded != "" {
		hops := strings.Split(forwarded, ",")
		for i := len(hops) - 1; i >= 0; i-- {
			h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a garbled hop: stop at the last proxy believed
			}
			a = h.Unmap()
			if !ps.trusts(a) {
				break
			}
		}
	}
	return a
}
