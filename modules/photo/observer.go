package photo

import "time"

// Search kinds, as Observer.Searched reports them.
const (
	SearchBib          = "bib"
	SearchPhotographer = "photographer"
	SearchGallery      = "gallery"
	SearchPublicBib    = "public_bib"
	SearchNearby       = "nearby"
	SearchPublicNearby = "public_nearby"
	SearchName         = "name"
	SearchPublicName   = "public_name"
)

// Observer hears ingests and searches, for metrics (the services export
// them; the domain knows no metrics library). It is called synchronously:
// it must be fast and must not block.
type Observer interface {
	// Ingested reports an ingest call (single or batch) of n photos, of
	// which stored are stored (created now, or already there); the others
	// were refused: the call was invalid or failed, or the photo was
	// suppressed at a runner's request or not written.
	Ingested(n, stored int)
	// Searched reports one search of kind (SearchBib, ...) that took d,
	// answered or failed.
	Searched(kind string, d time.Duration)
}
