// Package analytics holds AsyncEvent's analytics SQL and runs it locally.
//
// ddl/events.sql is the Glue/Athena table over the events Firehose writes
// to S3 (docs/events.md); queries/*.sql are the reports, one file each,
// written once for Athena (Trino) and run unchanged on DuckDB here. Open
// builds a DuckDB view "events" over a folder in Firehose's layout whose
// columns come from the DDL itself, and adds the shim that makes the
// Athena functions the queries use exist on DuckDB: from_unixtime and
// approx_percentile (which is exact here: quantile_disc).
//
// This is a Go module of its own because DuckDB is cgo: the SDK and the
// services stay CGO_ENABLED=0. `make analytics` runs cmd/report.
package analytics
