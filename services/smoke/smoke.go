package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Config is what one smoke run checks.
type Config struct {
	// AsyncEventURL and PhotoURL are the APIs' base URLs (the stack's
	// AsyncEventApiURL and PhotoApiURL outputs).
	AsyncEventURL, PhotoURL string
	// PreviewKey is the key, under photo-api's image base URL
	// (PhotoImageBaseUrl), of an image the run ingests as a photo's
	// preview and then loads as the runner page would.
	PreviewKey string
	// Tokens act as an operator, an organizer and a user.
	Tokens Tokens
	// Timeout bounds the wait for the participation's decision and for
	// the photo to be found.
	Timeout time.Duration
	// Keep leaves the run's event and photo in place (by default the
	// AsyncEvent event is closed, the photo deleted and the photo event
	// unpublished).
	Keep bool
	// Client makes the calls (default: 10 s per call).
	Client *http.Client
}

// run is one smoke run: what it calls with and where it reports.
type run struct {
	Config
	out io.Writer
	id  string // the event id on both APIs
}

// Run checks a deployed stage end to end and writes a line per step to
// out: both APIs answer; an operator creates a first-come event and a
// user's participation is decided; an organizer sets up a published photo
// event, ingests a photo of bib 1 and the public bib search finds it; and
// the preview loads from the image base URL photo-api's pages use. The
// first failing step ends the run with an error saying what failed.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	for name, u := range map[string]*string{"the AsyncEvent API's URL": &cfg.AsyncEventURL, "photo-api's URL": &cfg.PhotoURL} {
		p, err := url.Parse(*u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return fmt.Errorf("%s %q is not an http(s) URL", name, *u)
		}
		*u = strings.TrimSuffix(*u, "/")
	}
	if cfg.PreviewKey == "" {
		return errors.New("no preview key: upload a small JPEG or PNG under the image base URL (PhotoImageBaseUrl) and name its key")
	}
	r := &run{Config: cfg, out: out, id: "smoke-" + strings.ToLower(ulid.Make().String()[:10])}
	fmt.Fprintf(out, "smoke: event %s on %s and %s\n", r.id, cfg.AsyncEventURL, cfg.PhotoURL)
	for _, step := range []func(context.Context) error{r.health, r.participation, r.photoSearch} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "smoke: passed")
	return nil
}

func (r *run) ok(format string, args ...any) {
	fmt.Fprintf(r.out, "  ok  "+format+"\n", args...)
}

func (r *run) health(ctx context.Context) error {
	for _, base := range []string{r.AsyncEventURL, r.PhotoURL} {
		if err := r.call(ctx, http.MethodGet, base+"/healthz", "", nil, nil, http.StatusOK); err != nil {
			return err
		}
		r.ok("GET %s/healthz", base)
	}
	return nil
}

// participation creates a first-come event of one seat, takes part as the
// user and polls until the request is decided: it must win.
func (r *run) participation(ctx context.Context) error {
	a := r.AsyncEventURL
	event := map[string]any{"eventId": r.id, "eventType": "FIRST_COME", "capacityTotal": 1, "title": "Pacer smoke test"}
	if err := r.call(ctx, http.MethodPost, a+"/admin/events", r.Tokens.Admin, event, nil, http.StatusCreated); err != nil {
		return err
	}
	r.ok("created the first-come event %s (1 seat)", r.id)
	var accepted struct {
		RequestID string `json:"requestId"`
	}
	if err := r.call(ctx, http.MethodPost, a+"/events/"+r.id+"/participations", r.Tokens.User, nil, &accepted, http.StatusAccepted); err != nil {
		return err
	}
	r.ok("participation accepted: 202, request %s", accepted.RequestID)
	var view struct {
		Status       string `json:"status"`
		ResultCode   string `json:"resultCode"`
		QueueDelayMs *int64 `json:"queueDelayMs"`
		E2EDelayMs   *int64 `json:"e2eDelayMs"`
	}
	err := r.poll(ctx, "the participation's decision", func() (bool, error) {
		err := r.call(ctx, http.MethodGet, a+"/requests/"+accepted.RequestID, r.Tokens.User, nil, &view, http.StatusOK)
		return view.Status == "SUCCEEDED" || view.Status == "REJECTED" || view.Status == "FAILED_FINAL", err
	})
	if err != nil {
		return err
	}
	if view.Status != "SUCCEEDED" {
		return fmt.Errorf("the only participation in a one-seat event ended %s (%s): check the workers' logs and the DLQ", view.Status, view.ResultCode)
	}
	r.ok("decided: %s %s (queue delay %s, end to end %s)", view.Status, view.ResultCode, millis(view.QueueDelayMs), millis(view.E2EDelayMs))
	if !r.Keep {
		if err := r.call(ctx, http.MethodPost, a+"/admin/events/"+r.id+"/close", r.Tokens.Admin, nil, nil, http.StatusOK); err != nil {
			return err
		}
		r.ok("closed the event")
	}
	return nil
}

func millis(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return (time.Duration(*ms) * time.Millisecond).String()
}

// photoSearch sets up a published photo event in the organizer's
// organization, ingests a photo of bib 1 whose preview is PreviewKey,
// finds it by the public bib search, and loads the preview from the image
// base URL photo-api's pages use.
func (r *run) photoSearch(ctx context.Context) error {
	p := r.PhotoURL
	org, err := r.Tokens.Org()
	if err != nil {
		return err
	}
	// The organization may exist already (an earlier run, or the
	// organizer's own): 409 is fine.
	if err := r.call(ctx, http.MethodPost, p+"/admin/organizers", r.Tokens.Admin,
		map[string]any{"organizerId": org, "name": "Pacer smoke test"}, nil, http.StatusCreated, http.StatusConflict); err != nil {
		return err
	}
	if err := r.call(ctx, http.MethodPost, p+"/events", r.Tokens.Organizer,
		map[string]any{"eventId": r.id, "name": "Pacer smoke test", "published": true}, nil, http.StatusCreated); err != nil {
		return err
	}
	if err := r.call(ctx, http.MethodPost, p+"/photographers", r.Tokens.Organizer,
		map[string]any{"photographerId": "pacer-smoke", "handle": "pacer-smoke", "displayName": "Pacer smoke test"}, nil, http.StatusCreated, http.StatusConflict); err != nil {
		return err
	}
	if err := r.call(ctx, http.MethodPut, p+"/events/"+r.id+"/photographers/pacer-smoke", r.Tokens.Organizer, nil, nil, http.StatusNoContent); err != nil {
		return err
	}
	if err := r.call(ctx, http.MethodPost, p+"/events/"+r.id+"/runners", r.Tokens.Organizer,
		map[string]any{"runners": []any{map[string]any{"bib": "1", "name": "Pacer Smoke"}}}, nil, http.StatusOK); err != nil {
		return err
	}
	r.ok("published the photo event %s in organization %s, with a photographer and bib 1", r.id, org)
	photo := ulid.MustNew(ulid.Now(), rand.Reader).String()
	record := map[string]any{
		"ulid": photo, "originalFilename": "pacer-smoke.jpg", "rawKey": r.PreviewKey, "processedKey": r.PreviewKey,
		"s3Uri": "s3://pacer-smoke/" + r.PreviewKey, "dimensions": map[string]any{"width": 1, "height": 1},
		"format": "jpeg", "size": 1, "bibs": []string{"1"}, "faceIds": []string{}, "photographerId": "pacer-smoke",
	}
	if err := r.call(ctx, http.MethodPost, p+"/events/"+r.id+"/photos", r.Tokens.Organizer, record, nil, http.StatusCreated); err != nil {
		return err
	}
	r.ok("ingested photo %s of bib 1", photo)
	var found struct {
		Photos []struct {
			ULID         string `json:"ulid"`
			ProcessedKey string `json:"processedKey"`
		} `json:"photos"`
	}
	err = r.poll(ctx, "the public bib search to find the photo", func() (bool, error) {
		err := r.call(ctx, http.MethodGet, p+"/public/events/"+r.id+"/bibs/1/photos", "", nil, &found, http.StatusOK)
		return len(found.Photos) > 0 && found.Photos[0].ULID == photo, err
	})
	if err != nil {
		return err
	}
	r.ok("the public bib search finds it")
	if err := r.image(ctx, found.Photos[0].ProcessedKey); err != nil {
		return err
	}
	if !r.Keep {
		if err := r.call(ctx, http.MethodDelete, p+"/events/"+r.id+"/photos/"+photo, r.Tokens.Organizer, nil, nil, http.StatusOK); err != nil {
			return err
		}
		if err := r.call(ctx, http.MethodPatch, p+"/events/"+r.id, r.Tokens.Organizer, map[string]any{"published": false}, nil, http.StatusOK); err != nil {
			return err
		}
		r.ok("deleted the photo and unpublished the event")
	}
	return nil
}

// image loads key from the image base URL photo-api's pages are
// configured with (its /ui/config.json), as the runner page does.
func (r *run) image(ctx context.Context, key string) error {
	var conf struct {
		ImageBaseURL string `json:"imageBaseUrl"`
	}
	if err := r.call(ctx, http.MethodGet, r.PhotoURL+"/ui/config.json", "", nil, &conf, http.StatusOK); err != nil {
		return err
	}
	if conf.ImageBaseURL == "" {
		return errors.New("photo-api's pages have no image base URL, so they show no photo: set PhotoImageBaseUrl (PHOTO_IMAGE_BASE_URL on Kubernetes)")
	}
	u := conf.ImageBaseURL + "/" + key
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return fmt.Errorf("the preview %s does not load: %w", u, err)
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(mt, "image/") {
		return fmt.Errorf("the preview %s does not load as an image: %s, Content-Type %q (is %s uploaded under PhotoImageBaseUrl?)",
			u, resp.Status, resp.Header.Get("Content-Type"), key)
	}
	r.ok("the preview loads: %s (%s, %d bytes)", u, mt, n)
	return nil
}

// poll calls check every half second until it says done, or fails after
// the run's Timeout naming what it waited for.
func (r *run) poll(ctx context.Context, what string, check func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no %s within %s", what, r.Timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// call sends body (JSON, if not nil) with token (if not empty) and
// decodes the answer into out (if not nil); an answer with a status
// other than want is an error quoting the API's problem.
func (r *run) call(ctx context.Context, method, u, token string, body, out any, want ...int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	ok := false
	for _, w := range want {
		ok = ok || resp.StatusCode == w
	}
	if !ok {
		return fmt.Errorf("%s %s: %s, want %d: %s", method, u, resp.Status, want[0], bytes.TrimSpace(b))
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, u, err)
		}
	}
	return nil
}
