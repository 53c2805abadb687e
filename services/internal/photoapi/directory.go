package photoapi

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

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

func (h *handlers) registerAdmin(api huma.API) {
	huma.Register(api, conflicting(op("create-organizer", http.MethodPost, "/admin/organizers", "Create an organizer", tagAdmin, http.StatusCreated)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *struct{ Body organizerBody }) (*organizerOutput, error) {
			o, err := h.svc.CreateOrganizer(ctx, photo.Organizer{ID: in.Body.OrganizerID, Name: in.Body.Name})
			return &organizerOutput{Body: o}, err
		}))
	huma.Register(api, op("list-organizers", http.MethodGet, "/admin/organizers", "List organizers", tagAdmin, http.StatusOK),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, _ *struct{}) (*organizersOutput, error) {
			os, err := h.svc.ListOrganizers(ctx)
			out := &organizersOutput{}
			out.Body.Organizers = os
			return out, err
		}))
}

type eventBody struct {
	EventID   string `json:"eventId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" example:"seoul-marathon-2024"`
	Name      string `json:"name" minLength:"1" example:"Seoul Marathon 2024"`
	StartsOn  string `json:"startsOn,omitempty" format:"date" example:"2024-11-09"`
	Published bool   `json:"published,omitempty" doc:"Open the event to public runner search."`
}

type eventPatchBody struct {
	Name      *string `json:"name,omitempty" minLength:"1"`
	Published *bool   `json:"published,omitempty"`
}

type eventOutput struct{ Body photo.Event }

type eventsOutput struct {
	Body struct {
		Events []photo.Event `json:"events"`
	}
}

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

type runnersBody struct {
	Runners []runnerBody `json:"runners,omitempty" maxItems:"20000" doc:"The entry list as JSON. Give this or csv."`
	CSV     string       `json:"csv,omitempty" maxLength:"2000000" doc:"The entry list as CSV: bib,name per line; a header line bib,name is skipped."`
}

type runnerBody struct {
	Bib  string `json:"bib" pattern:"^[A-Za-z0-9-]{1,16}$" example:"1234"`
	Name string `json:"name" minLength:"1" example:"Kim Minsu"`
}

type importOutput struct {
	Body struct {
		Received int `json:"received"`
		Written  int `json:"written" doc:"Rows inserted or changed; unchanged rows are not rewritten."`
	}
}

type runnersOutput struct {
	Body struct {
		Runners   []photo.Runner `json:"runners"`
		NextAfter string         `json:"nextAfter,omitempty" doc:"Pass as after for the next page; absent on the last page."`
	}
}

func (h *handlers) registerDirectory(api huma.API) {
	huma.Register(api, conflicting(op("create-event", http.MethodPost, "/events", "Create an event of your organization", tagDirectory, http.StatusCreated)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct{ Body eventBody }) (*eventOutput, error) {
			e, err := h.svc.CreateEvent(ctx, org, photo.Event{ID: in.Body.EventID, Name: in.Body.Name, StartsOn: in.Body.StartsOn, Published: in.Body.Published})
			return &eventOutput{Body: e}, err
		}))
	huma.Register(api, op("list-events", http.MethodGet, "/events", "List your organization's events", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, _ *struct{}) (*eventsOutput, error) {
			es, err := h.svc.ListEvents(ctx, org)
			out := &eventsOutput{}
			out.Body.Events = es
			return out, err
		}))
	huma.Register(api, op("get-event", http.MethodGet, "/events/{eventId}", "Get an event", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*eventOutput, error) {
			e, err := h.svc.Event(ctx, org, in.EventID)
			return &eventOutput{Body: e}, err
		}))
	huma.Register(api, op("update-event", http.MethodPatch, "/events/{eventId}", "Rename or (un)publish an event", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			Body eventPatchBody
		}) (*eventOutput, error) {
			e, err := h.svc.UpdateEvent(ctx, org, in.EventID, photo.EventPatch{Name: in.Body.Name, Published: in.Body.Published})
			return &eventOutput{Body: e}, err
		}))

	huma.Register(api, conflicting(op("create-photographer", http.MethodPost, "/photographers", "Create a photographer of your organization", tagDirectory, http.StatusCreated)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct{ Body photographerBody }) (*photographerOutput, error) {
			p, err := h.svc.CreatePhotographer(ctx, org, photo.Photographer{ID: in.Body.PhotographerID, Handle: in.Body.Handle, DisplayName: in.Body.DisplayName})
			return &photographerOutput{Body: p}, err
		}))
	huma.Register(api, op("list-photographers", http.MethodGet, "/photographers", "List your organization's photographers", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, _ *struct{}) (*photographersOutput, error) {
			ps, err := h.svc.ListPhotographers(ctx, org)
			return photographersOut(ps), err
		}))
	huma.Register(api, op("get-photographer", http.MethodGet, "/photographers/{photographerId}", "Get a photographer", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *PhotographerPath) (*photographerOutput, error) {
			p, err := h.svc.Photographer(ctx, org, in.PhotographerID)
			return &photographerOutput{Body: p}, err
		}))
	huma.Register(api, op("update-photographer", http.MethodPatch, "/photographers/{photographerId}",
		"Change a photographer's handle or display name (and copy it onto their photos)", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			Body photographerPatchBody
		}) (*photographerUpdateOutput, error) {
			p, rep, err := h.svc.UpdatePhotographer(ctx, org, in.PhotographerID,
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

	huma.Register(api, op("assign-photographer", http.MethodPut, "/events/{eventId}/photographers/{photographerId}",
		"Assign a photographer to an event", tagDirectory, http.StatusNoContent),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *AssignPath) (*emptyOutput, error) {
			return &emptyOutput{}, h.svc.Assign(ctx, org, in.EventID, in.PhotographerID)
		}))
	huma.Register(api, op("unassign-photographer", http.MethodDelete, "/events/{eventId}/photographers/{photographerId}",
		"Remove a photographer from an event (their photos stay)", tagDirectory, http.StatusNoContent),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *AssignPath) (*emptyOutput, error) {
			return &emptyOutput{}, h.svc.Unassign(ctx, org, in.EventID, in.PhotographerID)
		}))
	huma.Register(api, op("list-event-photographers", http.MethodGet, "/events/{eventId}/photographers",
		"List the photographers assigned to an event", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*photographersOutput, error) {
			ps, err := h.svc.Assigned(ctx, org, in.EventID)
			return photographersOut(ps), err
		}))

	imp := op("import-runners", http.MethodPost, "/events/{eventId}/runners",
		"Import an event's entry list (bib → runner), as JSON or CSV; rows are upserted by bib", tagDirectory, http.StatusOK)
	imp.MaxBodyBytes = 4 << 20
	huma.Register(api, imp, server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
		EventPath
		Body runnersBody
	}) (*importOutput, error) {
		rs, lines, err := runnersOf(in.Body)
		if err != nil {
			return nil, err
		}
		n, err := h.svc.ImportRunners(ctx, org, in.EventID, rs)
		if err != nil {
			return nil, csvProblems(err, lines)
		}
		out := &importOutput{}
		out.Body.Received, out.Body.Written = len(rs), n
		return out, nil
	}))
	huma.Register(api, op("list-runners", http.MethodGet, "/events/{eventId}/runners", "List an event's runners by bib", tagDirectory, http.StatusOK),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			After string `query:"after" pattern:"^[A-Za-z0-9-]{0,16}$" maxLength:"16" doc:"List bibs after this one (a bib)."`
			Limit int    `query:"limit" minimum:"1" maximum:"1000" default:"100"`
		}) (*runnersOutput, error) {
			page, err := h.svc.ListRunners(ctx, org, in.EventID, in.After, in.Limit)
			if err != nil {
				return nil, err
			}
			out := &runnersOutput{}
			out.Body.Runners, out.Body.NextAfter = page.Runners, page.NextAfter
			return out, nil
		}))
}

// photographersOut is a list of photographers as a response.
func photographersOut(ps []photo.Photographer) *photographersOutput {
	out := &photographersOutput{}
	out.Body.Photographers = ps
	return out
}

// runnersOf reads an import body: the JSON list or the CSV text. For CSV
// it also returns each runner's line, for csvProblems.
func runnersOf(b runnersBody) ([]photo.Runner, []int, error) {
	switch {
	case len(b.Runners) > 0 && b.CSV != "":
		return nil, nil, photo.Invalid("csv", "give either runners or csv, not both", nil)
	case b.CSV == "":
		if len(b.Runners) == 0 {
			return nil, nil, photo.Invalid("runners", "is empty", nil)
		}
		rs := make([]photo.Runner, len(b.Runners))
		for i, r := range b.Runners {
			rs[i] = photo.Runner{Bib: r.Bib, Name: r.Name}
		}
		return rs, nil, nil
	}
	// Spreadsheets save UTF-8 CSV with a byte order mark.
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(b.CSV, "\ufeff")))
	cr.FieldsPerRecord = 2
	cr.TrimLeadingSpace = true
	var rs []photo.Runner
	var lines []int
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, nil, photo.Invalid("csv", fmt.Sprintf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err), nil)
		}
		if err != nil {
			return nil, nil, photo.Invalid("csv", err.Error(), nil)
		}
		if first && strings.EqualFold(strings.TrimSpace(rec[0]), "bib") {
			continue
		}
		line, _ := cr.FieldPos(0)
		rs = append(rs, photo.Runner{Bib: strings.TrimSpace(rec[0]), Name: strings.TrimSpace(rec[1])})
		lines = append(lines, line)
		if len(rs) > photo.MaxRunnersImport {
			return nil, nil, photo.Invalid("csv", fmt.Sprintf("holds more than %d runners", photo.MaxRunnersImport), nil)
		}
	}
	if len(rs) == 0 {
		return nil, nil, photo.Invalid("csv", "holds no runners", nil)
	}
	return rs, lines, nil
}

// runnerField matches the domain's field names for an imported runner.
var runnerField = regexp.MustCompile(`^runners\[(\d+)\]\.(\w+)$`)

// csvProblems rewrites the domain's problems with imported runners
// ("runners[3].bib") to name where they are in a CSV import ("csv", "line
// 5: bib ..."), since the request had no runners list. Other errors, and
// JSON imports (lines is nil), pass unchanged.
func csvProblems(err error, lines []int) error {
	var ve *photo.ValidationError
	if lines == nil || !errors.As(err, &ve) {
		return err
	}
	out := &photo.ValidationError{Problems: make([]photo.Problem, len(ve.Problems))}
	for i, p := range ve.Problems {
		if m := runnerField.FindStringSubmatch(p.Field); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < len(lines) {
				msg := p.Message
				if j := strings.Index(msg, "runners["); j >= 0 { // "repeats runners[0].bib"
					if k := runnerField.FindStringSubmatch(strings.TrimSuffix(msg[j:], ".")); k != nil {
						if o, _ := strconv.Atoi(k[1]); o < len(lines) {
							msg = msg[:j] + fmt.Sprintf("the bib of line %d", lines[o])
						}
					}
				}
				p = photo.Problem{Field: "csv", Message: fmt.Sprintf("line %d: %s %s", lines[n], m[2], msg), Value: p.Value}
			}
		}
		out.Problems[i] = p
	}
	return out
}

// AssignPath is the path of an assignment.
type AssignPath struct {
	EventPath
	PhotographerPath
}
