package main

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	asyncstore "github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	photostore "github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// Binary names, as the ECS services, Deployments and access.go call them.
const (
	AsyncAPI = "asyncevent-api"
	PhotoAPI = "photo-api"
	Worker   = "asyncevent-worker"
	Events   = "asyncevent-events"
)

// declarations returns each binary's settings as it declares them.
func declarations() map[string]map[string]config.Setting {
	var api asynceventapi.Config
	var worker asynceventworker.Config
	var photo photoapi.Config
	var events asynceventevents.Config
	out := map[string]map[string]config.Setting{}
	for name, declare := range map[string]func(*config.Set){
		AsyncAPI: api.Declare, Worker: worker.Declare, PhotoAPI: photo.Declare, Events: events.Declare,
	} {
		s := config.NewSet(name)
		declare(s)
		m := map[string]config.Setting{}
		for _, st := range s.Settings() {
			m[st.Env] = st
		}
		out[name] = m
	}
	return out
}

// serverEnv are the variables the services' shared kit reads directly
// (the HS256 secret in server.AuthSettings.Verifier, server.CursorKeyFromEnv),
// not through a Set.
var serverEnv = map[string]bool{"PACER_JWT_SECRET": true, "PACER_CURSOR_KEY": true, asynceventapi.HumanCheckSecretEnv: true}

// Build fills the deployment's spec from the code's declarations; root is
// the repository root (analytics/ is read from there).
func Build(root string) (*stack.Spec, error) {
	d := decls(declarations())
	alarms := alarm.Defaults()
	// The alarms' scaling policy (and so the Prometheus rules) and the
	// worker must agree on the worker's concurrency.
	if c := d.atoi(Worker, "PACER_WORKER_CONCURRENCY"); alarms.Scaling.Concurrency != c {
		return nil, fmt.Errorf("alarm.Defaults().Scaling.Concurrency is %d, the worker's PACER_WORKER_CONCURRENCY default %d: make them agree", alarms.Scaling.Concurrency, c)
	}
	if err := alarms.Scaling.Validate(); err != nil {
		return nil, err
	}

	n := names{
		table:       d.def(Worker, "PACER_ASYNCEVENT_TABLE") + "-${Stage}",
		queue:       d.def(Worker, "PACER_ASYNCEVENT_QUEUE"),
		checkpoints: d.def(Events, "PACER_EVENTS_CHECKPOINT_TABLE") + "-${Stage}",
	}
	n.apiPort, n.photoPort, n.opsPort = d.port(AsyncAPI, "PACER_ASYNCEVENT_ADDR"), d.port(PhotoAPI, "PACER_PHOTO_ADDR"), d.port(Worker, "PACER_WORKER_OPS_ADDR")
	n.eventsOpsPort = d.port(Events, "PACER_EVENTS_OPS_ADDR")
	if d.def(AsyncAPI, "PACER_ASYNCEVENT_TABLE") != d.def(Worker, "PACER_ASYNCEVENT_TABLE") || d.def(AsyncAPI, "PACER_ASYNCEVENT_QUEUE") != n.queue {
		return nil, fmt.Errorf("the API and the worker declare different default tables or queues")
	}

	spec := &stack.Spec{
		Tables: []stack.Table{
			// Warm: the participation table is the one a sale's opening hits.
			{ID: stack.IDAsyncTable, Name: n.table, Schema: &asyncstore.Schema, PITR: true, SSE: true, Warm: true},
			// The PhotoService table's stream is its schema's; PITR and
			// AWS-managed encryption are the deployment's (docs/contract.md).
			{ID: stack.IDPhotoTable, Name: photostore.TableName("${Stage}"), Schema: &photostore.Schema, PITR: true, SSE: true},
			{ID: stack.IDCheckpointTable, Name: n.checkpoints, Schema: &stream.CheckpointSchema, SSE: true},
			// Where the APIs' replicas count each other (the rate limits'
			// shares): heartbeats, nothing to keep.
			{ID: stack.IDReplicasTable, Name: ReplicasTable, Schema: &ratelimit.ReplicaSchema, SSE: true, Disposable: true},
		},
		Queue: stack.Queue{
			Name:        n.queue,
			MaxReceives: d.atoi(Worker, "PACER_ASYNCEVENT_MAX_RECEIVES"),
			Visibility:  d.dur(Worker, "PACER_WORKER_VISIBILITY"),
			// sqsqueue.Open creates the DLQ with 14 days' retention, SQS's
			// maximum; queue_test.go compares both queues with Ensure's.
			DLQRetention: 14 * 24 * time.Hour,
		},
		Scaling:  alarms.Scaling,
		Alarms:   alarms,
		Services: services(d, n),
		Params:   d.params(AsyncAPI, append(asyncAPISettings, asyncAPIPageSettings...)),
	}
	maps.Copy(spec.Params, d.params(PhotoAPI, photoAPISettings))
	// Both APIs declare the auth settings alike (server.AuthSettings).
	maps.Copy(spec.Params, d.params(AsyncAPI, authSettings))
	if err := d.checkEnv(spec.Services); err != nil {
		return nil, err
	}

	a, err := analyticsSpec(root)
	if err != nil {
		return nil, err
	}
	a.BufferBytes = d.atoi(Events, "PACER_EVENTS_BUFFER_BYTES")
	a.BufferInterval = d.dur(Events, "PACER_EVENTS_BUFFER_INTERVAL")
	spec.Analytics = a
	return spec, nil
}

// names are the resources' names and the services' ports the binaries
// declare by default, which the services' containers are given.
type names struct {
	table, queue, checkpoints                  string
	apiPort, photoPort, opsPort, eventsOpsPort int
}

// The APIs' autoscaling: at least two tasks (one per zone), 60 % CPU on
// ECS's 20-second metric for a spike, and ALB requests per task per
// minute for the steady state. The AsyncEvent API's figures follow from
// Pacer's measured CPU per participation (docs/capacity.md, Sizing per
// vCPU; TestDefaultsCarryTheClaimedRate holds them to it): a 0.5-vCPU
// task at 60 % takes about 54 participations a second with their polls,
// about 25,000 requests a minute, so its request target is set below
// that (20,000: the steady state scales out before the CPU target), and
// 36 tasks carry the 1,800 participations a second one table's default
// write quota lets through. The photo API keeps a planning figure (100
// requests a second per task) until its own is measured.
var (
	asyncAPIScaling = stack.Autoscale{Min: 2, Max: 36, CPUPercent: 60, RequestsPerTask: 20000}
	photoAPIScaling = stack.Autoscale{Min: 2, Max: 10, CPUPercent: 60, RequestsPerTask: 6000}
)

// ReplicasTable is the table where each API's replicas count each other,
// each allowing 1/(replicas running) of each rate budget
// (docs/ratelimit.md).
const ReplicasTable = "PacerReplicas-${Stage}"

// privateNetworks are RFC 1918's: where a VPC's load balancer nodes and a
// cluster's ingress controllers connect from.
const privateNetworks = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

// services are the four ECS services (and Deployments): each binary's
// image, ports, size, variables, secrets and access.
func services(d decls, n names) []stack.Service {
	jwt := []stack.Secret{
		{Name: "PACER_JWT_SECRET", Param: stack.ParamJwtSecret, Key: "jwt-secret", Optional: true},
		{Name: "PACER_CURSOR_KEY", Param: "CursorKeySecretArn", Key: "cursor-key"},
	}
	asyncEnv := []stack.EnvVar{env("PACER_ASYNCEVENT_TABLE", n.table), env("PACER_ASYNCEVENT_QUEUE", n.queue+"-${Stage}"), env("PACER_ASYNCEVENT_SETUP", "false")}
	region := env("AWS_REGION", "${AWS::Region}")
	// Every binary ships the metrics CloudWatch alarms read as EMF log
	// lines (metrics.EMF) on ECS; on Kubernetes Prometheus scrapes them.
	emf := []stack.EnvVar{{Name: "PACER_METRICS_EMF", CFN: "true", K8s: "false"}, env("PACER_METRICS_STAGE", "${Stage}")}
	asyncEnv = append(asyncEnv, emf...)
	const asyncAPICPU, photoAPICPU = 512, 256
	return []stack.Service{
		{
			Name: AsyncAPI, ID: "AsyncEventApi", Image: "AsyncEventApiImage", Port: n.apiPort, Public: true, ListenerPort: n.apiPort,
			HealthPath: "/healthz", ReadyPath: "/healthz", Count: 2, CPU: asyncAPICPU, MemoryMiB: 1024, Autoscale: &asyncAPIScaling,
			// The load balancer (and an ingress controller) forwards from
			// the private networks: believe their X-Forwarded-For, so that
			// the address limits see the client (docs/ratelimit.md).
			// Each replica allows its share of each budget: 1/(the
			// replicas running), counted in ReplicasTable.
			Env: append(append([]stack.EnvVar{env("PACER_ASYNCEVENT_ADDR", ":"+strconv.Itoa(n.apiPort)), env("PACER_JWKS_URL", "${JwksUrl}"), region,
				env("PACER_TRUSTED_PROXIES", privateNetworks),
				env("PACER_RATE_REPLICAS_TABLE", ReplicasTable), maxInFlight(asyncAPICPU, asynceventapi.InFlightPerCPU)}, asyncEnv...),
				vars(slices.Concat(authSettings, asyncAPISettings, asyncAPIPageSettings))...),
			Secrets: append([]stack.Secret{{Name: asynceventapi.HumanCheckSecretEnv, Param: "HumanCheckSecretArn", Key: "human-check-secret", Optional: true}}, jwt...),
			Access:  Access[AsyncAPI],
		},
		{
			Name: PhotoAPI, ID: "PhotoApi", Image: "PhotoApiImage", Port: n.photoPort, Public: true, ListenerPort: n.photoPort,
			HealthPath: "/healthz", ReadyPath: "/healthz", Count: 2, CPU: photoAPICPU, MemoryMiB: 512, Autoscale: &photoAPIScaling,
			// As the AsyncEvent API's: the public name search's address
			// limit must see the client, not the load balancer.
			Env: append([]stack.EnvVar{env("PACER_PHOTO_ADDR", ":"+strconv.Itoa(n.photoPort)), env("PACER_STAGE", "${Stage}"), env("PACER_PHOTO_SETUP", "false"), env("PACER_JWKS_URL", "${JwksUrl}"), region,
				env("PACER_TRUSTED_PROXIES", privateNetworks), env("PACER_PHOTO_BUCKET", "${"+stack.ParamPhotoBucket+"}"),
				env("PACER_RATE_REPLICAS_TABLE", ReplicasTable), maxInFlight(photoAPICPU, photoapi.InFlightPerCPU), emf[0], emf[1]},
				vars(slices.Concat(authSettings, photoAPISettings))...),
			// Postgres before it listens: the stack opens the way first
			// (stack.ParamDatabaseSG).
			Database: true,
			Secrets:  append([]stack.Secret{{Name: "DATABASE_URL", Param: "DatabaseUrlSecretArn", Key: "database-url"}}, jwt...),
			Access:   Access[PhotoAPI],
		},
		{
			Name: Worker, ID: "Worker", Image: "WorkerImage", Port: n.opsPort, HealthPath: "/healthz", ReadyPath: "/readyz",
			// 0.5 vCPU: the planned drain (concurrency 10 at 100 ms a
			// message) takes about 60 % of it (docs/capacity.md).
			Scaled: true, CPU: 512, MemoryMiB: 1024,
			Env:    append([]stack.EnvVar{env("PACER_WORKER_OPS_ADDR", ":"+strconv.Itoa(n.opsPort)), region}, asyncEnv...),
			Access: Access[Worker],
		},
		{
			Name: Events, ID: "EventsPublisher", Image: "EventsPublisherImage", Count: 1, Singleton: true, CPU: 256, MemoryMiB: 512,
			Port: n.eventsOpsPort, HealthPath: "/healthz", ReadyPath: "/readyz",
			Env: []stack.EnvVar{
				env("PACER_EVENTS_OPS_ADDR", ":"+strconv.Itoa(n.eventsOpsPort)),
				env("PACER_ASYNCEVENT_TABLE", n.table), env("PACER_ASYNCEVENT_SETUP", "false"),
				env("PACER_ASYNCEVENT_MAX_RECEIVES", d.def(Worker, "PACER_ASYNCEVENT_MAX_RECEIVES")),
				env("PACER_EVENTS_CHECKPOINT_TABLE", n.checkpoints), env("PACER_EVENTS_SINK", asynceventevents.SinkEventBridge),
				env("PACER_EVENTS_BUS", "pacer-${Stage}"), region, emf[0], emf[1],
			},
			Secrets: []stack.Secret{{Name: "PACER_EVENTS_USER_KEY", Param: "EventsUserKeySecretArn", Key: "events-user-key", Optional: true}},
			Access:  Access[Events],
		},
	}
}

// decls are each binary's settings as it declares them (declarations),
// read for their defaults. A default that does not parse is a bug in the
// code, so its readers panic.
type decls map[string]map[string]config.Setting

// def is bin's default for env; it panics if bin does not declare env.
func (d decls) def(bin, env string) string {
	st, ok := d[bin][env]
	if !ok {
		panic(fmt.Sprintf("deploygen: %s declares no %s", bin, env))
	}
	return st.Default
}

// atoi is bin's default for env as an integer.
func (d decls) atoi(bin, env string) int {
	n, err := strconv.Atoi(d.def(bin, env))
	if err != nil {
		panic(fmt.Sprintf("deploygen: %s's %s default %q: %v", bin, env, d.def(bin, env), err))
	}
	return n
}

// dur is bin's default for env as a duration.
func (d decls) dur(bin, env string) time.Duration {
	t, err := time.ParseDuration(d.def(bin, env))
	if err != nil {
		panic(fmt.Sprintf("deploygen: %s's %s default %q: %v", bin, env, d.def(bin, env), err))
	}
	return t
}

// port is the port of bin's default host:port for env.
func (d decls) port(bin, env string) int {
	_, p, err := net.SplitHostPort(d.def(bin, env))
	n, err2 := strconv.Atoi(p)
	if err != nil || err2 != nil {
		panic(fmt.Sprintf("deploygen: %s's %s default %q is not host:port", bin, env, d.def(bin, env)))
	}
	return n
}

// checkEnv checks that every variable a container gets is one its binary
// reads.
func (d decls) checkEnv(services []stack.Service) error {
	for _, sv := range services {
		names := []string{}
		for _, e := range sv.Env {
			names = append(names, e.Name)
		}
		for _, s := range sv.Secrets {
			names = append(names, s.Name)
		}
		for _, n := range names {
			if _, ok := d[sv.Name][n]; !ok && !serverEnv[n] && n != "AWS_REGION" && !(sv.Name == Events && n == "PACER_EVENTS_USER_KEY") {
				return fmt.Errorf("%s's container sets %s, which %s does not read", sv.Name, n, sv.Name)
			}
		}
	}
	return nil
}

// env is a variable whose template value is v (Fn::Sub syntax); the
// manifests' value names the same parameters as envsubst placeholders.
// maxInFlight is the in-flight bound (PACER_MAX_IN_FLIGHT) of an API
// task of cpu units (1,024 a vCPU) that takes perCPU calls in flight per
// vCPU (docs/capacity.md, Deadlines and the in-flight bound). The
// binary's default is perCPU × GOMAXPROCS, and GOMAXPROCS rounds a
// fractional vCPU up to 2: a 0.5-vCPU task would take 4 times its share.
func maxInFlight(cpu, perCPU int) stack.EnvVar {
	return env("PACER_MAX_IN_FLIGHT", strconv.Itoa(perCPU*cpu/1024))
}

func env(name, v string) stack.EnvVar {
	k8s := strings.NewReplacer("${Stage}", "${STAGE}", "${JwksUrl}", "${JWKS_URL}", "${AWS::Region}", "${AWS_REGION}", "${"+stack.ParamPhotoBucket+"}", "${PHOTO_BUCKET}").Replace(v)
	return stack.EnvVar{Name: name, CFN: v, K8s: k8s}
}

func analyticsSpec(root string) (stack.Analytics, error) {
	ddl, err := os.ReadFile(filepath.Join(root, "analytics", "ddl", "events.sql"))
	if err != nil {
		return stack.Analytics{}, err
	}
	a := stack.Analytics{
		Source: analytics.Source, DDL: string(ddl), Queries: map[string]string{},
		Prefix: filesink.Prefix,
		// docs/events.md: failed records by error type and day.
		ErrorPrefix:    "errors/!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/",
		ScanLimitBytes: 10 << 30,
	}
	for _, t := range analytics.DetailTypes {
		a.DetailTypes = append(a.DetailTypes, string(t))
	}
	qs, err := filepath.Glob(filepath.Join(root, "analytics", "queries", "*.sql"))
	if err != nil || len(qs) == 0 {
		return a, fmt.Errorf("no analytics/queries/*.sql under %s", root)
	}
	for _, q := range qs {
		b, err := os.ReadFile(q)
		if err != nil {
			return a, err
		}
		a.Queries[filepath.Base(q)] = string(b)
	}
	return a, nil
}

// Files returns the generated files by path from the repository root.
func Files(spec *stack.Spec) (map[string][]byte, error) {
	t, err := spec.Template()
	if err != nil {
		return nil, err
	}
	b, err := t.JSON()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{"deploy/aws/pacer.template.json": b}
	ms, err := spec.Manifests()
	if err != nil {
		return nil, err
	}
	for n, m := range ms {
		out["deploy/k8s/"+n] = m
	}
	return out, nil
}
