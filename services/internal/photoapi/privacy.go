package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

type privacyOutput struct {
	Body struct {
		Bib     string `json:"bib"`
		Mode    string `json:"mode" doc:"The request in force: delete outranks hide, so a hide after a delete answers delete."`
		Changed int    `json:"changed" doc:"Photos changed by this call (0 when repeated)."`
	}
}

// registerPrivacy adds an organizer's deletions: a photo, or a runner's
// bib (hidden, or every photo showing it deleted).
func (h *handlers) registerPrivacy(api huma.API) {
	huma.Register(api, server.Op("delete-photo", http.MethodDelete, "/events/{eventId}/photos/{ulid}",
		"Delete a photo and the entries that find it by bib, atomically", tagPrivacy, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			ULIDPath
		}) (*photoOutput, error) {
			p, err := h.privacy.DeletePhoto(ctx, org, in.EventID, in.ULID)
			return &photoOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("bib-privacy", http.MethodPost, "/events/{eventId}/bibs/{bib}/privacy",
		"A runner's privacy request: hide their bib, or delete every photo showing it", tagPrivacy, refusals, server.Bulk(),
		server.Describe("hide: the bib's index entries are deleted and the bib is struck from its photos, which stay in the gallery. "+
			"delete: every photo showing the bib, or from which it was hidden before, is deleted with all its index entries. "+
			"Either way the request is recorded first, and applies to photos ingested later or while the request runs: "+
			"hide drops the bib from them (suppressedBibs), delete does not keep them (status suppressed). "+
			"It reads every photo of the event once. Idempotent.")),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			BibPath
			Body struct {
				Mode string `json:"mode" enum:"hide,delete"`
			}
		}) (*privacyOutput, error) {
			res, err := h.privacy.RemoveBib(ctx, org, in.EventID, in.Bib, in.Body.Mode)
			if err != nil {
				return nil, err
			}
			out := &privacyOutput{}
			out.Body.Bib, out.Body.Mode, out.Body.Changed = in.Bib, res.Mode, res.Changed
			return out, nil
		}))
}
