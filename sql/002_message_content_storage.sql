-- Store message content out of line but uncompressed: RewriteToolCall and
-- SaveContent rewrite whole messages of up to several MB, and pglz
-- compression of every new version cost more than the space it saves.
alter table messages alter column content set storage external;
