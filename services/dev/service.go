package main

import (
	"context"
	"log/slog"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Env is what the runner hands a service: where the stand-ins are, an AWS
// config pointed at them, and a logger. The same values are also exported
// into the process environment (AWS_ENDPOINT_URL_DYNAMODB,
// AWS_ENDPOINT_URL_SQS, DATABASE_URL, fake credentials), so code that reads
// the standard variables works unchanged.
type Env struct {
	// Addr is this service's own listen address: Service.Addr with the
	// port resolved (Service.Addr may say port 0).
	Addr string
	// Listener is bound to Addr by the runner before anything starts; the
	// service serves on it (nil when Service.Addr is empty).
	Listener net.Listener
	// Ready must be called once the service serves (for a worker: once it
	// consumes). The runner prints its banner, and health reports "ok",
	// only when every service is ready.
	Ready func()

	DynamoDBEndpoint string // e.g. http://127.0.0.1:40123
	SQSEndpoint      string // e.g. http://127.0.0.1:40124
	// DatabaseURL names the dev database: owned by this stack alone,
	// recreated empty on every start (like DynamoDB Local's in-memory
	// tables) and dropped on exit, unless DATABASE_URL was set by the user,
	// in which case it is used as is.
	DatabaseURL string

	// AWS is loaded with awsclient.Load after the endpoints were exported;
	// build clients with awsclient.DynamoDB(env.AWS) and awsclient.SQS(env.AWS).
	AWS aws.Config

	// Log is a logger tagged with the service's name.
	Log *slog.Logger

	// Advertise, if set, publishes a value other tools read from the
	// health report (GET /healthz, "advertised"), e.g. the table a service
	// uses or where its workers are. Keys are "<service>.<what>".
	Advertise func(key, value string)
}

// advertise calls env.Advertise if it is set.
func (env Env) advertise(key, value string) {
	if env.Advertise != nil {
		env.Advertise(key, value)
	}
}

// Service is one of the platform's services, run in-process by `make run`.
type Service struct {
	// Name is a short name for logs and the start-up banner, e.g. "photo-api".
	Name string
	// Addr is where the service listens, e.g. "127.0.0.1:8081"; empty for a
	// worker that serves nothing. The runner binds it before it starts
	// anything (a busy port fails at once) and hands the listener over in
	// Env.Listener.
	Addr string
	// AddrVar names the setting that moves Addr, for the error when the
	// port is taken (e.g. "PACER_PHOTO_ADDR").
	AddrVar string
	// Run creates the service's tables, queues and schema if they are
	// missing, serves on env.Listener, calls env.Ready, serves until ctx is
	// cancelled, then shuts down gracefully and returns nil. It must return
	// within a few seconds of cancellation. An error stops the whole runner.
	Run func(ctx context.Context, env Env) error
}

// services are the platform's services that `make run` starts, in order.
//
// Add your service here. A service's package main cannot be imported, so
// put its wiring in an importable package (e.g. a Run(ctx, Config) function
// next to the routes) and adapt it here:
//
//	{
//		Name: "photo-api",
//		Addr: "127.0.0.1:8082",
//		Run: func(ctx context.Context, env Env) error {
//			return photoapi.Run(ctx, photoapi.Config{Listener: env.Listener, AWS: env.AWS, DatabaseURL: env.DatabaseURL, Dev: true,
//				Ready: func(context.Context, string, photoapi.Deps) error { env.Ready(); return nil }})
//		},
//	},
//
// Then add its curl examples to docs/api-tour.md.
var services = []Service{}
