-- A finished message never changes: its rendering is kept with it. html_key
-- names what it was rendered from (the renderer's version and the message's
-- seq), so a new renderer or a newer seq renders again.
alter table messages
	add column html text,
	add column html_key text;

-- Retry, regenerate and edit start a new turn in place of the tail of a
-- conversation: the messages they replace stay, marked with the turn that
-- replaced them, and are left out of the conversation and of the model's
-- history.
alter table messages add column replaced_by text;
create index messages_conversation_live on messages (conversation_id, pos) where replaced_by is null;
