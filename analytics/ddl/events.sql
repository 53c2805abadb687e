-- The Glue/Athena table over what Firehose writes to S3: one JSON event
-- (docs/events.schema.json) per line, under
-- events/dt=YYYY-MM-DD/hour=HH/. Partition projection computes the
-- partitions, so no crawler or MSCK REPAIR is needed. ${bucket} is the
-- bucket the deployment creates. Locally, analytics.Open reads the same
-- columns from this file (see ddl.go).
CREATE EXTERNAL TABLE IF NOT EXISTS events (
  `version` string,
  `id` string,
  `detail_type` string,
  `source` string,
  `account` string,
  `time` string,
  `region` string,
  `resources` array<string>,
  `detail` struct<
    schemaVersion:int,
    id:string,
    eventKind:string,
    occurredAt:bigint,
    requestId:string,
    eventId:string,
    eventType:string,
    status:string,
    userHash:string,
    uiResult:string,
    resultCode:string,
    failureClass:string,
    errorCode:string,
    attempts:int,
    deadLettered:boolean,
    requestedAt:bigint,
    queuedAt:bigint,
    startedAt:bigint,
    finishedAt:bigint,
    queueDelayMs:bigint,
    e2eDelayMs:bigint,
    workerId:string
  >
)
PARTITIONED BY (`dt` string, `hour` string)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
WITH SERDEPROPERTIES ('mapping.detail_type' = 'detail-type', 'ignore.malformed.json' = 'false')
LOCATION 's3://${bucket}/events/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.dt.type' = 'date',
  'projection.dt.format' = 'yyyy-MM-dd',
  'projection.dt.range' = '2026-01-01,NOW',
  'projection.dt.interval' = '1',
  'projection.dt.interval.unit' = 'DAYS',
  'projection.hour.type' = 'integer',
  'projection.hour.range' = '0,23',
  'projection.hour.digits' = '2',
  'storage.location.template' = 's3://${bucket}/events/dt=${dt}/hour=${hour}/'
);
