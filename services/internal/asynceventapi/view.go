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
	Timeline        []Step `json:"timeline"`
	LotteryCutoffAt int64  `json:"lotteryCutoffAt,omitempty"`
	AnnouncedAt     int64  `json:"announcedAt,omitempty" doc:"LOTTERY: when the organizer scheduled the results to be announced (set at creation)"`
	DrawnAt         int64  `json:"drawnAt,omitempty" doc:"LOTTERY: when the draw decided this entry (its finishedAt; absent before the draw). The event's drawnAt is when the whole draw ended"`
	FailureClass    string `json:"failureClass,omitempty" enum:"REQUEUEABLE,NON_RETRYABLE" doc:"FAILED_FINAL only: REQUEUEABLE (an operator re-queue finishes it) or NON_RETRYABLE (it cannot succeed as it is); see docs/asyncevent.md, Failure classes"`
	ErrorCode       string `json:"errorCode,omitempty"`
	ErrorMessage    string `json:"errorMessage,omitempty"`

	// Admin-only fields.
	UserID           string `json:"userId,omitempty" doc:"admin views only"`
	Attempts         int    `json:"attempts,omitempty" doc:"admin views only"`
	LastErrorCode    string `json:"lastErrorCode,omitempty" doc:"admin views only"`
	LastErrorMessage string `json:"lastErrorMessage,omitempty" doc:"admin views only"`
	LastErrorAt      int64  `json:"lastErrorAt,omitempty" doc:"admin views only"`
	LotteryTicket    string `json:"lotteryTicket,omitempty" doc:"admin views only: hex SHA-256(seed || requestId)"`
	LotteryRank      int    `json:"lotteryRank,omitempty" doc:"admin views only"`
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
	if r.FailureClass == asyncevent.Retryable && r.ResultCode == asyncevent.CodeFailedIngestEnqueue {
		v.FailureClass = string(asyncevent.Requeueable) // stored before the classes were defined
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
	Capacity        int64  `json:"capacity,omitempty"`
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
	CreatedAt       int64  `json:"createdAt"`
}

func eventViewOf(c *asyncevent.EventConfig) EventView {
	closesAt := c.ClosesAt
	if c.EventType == asyncevent.FirstCome {
		closesAt = c.EndsAt() // an event stored without closesAt still ends
	}
	return EventView{
		EventID: c.EventID, EventType: string(c.EventType), Status: string(c.Status), Title: c.Title,
		Capacity: c.CapacityTotal, OpensAt: c.OpensAt, ClosesAt: closesAt, Ordering: string(c.Ordering), IndexShards: c.IndexShards,
		LotteryCutoffAt: c.LotteryCutoffAt, Winners: c.Winners, AnnouncedAt: c.AnnouncedAt,
		SeedCommitment: c.SeedCommitment, Seed: c.RevealedSeed(),
		DrawStartedAt: c.DrawStartedAt, DrawnAt: c.DrawnAt, DrawEntries: c.DrawEntries, DrawWinners: c.DrawWinners,
		CreatedAt: c.CreatedAt,
	}
}
