-- p95 QueueDelay per event (ms, startedAt - queuedAt).
-- From the DelayMeasured events, each counted once (DISTINCT on its id).
WITH d AS (
  SELECT DISTINCT detail.id AS id, detail.eventId AS event_id, detail.queueDelayMs AS delay_ms
  FROM events
  WHERE detail_type = 'DelayMeasured'
)
SELECT event_id,
       count(*) AS measured,
       approx_percentile(delay_ms, 0.5) AS p50_ms,
       approx_percentile(delay_ms, 0.95) AS p95_ms,
       max(delay_ms) AS max_ms
FROM d
GROUP BY event_id
ORDER BY event_id;
