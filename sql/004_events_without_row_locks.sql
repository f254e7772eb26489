-- Events no longer reference turns through a foreign key: its check locked
-- the turn's row (FOR KEY SHARE) for every event inserted, a WAL record per
-- event and, with several writers, multixacts. Every writer of events
-- checks the turn itself (the lease guard of the group commit, the turn's
-- own insert, the sweep's row lock); deleting a turn deletes its events
-- through this trigger instead of the cascade.
alter table events drop constraint events_turn_id_fkey;

create function toolmark_delete_turn_events() returns trigger language plpgsql as $$
begin
    delete from events where turn_id = old.id;
    return old;
end $$;

create trigger turns_delete_events after delete on turns
    for each row execute function toolmark_delete_turn_events();
