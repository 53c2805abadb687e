package photoapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

// PointPath is the {pointId} path parameter.
type PointPath struct {
	PointID string `path:"pointId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" doc:"Timing point id." example:"10k"`
}

type timingPointBody struct {
	Name      string `json:"name" minLength:"1" maxLength:"200" example:"10 km"`
	DistanceM int    `json:"distanceM" minimum:"0" maximum:"1000000" doc:"Distance from the start, in metres." example:"10000"`
}

type timingPointOutput struct{ Body photo.TimingPoint }

type timingPointsOutput struct {
	Body struct {
		TimingPoints []photo.TimingPoint `json:"timingPoints" doc:"By distance."`
	}
}

type positionBody struct {
	PointID       string `json:"pointId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" doc:"The timing point the photographer stands at. Give this (with offsetSeconds) or distanceM." example:"10k"`
	OffsetSeconds int    `json:"offsetSeconds,omitempty" minimum:"-86400" maximum:"86400" doc:"Seconds after runners cross the timing point that they pass the camera (negative: before)." example:"20"`
	DistanceM     *int   `json:"distanceM,omitempty" minimum:"0" maximum:"1000000" doc:"The camera's distance from the start, in metres; a runner's time there is timed between their splits around it."`
}

type positionOutput struct{ Body photo.Position }

type positionsOutput struct {
	Body struct {
		Positions []photo.Position `json:"positions" doc:"By photographer."`
	}
}

type clockBody struct {
	OffsetSeconds int `json:"offsetSeconds" minimum:"-86400" maximum:"86400" doc:"True time minus the camera's time, in seconds: +30 when the camera runs 30 s slow." example:"30"`
}

type clockOutput struct {
	Body struct {
		PhotographerID string `json:"photographerId"`
		OffsetSeconds  int    `json:"offsetSeconds"`
	}
}

type splitsBody struct {
	Splits []splitBody `json:"splits,omitempty" maxItems:"50000" doc:"The split times as JSON. Give this or csv."`
	CSV    string      `json:"csv,omitempty" maxLength:"2000000" doc:"The split times as CSV: bib,pointId,time per line, the time in RFC 3339 (2024-11-09T08:41:07Z); a header line bib,pointId,time is skipped."`
}

type splitBody struct {
	Bib     string    `json:"bib" pattern:"^[A-Za-z0-9-]{1,16}$" example:"1234"`
	PointID string    `json:"pointId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" example:"10k"`
	At      time.Time `json:"at" doc:"When the bib crossed the timing point."`
}

// registerTiming adds an organizer's operations on an event's race timing:
// timing points, photographers' positions and camera clocks, and runners'
// split times, which the search by passing time reads.
func (h *handlers) registerTiming(api huma.API) {
	huma.Register(api, server.Op("put-timing-point", http.MethodPut, "/events/{eventId}/timing-points/{pointId}",
		"Create or replace a timing point of an event", tagTiming, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			PointPath
			Body timingPointBody
		}) (*timingPointOutput, error) {
			p, err := h.timing.PutTimingPoint(ctx, org, photo.TimingPoint{ID: in.PointID, EventID: in.EventID, Name: in.Body.Name, DistanceM: in.Body.DistanceM})
			return &timingPointOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("list-timing-points", http.MethodGet, "/events/{eventId}/timing-points",
		"List an event's timing points by distance", tagTiming, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*timingPointsOutput, error) {
			ps, err := h.timing.TimingPoints(ctx, org, in.EventID)
			out := &timingPointsOutput{}
			out.Body.TimingPoints = ps
			return out, err
		}))
	huma.Register(api, server.Op("set-position", http.MethodPut, "/events/{eventId}/photographers/{photographerId}/position",
		"Set where an assigned photographer stands: at a timing point, or at a distance", tagTiming, refusals,
		server.Describe(fmt.Sprintf("At most %d photographers of an event have a position: the search by passing time reads one stream per positioned photographer.", photo.MaxPositions))),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			AssignPath
			Body positionBody
		}) (*positionOutput, error) {
			p, err := h.timing.SetPosition(ctx, org, photo.Position{EventID: in.EventID, PhotographerID: in.PhotographerID,
				PointID: in.Body.PointID, OffsetSeconds: in.Body.OffsetSeconds, DistanceM: in.Body.DistanceM})
			return &positionOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("list-positions", http.MethodGet, "/events/{eventId}/positions",
		"List where an event's photographers stand", tagTiming, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*positionsOutput, error) {
			ps, err := h.timing.Positions(ctx, org, in.EventID)
			out := &positionsOutput{}
			out.Body.Positions = ps
			return out, err
		}))
	huma.Register(api, server.Op("set-camera-clock", http.MethodPut, "/photographers/{photographerId}/clock",
		"Set a photographer's camera clock offset", tagTiming, refusals,
		server.Describe("Photos keep the camera's time (createdAt); the search by passing time adds the offset, so a correction applies to photos already taken.")),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			Body clockBody
		}) (*clockOutput, error) {
			if err := h.timing.SetClock(ctx, org, in.PhotographerID, in.Body.OffsetSeconds); err != nil {
				return nil, err
			}
			out := &clockOutput{}
			out.Body.PhotographerID, out.Body.OffsetSeconds = in.PhotographerID, in.Body.OffsetSeconds
			return out, nil
		}))
	huma.Register(api, server.Op("import-splits", http.MethodPost, "/events/{eventId}/splits",
		"Import runners' split times at the event's timing points, as JSON or CSV; rows are upserted by bib and timing point", tagTiming, refusals,
		server.MaxBody(4<<20), server.Bulk(),
		server.Describe("A file with any bad row is refused whole (422 naming each bad row, by line for CSV) and writes nothing; importing the same file again writes nothing.")),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			Body splitsBody
		}) (*importOutput, error) {
			ss, lines, badTimes, err := splitsOf(in.Body)
			if err != nil {
				return nil, err
			}
			n, err := h.timing.ImportSplits(ctx, org, in.EventID, ss)
			if err != nil {
				return nil, csvProblems(unparsedTimes(err, lines, badTimes), lines)
			}
			out := &importOutput{}
			out.Body.Received, out.Body.Written = len(ss), n
			return out, nil
		}))
}

// splitsOf reads a split import body: the JSON list or the CSV text. For
// CSV it also returns each split's line, for csvProblems, and the lines
// whose time does not parse: their split keeps the zero time, which the
// domain refuses with the rest of the file's problems (so every bad line
// is named, and nothing is written), and unparsedTimes says why.
func splitsOf(b splitsBody) ([]photo.Split, []int, map[int]bool, error) {
	badTimes := map[int]bool{}
	ss, lines, err := importRows(b.Splits, b.CSV, csvImport{list: "splits", fields: 3, max: photo.MaxSplitsImport},
		func(s splitBody) photo.Split { return photo.Split{Bib: s.Bib, PointID: s.PointID, At: s.At} },
		func(rec []string, line int) (photo.Split, error) {
			at, err := time.Parse(time.RFC3339Nano, rec[2])
			if err != nil {
				badTimes[line] = true
			}
			return photo.Split{Bib: rec[0], PointID: rec[1], At: at}, nil
		})
	return ss, lines, badTimes, err
}

// splitTime is a split's time field in the domain's problems.
var splitTime = regexp.MustCompile(`^splits\[(\d+)\]\.at$`)

// unparsedTimes says of each split whose CSV time did not parse (its line
// in badTimes) that it must be RFC 3339, instead of what the domain says
// of the zero time it was given.
func unparsedTimes(err error, lines []int, badTimes map[int]bool) error {
	var ve *photo.ValidationError
	if len(badTimes) == 0 || !errors.As(err, &ve) {
		return err
	}
	for i, p := range ve.Problems {
		if m := splitTime.FindStringSubmatch(p.Field); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < len(lines) && badTimes[lines[n]] {
				ve.Problems[i].Message, ve.Problems[i].Value = "must be an RFC 3339 time, e.g. 2024-11-09T08:41:07Z", nil
			}
		}
	}
	return err
}
