// Package awsfixture answers DynamoDB and SQS calls at once with valid,
// protocol-correct responses (DynamoDB's JSON 1.0 and SQS's JSON
// protocol), so that a benchmark measures what the caller spends: the real
// aws-sdk-go-v2 clients still build, sign, send, retry and decode every
// call. It is for benchmarks only, never for tests of behaviour: it keeps
// no data, and answers what it is told to (Handle) or an empty success.
// Tests of behaviour run against the real stand-ins (DESIGN §2).
package awsfixture

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/pacerhq/pacer/sdk/awsclient"
)

// Reply answers one call: it gets the request's JSON body and returns the
// response, marshalled to JSON (a json.RawMessage or []byte is sent as
// is), or an *Error, or nil for the default answer (an empty success,
// with what the SDK checks: see defaultReply).
type Reply func(body []byte) any

// Error is an AWS error answer: the HTTP status (400 if zero) and the
// error's shape name ("ConditionalCheckFailedException").
type Error struct {
	Status  int
	Code    string
	Message string
}

// Server is an in-process HTTP server speaking DynamoDB and SQS.
type Server struct {
	srv *httptest.Server

	mu      sync.Mutex
	replies map[string]Reply
	calls   map[string]int
	retries int
	// recent are the latest answers, replayed to an SDK retry of the
	// same call (see serve).
	recent [64]answer
	next   int
}

// answer is one call's answer, by the call's key (its operation and
// body's checksum and length).
type answer struct {
	key    string
	status int
	ctype  string
	body   []byte // not written to after: a Reply's RawMessage is shared
}

// New starts a Server; Close stops it.
func New() *Server {
	s := &Server{replies: map[string]Reply{}, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the endpoint both services answer on.
func (s *Server) URL() string { return s.srv.URL }

// Handle sets the reply to op, named "<Service>.<Operation>"
// ("DynamoDB.GetItem", "SQS.SendMessage").
func (s *Server) Handle(op string, r Reply) {
	s.mu.Lock()
	s.replies[op] = r
	s.mu.Unlock()
}

// Calls returns how many calls of op ("DynamoDB.GetItem") arrived since
// New or Reset.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// Total returns how many calls of any operation arrived.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// Reset forgets the call and retry counts.
func (s *Server) Reset() {
	s.mu.Lock()
	clear(s.calls)
	s.retries = 0
	s.mu.Unlock()
}

// Config returns an aws.Config for the server: static credentials,
// us-east-1, awsclient's HTTP client and the server as base endpoint. Use
// it with awsclient.DynamoDB and awsclient.SQS.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("bench", "bench", ""),
		HTTPClient:   awsclient.HTTPClient(),
		BaseEndpoint: aws.String(s.URL()),
	}
}

// serve answers one call: the X-Amz-Target header names it
// ("DynamoDB_20120810.GetItem", "AmazonSQS.SendMessage").
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	target, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var name, ctype string
	switch target {
	case "DynamoDB_20120810":
		name, ctype = "DynamoDB."+op, "application/x-amz-json-1.0"
	case "AmazonSQS":
		name, ctype = "SQS."+op, "application/x-amz-json-1.0"
	default:
		http.Error(w, fmt.Sprintf("awsfixture: unknown target %q", r.Header.Get("X-Amz-Target")), http.StatusBadRequest)
		return
	}
	key := fmt.Sprintf("%s %08x %d", name, crc32.ChecksumIEEE(body), len(body))
	if a, ok := s.retried(r.Header.Get("Amz-Sdk-Request"), key); ok {
		write(w, a)
		return
	}
	s.mu.Lock()
	s.calls[name]++
	reply := s.replies[name]
	s.mu.Unlock()
	a := answer{key: key, status: http.StatusOK, ctype: ctype}
	var out any
	if reply != nil {
		out = reply(body)
	}
	if out == nil {
		out = defaultReply(name, body)
	}
	if e, ok := out.(*Error); ok {
		a.status = e.Status
		if a.status == 0 {
			a.status = http.StatusBadRequest
		}
		out = map[string]string{"__type": e.Code, "message": e.Message}
	}
	switch v := out.(type) {
	case json.RawMessage:
		a.body = v
	case []byte:
		a.body = v
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		a.body = raw
	}
	if a.status == http.StatusOK {
		s.mu.Lock()
		s.recent[s.next%len(s.recent)] = a
		s.next++
		s.mu.Unlock()
	}
	write(w, a)
}

// retried returns the successful answer already given to the call key
// when the SDK's Amz-Sdk-Request header says this is a retry of it
// (attempt=2 or later; a connection the client saw fail mid-answer is
// one cause), and counts the retry. (A retry after an error answer is a
// call like any other: its Reply may answer otherwise this time.) A retry is not a call of its own: it is not counted
// in Calls and not passed to the Reply (whose recording would show the
// call twice), and it gets the same answer.
func (s *Server) retried(sdkRequest, key string) (answer, bool) {
	if !strings.HasPrefix(sdkRequest, "attempt=") || strings.HasPrefix(sdkRequest, "attempt=1;") {
		return answer{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.recent {
		if a.key == key {
			s.retries++
			return a, true
		}
	}
	return answer{}, false
}

// Retries returns how many SDK retries of a call already answered
// arrived since New or Reset (each answered again, not counted in Calls).
func (s *Server) Retries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retries
}

func write(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("X-Amzn-Requestid", "awsfixture")
	w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// defaultReply is an empty success of op, with what the SDK checks: an
// SQS send's body MD5 and message id, a batch's entries.
func defaultReply(op string, body []byte) any {
	switch op {
	case "SQS.SendMessage":
		var in struct{ MessageBody string }
		_ = json.Unmarshal(body, &in)
		return map[string]string{"MessageId": "m-1", "MD5OfMessageBody": md5Hex(in.MessageBody)}
	case "SQS.SendMessageBatch":
		var in struct {
			Entries []struct{ Id, MessageBody string }
		}
		_ = json.Unmarshal(body, &in)
		ok := []map[string]string{}
		for _, e := range in.Entries {
			ok = append(ok, map[string]string{"Id": e.Id, "MessageId": "m-" + e.Id, "MD5OfMessageBody": md5Hex(e.MessageBody)})
		}
		return map[string]any{"Successful": ok, "Failed": []any{}}
	case "SQS.DeleteMessageBatch", "SQS.ChangeMessageVisibilityBatch":
		var in struct{ Entries []struct{ Id string } }
		_ = json.Unmarshal(body, &in)
		ok := []map[string]string{}
		for _, e := range in.Entries {
			ok = append(ok, map[string]string{"Id": e.Id})
		}
		return map[string]any{"Successful": ok, "Failed": []any{}}
	case "SQS.GetQueueAttributes":
		var in struct{ QueueUrl string }
		_ = json.Unmarshal(body, &in)
		name := in.QueueUrl[strings.LastIndex(in.QueueUrl, "/")+1:]
		arn := "arn:aws:sqs:us-east-1:000000000000:" + name
		return map[string]any{"Attributes": map[string]string{"QueueArn": arn,
			"RedrivePolicy":               `{"deadLetterTargetArn":"` + arn + `-dlq","maxReceiveCount":5}`,
			"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0", "ApproximateNumberOfMessagesDelayed": "0"}}
	case "SQS.ReceiveMessage":
		return map[string]any{"Messages": []any{}}
	case "SQS.GetQueueUrl":
		var in struct{ QueueName string }
		_ = json.Unmarshal(body, &in)
		return map[string]string{"QueueUrl": "https://sqs.us-east-1.amazonaws.com/000000000000/" + in.QueueName}
	case "DynamoDB.Query", "DynamoDB.Scan":
		return map[string]any{"Items": []any{}, "Count": 0, "ScannedCount": 0}
	case "DynamoDB.BatchGetItem":
		return map[string]any{"Responses": map[string]any{}, "UnprocessedKeys": map[string]any{}}
	case "DynamoDB.BatchWriteItem":
		return map[string]any{"UnprocessedItems": map[string]any{}}
	}
	return map[string]any{}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
