-- email_key can no longer be left out. 0002's column is nullable (SQLite adds a NOT NULL column only by
-- copying the table) and its unique index ignores NULLs, so a row written without its key by anything
-- but the service (the sqlite3 shell, a script) escaped the uniqueness rule. Triggers refuse such
-- writes in whatever program opens the file, so they call no function of ours: the key is required,
-- checked where the e-mail is ASCII (its key is then lower(email)), and must change with the e-mail.
-- Nothing is copied: the rows without a key are found through 0002's index.
-- Those rows, written since 0002, get their key first (email_key_of(), as in 0002); rows that then
-- collide stop the migration, named as 0002 names them, and nothing of it stays.
SELECT migration_error(
  'e-mails that differ only in case or Unicode normalization: ' || group_concat(emails || ' (ids ' || ids || ')', '; ' ORDER BY first_id)
  || '; keep one of each (change or delete the others) and start again'
)
FROM (
  SELECT group_concat(email, ', ' ORDER BY id) AS emails, group_concat(id, ', ' ORDER BY id) AS ids, min(id) AS first_id
  FROM (
    SELECT id, email, email_key_of(email) AS key FROM users WHERE email_key IS NULL
    UNION ALL
    SELECT keyed.id, keyed.email, keyed.email_key
    FROM users AS keyed JOIN (SELECT DISTINCT email_key_of(email) AS key FROM users WHERE email_key IS NULL) AS missing
      ON keyed.email_key = missing.key
  )
  GROUP BY key HAVING count(*) > 1
)
HAVING count(*) > 0;

UPDATE users SET email_key = email_key_of(email) WHERE email_key IS NULL;

-- ASCII: as many bytes as characters.
CREATE TRIGGER users_email_key_on_insert BEFORE INSERT ON users
WHEN NEW.email_key IS NULL
  OR (length(CAST(NEW.email AS BLOB)) = length(NEW.email) AND NEW.email_key IS NOT lower(NEW.email))
BEGIN
  SELECT RAISE(ABORT, 'users.email_key must hold the e-mail in Unicode NFC, then lower case, as the service writes it: give it with every INSERT, and with every UPDATE of the e-mail');
END;

CREATE TRIGGER users_email_key_on_update BEFORE UPDATE OF email, email_key ON users
WHEN NEW.email_key IS NULL
  OR (length(CAST(NEW.email AS BLOB)) = length(NEW.email) AND NEW.email_key IS NOT lower(NEW.email))
  OR (length(CAST(NEW.email AS BLOB)) > length(NEW.email) AND NEW.email IS NOT OLD.email AND NEW.email_key IS OLD.email_key)
BEGIN
  SELECT RAISE(ABORT, 'users.email_key must hold the e-mail in Unicode NFC, then lower case, as the service writes it: give it with every INSERT, and with every UPDATE of the e-mail');
END;
