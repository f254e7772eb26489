-- Ids that grow with time (UUID version 7: 48 bits of Unix milliseconds,
-- then random bits; as text they sort in the order they were made).
--
-- A random id (version 4) puts each new row's key on a random page of its
-- primary key, and of every index led by it (tool_calls and todos are keyed
-- by their turn's id). In a database of any size those are pages no recent
-- write touched, so each insert dirties a page of its own, and the first
-- change to a page after a checkpoint logs the whole page (8 KiB) in the
-- WAL: most of the WAL of an aged database was index pages' full images.
-- Keys that grow with time go to the few pages at the end of each index,
-- which stay in memory and are logged whole once per checkpoint.
--
-- The 74 random bits keep ids unguessable; the time they hold is already a
-- row's created_at.
create function time_ordered_id() returns text
language sql volatile parallel safe as $$
	select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
		placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
		from 1 for 6), 52, 1), 53, 1), 'hex')::uuid::text
$$;

alter table users alter column id set default time_ordered_id();
alter table conversations alter column id set default time_ordered_id();
alter table messages alter column id set default time_ordered_id();
alter table turns alter column id set default time_ordered_id();
alter table documents alter column id set default time_ordered_id();
