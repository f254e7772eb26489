-- Events in fewer bytes. A demo turn writes about 88 event rows, 64 of them
-- text of about 30 bytes, and a row took 96 bytes: the type as text ("text_delta",
-- 11 bytes), the seq as a bigint, and the padding before the time. The type
-- is now a number (store/eventtype.go names them; a number, once given,
-- never changes), the seq an integer (a turn writes far fewer than 2^31
-- events), and the fixed-width columns come first: a text row takes 80
-- bytes, and 19 fewer bytes of WAL.

-- No event may be committed between the copy and the drop: it would be lost
-- with the old table. A replica of the version before that still runs waits
-- here, and its commits fail from then on (stop old replicas first; see
-- docs/storage.md).
lock table events in share mode;

create table events_compact (
    turn bigint      not null,
    time timestamptz not null,
    seq  integer     not null,
    type smallint    not null,
    data json        not null,
    primary key (turn, seq)
);

insert into events_compact (turn, time, seq, type, data)
select turn, time, seq, case type
        when 'turn_queued' then 1
        when 'turn_started' then 2
        when 'round_started' then 3
        when 'text_delta' then 4
        when 'tool_call_started' then 5
        when 'tool_call_delta' then 6
        when 'tool_call_running' then 7
        when 'tool_call_success' then 8
        when 'tool_call_error' then 9
        when 'todo_update' then 10
        when 'subagent_status' then 11
        when 'snapshot' then 12
        when 'model_retry' then 13
        when 'usage' then 14
        when 'turn_completed' then 15
        when 'turn_failed' then 16
        when 'turn_cancelled' then 17
    end, data
from events;

drop table events;
alter table events_compact rename to events;
alter index events_compact_pkey rename to events_pkey;

-- The rows of a turn no longer reference it, nor it its messages, through
-- foreign keys: each check locked the referenced row (FOR KEY SHARE), a WAL
-- record and a query per tool call, todo list and message written. Every
-- writer of these rows checks the turn itself (the group commit's lease
-- guard; the turn's creation writes its messages in the same statement).
-- Deleting a conversation still deletes its turns and messages through
-- their keys to it; deleting a turn deletes its events, tool calls and
-- todos through this trigger.
alter table turns
    drop constraint turns_user_message_id_fkey,
    drop constraint turns_assistant_message_id_fkey;
alter table messages drop constraint messages_turn_id_fkey;
-- No statement looks messages up by their turn; the index served the key
-- alone, and every message written and moved cost an entry in it.
drop index messages_turn_id;
alter table tool_calls drop constraint tool_calls_turn_id_fkey;
alter table todos drop constraint todos_turn_id_fkey;

create or replace function toolmark_delete_turn_events() returns trigger language plpgsql as $$
begin
    delete from events where turn = old.num;
    delete from tool_calls where turn_id = old.id;
    delete from todos where turn_id = old.id;
    return old;
end $$;
