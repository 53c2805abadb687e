package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"golang.org/x/time/rate"
)

// The key set's fetches: the first bounded by keySetTimeout (NewVerifier
// waits for it), then one every keySetRefresh, so that a key set the
// identity provider could not serve at start-up is loaded within minutes
// of its answering again, with or without traffic, and KeySet is never
// older than that; a token naming a key the set lacks fetches it too, at
// most every unknownKeyRefresh.
const (
	keySetTimeout     = 10 * time.Second
	keySetRefresh     = 5 * time.Minute
	unknownKeyRefresh = 5 * time.Minute
)

// KeySetStatus is what a Verifier knows of its key set: whether it can
// verify tokens, and how the last fetch from the identity provider went.
type KeySetStatus struct {
	// Remote says the keys come from a JWKS URL; false for an HS256
	// secret, whose one key is always there (Keys 1, no fetch).
	Remote bool
	// Keys is how many keys the Verifier holds: 0 means every token is
	// refused (the key set was never fetched, or the identity provider
	// serves an empty one).
	Keys int
	// LoadedAt is when a fetch last succeeded (zero: never).
	LoadedAt time.Time
	// FailedAt is when a fetch last failed (zero: never), and Err why (it
	// names the URL and what failed; it holds no secret).
	FailedAt time.Time
	Err      error
}

// Failing reports whether the last fetch failed: the keys held (if any)
// still verify tokens, but a key the identity provider has rotated in
// since is unknown.
func (s KeySetStatus) Failing() bool {
	return !s.FailedAt.IsZero() && s.FailedAt.After(s.LoadedAt)
}

// KeySet reports the state of v's key set. A JWKS fetch that fails does
// not fail NewVerifier (the identity provider may be back in a moment),
// so a Verifier may hold no key, and refuse every token, until a fetch
// succeeds: a service reports this (a readiness report, a metric) rather
// than dying.
func (v *Verifier) KeySet() KeySetStatus {
	if v.keys == nil {
		return KeySetStatus{Keys: 1}
	}
	return v.keys.status()
}

// keySet records the outcome of each fetch of a JWKS.
type keySet struct {
	mu sync.Mutex
	st KeySetStatus
}

func (k *keySet) status() KeySetStatus {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.st
}

func (k *keySet) loaded(n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.st.Keys, k.st.LoadedAt = n, time.Now()
}

func (k *keySet) failed(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.st.FailedAt, k.st.Err = time.Now(), err
}

// observedStore is the key set's storage: a fetch that succeeds replaces
// all its keys, which is when it is recorded.
type observedStore struct {
	jwkset.Storage
	set *keySet
}

func (s observedStore) KeyReplaceAll(ctx context.Context, keys []jwkset.JWK) error {
	if err := s.Storage.KeyReplaceAll(ctx, keys); err != nil {
		return err
	}
	s.set.loaded(len(keys))
	return nil
}

// newKeySet fetches the JWKS at url once (a failure is recorded, not
// returned) and keeps it fresh until ctx ends.
func newKeySet(ctx context.Context, url string) (keyfunc.Keyfunc, *keySet, error) {
	set := &keySet{st: KeySetStatus{Remote: true}}
	store, err := jwkset.NewStorageFromHTTP(url, jwkset.HTTPClientStorageOptions{
		Ctx:                       ctx,
		HTTPTimeout:               keySetTimeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshInterval:           keySetRefresh,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			set.failed(err)
			slog.Default().WarnContext(ctx, "auth: fetching the JWKS failed: tokens signed with a key not yet loaded are refused", "url", url, "err", err)
		},
		Storage: observedStore{Storage: jwkset.NewMemoryStorage(), set: set},
	})
	if err != nil {
		return nil, nil, err
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{url: store},
		RateLimitWaitMax:  time.Minute,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(unknownKeyRefresh), 1),
	})
	if err != nil {
		return nil, nil, err
	}
	k, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: client})
	if err != nil {
		return nil, nil, err
	}
	return k, set, nil
}
