package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

type dlqInput struct {
	Max int `query:"max" minimum:"0" maximum:"50" default:"10" doc:"How many DLQ messages to show (one per request: copies collapsed, the tagged copy shown)"`
}

// DeadMessageView is a message in the DLQ.
type DeadMessageView struct {
	MessageID    string `json:"messageId"`
	ReceiveCount int    `json:"receiveCount"`
	SentAt       int64  `json:"sentAt"`
	Class        string `json:"class" doc:"Why it is here: the class the worker tagged it with (its deadClass message attribute: THROTTLED, TIMEOUT, CONFLICT, DEPENDENCY or ALLOCATING), or UNKNOWN when SQS moved it untagged (the worker died or timed out on its last receive)"`
	ErrorCode    string `json:"errorCode,omitempty" doc:"The last attempt's error code, e.g. ThrottlingException (tagged messages only)"`
	RequestID    string `json:"requestId,omitempty"`
	EventID      string `json:"eventId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	Raw          string `json:"raw,omitempty" doc:"the body, when it is not a valid participation message"`
}

type dlqOutput struct {
	Body struct {
		MainDepth int               `json:"mainDepth" doc:"Messages waiting in the main queue, visible or delayed (the queue's approximate count)"`
		DeadDepth int               `json:"deadDepth" doc:"Messages waiting in the DLQ, visible or delayed (the queue's approximate count)"`
		ByClass   map[string]int    `json:"byClass" doc:"DLQ messages by class, one per request (copies collapsed), over the scanned messages: exact when complete, else a lower bound"`
		Scanned   int               `json:"scanned" doc:"DLQ messages looked at (up to 1000)"`
		Copies    int               `json:"copies" doc:"Scanned messages that were extra copies of a message (a worker's tagged send whose main-queue delete failed, then moved by SQS as well); a class redrive deletes them"`
		Complete  bool              `json:"complete" doc:"The scan saw the whole DLQ"`
		Messages  []DeadMessageView `json:"messages"`
	}
}

type redriveInput struct {
	Class string `query:"class" enum:"THROTTLED,TIMEOUT,CONFLICT,DEPENDENCY,ALLOCATING,UNKNOWN" doc:"Redrive only this class (see GET /admin/dlq byClass); without it every DLQ message moves"`
}

type redriveOutput struct {
	Body struct {
		TaskHandle string `json:"taskHandle,omitempty" doc:"Without class: names the move, which runs asynchronously"`
		Class      string `json:"class,omitempty" doc:"With class: the class redriven"`
		Moved      *int   `json:"moved,omitempty" doc:"With class: messages sent back to the main queue"`
		Dropped    *int   `json:"dropped,omitempty" doc:"With class: extra copies deleted instead of moved"`
		More       *bool  `json:"more,omitempty" doc:"With class: the DLQ had more than were looked at; call again"`
	}
}

// registerDLQ adds an admin's operations on the dead-letter queue: look at
// it, and move its messages back to the main queue.
func (h *handlers) registerDLQ(api huma.API) {
	huma.Register(api, server.Op("dlq", http.MethodGet, "/admin/dlq", "Queue depths and DLQ messages", tagAdmin, server.Bulk(),
		server.Describe("Shows up to max DLQ messages without consuming them."), server.Fails(http.StatusForbidden)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *dlqInput) (*dlqOutput, error) {
			v, err := h.admin.DeadLetters(ctx, in.Max)
			if err != nil {
				return nil, err
			}
			return dlqOut(v), nil
		}))

	huma.Register(api, server.Op("dlq-redrive", http.MethodPost, "/admin/dlq/redrive", "Move DLQ messages back to the queue", tagAdmin, server.Bulk(),
		server.Describe("Without class: starts moving every DLQ message back to the main queue (SQS StartMessageMoveTask); one move runs at a time: while one runs, the answer is 409. "+
			"With class: moves that class's messages (up to 1000 looked at; more: call again) before answering, one per request (extra copies are deleted). "+
			"Workers then process them again (idempotently)."),
		server.Status(http.StatusAccepted), server.Fails(http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *redriveInput) (*redriveOutput, error) {
			out := &redriveOutput{}
			if in.Class != "" {
				res, err := h.admin.RedriveClass(ctx, asyncevent.DeadClass(in.Class))
				out.Body.Class, out.Body.Moved, out.Body.Dropped, out.Body.More = in.Class, &res.Moved, &res.Dropped, &res.More
				return out, err
			}
			handle, err := h.admin.Redrive(ctx)
			out.Body.TaskHandle = handle
			return out, err
		}))
}

// dlqOut is the queues' state as the answer shows it.
func dlqOut(v *asyncevent.DLQView) *dlqOutput {
	out := &dlqOutput{}
	out.Body.MainDepth, out.Body.DeadDepth, out.Body.Messages = v.MainDepth, v.DeadDepth, []DeadMessageView{}
	out.Body.Scanned, out.Body.Copies, out.Body.Complete, out.Body.ByClass = v.Scanned, v.Copies, v.Complete, map[string]int{}
	for c, n := range v.ByClass {
		out.Body.ByClass[string(c)] = n
	}
	for _, m := range v.Messages {
		dm := DeadMessageView{MessageID: m.MessageID, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, Raw: m.Raw, Class: string(m.Class), ErrorCode: m.ErrorCode}
		if m.Message != nil {
			dm.RequestID, dm.EventID, dm.UserID = m.Message.RequestID, m.Message.EventID, m.Message.UserID
		}
		out.Body.Messages = append(out.Body.Messages, dm)
	}
	return out
}
