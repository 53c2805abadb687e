-- Hourly request volume: participation requests per event and per hour
-- (UTC) in which they were made. Each event counts once (DISTINCT on its
-- id: a redelivered event is the same line again). By requestedAt, not
-- queuedAt: every request has it from its first event, while
-- queuedAt arrives only with its end; the two are the enqueue (milliseconds)
-- apart (docs/events.md).
WITH requested AS (
  SELECT DISTINCT detail.id AS id, detail.eventId AS event_id, detail.requestedAt AS requested_at
  FROM events
  WHERE detail_type = 'ParticipationRequested'
)
SELECT event_id,
       date_trunc('hour', from_unixtime(requested_at / 1000)) AS hour_utc,
       count(*) AS requests
FROM requested
GROUP BY 1, 2
ORDER BY 1, 2;
