package photoapi

import (
	"fmt"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
)

// The bodies' limits are the photo module's constants, written into the
// schema here rather than into tags, so that the spec, Huma's request
// validator and the domain's checks share one number each. Huma's
// validator counts maxLength in runes, as the domain does (see
// photo.MaxNameLen).

// maxLengths sets the maximum length, in characters, of s's properties
// (property name → limit) and returns s.
func maxLengths(s *huma.Schema, limits map[string]int) *huma.Schema {
	for p, n := range limits {
		s.Properties[p].MaxLength = &n
	}
	return s
}

// skew is photo.MaxClockSkew in words, for the spec.
var skew = fmt.Sprintf("%d minutes", int(photo.MaxClockSkew/time.Minute))

// TransformSchema implements huma.SchemaTransformer. Besides the limits,
// bibs and faceIds are required lists, so null is refused as not a list
// (Huma makes lists nullable by default), and each face id holds 1 to
// photo.MaxFaceIDLen characters.
func (recordBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	for _, name := range []string{"bibs", "faceIds"} {
		s.Properties[name].Nullable = false
	}
	s.Properties["faceIds"].Items.MinLength = new(1)
	s.Properties["faceIds"].Items.MaxLength = new(photo.MaxFaceIDLen)
	maxLengths(s, map[string]int{
		"originalFilename": photo.MaxFilenameLen, "rawKey": photo.MaxKeyLen, "processedKey": photo.MaxKeyLen,
		"s3Uri": photo.MaxS3URILen, "format": photo.MaxFormatLen,
	})
	maxSize := float64(photo.MaxSize)
	s.Properties["size"].Maximum = &maxSize
	s.Properties["size"].Description = fmt.Sprintf("Bytes, at most %d.", photo.MaxSize)
	s.Properties["ulid"].Description = "The photo's ULID; makes the post idempotent. Its time (first 10 characters) must be from 2000 on " +
		"and not in the future: at most " + skew + " ahead of the server's clock (clock skew), as it orders the gallery. " +
		"Generated when absent (then a retry creates a second photo)."
	s.Properties["createdAt"].Description = "When the photo was taken: the ULID's time, to the millisecond (UTC). Defaults to it; " +
		"a generated ULID is minted at it; a createdAt that differs from a given ULID's time is refused, since both order " +
		"the searches (newest first). From 2000 on and at most " + skew + " ahead of the server's clock."
	return s
}

var (
	nameLimit         = map[string]int{"name": photo.MaxNameLen}
	photographerLimit = map[string]int{"handle": photo.MaxHandleLen, "displayName": photo.MaxDisplayNameLen}
)

// TransformSchema implements huma.SchemaTransformer.
func (organizerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, nameLimit)
}

// TransformSchema implements huma.SchemaTransformer.
func (eventBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, nameLimit)
}

// TransformSchema implements huma.SchemaTransformer.
func (eventPatchBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, nameLimit)
}

// TransformSchema implements huma.SchemaTransformer.
func (runnerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, nameLimit)
}

// TransformSchema implements huma.SchemaTransformer.
func (photographerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, photographerLimit)
}

// TransformSchema implements huma.SchemaTransformer.
func (photographerPatchBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return maxLengths(s, photographerLimit)
}
