package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

var secret = []byte("server-test-secret-at-least-32-bytes!")

type whoami struct {
	Body struct {
		UserID string `json:"userId"`
	}
}

func newAPI(t *testing.T, dev bool) humatest.TestAPI {
	_, api := humatest.New(t)
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	server.Authenticate(api, v, dev)
	huma.Register(api, huma.Operation{OperationID: "whoami", Method: http.MethodGet, Path: "/me", Security: server.Bearer},
		func(ctx context.Context, _ *struct{}) (*whoami, error) {
			p, err := server.Caller(ctx)
			if err != nil {
				return nil, err
			}
			out := &whoami{}
			out.Body.UserID = p.UserID
			return out, nil
		})
	return api
}

func TestAuthenticate(t *testing.T) {
	good, _ := auth.Mint(secret, auth.Principal{UserID: "u1"}, time.Minute)
	expired, _ := auth.Mint(secret, auth.Principal{UserID: "u1"}, -time.Hour)
	auth0, _ := auth.Mint(secret, auth.Principal{UserID: "auth0|5f7c8ec7c33c6c004bbafe82"}, time.Minute)
	email, _ := auth.Mint(secret, auth.Principal{UserID: "user@example.com"}, time.Minute)
	control, _ := auth.Mint(secret, auth.Principal{UserID: "u1\x01"}, time.Minute)
	long, _ := auth.Mint(secret, auth.Principal{UserID: strings.Repeat("u", 256)}, time.Minute)
	for _, tc := range []struct {
		name    string
		dev     bool
		headers []any
		status  int
		user    string
	}{
		{"no token", false, nil, 401, ""},
		{"garbage", false, []any{"Authorization: Bearer x.y.z"}, 401, ""},
		{"expired", false, []any{"Authorization: Bearer " + expired}, 401, ""},
		{"basic", false, []any{"Authorization: Basic dTE6cA=="}, 401, ""},
		{"good", false, []any{"Authorization: Bearer " + good}, 200, "u1"},
		{"scheme in lower case", false, []any{"Authorization: bearer " + good}, 200, "u1"},
		{"scheme only", false, []any{"Authorization: Bearer"}, 401, ""},
		{"dev header outside dev mode", false, []any{server.DevUserHeader + ": eve"}, 401, ""},
		{"dev header in dev mode", true, []any{server.DevUserHeader + ": eve"}, 200, "eve"},
		{"auth0 sub", false, []any{"Authorization: Bearer " + auth0}, 200, "auth0|5f7c8ec7c33c6c004bbafe82"},
		{"email sub", false, []any{"Authorization: Bearer " + email}, 200, "user@example.com"},
		{"control character in sub", false, []any{"Authorization: Bearer " + control}, 401, ""},
		{"sub over 255 bytes", false, []any{"Authorization: Bearer " + long}, 401, ""},
		{"dev header with a control character", true, []any{server.DevUserHeader + ": eve\x01"}, 401, ""},
		{"dev header over 255 bytes", true, []any{server.DevUserHeader + ": " + strings.Repeat("e", 256)}, 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := newAPI(t, tc.dev).Get("/me", tc.headers...)
			if resp.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.Code, tc.status, resp.Body.String())
			}
			if tc.status == 401 && !strings.HasPrefix(resp.Header().Get("Content-Type"), "application/problem+json") {
				t.Fatalf("401 content type %q", resp.Header().Get("Content-Type"))
			}
			if tc.user != "" && !strings.Contains(resp.Body.String(), `"userId":"`+tc.user+`"`) {
				t.Fatalf("body %s, want user %s", resp.Body.String(), tc.user)
			}
		})
	}
}
