-- E-mails unique once case and Unicode normalization are set aside: the rule of emailKey in
-- @sample-services/users-api (NFC, then lower case), as an index on an expression; the e-mail itself
-- stays as given. lower() under ICU's root collation maps case as JavaScript's toLowerCase does,
-- whatever the database's own locale (under C it would change ASCII letters only).
-- Rows that already collide stop the migration, named, before anything changes.
DO $$
DECLARE
  collisions text;
BEGIN
  SELECT string_agg(format('%s (ids %s)', emails, ids), '; ' ORDER BY first_id) INTO collisions
  FROM (
    SELECT string_agg(email, ', ' ORDER BY id) AS emails, string_agg(id::text, ', ' ORDER BY id) AS ids, min(id) AS first_id
    FROM users
    GROUP BY lower(normalize(email, NFC) COLLATE "und-x-icu")
    HAVING count(*) > 1
  ) AS colliding;
  IF collisions IS NOT NULL THEN
    RAISE EXCEPTION 'e-mails that differ only in case or Unicode normalization: %; keep one of each (change or delete the others) and start again', collisions;
  END IF;
END
$$;

CREATE UNIQUE INDEX users_email_normalized_key ON users ((lower(normalize(email, NFC) COLLATE "und-x-icu")));
