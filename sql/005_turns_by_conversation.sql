-- The runner loads a conversation's finished turns before it runs a new
-- one; without this index that read scanned every turn of every
-- conversation.
create index turns_conversation on turns (conversation_id, created_at);
