-- Step-up for high-value actions (docs/decisions/identity.md, Step-up for high-value actions; ASVS
-- 4.3.3). Every access token carries `auth_time`, the moment the sign-in behind its session proved a
-- credential (services/identity/tokens.ts). A refresh keeps it, and so does a session opened from
-- another one without a credential (POST /auth/switch-tenant, POST /auth/impersonate), so it is
-- stored with the session's refresh tokens:
-- - a sign-in's first token takes the default, the time of the statement that stores it;
-- - every later token of the session, and the first token of a session opened from another, is given
--   its value by the gateway in the same transaction (setAuthenticatedAt,
--   db/queries/identity/refresh-tokens.queries.ts).
-- Existing sessions take the time of their first token, which is when they signed in (the maintenance
-- job deletes only whole families, so the first token is there as long as the session is).

ALTER TABLE refresh_tokens ADD COLUMN authenticated_at timestamptz;

UPDATE refresh_tokens r SET authenticated_at = f.first_created_at
FROM (SELECT family_id, min(created_at) AS first_created_at FROM refresh_tokens GROUP BY family_id) f
WHERE f.family_id = r.family_id;

ALTER TABLE refresh_tokens
  ALTER COLUMN authenticated_at SET DEFAULT now(),
  ALTER COLUMN authenticated_at SET NOT NULL;
