-- Replicas that reach the database only through a pooler in transaction
-- mode have no session to hold a liveness lock on (see store/lease.go):
-- they show they are alive with a row here, renewed in the table while they
-- run and deleted when they stop. A replica whose row expired is gone, as
-- one whose liveness lock is free.
create table replica_leases (
    owner      text primary key,
    expires_at timestamptz not null
) with (fillfactor = 50);

-- Read by every look at the other replicas (store's CTE live) through this
-- index: the store's connections price table scans out (enable_seqscan
-- off), and a plan with one costs enough for PostgreSQL to compile the
-- statement with JIT first (half a second for each look).
create index replica_leases_expires on replica_leases (expires_at);
