package dynamostore

import (
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// PhotoItem is the PHOTO item's attributes (the SDK adds PK, SK and
// EntityType). Attribute names are fixed: items already stored use them.
type PhotoItem struct {
	ULID    string `dynamodbav:"ulid"`
	OrgID   string `dynamodbav:"orgId"`
	EventID string `dynamodbav:"eventId"`

	OriginalFilename string         `dynamodbav:"originalFilename"`
	RawKey           string         `dynamodbav:"rawKey"`
	ProcessedKey     string         `dynamodbav:"processedKey"`
	S3URI            string         `dynamodbav:"s3Uri"`
	Dimensions       DimensionsItem `dynamodbav:"dimensions"`
	Format           string         `dynamodbav:"format"`
	Size             int64          `dynamodbav:"size"`

	Bibs      []string `dynamodbav:"bibs"`
	BibCount  int      `dynamodbav:"bibCount"`
	FaceIDs   []string `dynamodbav:"faceIds"`
	FaceCount int      `dynamodbav:"faceCount"`

	PhotographerID          string `dynamodbav:"photographerId,omitempty"`
	PhotographerHandle      string `dynamodbav:"photographerHandle,omitempty"`
	PhotographerDisplayName string `dynamodbav:"photographerDisplayName,omitempty"`

	// GSI2 keys: present only when the photo has a photographer (sparse).
	GSI2PK string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK string `dynamodbav:"GSI2SK,omitempty"`

	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`

	// HiddenBibs are bibs struck from the photo by a runner's privacy
	// request (hide), kept so that a later request to delete the runner's
	// photos still finds it. Kept only for that; never shown.
	HiddenBibs []string `dynamodbav:"hiddenBibs,omitempty"`

	// Version counts the updates of the photo since its creation (absent
	// until the first one). Optimistic checks compare it: updatedAt has
	// millisecond resolution, and two updates can share a millisecond.
	Version int64 `dynamodbav:"version,omitempty"`
}

// DimensionsItem is the PHOTO's dimensions map.
type DimensionsItem struct {
	Width  int `dynamodbav:"width"`
	Height int `dynamodbav:"height"`
}

// BibItem is the BIB_INDEX item's attributes: a light index entry, with
// just enough of the photo to find it and order it.
type BibItem struct {
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	ULID      string `dynamodbav:"ulid"`
	OrgID     string `dynamodbav:"orgId"`
	EventID   string `dynamodbav:"eventId"`
	Bib       string `dynamodbav:"bib"`
	CreatedAt string `dynamodbav:"createdAt"`
}

func photoItemKey(p *PhotoItem) ddb.Key { return PhotoKey(p.OrgID, p.EventID, p.ULID) }
func bibItemKey(b *BibItem) ddb.Key     { return BibKey(b.OrgID, b.EventID, b.Bib, b.ULID) }

// toPhotoItem converts a domain photo.
func toPhotoItem(p *photo.Photo) *PhotoItem {
	it := &PhotoItem{
		ULID: p.ULID, OrgID: p.OrgID, EventID: p.EventID,
		OriginalFilename: p.OriginalFilename, RawKey: p.RawKey, ProcessedKey: p.ProcessedKey, S3URI: p.S3URI,
		Dimensions: DimensionsItem{Width: p.Dimensions.Width, Height: p.Dimensions.Height},
		Format:     p.Format, Size: p.Size,
		Bibs: nonNil(p.Bibs), BibCount: len(p.Bibs), FaceIDs: nonNil(p.FaceIDs), FaceCount: len(p.FaceIDs),
		PhotographerID: p.PhotographerID, PhotographerHandle: p.PhotographerHandle, PhotographerDisplayName: p.PhotographerDisplayName,
		CreatedAt: photo.ISOMillis(p.CreatedAt), UpdatedAt: photo.ISOMillis(p.UpdatedAt),
		HiddenBibs: p.HiddenBibs,
	}
	if p.PhotographerID != "" {
		it.GSI2PK = PhotogGSI2PK.Build(p.PhotographerID)
		it.GSI2SK = PhotogGSI2SK.Build(p.EventID, it.CreatedAt)
	}
	return it
}

// bibItems returns the BIB_INDEX items of a photo.
func bibItems(p *PhotoItem) []*BibItem {
	out := make([]*BibItem, len(p.Bibs))
	for i, b := range p.Bibs {
		out[i] = &BibItem{
			GSI1PK: BibGSI1PK.Build(p.EventID, b), GSI1SK: BibGSI1SK.Build(p.ULID),
			ULID: p.ULID, OrgID: p.OrgID, EventID: p.EventID, Bib: b, CreatedAt: p.CreatedAt,
		}
	}
	return out
}

// toPhoto converts a PHOTO item to the domain type.
func (it *PhotoItem) toPhoto() *photo.Photo {
	return &photo.Photo{
		ULID: it.ULID, OrgID: it.OrgID, EventID: it.EventID,
		OriginalFilename: it.OriginalFilename, RawKey: it.RawKey, ProcessedKey: it.ProcessedKey, S3URI: it.S3URI,
		Dimensions: photo.Dimensions{Width: it.Dimensions.Width, Height: it.Dimensions.Height},
		Format:     it.Format, Size: it.Size,
		Bibs: nonNil(it.Bibs), BibCount: it.BibCount, FaceIDs: nonNil(it.FaceIDs), FaceCount: it.FaceCount,
		PhotographerID: it.PhotographerID, PhotographerHandle: it.PhotographerHandle, PhotographerDisplayName: it.PhotographerDisplayName,
		CreatedAt: parseTime(it.CreatedAt), UpdatedAt: parseTime(it.UpdatedAt),
	}
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
