-- Race timing, for finding a runner's photos by when they passed a camera
-- (issue 35): an event's timing points, where each photographer stands,
-- each photographer's camera clock offset, and runners' split times.

-- +goose Up

-- A timing point (a mat) of an event: its name and distance in metres
-- from the start.
CREATE TABLE timing_points (
    organizer_id text NOT NULL,
    event_id     text NOT NULL,
    point_id     text NOT NULL
        CONSTRAINT timing_points_id_format CHECK (point_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    distance_m   integer NOT NULL CHECK (distance_m BETWEEN 0 AND 1000000),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, point_id),
    FOREIGN KEY (organizer_id, event_id) REFERENCES events (organizer_id, event_id) ON DELETE CASCADE
);

-- Where an assigned photographer stands in an event: at a timing point,
-- offset_seconds after runners cross it (negative: before), or at a
-- distance from the start, timed between the timing points around it.
CREATE TABLE photographer_positions (
    event_id        text NOT NULL,
    photographer_id text NOT NULL,
    point_id        text,
    offset_seconds  integer NOT NULL DEFAULT 0 CHECK (offset_seconds BETWEEN -86400 AND 86400),
    distance_m      integer CHECK (distance_m BETWEEN 0 AND 1000000),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT photographer_positions_one_kind CHECK (
        (point_id IS NOT NULL AND distance_m IS NULL)
        OR (point_id IS NULL AND distance_m IS NOT NULL AND offset_seconds = 0)),
    PRIMARY KEY (event_id, photographer_id),
    FOREIGN KEY (event_id, photographer_id) REFERENCES event_photographers (event_id, photographer_id) ON DELETE CASCADE,
    FOREIGN KEY (event_id, point_id) REFERENCES timing_points (event_id, point_id) ON DELETE CASCADE
);

-- A photographer's camera clock offset: true time minus the camera's
-- time, in seconds. Photos keep the camera's time (createdAt); the search
-- by passing time adds the offset.
CREATE TABLE photographer_clocks (
    photographer_id text PRIMARY KEY REFERENCES photographers ON DELETE CASCADE,
    offset_seconds  integer NOT NULL CHECK (offset_seconds BETWEEN -86400 AND 86400),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A runner's split: when the bib crossed a timing point. Bibs need not be
-- on the entry list yet (like photos' bibs).
CREATE TABLE runner_splits (
    event_id   text NOT NULL,
    bib        text NOT NULL CONSTRAINT runner_splits_bib_format CHECK (bib ~ '^[A-Za-z0-9-]{1,16}$'),
    point_id   text NOT NULL,
    passed_at  timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- A bib's splits are read together, by this key.
    PRIMARY KEY (event_id, bib, point_id),
    FOREIGN KEY (event_id, point_id) REFERENCES timing_points (event_id, point_id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE runner_splits;
DROP TABLE photographer_clocks;
DROP TABLE photographer_positions;
DROP TABLE timing_points;
