package photoapi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
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
// assigned photographers, 20 runners and 50 photos with bibs, through the
// directory and ingest; and the race timing (demoTiming): timing points,
// where the photographers stand, the runners' splits, and a few photos
// whose bib the recognizer missed, found by passing time. It is
// idempotent: ids and ulids are fixed, and what exists is left alone or
// written again unchanged.
func SeedDemo(ctx context.Context, dir *photo.Directory, ing *photo.Ingest, tim *photo.Timing) (Demo, error) {
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
	var recs []photo.Record
	record := func(i int, at time.Time, ph string, bibs []string) {
		var entropy [10]byte
		binary.BigEndian.PutUint64(entropy[2:], uint64(i+1))
		id := ulid.MustNew(ulid.Timestamp(at), bytesReader(entropy[:])).String()
		key := fmt.Sprintf("%s/%s/processed/%s.jpg", d.Org, d.Event, id)
		raw := fmt.Sprintf("%s/%s/raw/DSC_%04d.jpg", d.Org, d.Event, 1000+i)
		d.Keys, d.RawKeys = append(d.Keys, key), append(d.RawKeys, raw)
		recs = append(recs, photo.Record{
			ULID: id, OriginalFilename: fmt.Sprintf("DSC_%04d.jpg", 1000+i),
			RawKey: raw, ProcessedKey: key,
			S3URI: "s3://pacer-demo-images/" + key, Dimensions: photo.Dimensions{Width: 3840, Height: 2160},
			Format: "jpeg", Size: 2_000_000 + int64(i)*1000, Bibs: bibs, FaceIDs: []string{fmt.Sprintf("face-%03d", i)},
			PhotographerID: ph, CreatedAt: at,
		})
	}
	for i := range 50 {
		bibs := []string{fmt.Sprint(1001 + (i*7)%20)}
		if i%3 == 0 {
			bibs = append(bibs, fmt.Sprint(1001+(i*11+3)%20))
		}
		if i%17 == 5 {
			bibs = append(bibs, "9999") // a bib not on the entry list: kept and flagged
		}
		record(i, demoStart.Add(time.Duration(i)*97*time.Second), d.Photographers[i%2], bibs)
	}
	// Photos whose bib the recognizer missed: taken by ph_kim a few
	// seconds after each of d.Bibs was expected at the camera (10 km + 15
	// s); the search by passing time finds them.
	for j, bib := range d.Bibs {
		record(50+j, demoSplit(bib, "10k").Add(demoKimOffset+4*time.Second), "ph_kim", nil)
	}
	if err := demoTiming(ctx, tim, d); err != nil {
		return d, err
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

// The demo race: the gun at 8:00; ph_kim stands 15 s past the 10 km mat,
// ph_lee at 15 km, between the 10 km and half-marathon mats.
var demoStart = time.Date(2024, 11, 9, 8, 0, 0, 0, time.UTC)

const demoKimOffset = 15 * time.Second

// demoSplit is the demo runner bib's split at a timing point: runner k
// (bib 1001+k) reaches 10 km at 8:40 + k min and the half at 9:25 + 2k
// min and 10 s.
func demoSplit(bib, point string) time.Time {
	k, _ := strconv.Atoi(bib) // the demo's own bibs: numbers
	k -= 1001
	switch point {
	case "10k":
		return demoStart.Add(40*time.Minute + time.Duration(k)*time.Minute)
	case "half":
		return demoStart.Add(85*time.Minute + time.Duration(k)*(2*time.Minute+10*time.Second))
	}
	return demoStart
}

// demoTiming loads the demo race's timing: the start, 10 km and half
// marathon mats, the photographers' positions, and every runner's splits.
func demoTiming(ctx context.Context, tim *photo.Timing, d Demo) error {
	for _, p := range []photo.TimingPoint{{ID: "start", Name: "Start", DistanceM: 0}, {ID: "10k", Name: "10 km", DistanceM: 10000}, {ID: "half", Name: "Half marathon", DistanceM: 21097}} {
		p.EventID = d.Event
		if _, err := tim.PutTimingPoint(ctx, d.Org, p); err != nil {
			return err
		}
	}
	at15k := 15000
	for _, p := range []photo.Position{
		{EventID: d.Event, PhotographerID: "ph_kim", PointID: "10k", OffsetSeconds: int(demoKimOffset / time.Second)},
		{EventID: d.Event, PhotographerID: "ph_lee", DistanceM: &at15k},
	} {
		if _, err := tim.SetPosition(ctx, d.Org, p); err != nil {
			return err
		}
	}
	var ss []photo.Split
	for k := range 20 {
		bib := fmt.Sprint(1001 + k)
		for _, pt := range []string{"start", "10k", "half"} {
			ss = append(ss, photo.Split{Bib: bib, PointID: pt, At: demoSplit(bib, pt)})
		}
	}
	_, err := tim.ImportSplits(ctx, d.Org, d.Event, ss)
	return err
}

// bytesReader is an io.Reader over a fixed slice (deterministic ULID
// entropy).
type bytesReader []byte

func (b bytesReader) Read(p []byte) (int, error) { return copy(p, b), nil }
