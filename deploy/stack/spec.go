package stack

import (
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/sdk/autoscale"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Spec is everything the deployment is generated from. services/gen/deploy
// fills it from the code's declarations.
type Spec struct {
	Tables    []Table
	Queue     Queue
	Services  []Service
	Scaling   autoscale.Config // the worker pool's, from the worker's settings
	Alarms    alarm.Config     // thresholds and runbook base of deploy/alarm
	Analytics Analytics
	// Params are the template parameters the services' variables name
	// (${Name} in EnvVar.CFN) beyond the stack's own: settings an
	// operator chooses per stack.
	Params map[string]Parameter
}

// Table is one DynamoDB table of the stack.
type Table struct {
	// ID is the logical id ("AsyncEventTable"); Name is the table's
	// name with the stage as ${Stage}.
	ID   string
	Name string // Fn::Sub text, e.g. "AsyncEventTable-${Stage}"
	// Schema is the table's schema in code: the template's keys, indexes,
	// TTL and stream come from Schema.CreateTableInput, the request Ensure
	// sends, so a table the template makes and one Ensure makes have the
	// same shape (services/gen/deploy's TestTemplateTablesMatchEnsure).
	Schema *ddb.Schema
	// Deployment-only settings, which Ensure does not set: point-in-time
	// recovery and server-side encryption with the AWS managed KMS key.
	// They are a stage's operating choices, not the data model's
	// (docs/contract.md).
	PITR, SSE bool
	// Warm gives the table <ID>WarmReadUnits and <ID>WarmWriteUnits
	// parameters: its WarmThroughput, for a sale day (tables.go).
	Warm bool
	// Disposable: the table holds nothing worth keeping (the replicas'
	// heartbeats), so it goes with the stack instead of being kept.
	Disposable bool
}

// Queue is the participation queue and its DLQ (<name>-dlq).
type Queue struct {
	Name         string // before the stage suffix
	MaxReceives  int
	Visibility   time.Duration
	DLQRetention time.Duration
}

// Service is one binary run as an ECS service and a Kubernetes Deployment.
type Service struct {
	Name  string // the binary, e.g. "asyncevent-api"
	ID    string // logical id prefix, e.g. "AsyncEventApi"
	Image string // the template parameter holding its image URI
	// Port is the container port; Public puts it behind the load balancer
	// with health checks on HealthPath: on HTTPS by host name, or on
	// ListenerPort in plain HTTP when the stack has no certificate
	// (edge.go).
	Port         int
	Public       bool
	ListenerPort int
	HealthPath   string
	// ReadyPath is the readiness probe (Kubernetes).
	ReadyPath string
	// Env is the container's plain environment; values may hold
	// ${Stage}-style references to template parameters and resources
	// (Fn::Sub) and, in the manifests, ${VAR} placeholders.
	Env []EnvVar
	// Secrets are environment variables taken from the secret store.
	Secrets []Secret
	// Count is the ECS desired count of a service that does not
	// autoscale, and the replicas of its Kubernetes Deployment. The queue
	// worker (Scaled) runs Spec.Scaling.Min..Max tasks, an API with
	// Autoscale its Min..Max; neither has an ECS desired count, which
	// would reset the running count on every deploy (scaling.go).
	Count  int
	Scaled bool
	// Autoscale, if set, scales an API (Public) on its load.
	Autoscale *Autoscale
	// Singleton: at most one task at a time (no overlap during a deploy).
	Singleton bool
	// Database: the binary needs Postgres to start (database.go).
	Database       bool
	CPU, MemoryMiB int
	// Access is what the binary may do on which resource: its IAM policy.
	Access []Grant
}

// Autoscale is how an API scales: its task bounds (the defaults of its
// <ID>MinTasks and <ID>MaxTasks parameters) and the targets of its two
// target tracking policies, whichever asks for more tasks winning.
type Autoscale struct {
	Min, Max int
	// CPUPercent is the target average CPU utilization, on ECS's
	// 20-second CPU metric: the policy that reacts to a spike.
	CPUPercent float64
	// RequestsPerTask is the target of ALB requests per task per minute
	// (ALBRequestCountPerTarget, a 1-minute metric): steady state.
	RequestsPerTask float64
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name string
	// CFN is the value in the template (Fn::Sub syntax), K8s in the
	// manifests (envsubst placeholders).
	CFN, K8s string
}

// Secret is an environment variable read from the secret store: the
// template parameter holding its Secrets Manager (or SSM parameter) ARN,
// and the key of the Kubernetes Secret "pacer" holding it.
type Secret struct {
	Name, Param, Key string
	// Optional secrets are left out when their parameter is empty.
	Optional bool
}

// Grant allows Actions (IAM names, "dynamodb:GetItem") on Resources.
type Grant struct {
	Actions   []string
	Resources []Target
}

// Target names a resource of the stack a grant applies to.
type Target string

// The resources grants name.
const (
	TargetTable       Target = "table" // AsyncEventTable and its indexes
	TargetTableStream Target = "table-stream"
	TargetPhotoTable  Target = "photo-table" // PhotoService and its indexes
	TargetCheckpoints Target = "checkpoints"
	// TargetReplicas is the table where the APIs' replicas count each
	// other for the rate limits' shares.
	TargetReplicas Target = "replicas"
	TargetQueue    Target = "queue"
	TargetDLQ      Target = "dlq"
	TargetEventBus Target = "event-bus"
	// TargetPhotoBucket is the objects of the photo bucket (the
	// PhotoBucket parameter): the photos' originals, which photo-api
	// presigns GETs of.
	TargetPhotoBucket Target = "photo-bucket"
)

// Analytics is the analytics-events pipeline: EventBridge rule → Firehose → S3 → Glue
// table and Athena workgroup (docs/events.md).
type Analytics struct {
	Source      string   // the events' source
	DetailTypes []string // the rule's detail-types
	// Prefix and ErrorPrefix are Firehose's S3 prefixes.
	Prefix, ErrorPrefix string
	BufferBytes         int
	BufferInterval      time.Duration
	// DDL is analytics/ddl/events.sql; its ${bucket} is the events bucket.
	DDL string
	// Queries are analytics/queries/*.sql by file name: Athena named
	// queries.
	Queries map[string]string
	// ScanLimitBytes caps the bytes one Athena query may scan.
	ScanLimitBytes int64
}
