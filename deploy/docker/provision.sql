-- Distributed-mode database layout for docker-compose: one login role and one
-- schema per service, each schema owned by its role, so no service can read or
-- write another's tables. The same layout deploy/local/src/provision.ts creates.
--
-- The postgres image runs this once, on an empty data volume, as POSTGRES_USER
-- connected to POSTGRES_DB (c402), with ON_ERROR_STOP. To apply a change, remove
-- the volume: `docker compose -f deploy/docker/docker-compose.yml down -v`.
--
-- DEVELOPMENT PASSWORDS ONLY. They must match the DATABASE_URLs in
-- docker-compose.yml. Never reuse them anywhere reachable from outside.

CREATE ROLE c402_identity LOGIN PASSWORD 'identity-dev-password';
CREATE ROLE c402_catalog  LOGIN PASSWORD 'catalog-dev-password';
CREATE ROLE c402_payments LOGIN PASSWORD 'payments-dev-password';
CREATE ROLE c402_webhooks LOGIN PASSWORD 'webhooks-dev-password';

GRANT CONNECT ON DATABASE c402 TO c402_identity, c402_catalog, c402_payments, c402_webhooks;

-- Nobody creates objects in public (PostgreSQL 15 already defaults to this; kept explicit).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

CREATE SCHEMA IF NOT EXISTS identity AUTHORIZATION c402_identity;
CREATE SCHEMA IF NOT EXISTS catalog  AUTHORIZATION c402_catalog;
CREATE SCHEMA IF NOT EXISTS payments AUTHORIZATION c402_payments;
CREATE SCHEMA IF NOT EXISTS webhooks AUTHORIZATION c402_webhooks;
