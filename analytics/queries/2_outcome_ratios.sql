-- Success / failure / DLQ ratios per event. A request's outcome is its
-- latest ParticipationProcessed event (an operator's re-queue can finish
-- a request twice); DLQ counts the requests whose message reached the
-- dead-letter queue (a RequestFailed with deadLettered), whatever came
-- after a redrive. Ratios are of all requests of the event.
WITH ev AS (
  SELECT DISTINCT detail.id AS id, detail_type AS kind, detail.eventId AS event_id, detail.requestId AS request_id,
         detail.status AS status, detail.finishedAt AS finished_at, detail.deadLettered AS dead_lettered
  FROM events
),
latest AS (
  SELECT event_id, request_id, status,
         row_number() OVER (PARTITION BY request_id ORDER BY finished_at DESC, id) AS rn
  FROM ev
  WHERE kind = 'ParticipationProcessed'
),
totals AS (
  SELECT event_id,
         count(DISTINCT request_id) AS requests,
         count(DISTINCT CASE WHEN dead_lettered THEN request_id END) AS dlq
  FROM ev
  GROUP BY event_id
),
outcomes AS (
  SELECT event_id,
         sum(CASE WHEN status = 'SUCCEEDED' THEN 1 ELSE 0 END) AS succeeded,
         sum(CASE WHEN status = 'REJECTED' THEN 1 ELSE 0 END) AS rejected,
         sum(CASE WHEN status = 'FAILED_FINAL' THEN 1 ELSE 0 END) AS failed
  FROM latest
  WHERE rn = 1
  GROUP BY event_id
)
SELECT t.event_id,
       t.requests,
       coalesce(o.succeeded, 0) AS succeeded,
       coalesce(o.rejected, 0) AS rejected,
       coalesce(o.failed, 0) AS failed,
       t.dlq,
       round(CAST(coalesce(o.succeeded, 0) AS double) / t.requests, 4) AS success_ratio,
       round(CAST(coalesce(o.failed, 0) AS double) / t.requests, 4) AS failure_ratio,
       round(CAST(t.dlq AS double) / t.requests, 4) AS dlq_ratio
FROM totals t
LEFT JOIN outcomes o ON o.event_id = t.event_id
ORDER BY t.event_id;
