-- FIRST_COME fairness per event: the fairness reference is queuedAt. An
-- inversion is a pair (loser, winner) where the loser, rejected for
-- capacity, was queued before the winner. losers_before_last_winner
-- counts the losers queued before the last winner was. Outcomes are each
-- request's latest ParticipationProcessed event.
WITH p AS (
  SELECT DISTINCT detail.id AS id, detail.eventId AS event_id, detail.requestId AS request_id,
         detail.eventType AS event_type, detail.status AS status, detail.resultCode AS result_code,
         detail.queuedAt AS queued_at, detail.finishedAt AS finished_at
  FROM events
  WHERE detail_type = 'ParticipationProcessed'
),
latest AS (
  SELECT p.*, row_number() OVER (PARTITION BY request_id ORDER BY finished_at DESC, id) AS rn
  FROM p
),
o AS (SELECT * FROM latest WHERE rn = 1 AND event_type = 'FIRST_COME'),
w AS (SELECT event_id, queued_at FROM o WHERE status = 'SUCCEEDED'),
l AS (SELECT event_id, queued_at FROM o WHERE result_code = 'REJECTED_CAPACITY'),
wins AS (SELECT event_id, count(*) AS winners, max(queued_at) AS last_winner_queued_at FROM w GROUP BY event_id),
losses AS (SELECT event_id, count(*) AS losers FROM l GROUP BY event_id),
pairs AS (
  SELECT l.event_id, count(*) AS inversions
  FROM l JOIN w ON w.event_id = l.event_id AND l.queued_at < w.queued_at
  GROUP BY l.event_id
),
early AS (
  SELECT l.event_id, count(*) AS losers_before_last_winner
  FROM l JOIN wins ON wins.event_id = l.event_id AND l.queued_at < wins.last_winner_queued_at
  GROUP BY l.event_id
)
SELECT wins.event_id,
       wins.winners,
       coalesce(losses.losers, 0) AS losers,
       coalesce(pairs.inversions, 0) AS inversions,
       coalesce(early.losers_before_last_winner, 0) AS losers_before_last_winner
FROM wins
LEFT JOIN losses ON losses.event_id = wins.event_id
LEFT JOIN pairs ON pairs.event_id = wins.event_id
LEFT JOIN early ON early.event_id = wins.event_id
ORDER BY wins.event_id;
