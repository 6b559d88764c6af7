-- Roles and databases of the platform. Idempotent: safe to run on every bring-up.
-- Run as a superuser with psql (it uses \gexec):
--   native:  scripts/infra/services/postgres.sh (runuser -u postgres -- psql -f - < this file)
--   docker:  mounted into /docker-entrypoint-initdb.d/ by docker-compose.yml
-- Tables, grants on them and row-level security come from the application's migrations
-- (run as platform_owner), not from here.

\set ON_ERROR_STOP on

-- Owner of the schema: runs migrations. Not a superuser and without BYPASSRLS, so RLS policies
-- are really exercised by the tests; CREATEROLE/CREATEDB let migrations and tests manage
-- their own roles and scratch databases.
SELECT 'CREATE ROLE platform_owner'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'platform_owner')
\gexec
ALTER ROLE platform_owner WITH LOGIN NOSUPERUSER CREATEROLE CREATEDB NOBYPASSRLS NOREPLICATION
  PASSWORD 'platform_owner';

-- The application's role: every request runs as this one, under row-level security.
SELECT 'CREATE ROLE platform_app'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'platform_app')
\gexec
ALTER ROLE platform_app WITH LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOREPLICATION
  PASSWORD 'platform_app';

-- UTF-8 whatever the cluster's default encoding is (a cluster created under LANG=C would be
-- SQL_ASCII); C.UTF-8 exists in Debian 12 and in the Debian-based postgres:15 image.
SELECT 'CREATE DATABASE platform OWNER platform_owner ENCODING ''UTF8'' LOCALE ''C.UTF-8'' TEMPLATE template0'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'platform')
\gexec
SELECT 'CREATE DATABASE platform_test OWNER platform_owner ENCODING ''UTF8'' LOCALE ''C.UTF-8'' TEMPLATE template0'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'platform_test')
\gexec

-- Re-assert ownership in case the databases were created by hand before.
ALTER DATABASE platform OWNER TO platform_owner;
ALTER DATABASE platform_test OWNER TO platform_owner;

-- The app connects; it gets privileges on objects from the migrations.
GRANT CONNECT, TEMPORARY ON DATABASE platform TO platform_app;
GRANT CONNECT, TEMPORARY ON DATABASE platform_test TO platform_app;

-- In PostgreSQL 15 the public schema belongs to pg_database_owner (= platform_owner here) and
-- PUBLIC may no longer create in it; the app role only needs USAGE there.
\connect platform
GRANT USAGE ON SCHEMA public TO platform_app;
\connect platform_test
GRANT USAGE ON SCHEMA public TO platform_app;
