-- Operational state for keeping DynamoDB in step with the truth.

-- +goose Up

-- A runner's privacy request: the bib's photos are hidden (index entries
-- removed, bib struck from the photos) or deleted. Ingest consults this
-- table so that later photos do not bring the bib back.
CREATE TABLE hidden_bibs (
    event_id     text NOT NULL REFERENCES events ON DELETE CASCADE,
    bib          text NOT NULL CHECK (bib ~ '^[A-Za-z0-9-]{1,16}$'),
    mode         text NOT NULL CHECK (mode IN ('hide', 'delete')),
    requested_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, bib)
);

-- Checkpoint of the walk that copies a photographer's handle and display
-- name onto their PHOTO items (GSI2). One row per photographer; a new
-- profile_version restarts the walk from the beginning.
CREATE TABLE photographer_syncs (
    photographer_id text PRIMARY KEY REFERENCES photographers ON DELETE CASCADE,
    version         bigint NOT NULL,
    cursor          text NOT NULL DEFAULT '',
    scanned         bigint NOT NULL DEFAULT 0,
    updated         bigint NOT NULL DEFAULT 0,
    done            boolean NOT NULL DEFAULT false,
    started_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Finding unfinished walks to resume.
CREATE INDEX photographer_syncs_pending_idx ON photographer_syncs (updated_at) WHERE NOT done;

-- +goose Down
DROP TABLE photographer_syncs;
DROP TABLE hidden_bibs;
