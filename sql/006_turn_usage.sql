-- The tokens a turn's model calls used, as the model services reported
-- them (0 when they report none): written with the turn's end.
alter table turns
	add column input_tokens bigint not null default 0,
	add column output_tokens bigint not null default 0;
