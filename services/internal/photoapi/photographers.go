package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

type photographerBody struct {
	PhotographerID string `json:"photographerId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" example:"ph_01ABCXYZ"`
	Handle         string `json:"handle" minLength:"1" example:"studio_aaa"`
	DisplayName    string `json:"displayName" minLength:"1" example:"Studio AAA"`
}

type photographerPatchBody struct {
	Handle      *string `json:"handle,omitempty" minLength:"1"`
	DisplayName *string `json:"displayName,omitempty" minLength:"1"`
}

type photographerOutput struct{ Body photo.Photographer }

type photographerUpdateOutput struct {
	Body struct {
		Photographer photo.Photographer `json:"photographer"`
		Sync         photo.SyncReport   `json:"sync" doc:"The copy of the new profile onto the photographer's photos. If done is false, POST .../sync resumes it."`
	}
}

type photographersOutput struct {
	Body struct {
		Photographers []photo.Photographer `json:"photographers"`
	}
}

// registerPhotographers adds an organizer's operations on their
// photographers. A change of profile is copied onto the photographer's
// photos (sync.go resumes or checks the copy).
func (h *handlers) registerPhotographers(api huma.API) {
	huma.Register(api, server.Op("create-photographer", http.MethodPost, "/photographers",
		"Create a photographer of your organization", tagDirectory, refusals, conflicts, server.Status(http.StatusCreated)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct{ Body photographerBody }) (*photographerOutput, error) {
			p, err := h.dir.CreatePhotographer(ctx, org, photo.Photographer{ID: in.Body.PhotographerID, Handle: in.Body.Handle, DisplayName: in.Body.DisplayName})
			return &photographerOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("list-photographers", http.MethodGet, "/photographers",
		"List your organization's photographers", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, _ *struct{}) (*photographersOutput, error) {
			ps, err := h.dir.ListPhotographers(ctx, org)
			return photographersOut(ps), err
		}))
	huma.Register(api, server.Op("get-photographer", http.MethodGet, "/photographers/{photographerId}", "Get a photographer", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *PhotographerPath) (*photographerOutput, error) {
			p, err := h.dir.Photographer(ctx, org, in.PhotographerID)
			return &photographerOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("update-photographer", http.MethodPatch, "/photographers/{photographerId}",
		"Change a photographer's handle or display name (and copy it onto their photos)", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			Body photographerPatchBody
		}) (*photographerUpdateOutput, error) {
			p, rep, err := h.dir.UpdatePhotographer(ctx, org, in.PhotographerID,
				photo.PhotographerPatch{Handle: in.Body.Handle, DisplayName: in.Body.DisplayName}, photo.SyncOptions{})
			if err != nil && p.ID == "" {
				return nil, err
			}
			if err != nil {
				h.log.Warn("photo-api: photographer sync incomplete; resume with POST /photographers/{id}/sync", "photographer", p.ID, "err", err)
			}
			out := &photographerUpdateOutput{}
			out.Body.Photographer, out.Body.Sync = p, rep
			return out, nil
		}))
}

// photographersOut is a list of photographers as a response.
func photographersOut(ps []photo.Photographer) *photographersOutput {
	out := &photographersOutput{}
	out.Body.Photographers = ps
	return out
}
