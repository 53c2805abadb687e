package photoapi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Demo is the small data set SeedDemo loads.
type Demo struct {
	Org           string
	Event         string
	Photographers []string
	// Bibs are a few bibs that have photos.
	Bibs []string
	// Photos is how many photos the event has.
	Photos int
	// Keys are the photos' processed keys (WriteDemoImages makes a
	// watermarked preview for each), RawKeys their originals' keys
	// (WriteDemoOriginals).
	Keys, RawKeys []string
	// Token is an organizer token for Org, valid for a day, signed with the
	// dev secret (or PACER_JWT_SECRET when set).
	Token string
}

// SeedDemo loads a small demo data set so that a newcomer can search right
// away: an organizer, a published event (its public name search on), two
// assigned photographers, 20 runners and 50 photos with bibs, through the directory and ingest. It is
// idempotent: ids and ulids are fixed, and what exists is left alone.
func SeedDemo(ctx context.Context, dir *photo.Directory, ing *photo.Ingest) (Demo, error) {
	d := Demo{Org: "demo-org", Event: "seoul-marathon-2024", Photographers: []string{"ph_kim", "ph_lee"}, Bibs: []string{"1001", "1007", "1013"}}
	ignoreExists := func(err error) error {
		if errors.Is(err, photo.ErrConflict) {
			return nil
		}
		return err
	}
	if _, err := dir.CreateOrganizer(ctx, photo.Organizer{ID: d.Org, Name: "Demo Running Club"}); ignoreExists(err) != nil {
		return d, err
	}
	if _, err := dir.CreateEvent(ctx, d.Org, photo.Event{ID: d.Event, Name: "Seoul Marathon 2024", StartsOn: "2024-11-09", Published: true, PublicNameSearch: true}); ignoreExists(err) != nil {
		return d, err
	}
	names := map[string][2]string{"ph_kim": {"studio_kim", "Studio Kim"}, "ph_lee": {"lee.shoots", "Lee Shoots"}}
	for _, id := range d.Photographers {
		if _, err := dir.CreatePhotographer(ctx, d.Org, photo.Photographer{ID: id, Handle: names[id][0], DisplayName: names[id][1]}); ignoreExists(err) != nil {
			return d, err
		}
		if err := dir.Assign(ctx, d.Org, d.Event, id); err != nil {
			return d, err
		}
	}
	// Half the runners have Hangul names, half Latin ones, for the name
	// search (on for the public too).
	first := []string{"Minsu", "Jiyeon", "Seojun", "Hana", "Dohyun"}
	last := []string{"Kim", "Lee", "Park", "Choi"}
	given := []string{"민수", "지연", "서준", "하나", "도현"}
	family := []string{"김", "이", "박", "최"}
	var runners []photo.Runner
	for i := range 20 {
		name := first[i%5] + " " + last[i%4]
		if i%2 == 0 {
			name = family[i%4] + given[i%5]
		}
		runners = append(runners, photo.Runner{Bib: fmt.Sprint(1001 + i), Name: name})
	}
	if _, err := dir.ImportRunners(ctx, d.Org, d.Event, runners); err != nil {
		return d, err
	}
	start := time.Date(2024, 11, 9, 8, 0, 0, 0, time.UTC)
	var recs []photo.Record
	for i := range 50 {
		at := start.Add(time.Duration(i) * 97 * time.Second)
		var entropy [10]byte
		binary.BigEndian.PutUint64(entropy[2:], uint64(i+1))
		id := ulid.MustNew(ulid.Timestamp(at), bytesReader(entropy[:])).String()
		bibs := []string{fmt.Sprint(1001 + (i*7)%20)}
		if i%3 == 0 {
			bibs = append(bibs, fmt.Sprint(1001+(i*11+3)%20))
		}
		if i%17 == 5 {
			bibs = append(bibs, "9999") // a bib not on the entry list: kept and flagged
		}
		key := fmt.Sprintf("%s/%s/processed/%s.jpg", d.Org, d.Event, id)
		raw := fmt.Sprintf("%s/%s/raw/DSC_%04d.jpg", d.Org, d.Event, 1000+i)
		d.Keys, d.RawKeys = append(d.Keys, key), append(d.RawKeys, raw)
		recs = append(recs, photo.Record{
			ULID: id, OriginalFilename: fmt.Sprintf("DSC_%04d.jpg", 1000+i),
			RawKey: raw, ProcessedKey: key,
			S3URI: "s3://pacer-demo-images/" + key, Dimensions: photo.Dimensions{Width: 3840, Height: 2160},
			Format: "jpeg", Size: 2_000_000 + int64(i)*1000, Bibs: bibs, FaceIDs: []string{fmt.Sprintf("face-%03d", i)},
			PhotographerID: d.Photographers[i%2], CreatedAt: at,
		})
	}
	res, err := ing.IngestBatch(ctx, d.Org, d.Event, recs)
	if err != nil {
		return d, err
	}
	for _, r := range res {
		if r.Status == photo.Failed {
			return d, r.Err
		}
	}
	d.Photos = len(recs)
	secret := os.Getenv("PACER_JWT_SECRET")
	if secret == "" {
		secret = server.DevJWTSecret
	}
	d.Token, err = auth.Mint([]byte(secret), auth.Principal{UserID: "demo-organizer", Roles: []string{auth.RoleOrganizer}, OrgID: d.Org}, 24*time.Hour)
	return d, err
}

// bytesReader is an io.Reader over a fixed slice (deterministic ULID
// entropy).
type bytesReader []byte

func (b bytesReader) Read(p []byte) (int, error) { return copy(p, b), nil }
