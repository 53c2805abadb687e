// Package stack generates Pacer's deployment for one stage: a
// CloudFormation template (AWS: DynamoDB tables, the participation queue
// and its DLQ, ECS Fargate services behind a load balancer, the worker's
// target tracking, CloudWatch alarms, the analytics pipeline, least-privilege
// roles) and Kubernetes manifests (a namespace, restricted non-root
// Deployments with their disruption budgets, an ALB Ingress with TLS, the
// worker's KEDA ScaledObject).
//
// Nothing in the output is typed twice: the generator (services/gen/deploy)
// fills a [Spec] from what the code declares — table schemas (ddb.Schema),
// the binaries' settings and their defaults, the autoscaling policy
// (autoscale.Config), the alarms (deploy/alarm), the analytics DDL and the
// IAM actions each binary is proven to call — and [Template] and
// [Manifests] turn it into files. `make deploy-gen` writes them under
// deploy/aws and deploy/k8s; `make deploy-check` (part of `make verify`)
// fails when the committed files differ from what the code generates.
package stack
