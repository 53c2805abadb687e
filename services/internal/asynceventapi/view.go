package asynceventapi

import "github.com/pacerhq/pacer/modules/asyncevent"

// RequestView is a participation request as the API shows it. Times are
// epoch milliseconds; 0 means "not yet".
type RequestView struct {
	RequestID    string `json:"requestId"`
	EventID      string `json:"eventId"`
	EventType    string `json:"eventType" enum:"FIRST_COME,LOTTERY"`
	Status       string `json:"status" enum:"RECEIVED,QUEUED,PROCESSING,SUCCEEDED,REJECTED,FAILED_FINAL"`
	UIPhase      string `json:"uiPhase,omitempty" doc:"LOTTERY: COLLECTING, DRAWING or ANNOUNCED. FIRST_COME with ordering arrival: ALLOCATING (waiting for the in-order allocation), then ALLOCATED"`
	UIResult     string `json:"uiResult,omitempty" doc:"PENDING, SUCCESS, REJECTED or FAILED"`
	ResultCode   string `json:"resultCode,omitempty"`
	RequestedAt  int64  `json:"requestedAt"`
	QueuedAt     int64  `json:"queuedAt"`
	StartedAt    int64  `json:"startedAt"`
	FinishedAt   int64  `json:"finishedAt"`
	QueueDelayMs int64  `json:"queueDelayMs" doc:"startedAt − queuedAt (0 until started)"`
	E2EDelayMs   int64  `json:"e2eDelayMs" doc:"finishedAt − queuedAt (0 until finished)"`
	// Timeline lists the steps reached so far with their times.
	Timeline []Step `json:"timeline"`
	// Place is where the request stands while it is undecided (the
	// owner's poll only).
	Place           *PlaceView `json:"place,omitempty" doc:"While undecided (owner's poll): where the request stands in its event's line; see PlaceView"`
	LotteryCutoffAt int64      `json:"lotteryCutoffAt,omitempty"`
	AnnouncedAt     int64      `json:"announcedAt,omitempty" doc:"LOTTERY: when the organizer scheduled the results to be announced (set at creation)"`
	DrawnAt         int64      `json:"drawnAt,omitempty" doc:"LOTTERY: when the draw decided this entry (its finishedAt; absent before the draw). The event's drawnAt is when the whole draw ended"`
	FailureClass    string     `json:"failureClass,omitempty" enum:"RETRYABLE,NON_RETRYABLE" doc:"FAILED_FINAL only: RETRYABLE (a transient cause: the enqueue failed, FAILED_INGEST_ENQUEUE; nothing retries it by itself, an operator re-queue finishes it) or NON_RETRYABLE (it cannot succeed as it is); see docs/asyncevent.md, Failure classes"`
	ErrorCode       string     `json:"errorCode,omitempty"`
	ErrorMessage    string     `json:"errorMessage,omitempty"`

	// Admin-only fields.
	UserID           string `json:"userId,omitempty" doc:"admin views only"`
	Attempts         int    `json:"attempts,omitempty" doc:"admin views only"`
	LastErrorCode    string `json:"lastErrorCode,omitempty" doc:"admin views only"`
	LastErrorMessage string `json:"lastErrorMessage,omitempty" doc:"admin views only"`
	LastErrorAt      int64  `json:"lastErrorAt,omitempty" doc:"admin views only"`
	LotteryTicket    string `json:"lotteryTicket,omitempty" doc:"admin views only: hex SHA-256(seed || requestId)"`
	LotteryRank      int    `json:"lotteryRank,omitempty" doc:"admin views only"`
}

// PlaceView is where an undecided request stands (asyncevent.Place):
// for an arrival-ordered FIRST_COME event its approximate place in line,
// the seats left and when its decision is expected; for a delivery-
// ordered one the seats left; for a lottery the entries so far and the
// odds. The line is measured about once a second (docs/asyncevent.md,
// Place in line), so a place is an estimate as of asOf, within ±aheadError.
type PlaceView struct {
	Kind string `json:"kind" enum:"arrival,delivery,lottery" doc:"arrival: a place among the undecided requests in (queuedAt, requestId) order; delivery: the seats left only (the queue's delivery order decides); lottery: entries and odds"`
	// Ahead is absent while the request is not yet measured.
	Ahead       *int64  `json:"ahead,omitempty" doc:"arrival: about how many undecided requests are ahead of this one, as of asOf (absent while measuring)"`
	AheadError  int64   `json:"aheadError,omitempty" doc:"arrival: the true number ahead, as of asOf, is within ± this of ahead"`
	Measuring   bool    `json:"measuring,omitempty" doc:"arrival: queued after the line's last measurement, which does not place it yet (about a second)"`
	Settling    bool    `json:"settling,omitempty" doc:"arrival: queued within MaxLateness before the measurement: requests ahead still being written may be missing from ahead (it can only be too small), until a measurement MaxLateness later"`
	SeatsLeft   *int64  `json:"seatsLeft,omitempty" doc:"FIRST_COME: seats not yet taken; arrival: as of asOf, the same moment as ahead (delivery: as of the answer)"`
	WithinSeats *bool   `json:"withinSeats,omitempty" doc:"arrival: false only when even ahead − aheadError requests ahead take every seat left (both as of asOf): the request will not get a seat (barring failures ahead of it), and a request that wins is never told false; true: it may get one"`
	OrderedAt   int64   `json:"orderedAt,omitempty" doc:"arrival: when (epoch ms) the line before this request is complete (queuedAt + MaxLateness); until then the line is being ordered and no decision comes"`
	ExpectedAt  int64   `json:"expectedAt,omitempty" doc:"arrival: when (epoch ms) its decision is expected at the measured decision rate (absent until a rate is measured)"`
	Rate        float64 `json:"decisionRate,omitempty" doc:"arrival: the event's decisions per second, as measured"`
	Entries     *int64  `json:"entries,omitempty" doc:"lottery: entries so far"`
	Winners     int     `json:"winners,omitempty" doc:"lottery: the winners the draw picks"`
	Odds        float64 `json:"odds,omitempty" doc:"lottery: winners / entries, at most 1"`
	AsOf        int64   `json:"asOf,omitempty" doc:"when (epoch ms) the line was measured"`
}

func placeViewOf(p *asyncevent.Place) *PlaceView {
	v := &PlaceView{Kind: p.Kind, AsOf: p.AsOf}
	switch p.Kind {
	case "arrival":
		v.SeatsLeft, v.OrderedAt, v.Measuring = &p.SeatsLeft, p.OrderedAt, p.Measuring
		if !p.Measuring {
			within := p.WithinSeats()
			v.Ahead, v.AheadError, v.WithinSeats, v.ExpectedAt, v.Rate = &p.Ahead, p.AheadError, &within, p.ExpectedAt, p.Rate
			v.Settling = p.Settling
		}
	case "delivery":
		v.SeatsLeft = &p.SeatsLeft
	case "lottery":
		v.Entries, v.Winners, v.Odds = &p.Entries, p.Winners, p.Odds
	}
	return v
}

// Step is one point of a request's timeline.
type Step struct {
	Status string `json:"status"`
	At     int64  `json:"at"`
}

func viewOf(r *asyncevent.Request, admin bool) RequestView {
	v := RequestView{
		RequestID: r.RequestID, EventID: r.EventID, EventType: string(r.EventType), Status: string(r.Status),
		UIPhase: string(r.UIPhase), UIResult: string(r.UIResult), ResultCode: string(r.ResultCode),
		RequestedAt: r.RequestedAt, QueuedAt: r.QueuedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		QueueDelayMs: r.QueueDelay(), E2EDelayMs: r.E2EDelay(),
		LotteryCutoffAt: r.LotteryCutoffAt, AnnouncedAt: r.AnnouncedAt,
		FailureClass: string(r.FailureClass), ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage,
	}
	if r.ResultCode == asyncevent.CodeLotteryWin || r.ResultCode == asyncevent.CodeRejectedLotteryLose {
		v.DrawnAt = r.FinishedAt
	}
	v.Timeline = []Step{{"RECEIVED", r.RequestedAt}}
	if r.QueuedAt != 0 {
		v.Timeline = append(v.Timeline, Step{"QUEUED", r.QueuedAt})
	}
	if r.StartedAt != 0 {
		v.Timeline = append(v.Timeline, Step{"PROCESSING", r.StartedAt})
	}
	if r.Status.Terminal() {
		v.Timeline = append(v.Timeline, Step{string(r.Status), r.FinishedAt})
	}
	if admin {
		v.UserID, v.Attempts, v.LastErrorCode, v.LastErrorMessage, v.LastErrorAt = r.UserID, r.Attempts, r.LastErrorCode, r.LastErrorMessage, r.LastErrorAt
		v.LotteryTicket, v.LotteryRank = r.LotteryTicket, r.LotteryRank
	}
	return v
}

func viewsOf(rs []*asyncevent.Request, admin bool) []RequestView {
	out := make([]RequestView, len(rs))
	for i, r := range rs {
		out[i] = viewOf(r, admin)
	}
	return out
}

// EventView is an event's configuration.
type EventView struct {
	EventID         string `json:"eventId"`
	EventType       string `json:"eventType" enum:"FIRST_COME,LOTTERY"`
	Status          string `json:"status" enum:"OPEN,CLOSED,DRAWING,ANNOUNCED"`
	Title           string `json:"title,omitempty"`
	CapacityTotal   int64  `json:"capacityTotal,omitempty" doc:"FIRST_COME: the number of seats N"`
	OpensAt         int64  `json:"opensAt,omitempty"`
	ClosesAt        int64  `json:"closesAt,omitempty"`
	Ordering        string `json:"ordering,omitempty" doc:"FIRST_COME: arrival or delivery (see create-event)"`
	IndexShards     int    `json:"indexShards,omitempty" doc:"FIRST_COME: partitions of the event index, when more than the default 1 (see create-event)"`
	LotteryCutoffAt int64  `json:"lotteryCutoffAt,omitempty"`
	Winners         int    `json:"winners,omitempty"`
	AnnouncedAt     int64  `json:"announcedAt,omitempty"`
	SeedCommitment  string `json:"seedCommitment,omitempty" doc:"hex SHA-256 of the draw seed, fixed at creation"`
	Seed            string `json:"seed,omitempty" doc:"the draw seed (hex), shown once the draw has started"`
	DrawStartedAt   int64  `json:"drawStartedAt,omitempty"`
	DrawnAt         int64  `json:"drawnAt,omitempty"`
	DrawEntries     int    `json:"drawEntries,omitempty"`
	DrawWinners     int    `json:"drawWinners,omitempty"`
	// HumanCheck is absent when the event requires none.
	HumanCheck *HumanCheckBody `json:"humanCheck,omitempty" doc:"Present when participations must carry humanToken (see create-event)"`
	// Limits are absent when the event has none of its own.
	Limits    *EventLimitsBody `json:"limits,omitempty" doc:"The event's own rate limits, when it has any (see create-event)"`
	CreatedAt int64            `json:"createdAt"`
}

func eventViewOf(c *asyncevent.EventConfig) EventView {
	closesAt := c.ClosesAt
	if c.EventType == asyncevent.FirstCome {
		closesAt = c.EndsAt() // an event stored without closesAt still ends
	}
	return EventView{
		EventID: c.EventID, EventType: string(c.EventType), Status: string(c.Status), Title: c.Title,
		CapacityTotal: c.CapacityTotal, OpensAt: c.OpensAt, ClosesAt: closesAt, Ordering: string(c.Ordering), IndexShards: c.IndexShards,
		LotteryCutoffAt: c.LotteryCutoffAt, Winners: c.Winners, AnnouncedAt: c.AnnouncedAt,
		SeedCommitment: c.SeedCommitment, Seed: c.RevealedSeed(),
		DrawStartedAt: c.DrawStartedAt, DrawnAt: c.DrawnAt, DrawEntries: c.DrawEntries, DrawWinners: c.DrawWinners,
		HumanCheck: humanCheckView(c.HumanCheck), Limits: limitsView(c), CreatedAt: c.CreatedAt,
	}
}

// limitsView is an event's own limits as the answer shows them: nil when
// it has none.
func limitsView(c *asyncevent.EventConfig) *EventLimitsBody {
	if c.AddressLimit == "" {
		return nil
	}
	return &EventLimitsBody{ParticipationsPerAddress: string(c.AddressLimit)}
}

// humanCheckView is an event's human check as the answer shows it: nil
// when it requires none.
func humanCheckView(p asyncevent.HumanPolicy) *HumanCheckBody {
	if p == "" {
		return nil
	}
	return &HumanCheckBody{Required: true, OnUnavailable: string(p)}
}
