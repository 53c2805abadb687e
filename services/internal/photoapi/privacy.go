package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
)

type privacyOutput struct {
	Body struct {
		Bib     string `json:"bib"`
		Mode    string `json:"mode"`
		Changed int    `json:"changed" doc:"Photos changed by this call (0 when repeated)."`
	}
}

func (h *handlers) registerPrivacy(api huma.API) {
	huma.Register(api, op("delete-photo", http.MethodDelete, "/events/{eventId}/photos/{ulid}",
		"Delete a photo with its BIB_INDEX items, in one transaction", tagPrivacy, http.StatusOK),
		orgHandler(h, func(ctx context.Context, org string, in *struct {
			EventPath
			ULIDPath
		}) (*photoOutput, error) {
			p, err := h.svc.DeletePhoto(ctx, org, in.EventID, in.ULID)
			return &photoOutput{Body: p}, err
		}))
	pr := op("bib-privacy", http.MethodPost, "/events/{eventId}/bibs/{bib}/privacy",
		"A runner's privacy request: hide their bib, or delete every photo showing it", tagPrivacy, http.StatusOK)
	pr.Description = "hide: the bib's index entries are deleted and the bib is struck from its photos, which stay in the gallery. " +
		"delete: every photo showing the bib is deleted with all its index entries. Either way the request is recorded, " +
		"and photos ingested later drop the bib (suppressedBibs). Idempotent."
	huma.Register(api, pr, orgHandler(h, func(ctx context.Context, org string, in *struct {
		EventPath
		BibPath
		Body struct {
			Mode string `json:"mode" enum:"hide,delete"`
		}
	}) (*privacyOutput, error) {
		n, err := h.svc.RemoveBib(ctx, org, in.EventID, in.Bib, in.Body.Mode)
		if err != nil {
			return nil, err
		}
		out := &privacyOutput{}
		out.Body.Bib, out.Body.Mode, out.Body.Changed = in.Bib, in.Body.Mode, n
		return out, nil
	}))
}

type syncOutput struct{ Body photo.SyncReport }

type reconcileOutput struct{ Body photo.ReconcileReport }

// ReconcileQuery is the reconcile endpoints' query.
type ReconcileQuery struct {
	Repair bool `query:"repair" doc:"Rewrite the drifted copies (otherwise only report them)."`
}

func (h *handlers) registerSync(api huma.API) {
	huma.Register(api, op("sync-photographer", http.MethodPost, "/photographers/{photographerId}/sync",
		"Resume (or re-run) copying a photographer's profile onto their photos", tagSync, http.StatusOK),
		orgHandler(h, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			MaxPages int `query:"maxPages" minimum:"0" maximum:"100000" doc:"Stop after this many pages of 100 (0: to the end); the next call resumes."`
		}) (*syncOutput, error) {
			rep, err := h.svc.SyncPhotographer(ctx, org, in.PhotographerID, photo.SyncOptions{MaxPages: in.MaxPages})
			return &syncOutput{Body: rep}, err
		}))
	huma.Register(api, op("reconcile-photographer", http.MethodPost, "/photographers/{photographerId}/reconcile",
		"Compare a photographer's photos with Postgres; report and optionally repair drift", tagSync, http.StatusOK),
		orgHandler(h, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			ReconcileQuery
		}) (*reconcileOutput, error) {
			rep, err := h.svc.Reconcile(ctx, org, in.PhotographerID, in.Repair)
			return &reconcileOutput{Body: rep}, err
		}))
	huma.Register(api, op("reconcile-organization", http.MethodPost, "/reconcile",
		"Reconcile every photographer of your organization", tagSync, http.StatusOK),
		orgHandler(h, func(ctx context.Context, org string, in *ReconcileQuery) (*reconcileOutput, error) {
			rep, err := h.svc.Reconcile(ctx, org, "", in.Repair)
			return &reconcileOutput{Body: rep}, err
		}))
}
