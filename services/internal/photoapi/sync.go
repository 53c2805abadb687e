package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

type syncOutput struct{ Body photo.SyncReport }

type reconcileOutput struct{ Body photo.ReconcileReport }

// ReconcileQuery is the reconcile endpoints' query.
type ReconcileQuery struct {
	Repair bool `query:"repair" doc:"Rewrite the drifted copies (otherwise only report them)."`
}

// registerSync adds an organizer's operations on the profile copied onto
// photographers' photos: resume the copy, or compare and repair it.
func (h *handlers) registerSync(api huma.API) {
	huma.Register(api, server.Op("sync-photographer", http.MethodPost, "/photographers/{photographerId}/sync",
		"Resume (or re-run) copying a photographer's profile onto their photos", tagSync, refusals, conflicts, server.Bulk()),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			MaxPages int `query:"maxPages" minimum:"0" maximum:"100000" doc:"Stop after this many pages of 100 (0: to the end); the next call resumes."`
		}) (*syncOutput, error) {
			rep, err := h.dir.SyncPhotographer(ctx, org, in.PhotographerID, photo.SyncOptions{MaxPages: in.MaxPages})
			return &syncOutput{Body: rep}, err
		}))
	huma.Register(api, server.Op("reconcile-photographer", http.MethodPost, "/photographers/{photographerId}/reconcile",
		"Compare the profile copied onto a photographer's photos with their profile; report and optionally repair drift", tagSync, refusals, server.Bulk()),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			ReconcileQuery
		}) (*reconcileOutput, error) {
			rep, err := h.dir.Reconcile(ctx, org, in.PhotographerID, in.Repair)
			return &reconcileOutput{Body: rep}, err
		}))
	huma.Register(api, server.Op("reconcile-organization", http.MethodPost, "/reconcile",
		"Reconcile every photographer of your organization", tagSync, refusals, server.Bulk()),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *ReconcileQuery) (*reconcileOutput, error) {
			rep, err := h.dir.Reconcile(ctx, org, "", in.Repair)
			return &reconcileOutput{Body: rep}, err
		}))
}
