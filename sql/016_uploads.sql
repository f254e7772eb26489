-- Files users upload to attach to their questions. The bytes are kept once
-- per owner and content (sha256 is their SHA-256): the same file uploaded
-- again is the same upload. media_type was found by sniffing the bytes
-- (toolmark.SniffUpload), never taken from the name or the client; name is
-- the cleaned name the client sent (toolmark.CleanUploadName), shown only
-- escaped.
create table uploads (
    id         text primary key default time_ordered_id(),
    owner_id   text not null references users (id) on delete cascade,
    sha256     bytea not null,
    name       text not null,
    media_type text not null,
    size       bigint not null,
    data       bytea not null,
    created_at timestamptz not null default now(),
    unique (owner_id, sha256)
);
-- Kept out of line: a look at an upload's metadata does not read its bytes.
alter table uploads alter column data set storage external;

-- The uploads a user message carries, in the order they were attached;
-- written with the message (store.CreateTurn).
create table message_attachments (
    message_id text not null references messages (id) on delete cascade,
    upload_id  text not null references uploads (id) on delete cascade,
    pos        int not null,
    primary key (message_id, pos)
);
create index message_attachments_upload on message_attachments (upload_id);
