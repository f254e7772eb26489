-- The summary of a conversation covers its oldest turns up to and including
-- this one; the model gets the summary and the turns after it.
alter table conversations add column summary_through text not null default '';
