package photo_test

import (
	"strings"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
)

func TestValidators(t *testing.T) {
	for _, c := range []struct {
		f    func(string) bool
		name string
		in   string
		want bool
	}{
		{photo.ValidID, "id", "seoul-marathon-2024", true},
		{photo.ValidID, "id", "ph_01ABCXYZ", true},
		{photo.ValidID, "id", "a.b", true},
		{photo.ValidID, "id", "", false},
		{photo.ValidID, "id", "-lead", false},
		{photo.ValidID, "id", "a#b", false},
		{photo.ValidID, "id", "a%23b", false},
		{photo.ValidID, "id", "a b", false},
		{photo.ValidID, "id", "a\x00b", false},
		{photo.ValidID, "id", "ü", false},
		{photo.ValidID, "id", strings.Repeat("a", 64), true},
		{photo.ValidID, "id", strings.Repeat("a", 65), false},
		{photo.ValidBib, "bib", "1234", true},
		{photo.ValidBib, "bib", "A-017", true},
		{photo.ValidBib, "bib", "", false},
		{photo.ValidBib, "bib", "12#34", false},
		{photo.ValidBib, "bib", "12 34", false},
		{photo.ValidBib, "bib", strings.Repeat("1", 17), false},
		{photo.ValidULID, "ulid", "01HXY8FWZM5KJQD9K3Y6R8NZTP", true},
		{photo.ValidULID, "ulid", "01hxy8fwzm5kjqd9k3y6r8nztp", false}, // canonical upper case only
		{photo.ValidULID, "ulid", "81HXY8FWZM5KJQD9K3Y6R8NZTP", false}, // overflows 48 bits
		{photo.ValidULID, "ulid", "01HXY8FWZM5KJQD9K3Y6R8NZTU", false}, // U is not Crockford
		{photo.ValidULID, "ulid", "01HXY8FWZM5KJQD9K3Y6R8NZT", false},
	} {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.name, c.in, got, c.want)
		}
	}
}
