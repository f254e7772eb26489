-- The text read from a PDF upload, for models that take no documents (the
-- PDF goes to them as text): read once, when a turn first sends the PDF to
-- such a model, and kept; '' when the PDF has none that can be read
-- (scanned, encrypted or damaged); null when not read yet, and for other
-- files.
alter table uploads add column text text;
