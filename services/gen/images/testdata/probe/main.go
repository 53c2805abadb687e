// Command probe is what the images' tests run inside an image's root
// (TestBinariesCarryRootsAndZones): it verifies each PEM certificate on
// its standard input against the system's roots, as a TLS client does,
// and loads the time zones its arguments name. It prints one line per
// check ("roots …: ok", "zone …: ok KST +32400") and exits 1 if any
// failed. Built with -tags nofallback, it links no roots or zones of its
// own.
package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	failed := false
	check := func(what string, err error, ok string) {
		if err != nil {
			failed = true
			fmt.Printf("%s: %v\n", what, err)
			return
		}
		fmt.Printf("%s: ok%s\n", what, ok)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		check("stdin", err, "")
	}
	for b, rest := pem.Decode(in); b != nil; b, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			check("certificate", err, "")
			continue
		}
		_, err = c.Verify(x509.VerifyOptions{}) // Roots nil: the system's
		check("roots "+c.Subject.CommonName, err, "")
	}
	at := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range os.Args[1:] {
		loc, err := time.LoadLocation(name)
		var ok string
		if err == nil {
			abbr, offset := at.In(loc).Zone()
			ok = fmt.Sprintf(" %s %+d", abbr, offset)
		}
		check("zone "+name, err, ok)
	}
	if failed {
		os.Exit(1)
	}
}
