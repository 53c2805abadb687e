package server

// The bounds of PageQuery, the page of every list of both APIs that is not
// a named exception (struct tags cannot name constants; a test checks they
// agree):
//
//   - a page holds 1 to MaxPageLimit items, DefaultPageLimit when the
//     query names none. MaxPageLimit is DynamoDB's BatchGetItem bound
//     (ddb.MaxBatchGet): a page that reads its items by key reads them in
//     one batch. It is also the smallest page limit of the domains
//     (asyncevent.MaxLimit), which their tests check the API never exceeds;
//   - a cursor holds at most MaxCursorLen characters, the longest cursor
//     the SDK opens for one Query (sdk/ddb). A list whose cursor holds a
//     position per merged stream needs a longer one (a named exception).
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
	MaxCursorLen     = 4096
)

// PageQuery is the limit and cursor of a paginated list (embed it in a
// route's input). A route that needs other bounds declares its own query
// as a named, documented exception.
type PageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size, 1..100"`
	Cursor string `query:"cursor" maxLength:"4096" doc:"Opaque cursor from the previous page"`
}
