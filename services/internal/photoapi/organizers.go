package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

type organizerBody struct {
	OrganizerID string `json:"organizerId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" example:"snaprace-kr"`
	Name        string `json:"name" minLength:"1" example:"SnapRace Korea"`
}

type organizerOutput struct{ Body photo.Organizer }

type organizersOutput struct {
	Body struct {
		Organizers []photo.Organizer `json:"organizers"`
	}
}

// registerOrganizers adds an admin's operations on organizers.
func (h *handlers) registerOrganizers(api huma.API) {
	huma.Register(api, server.Op("create-organizer", http.MethodPost, "/admin/organizers",
		"Create an organizer", tagAdmin, refusals, conflicts, server.Status(http.StatusCreated)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *struct{ Body organizerBody }) (*organizerOutput, error) {
			o, err := h.dir.CreateOrganizer(ctx, photo.Organizer{ID: in.Body.OrganizerID, Name: in.Body.Name})
			return &organizerOutput{Body: o}, err
		}))
	huma.Register(api, server.Op("list-organizers", http.MethodGet, "/admin/organizers", "List organizers", tagAdmin, refusals),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, _ *struct{}) (*organizersOutput, error) {
			os, err := h.dir.ListOrganizers(ctx)
			out := &organizersOutput{}
			out.Body.Organizers = os
			return out, err
		}))
}
