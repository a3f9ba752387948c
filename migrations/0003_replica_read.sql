-- A fourth mitigation, replica_read: a hot key's reads spread over its primary's replicas (see docs/architecture.md).
-- The CHECK constraints of 0001 list the mitigations by name, so they are replaced by ones that list it too.

ALTER TABLE hot_key_registry DROP CONSTRAINT hot_key_registry_mitigation_type_check;
ALTER TABLE hot_key_registry ADD CONSTRAINT hot_key_registry_mitigation_type_check
  CHECK (mitigation_type IN ('local_cache', 'split', 'coalesce', 'replica_read'));

ALTER TABLE hot_key_events DROP CONSTRAINT hot_key_events_mitigation_type_check;
ALTER TABLE hot_key_events ADD CONSTRAINT hot_key_events_mitigation_type_check
  CHECK (mitigation_type IN ('local_cache', 'split', 'coalesce', 'replica_read'));
