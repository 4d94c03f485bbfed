-- The worker may run as a role of its own, apart from the role that runs the
-- migrations (an administrator): `chunk-worker migrate` makes the role named
-- by `database.service_role` a member of chunk_worker_service (0008 makes
-- only the migrating role one), and this gives chunk_worker_service the
-- table rights the worker uses, on every table and view now and on those
-- later migrations create. What rows it sees stays the business of the
-- row-level security policies of 0008.
GRANT USAGE ON SCHEMA public TO chunk_worker_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO chunk_worker_service;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO chunk_worker_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO chunk_worker_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO chunk_worker_service;
