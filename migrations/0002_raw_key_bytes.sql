-- Keys as bytes. Postgres `text` cannot hold a NUL character, yet Redis keys (and the protocol) can, so a key
-- like "a\0b" failed every registry write. `raw_key_bytes` holds the key losslessly and is the only copy
-- Heatsink reads; `key_hash` stays the identity. Encoding (services/aggregator/src/registry/raw-key.ts): the
-- key's UTF-8 bytes, which are exactly the bytes Redis stores; a lone UTF-16 surrogate, which UTF-8 cannot
-- express, takes its generalized (WTF-8) three-byte form so the JavaScript string comes back unchanged.
-- `raw_key` stays as a readable copy for operators (psql, dashboards); it is NULL when the key holds a NUL.

ALTER TABLE hot_key_registry ADD COLUMN raw_key_bytes bytea;
UPDATE hot_key_registry SET raw_key_bytes = convert_to(raw_key, 'UTF8');
ALTER TABLE hot_key_registry ALTER COLUMN raw_key_bytes SET NOT NULL, ALTER COLUMN raw_key DROP NOT NULL;

ALTER TABLE hot_key_events ADD COLUMN raw_key_bytes bytea;
UPDATE hot_key_events SET raw_key_bytes = convert_to(raw_key, 'UTF8');
ALTER TABLE hot_key_events ALTER COLUMN raw_key_bytes SET NOT NULL, ALTER COLUMN raw_key DROP NOT NULL;

-- jsonb rejects the escape \u0000 (and lone surrogates), which the encoded event of such a key contains. As
-- text, the payload is kept exactly as encoded (JSON escapes NUL and lone surrogates, so the text is plain).
ALTER TABLE hot_key_events ALTER COLUMN payload TYPE text USING payload::text;
