-- Tenant isolation in SQL (issue 15 item 1): row-level security on every
-- table that holds tenant data, keyed on what an analyst cannot change.
--
-- Who sees what:
-- * an analyst sees the rows of the tenants granted to their *login* role
--   (session_user) or to a role it is a member of: `tenant_grants`, filled by
--   `chunk-worker tenant grant --tenant T --role R`. SET ROLE changes
--   current_user, never session_user, and no policy reads a session setting,
--   so nothing the analyst can set widens what they see;
-- * members of `chunk_worker_operator` see every row, including rows without
--   a tenant (failures of messages too broken to name one) and the replay log;
-- * the worker's own role is a member of `chunk_worker_service`, whose
--   policy lets it read and write everything: stated in each table's policies
--   rather than left to table ownership (row security is FORCEd, so even the
--   owner goes through the policies);
-- * superusers bypass row security, as always.
-- Views run with the rights of the caller (security_invoker), so they show
-- what the caller may see and nothing more.

DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['chunk_worker_analyst', 'chunk_worker_operator', 'chunk_worker_service'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION
                -- Another database's migration created it concurrently.
                WHEN duplicate_object OR unique_violation THEN NULL;
            END;
        END IF;
    END LOOP;
END
$$;

-- The role running the migrations is the worker's role: it goes through the
-- service policy. (A superuser bypasses row security anyway.)
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'chunk_worker_service', 'MEMBER') THEN
        EXECUTE format('GRANT chunk_worker_service TO %I', current_user);
    END IF;
END
$$;
-- Operators read what analysts read, on every tenant.
GRANT chunk_worker_analyst TO chunk_worker_operator;

-- ---------------------------------------------------------------------------
CREATE TABLE tenant_grants (
    role_oid    oid         NOT NULL,
    tenant_id   text        NOT NULL,
    granted_at  timestamptz NOT NULL DEFAULT now(),
    granted_by  text        NOT NULL DEFAULT session_user,
    PRIMARY KEY (role_oid, tenant_id)
);
COMMENT ON TABLE tenant_grants IS 'Which database roles may read which tenant''s rows (row-level security). Managed with `chunk-worker tenant grant|revoke|list`; an analyst sees only the grants of their own login role and the roles it belongs to.';
COMMENT ON COLUMN tenant_grants.role_oid IS 'The role (pg_roles.oid; role_oid::regrole shows its name). A dropped role''s grant matches nobody, even if a new role takes the name.';
COMMENT ON COLUMN tenant_grants.tenant_id IS 'The tenant whose rows the role and its members may read.';
COMMENT ON COLUMN tenant_grants.granted_at IS 'When the grant was made.';
COMMENT ON COLUMN tenant_grants.granted_by IS 'The login role that made the grant.';
GRANT SELECT ON tenant_grants TO chunk_worker_analyst;

-- ---------------------------------------------------------------------------
-- The outbox holds event payloads (tenant data): a tenant column to filter on.
ALTER TABLE outbox ADD COLUMN tenant_id text;
UPDATE outbox SET tenant_id = payload::jsonb ->> 'tenant_id' WHERE tenant_id IS NULL;
COMMENT ON COLUMN outbox.tenant_id IS 'Tenant of the event; NULL for failures of messages too broken to name one (visible to operators only).';

-- ---------------------------------------------------------------------------
-- Policies. Each subquery is an init plan, evaluated once per query.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['documents', 'source_versions', 'chunks', 'document_links',
                             'cross_links', 'chunking_failures', 'outbox', 'dlq_replays',
                             'tenant_grants'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY chunk_worker_service ON %I FOR ALL TO chunk_worker_service '
            'USING (true) WITH CHECK (true)', t);
        EXECUTE format(
            'CREATE POLICY operator_read ON %I FOR SELECT TO PUBLIC '
            'USING ((SELECT pg_has_role(session_user, ''chunk_worker_operator'', ''MEMBER'')))', t);
        IF t NOT IN ('dlq_replays', 'tenant_grants') THEN
            EXECUTE format(
                'CREATE POLICY tenant_read ON %I FOR SELECT TO PUBLIC '
                'USING (tenant_id IN (SELECT g.tenant_id FROM tenant_grants g))', t);
        END IF;
    END LOOP;
END
$$;
-- A grant is visible to the members of its role (and to operators).
CREATE POLICY own_grants ON tenant_grants FOR SELECT TO PUBLIC
    USING (pg_has_role(session_user, role_oid, 'MEMBER'));

ALTER VIEW current_chunks SET (security_invoker = true);
ALTER VIEW document_overview SET (security_invoker = true);
ALTER VIEW failure_summary SET (security_invoker = true);
ALTER VIEW outbox_backlog SET (security_invoker = true);
