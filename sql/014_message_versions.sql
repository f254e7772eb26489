-- Versions of a question. An edit, a regeneration or a retry asks a
-- question again in place of an earlier one (whose branch stays, marked
-- replaced_by the new turn); version_of groups the questions asked in one
-- place under the first one's id (null on that first one), so that a client
-- can show "‹ 2/3 ›" and switch the conversation's branch to another
-- version (store.SelectVersion).
alter table messages add column version_of text;
create index messages_versions on messages (version_of) where version_of is not null;

-- The questions asked in place of others so far: each turn's question
-- follows the first question its turn replaced.
with recursive pred as (
	select n.id as new_id,
		(select o.id from messages o where o.replaced_by = t.id and o.role = 'user' order by o.pos limit 1) as old_id
	from turns t join messages n on n.id = t.user_message_id
), chain as (
	select p.new_id, p.old_id as root from pred p
	where p.old_id is not null and not exists (select 1 from pred q where q.new_id = p.old_id and q.old_id is not null)
	union all
	select p.new_id, c.root from pred p join chain c on p.old_id = c.new_id
)
update messages m set version_of = chain.root from chain where m.id = chain.new_id;
