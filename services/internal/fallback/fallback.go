// Package fallback links into a binary the CA roots and time zones it
// falls back on when its machine has none, so its image needs no CA bundle
// or zoneinfo files: Mozilla's roots (golang.org/x/crypto/x509roots/fallback,
// which crypto/x509 uses only when the system has no roots) and the IANA
// time zone database (time/tzdata, which package time reads only for a
// zone the system's zoneinfo lacks). On a machine that has them, the
// machine's win.
// Together they add about 570 kB to a binary (200 kB gzipped).
//
// Every deployed binary imports it, for its side effects only:
//
//	import _ "github.com/pacerhq/pacer/services/internal/fallback"
//
// Only binaries import it (internal/arch checks), as x509roots/fallback
// asks: its roots are set when the program starts. Upgrading
// golang.org/x/crypto/x509roots/fallback (go get …@latest) updates the
// roots; the Go toolchain updates the time zones.
package fallback

import (
	_ "time/tzdata" // the time zones

	_ "golang.org/x/crypto/x509roots/fallback" // Mozilla's roots
)
