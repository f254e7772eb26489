-- Updates that stay on their page. A demo turn's rows are updated about
-- nine times (its start, its lease, its end; its tool calls, todos and
-- message as they change), and an update that does not fit on the row's page,
-- or that changes a column an index covers or filters on, writes a new
-- entry in every index of the table besides the new row. Three changes let
-- most of them be HOT updates (in place on the page, no index entry):
--
-- * The start of a turn (status 'queued' to 'running') changed a column the
--   partial indexes of the active turns filtered on. The one kept now
--   filters on finished_at, which only the end of a turn sets: an active
--   turn is one not finished, and a constraint keeps the two in step.
-- * A lease renewal changed the key of the other.
-- * Tables whose rows are updated keep room on each page for the new
--   versions: turns, tool_calls, todos, and messages, whose content is
--   written at tool-call ends and at the end of the turn.

-- A turn ended by an earlier version without an end time gets one, so that
-- the constraint holds for every row.
update turns set finished_at = coalesce(started_at, created_at)
where status not in ('queued', 'running') and finished_at is null;
update turns set finished_at = null
where status in ('queued', 'running') and finished_at is not null;

alter table turns add constraint turns_finished_when_final
    check ((finished_at is null) = (status in ('queued', 'running')));

drop index turns_one_active;
create unique index turns_one_active on turns (conversation_id) where finished_at is null;

-- A lease renewal (every third of the lease's time, for every running turn)
-- changed the key of turns_active_lease. No statement searched it by its
-- key: the sweep's test of a lease is one of three alternatives, so it read
-- the index in full, as the list of active turns, which turns_one_active is
-- too. Without it a renewal is a HOT update: a turn that runs ten minutes
-- renews its lease 120 times, each an entry in every index before.
drop index turns_active_lease;

alter table turns set (fillfactor = 80);
alter table tool_calls set (fillfactor = 70);
alter table todos set (fillfactor = 70);
alter table messages set (fillfactor = 80);
