-- PhotoService truth: organizers, their events, photographers, which
-- photographers shoot which event, and each event's runners (bib → name).
-- DynamoDB's PHOTO and BIB_INDEX items are a read-optimized cache of this.
--
-- Ids are the same short strings the DynamoDB keys embed, so they are
-- restricted here to what the API accepts: no '#', '%', spaces or control
-- characters, 1 to 64 characters.

-- +goose Up
CREATE TABLE organizers (
    organizer_id text PRIMARY KEY
        CONSTRAINT organizers_id_format CHECK (organizer_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE events (
    event_id     text PRIMARY KEY
        CONSTRAINT events_id_format CHECK (event_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    organizer_id text NOT NULL REFERENCES organizers ON DELETE RESTRICT,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    starts_on    date,
    published    boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- Target of the composite foreign keys below: an assignment can only
    -- join an event and a photographer of the same organizer.
    UNIQUE (organizer_id, event_id)
);
-- Listing an organizer's events (ORDER BY event_id) uses the unique index
-- above.

CREATE TABLE photographers (
    photographer_id text PRIMARY KEY
        CONSTRAINT photographers_id_format CHECK (photographer_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    organizer_id    text NOT NULL REFERENCES organizers ON DELETE RESTRICT,
    handle          text NOT NULL CHECK (length(handle) BETWEEN 1 AND 64),
    display_name    text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 128),
    -- Bumped on every handle/display-name change; the DynamoDB sync
    -- checkpoint (photographer_syncs) is keyed by it.
    profile_version bigint NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organizer_id, photographer_id)
);

CREATE TABLE event_photographers (
    organizer_id    text NOT NULL,
    event_id        text NOT NULL,
    photographer_id text NOT NULL,
    assigned_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, photographer_id),
    FOREIGN KEY (organizer_id, event_id) REFERENCES events (organizer_id, event_id) ON DELETE CASCADE,
    FOREIGN KEY (organizer_id, photographer_id) REFERENCES photographers (organizer_id, photographer_id) ON DELETE CASCADE
);
-- "Which events does this photographer shoot?"
CREATE INDEX event_photographers_photographer_idx ON event_photographers (photographer_id);

CREATE TABLE event_runners (
    event_id   text NOT NULL REFERENCES events ON DELETE CASCADE,
    bib        text NOT NULL CONSTRAINT event_runners_bib_format CHECK (bib ~ '^[A-Za-z0-9-]{1,16}$'),
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Lookups by (event, bib) at ingest and search, and keyset pagination
    -- by bib, both use this key.
    PRIMARY KEY (event_id, bib)
);

-- +goose Down
DROP TABLE event_runners;
DROP TABLE event_photographers;
DROP TABLE photographers;
DROP TABLE events;
DROP TABLE organizers;
