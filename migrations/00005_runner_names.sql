-- Finding runners by name (typo-tolerant, ranked): pg_trgm trigram
-- similarity over a search key of each runner's name, indexed per event.
--
-- The key is lower(normalize(name, NFD)): NFD splits each Hangul
-- syllable into its jamo (김 → ᄀ ᅵ ᆷ), so a typo in one syllable costs a
-- third of its trigrams rather than all of them, and a half-typed
-- syllable is still a prefix; it also splits accents off Latin letters
-- (José → jose + U+0301, a non-word character), so "jose" finds José.
--
-- pg_trgm counts a character as part of a word by the database's
-- LC_CTYPE: under LC_CTYPE C every non-ASCII character is a separator, a
-- Hangul name has no trigrams, and the search finds no Hangul name. The
-- migration refuses such a database (ICU does not help on Postgres 15: the
-- ctype still decides). events.public_name_search is the organizer's
-- switch for the public name search (off by default).

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- Lets the trigram index lead with event_id (a GIN index of text equality).
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- +goose StatementBegin
DO $$
BEGIN
    IF array_length(show_trgm('김민수'), 1) IS NULL THEN
        RAISE EXCEPTION 'pacer''s runner name search needs pg_trgm to see Hangul as letters, and database % has LC_CTYPE %, under which it does not: create it with a UTF-8 ctype (e.g. CREATE DATABASE ... TEMPLATE template0 ENCODING ''UTF8'' LC_COLLATE ''C.UTF-8'' LC_CTYPE ''C.UTF-8'', or en_US.UTF-8)',
            current_database(), current_setting('lc_ctype');
    END IF;
END
$$;
-- +goose StatementEnd

ALTER TABLE event_runners
    ADD COLUMN name_key text GENERATED ALWAYS AS (lower(normalize(name, NFD))) STORED;
-- Name search within one event: similarity (%), word similarity (<%) and
-- prefix (LIKE 'x%') all use it. Without a pending list (fastupdate): an
-- entry list is written once and searched often, and rows in the pending
-- list make the planner price the index above a scan of the event's rows
-- (measured: 50,000 runners imported, then 300 ms a search instead of 10).
CREATE INDEX event_runners_name_trgm_idx ON event_runners USING gin (event_id, name_key gin_trgm_ops)
    WITH (fastupdate = off);

ALTER TABLE events ADD COLUMN public_name_search boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE events DROP COLUMN public_name_search;
DROP INDEX event_runners_name_trgm_idx;
ALTER TABLE event_runners DROP COLUMN name_key;
