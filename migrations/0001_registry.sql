-- The HotKeyRegistry: current state per key, the audit trail of every change, and the registry version.
-- Applied by services/aggregator at start, under an advisory lock. Append-only: change the schema in a new file.

-- One row. A change takes its version with `UPDATE registry_meta SET version = version + 1 RETURNING version`
-- inside its own transaction; the row lock held until commit serializes writers across replicas, so versions
-- are gap-free, and a reader that sees version N also sees every change up to N.
CREATE TABLE registry_meta (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL DEFAULT 0 CHECK (version >= 0)
);
INSERT INTO registry_meta (id, version) VALUES (true, 0);

-- Rows are never deleted: a demoted key keeps its row (status 'demoted'), and promoting it again reactivates it.
CREATE TABLE hot_key_registry (
  key_hash text PRIMARY KEY,
  raw_key text NOT NULL UNIQUE,
  detected_at timestamptz NOT NULL,
  mitigation_type text NOT NULL CHECK (mitigation_type IN ('local_cache', 'split', 'coalesce')),
  split_factor integer NOT NULL DEFAULT 1
    CHECK (split_factor BETWEEN 1 AND 1024 AND (split_factor & (split_factor - 1)) = 0),
  ttl_seconds integer CHECK (ttl_seconds > 0),
  status text NOT NULL CHECK (status IN ('active', 'demoted')),
  source text NOT NULL CHECK (source IN ('auto', 'manual')),
  version bigint NOT NULL,
  updated_at timestamptz NOT NULL,
  expires_at timestamptz,
  requests_per_second double precision
);

-- The expiry sweep reads only active entries that can lapse.
CREATE INDEX hot_key_registry_expiry ON hot_key_registry (expires_at)
  WHERE status = 'active' AND expires_at IS NOT NULL;

-- One row per registry version: the audit trail and the outbox the publisher broadcasts from.
CREATE TABLE hot_key_events (
  version bigint PRIMARY KEY,
  key_hash text NOT NULL,
  raw_key text NOT NULL,
  type text NOT NULL CHECK (type IN ('promote', 'update', 'demote')),
  actor text NOT NULL,
  reason text NOT NULL,
  requests_per_second double precision,
  mitigation_type text NOT NULL CHECK (mitigation_type IN ('local_cache', 'split', 'coalesce')),
  split_factor integer NOT NULL,
  ttl_seconds integer,
  source text NOT NULL CHECK (source IN ('auto', 'manual')),
  at timestamptz NOT NULL,
  -- When the reports first showed the key hot (automatic promotions); the publisher measures detection latency from it.
  onset_at timestamptz,
  -- The encoded RegistryEvent, published as is.
  payload jsonb NOT NULL
);

CREATE INDEX hot_key_events_key_hash ON hot_key_events (key_hash, version);
