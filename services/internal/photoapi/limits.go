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

// setMaxLength sets the maximum length, in characters, of s's properties.
func setMaxLength(s *huma.Schema, n int, props ...string) {
	for _, p := range props {
		s.Properties[p].MaxLength = &n
	}
}

// skew is photo.MaxClockSkew in words, for the spec.
var skew = fmt.Sprintf("%d minutes", int(photo.MaxClockSkew/time.Minute))

// TransformSchema implements huma.SchemaTransformer.
func (recordBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxFilenameLen, "originalFilename")
	setMaxLength(s, photo.MaxKeyLen, "rawKey", "processedKey")
	setMaxLength(s, photo.MaxS3URILen, "s3Uri")
	setMaxLength(s, photo.MaxFormatLen, "format")
	maxSize := float64(photo.MaxSize)
	s.Properties["size"].Maximum = &maxSize
	s.Properties["size"].Description = fmt.Sprintf("Bytes, at most %d.", photo.MaxSize)
	s.Properties["ulid"].Description = "The photo's ULID; makes the post idempotent. Its time (first 10 characters) must be from 2000 on " +
		"and not in the future: at most " + skew + " ahead of the server's clock (clock skew), as it orders the gallery. " +
		"Generated when absent (then a retry creates a second photo)."
	s.Properties["createdAt"].Description = "When the photo was taken; defaults to the ULID's time. From 2000 on and at most " +
		skew + " ahead of the server's clock. Stored to the millisecond, UTC."
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (organizerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxNameLen, "name")
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (eventBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxNameLen, "name")
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (eventPatchBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxNameLen, "name")
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (photographerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxHandleLen, "handle")
	setMaxLength(s, photo.MaxDisplayNameLen, "displayName")
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (photographerPatchBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxHandleLen, "handle")
	setMaxLength(s, photo.MaxDisplayNameLen, "displayName")
	return s
}

// TransformSchema implements huma.SchemaTransformer.
func (runnerBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	setMaxLength(s, photo.MaxNameLen, "name")
	return s
}
