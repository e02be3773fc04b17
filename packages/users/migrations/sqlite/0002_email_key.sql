-- E-mails unique once case and Unicode normalization are set aside: a key column holding
-- emailKey(email) of @sample-services/users-api (NFC, then lower case), under a unique index. The
-- writer fills it with each insert; here email_key_of() (that same function, registered on the
-- connection by the runner) fills it for the rows there are. The e-mail itself stays as given.
-- Rows that already collide stop the migration, named, and nothing of it stays.
ALTER TABLE users ADD COLUMN email_key TEXT;

UPDATE users SET email_key = email_key_of(email);

SELECT migration_error(
  'e-mails that differ only in case or Unicode normalization: ' || group_concat(emails || ' (ids ' || ids || ')', '; ' ORDER BY first_id)
  || '; keep one of each (change or delete the others) and start again'
)
FROM (
  SELECT group_concat(email, ', ' ORDER BY id) AS emails, group_concat(id, ', ' ORDER BY id) AS ids, min(id) AS first_id
  FROM users GROUP BY email_key HAVING count(*) > 1
)
HAVING count(*) > 0;

CREATE UNIQUE INDEX users_email_normalized_key ON users (email_key);
