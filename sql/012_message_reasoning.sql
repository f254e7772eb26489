-- The thinking of a reasoning model's answer, kept with the message: its
-- displayable text, how long the model thought, and the provider's items
-- (thinking blocks with their signatures, redacted data, reasoning_content,
-- thought signatures) that the model wants back in later turns. Written
-- with the message's content; null when the model did not think.
alter table messages add column reasoning jsonb;
