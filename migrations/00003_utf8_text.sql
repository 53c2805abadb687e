-- Text limits are in characters: the API's maxLength, the domain's checks
-- (photo.MaxNameLen and its siblings) and the CHECKs of 00001 count
-- Unicode code points. length() counts code points only in a UTF8
-- database (in SQL_ASCII it counts bytes, and a name of 70 Hangul would
-- break the 200 limit), so the schema refuses any other encoding.

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    IF current_setting('server_encoding') <> 'UTF8' THEN
        RAISE EXCEPTION 'pacer needs a UTF8 database, and % is %: create it with ENCODING ''UTF8'' (e.g. CREATE DATABASE ... TEMPLATE template0 ENCODING ''UTF8'' LOCALE ''C'')',
            current_database(), current_setting('server_encoding');
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
