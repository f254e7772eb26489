-- Several models. A turn records the id of the model that answers it (one
-- of GET /api/models; '' for turns from before models had ids), and a
-- conversation remembers the model of its latest turn, used by a turn that
-- names none.
alter table turns add column model text not null default '';
alter table conversations add column model text not null default '';
