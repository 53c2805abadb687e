package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// bodyDeadline clears the connection's read deadline once the request body
// has been read to its end. Huma sets a read deadline for reading a body
// (Operation.BodyReadTimeout, 5 s by default) and leaves it in place; once
// the body is read, net/http's background read of the connection then times
// out at that deadline and cancels the request's context (golang/go#70834),
// so any handler that outlived 5 s failed with "context canceled" (seen as
// 503s under load). The whole-request limits stay with the server's
// ReadTimeout and WriteTimeout.
//
// It also notes a read that failed because of the client (broken: the
// body ended before its Content-Length, or its chunks were malformed),
// which Huma answers as a 500; guard's problemWriter makes that a 400.
type bodyDeadline struct {
	io.ReadCloser
	rc     *http.ResponseController
	done   bool
	broken error
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		var ne net.Error
		switch {
		case errors.Is(err, io.EOF):
			_ = b.rc.SetReadDeadline(time.Time{}) // best effort: not every writer supports it
		case errors.As(err, &ne) && ne.Timeout(): // Huma answers 408
		case errors.Is(err, http.ErrBodyReadAfterClose): // the server's own doing
		default:
			b.broken = err
		}
	}
	return n, err
}
