// The store's schema on SQLite and PostgreSQL: one numbered list of steps, the same version numbers on both engines,
// and the two small runners that apply it, each step in a transaction, refusing a store newer than the list before
// anything is written. Times and lengths are INTEGER on SQLite and bigint on PostgreSQL (milliseconds since the epoch,
// bytes), read back as numbers on both.
import type pg from 'pg';
import type { SqliteDatabase } from './sqlite-driver.js';

/** What takes a store from one version to the next, in each engine's SQL. */
export interface Migration {
  readonly sqlite: string;
  readonly postgres: string;
}

// Versions 1 to 9 were numbered apart on each engine (the same number did not mean the same tables), so they are
// kept as each engine's own history: a store of any of those versions climbs its engine's steps, then version 10.
const SQLITE_HISTORY: readonly string[] = [
  // Version 1: lobbies, players, builds, their uploads and parts, exports.
  `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE lobbies (
  lobby_id TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL,
  game_mode TEXT NOT NULL,
  region_id TEXT NOT NULL,
  region_name TEXT NOT NULL,
  max_players INTEGER NOT NULL,
  publicity TEXT NOT NULL,
  tags TEXT NOT NULL,
  lobby_config TEXT,
  create_ts INTEGER NOT NULL,
  start_ts INTEGER NOT NULL,
  ready_ts INTEGER NOT NULL,
  stop_ts INTEGER,
  exit_code INTEGER,
  failed INTEGER
);
CREATE INDEX lobbies_create_ts ON lobbies (create_ts);
CREATE INDEX lobbies_stop_ts ON lobbies (stop_ts);
CREATE INDEX lobbies_running ON lobbies (namespace_id) WHERE stop_ts IS NULL;
CREATE TABLE players (
  player_id TEXT PRIMARY KEY,
  lobby_id TEXT NOT NULL REFERENCES lobbies (lobby_id),
  create_ts INTEGER NOT NULL
);
CREATE INDEX players_lobby ON players (lobby_id);
CREATE TABLE builds (
  build_id TEXT PRIMARY KEY,
  game_id TEXT NOT NULL,
  upload_id TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  image_tag TEXT NOT NULL,
  kind TEXT NOT NULL,
  compression TEXT NOT NULL,
  path TEXT NOT NULL,
  content_type TEXT,
  content_length INTEGER NOT NULL,
  sha256 TEXT,
  complete INTEGER NOT NULL DEFAULT 0,
  create_ts INTEGER NOT NULL,
  complete_ts INTEGER,
  UNIQUE (game_id, image_tag)
);
CREATE TABLE uploads (
  upload_id TEXT PRIMARY KEY,
  build_id TEXT NOT NULL REFERENCES builds (build_id),
  content_length INTEGER NOT NULL,
  part_size INTEGER NOT NULL,
  part_count INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  claim_ts INTEGER
);
CREATE TABLE upload_parts (
  upload_id TEXT NOT NULL REFERENCES uploads (upload_id),
  part_number INTEGER NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  update_ts INTEGER NOT NULL,
  PRIMARY KEY (upload_id, part_number)
);
CREATE TABLE exports (
  export_id TEXT PRIMARY KEY,
  game_id TEXT NOT NULL,
  csv TEXT NOT NULL,
  create_ts INTEGER NOT NULL,
  expires_ts INTEGER NOT NULL
);
`,
  // Version 2: the idle lifetime.
  `
ALTER TABLE lobbies ADD COLUMN idle_lifetime_ms INTEGER;
ALTER TABLE lobbies ADD COLUMN idle_stop_ts INTEGER;
`,
  // Version 3: games per CI job (POST /_emulator/games), each with its one namespace; the indexes its purge reads by.
  `
CREATE TABLE games (
  game_id TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  game_modes TEXT NOT NULL,
  regions TEXT NOT NULL,
  create_ts INTEGER NOT NULL,
  expire_ts INTEGER NOT NULL,
  delete_ts INTEGER
);
CREATE INDEX games_expire_ts ON games (expire_ts);
CREATE INDEX lobbies_namespace ON lobbies (namespace_id);
CREATE INDEX exports_game ON exports (game_id);
`,
  // Version 4: the players of running lobbies by namespace, game mode and region, so player statistics read a few
  // rows, not every running lobby; filled from the lobbies a store holds.
  `
CREATE TABLE running_players (
  namespace_id TEXT NOT NULL,
  game_mode TEXT NOT NULL,
  region_id TEXT NOT NULL,
  player_count INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, game_mode, region_id)
) WITHOUT ROWID;
-- The running lobbies of a namespace in one game mode and region.
CREATE INDEX lobbies_running_mode ON lobbies (namespace_id, game_mode, region_id) WHERE stop_ts IS NULL;
DELETE FROM running_players;
INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
  SELECT l.namespace_id, l.game_mode, l.region_id, COUNT(*) FROM lobbies l JOIN players p ON p.lobby_id = l.lobby_id
   WHERE l.stop_ts IS NULL GROUP BY l.namespace_id, l.game_mode, l.region_id;
`,
  // Version 5: the matchmaker: lobby ports, closed, state, readiness and a live player count; players pending,
  // connected and removed. Players of an older store had been counted by the statistics: they count as connected.
  // Version 4's statistics triggers go.
  `
ALTER TABLE lobbies ADD COLUMN ports TEXT NOT NULL DEFAULT '{}';
ALTER TABLE lobbies ADD COLUMN auto_created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN is_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN state TEXT;
ALTER TABLE lobbies ADD COLUMN ready_deadline_ts INTEGER;
ALTER TABLE lobbies ADD COLUMN player_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN source_ip TEXT NOT NULL DEFAULT '';
ALTER TABLE players ADD COLUMN register_by_ts INTEGER;
ALTER TABLE players ADD COLUMN connect_ts INTEGER;
ALTER TABLE players ADD COLUMN remove_ts INTEGER;
UPDATE players SET connect_ts = create_ts;
UPDATE lobbies SET player_count = (SELECT COUNT(*) FROM players p WHERE p.lobby_id = lobbies.lobby_id);
DROP TRIGGER IF EXISTS running_players_join;
DROP TRIGGER IF EXISTS running_players_leave;
DROP TRIGGER IF EXISTS running_players_stop;
DROP TRIGGER IF EXISTS running_players_delete;
`,
  // Version 6: who runs a lobby's server (readiness `run`): the replica and its process, and the server's process,
  // so a replica that restarts finds its lobbies and what its predecessor left running.
  `
ALTER TABLE lobbies ADD COLUMN owner TEXT;
ALTER TABLE lobbies ADD COLUMN owner_pid INTEGER;
ALTER TABLE lobbies ADD COLUMN owner_start INTEGER;
ALTER TABLE lobbies ADD COLUMN server_pid INTEGER;
ALTER TABLE lobbies ADD COLUMN server_start INTEGER;
`,
  // Version 7: player statistics count connected players only (a pending player holds a place against capacity but
  // is not in game). Version 5's triggers, which counted pending players too, go (version 10 makes the ones that
  // count connected players); running_players is counted again from the players a store holds.
  `
DROP TRIGGER IF EXISTS running_players_join;
DROP TRIGGER IF EXISTS running_players_leave;
DROP TRIGGER IF EXISTS running_players_remove;
DROP TRIGGER IF EXISTS running_players_stop;
DROP TRIGGER IF EXISTS running_players_delete;
DELETE FROM running_players;
INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
  SELECT l.namespace_id, l.game_mode, l.region_id, COUNT(*) FROM lobbies l JOIN players p ON p.lobby_id = l.lobby_id
   WHERE l.stop_ts IS NULL AND p.connect_ts IS NOT NULL AND p.remove_ts IS NULL
   GROUP BY l.namespace_id, l.game_mode, l.region_id;
`,
  // Version 8: when each replica that runs servers last said its records were current (every exit of its servers
  // written): find hands out its lobbies only while that is recent, so an outage or a dead replica never sends a
  // player to a server that is gone.
  `
CREATE TABLE IF NOT EXISTS replicas (
  replica TEXT PRIMARY KEY,
  seen_ts INTEGER NOT NULL
) WITHOUT ROWID;
`,
  // Version 9: a lobby's lines in a rowid table with an index on (lobby, stream, stamp). In the WITHOUT ROWID table
  // before, a row over about 1,000 bytes (SQLite's local payload bound for an index b-tree of 4 KiB pages) overflowed
  // into a page of its own: a 1 KB line took 5 KB on disk, and a stream within its 5 MiB bound took 25 MiB. A table
  // b-tree row keeps about 4,000 bytes in its page, and a longer line's overflow pages are filled.
  `
-- A store from before a lobby's output was kept (those tables came with no version of their own) has none yet.
CREATE TABLE IF NOT EXISTS lobby_logs (
  lobby_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  ts INTEGER NOT NULL,
  line BLOB NOT NULL,
  PRIMARY KEY (lobby_id, stream, ts)
) WITHOUT ROWID;
CREATE TABLE lobby_logs_rows (
  id INTEGER PRIMARY KEY,
  lobby_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  ts INTEGER NOT NULL,
  line BLOB NOT NULL
);
INSERT INTO lobby_logs_rows (lobby_id, stream, ts, line) SELECT lobby_id, stream, ts, line FROM lobby_logs ORDER BY lobby_id, stream, ts;
DROP TABLE lobby_logs;
ALTER TABLE lobby_logs_rows RENAME TO lobby_logs;
CREATE UNIQUE INDEX lobby_logs_stream ON lobby_logs (lobby_id, stream, ts);
`,
];

const POSTGRES_HISTORY: readonly string[] = [
  // Version 1: lobbies, players, builds, their uploads and parts, exports.
  `
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE lobbies (
  lobby_id text PRIMARY KEY,
  namespace_id text NOT NULL,
  game_mode text NOT NULL,
  region_id text NOT NULL,
  region_name text NOT NULL,
  max_players integer NOT NULL,
  publicity text NOT NULL,
  tags text NOT NULL,
  lobby_config text,
  create_ts bigint NOT NULL,
  start_ts bigint NOT NULL,
  ready_ts bigint NOT NULL,
  stop_ts bigint,
  exit_code integer,
  failed integer,
  idle_lifetime_ms bigint,
  idle_stop_ts bigint
);
CREATE INDEX lobbies_create_ts ON lobbies (create_ts);
CREATE INDEX lobbies_stop_ts ON lobbies (stop_ts);
CREATE INDEX lobbies_running ON lobbies (namespace_id) WHERE stop_ts IS NULL;
CREATE INDEX lobbies_idle ON lobbies (idle_stop_ts) WHERE stop_ts IS NULL AND idle_stop_ts IS NOT NULL;
CREATE TABLE players (
  player_id text PRIMARY KEY,
  lobby_id text NOT NULL REFERENCES lobbies (lobby_id),
  create_ts bigint NOT NULL
);
CREATE INDEX players_lobby ON players (lobby_id);
CREATE TABLE builds (
  build_id text PRIMARY KEY,
  game_id text NOT NULL,
  upload_id text NOT NULL UNIQUE,
  display_name text NOT NULL,
  image_tag text NOT NULL,
  kind text NOT NULL,
  compression text NOT NULL,
  path text NOT NULL,
  content_type text,
  content_length bigint NOT NULL,
  sha256 text,
  complete integer NOT NULL DEFAULT 0,
  create_ts bigint NOT NULL,
  complete_ts bigint,
  CONSTRAINT builds_game_tag UNIQUE (game_id, image_tag)
);
CREATE TABLE uploads (
  upload_id text PRIMARY KEY,
  build_id text NOT NULL REFERENCES builds (build_id),
  content_length bigint NOT NULL,
  part_size bigint NOT NULL,
  part_count integer NOT NULL,
  state text NOT NULL DEFAULT 'pending',
  claim_ts bigint
);
CREATE TABLE upload_parts (
  upload_id text NOT NULL REFERENCES uploads (upload_id),
  part_number integer NOT NULL,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  update_ts bigint NOT NULL,
  PRIMARY KEY (upload_id, part_number)
);
CREATE TABLE exports (
  export_id text PRIMARY KEY,
  game_id text NOT NULL,
  csv text NOT NULL,
  create_ts bigint NOT NULL,
  expires_ts bigint NOT NULL
);
CREATE INDEX exports_expires ON exports (expires_ts);
`,
  // Version 2: games per CI job (POST /_emulator/games), each with its one namespace; and the indexes its purge reads by.
  `
CREATE TABLE games (
  game_id text PRIMARY KEY,
  namespace_id text NOT NULL UNIQUE,
  name text NOT NULL,
  game_modes text NOT NULL,
  regions text NOT NULL,
  create_ts bigint NOT NULL,
  expire_ts bigint NOT NULL,
  delete_ts bigint
);
CREATE INDEX games_expire_ts ON games (expire_ts);
CREATE INDEX lobbies_namespace ON lobbies (namespace_id);
CREATE INDEX exports_game ON exports (game_id);
`,
  // Version 3: the players of running lobbies by namespace, game mode and region, kept by triggers on every write
  // that changes them (a player in or out, a lobby stopped or deleted), so player statistics read a few rows, not
  // every running lobby; filled from the lobbies already there. And the index a matchmaker's find reads by.
  `
CREATE TABLE running_players (
  namespace_id text NOT NULL,
  game_mode text NOT NULL,
  region_id text NOT NULL,
  player_count bigint NOT NULL,
  PRIMARY KEY (namespace_id, game_mode, region_id)
);
CREATE FUNCTION running_players_on_player() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l record;
BEGIN
  SELECT namespace_id, game_mode, region_id, stop_ts INTO l FROM lobbies
   WHERE lobby_id = CASE WHEN TG_OP = 'INSERT' THEN NEW.lobby_id ELSE OLD.lobby_id END;
  IF NOT FOUND OR l.stop_ts IS NOT NULL THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO running_players (namespace_id, game_mode, region_id, player_count) VALUES (l.namespace_id, l.game_mode, l.region_id, 1)
      ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = running_players.player_count + 1;
  ELSE
    UPDATE running_players SET player_count = player_count - 1
     WHERE namespace_id = l.namespace_id AND game_mode = l.game_mode AND region_id = l.region_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER running_players_player AFTER INSERT OR DELETE ON players FOR EACH ROW EXECUTE FUNCTION running_players_on_player();
CREATE FUNCTION running_players_on_lobby() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.stop_ts IS NULL AND (TG_OP = 'DELETE' OR NEW.stop_ts IS NOT NULL) THEN
    UPDATE running_players SET player_count = player_count - (SELECT count(*) FROM players WHERE lobby_id = OLD.lobby_id)
     WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER running_players_lobby AFTER UPDATE OF stop_ts OR DELETE ON lobbies FOR EACH ROW EXECUTE FUNCTION running_players_on_lobby();
INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
  SELECT l.namespace_id, l.game_mode, l.region_id, count(*) FROM lobbies l JOIN players p ON p.lobby_id = l.lobby_id
   WHERE l.stop_ts IS NULL GROUP BY l.namespace_id, l.game_mode, l.region_id;
CREATE INDEX lobbies_running_mode ON lobbies (namespace_id, game_mode, region_id) WHERE stop_ts IS NULL;
`,
  // Version 4: lobbies' output, per stream (lobby_log_streams keeps what the bounds are checked against).
  `
CREATE TABLE lobby_log_streams (
  lobby_id text NOT NULL,
  stream text NOT NULL,
  last_ts bigint NOT NULL,
  line_count integer NOT NULL,
  byte_count bigint NOT NULL,
  PRIMARY KEY (lobby_id, stream)
);
CREATE TABLE lobby_logs (
  lobby_id text NOT NULL,
  stream text NOT NULL,
  ts bigint NOT NULL,
  line bytea NOT NULL,
  PRIMARY KEY (lobby_id, stream, ts)
);
`,
  // Version 5: the matchmaker (find, join, ready, closed, state, players connected and removed). Players an older
  // store kept had been counted by the statistics: they count as connected. lobbies_find is what find reads. The statistics' triggers count players not removed.
  `
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS ports text NOT NULL DEFAULT '{}', ADD COLUMN IF NOT EXISTS auto_created integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS is_closed integer NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS state text, ADD COLUMN IF NOT EXISTS ready_deadline_ts bigint,
  ADD COLUMN IF NOT EXISTS player_count integer NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN IF NOT EXISTS source_ip text NOT NULL DEFAULT '', ADD COLUMN IF NOT EXISTS register_by_ts bigint,
  ADD COLUMN IF NOT EXISTS connect_ts bigint, ADD COLUMN IF NOT EXISTS remove_ts bigint;
UPDATE players SET connect_ts = create_ts;
UPDATE lobbies SET player_count = (SELECT COUNT(*) FROM players p WHERE p.lobby_id = lobbies.lobby_id);
CREATE INDEX IF NOT EXISTS lobbies_find ON lobbies (namespace_id, game_mode, region_id, player_count) WHERE stop_ts IS NULL AND is_closed = 0;
CREATE INDEX IF NOT EXISTS lobbies_ready_deadline ON lobbies (ready_deadline_ts) WHERE stop_ts IS NULL AND ready_deadline_ts IS NOT NULL;
CREATE INDEX IF NOT EXISTS players_pending ON players (register_by_ts) WHERE connect_ts IS NULL AND remove_ts IS NULL;
CREATE INDEX IF NOT EXISTS players_pending_source ON players (source_ip) WHERE connect_ts IS NULL AND remove_ts IS NULL;
CREATE OR REPLACE FUNCTION running_players_on_player() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l record;
  lobby text;
BEGIN
  -- Only a player who holds a place counts: inserted not removed, removed now, or deleted while not removed.
  IF TG_OP = 'INSERT' THEN
    IF NEW.remove_ts IS NOT NULL THEN RETURN NULL; END IF;
    lobby := NEW.lobby_id;
  ELSIF TG_OP = 'UPDATE' THEN
    IF OLD.remove_ts IS NOT NULL OR NEW.remove_ts IS NULL THEN RETURN NULL; END IF;
    lobby := NEW.lobby_id;
  ELSE
    IF OLD.remove_ts IS NOT NULL THEN RETURN NULL; END IF;
    lobby := OLD.lobby_id;
  END IF;
  SELECT namespace_id, game_mode, region_id, stop_ts INTO l FROM lobbies WHERE lobby_id = lobby;
  IF NOT FOUND OR l.stop_ts IS NOT NULL THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO running_players (namespace_id, game_mode, region_id, player_count) VALUES (l.namespace_id, l.game_mode, l.region_id, 1)
      ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = running_players.player_count + 1;
  ELSE
    UPDATE running_players SET player_count = player_count - 1
     WHERE namespace_id = l.namespace_id AND game_mode = l.game_mode AND region_id = l.region_id;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER running_players_player ON players;
CREATE TRIGGER running_players_player AFTER INSERT OR DELETE OR UPDATE OF remove_ts ON players FOR EACH ROW EXECUTE FUNCTION running_players_on_player();
CREATE OR REPLACE FUNCTION running_players_on_lobby() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.stop_ts IS NULL AND (TG_OP = 'DELETE' OR NEW.stop_ts IS NOT NULL) THEN
    UPDATE running_players SET player_count = player_count - (SELECT count(*) FROM players WHERE lobby_id = OLD.lobby_id AND remove_ts IS NULL)
     WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
  END IF;
  RETURN NULL;
END $$;
`,
  // Version 6: who runs a lobby's server (readiness `run`): the replica and its process, and the server's process,
  // so a replica that restarts finds its lobbies and what its predecessor left running.
  `
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS owner text, ADD COLUMN IF NOT EXISTS owner_pid integer, ADD COLUMN IF NOT EXISTS owner_start bigint,
  ADD COLUMN IF NOT EXISTS server_pid integer, ADD COLUMN IF NOT EXISTS server_start bigint;
CREATE INDEX IF NOT EXISTS lobbies_owner ON lobbies (owner) WHERE stop_ts IS NULL AND owner IS NOT NULL;
`,
  // Version 7: player statistics count connected players only (a player counts from its connected call until it is
  // removed; a pending one holds a place against capacity but is not in game); running_players counted again.
  `
CREATE OR REPLACE FUNCTION running_players_on_player() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l record;
  lobby text;
  delta integer;
BEGIN
  -- Counted after (a new or updated row connected, not removed) minus counted before (an updated or deleted row).
  delta := 0;
  IF TG_OP <> 'DELETE' AND NEW.connect_ts IS NOT NULL AND NEW.remove_ts IS NULL THEN delta := delta + 1; END IF;
  IF TG_OP <> 'INSERT' AND OLD.connect_ts IS NOT NULL AND OLD.remove_ts IS NULL THEN delta := delta - 1; END IF;
  IF delta = 0 THEN RETURN NULL; END IF;
  lobby := CASE WHEN TG_OP = 'DELETE' THEN OLD.lobby_id ELSE NEW.lobby_id END;
  SELECT namespace_id, game_mode, region_id, stop_ts INTO l FROM lobbies WHERE lobby_id = lobby;
  IF NOT FOUND OR l.stop_ts IS NOT NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO running_players (namespace_id, game_mode, region_id, player_count) VALUES (l.namespace_id, l.game_mode, l.region_id, delta)
    ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = running_players.player_count + delta;
  RETURN NULL;
END $$;
DROP TRIGGER running_players_player ON players;
CREATE TRIGGER running_players_player AFTER INSERT OR DELETE OR UPDATE OF connect_ts, remove_ts ON players
  FOR EACH ROW EXECUTE FUNCTION running_players_on_player();
CREATE OR REPLACE FUNCTION running_players_on_lobby() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.stop_ts IS NULL AND (TG_OP = 'DELETE' OR NEW.stop_ts IS NOT NULL) THEN
    UPDATE running_players SET player_count = player_count -
        (SELECT count(*) FROM players WHERE lobby_id = OLD.lobby_id AND connect_ts IS NOT NULL AND remove_ts IS NULL)
     WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
  END IF;
  RETURN NULL;
END $$;
DELETE FROM running_players;
INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
  SELECT l.namespace_id, l.game_mode, l.region_id, count(*) FROM lobbies l JOIN players p ON p.lobby_id = l.lobby_id
   WHERE l.stop_ts IS NULL AND p.connect_ts IS NOT NULL AND p.remove_ts IS NULL
   GROUP BY l.namespace_id, l.game_mode, l.region_id;
`,
  // Version 8: the resource samples of a lobby's server, kept by the replica that runs it so that any replica answers
  // the lobby's metrics with them.
  `
CREATE TABLE IF NOT EXISTS lobby_samples (
  lobby_id text PRIMARY KEY,
  samples text NOT NULL
);
`,
  // Version 9: when each replica that runs servers last said its records were current (every exit of its servers
  // written): find hands out its lobbies only while that is recent, so an outage or a dead replica never sends a
  // player to a server that is gone.
  `
CREATE TABLE IF NOT EXISTS replicas (
  replica text PRIMARY KEY,
  seen_ts bigint NOT NULL
);
`,
];

/** A step both engines read the same way, written once. */
const both = (sql: string): Migration => ({ sqlite: sql, postgres: sql });

/**
 * The schema, one entry per version on both engines: entry i takes a store from version i to i + 1. Append, never
 * edit: a store is migrated from whatever version it holds up to the last entry, and one newer is refused. Write a
 * step's SQL once where both engines read it the same way; apart where they must differ (types, triggers).
 */
export const MIGRATIONS: readonly Migration[] = [
  ...SQLITE_HISTORY.map((sqlite, i) => ({ sqlite, postgres: POSTGRES_HISTORY[i]! })),
  // Version 10: both engines on one list. SQLite's tables of no version of their own (a lobby's output and
  // samples), its indexes on columns versions 2 to 6 added, and its statistics triggers were made at every open
  // before; here once. PostgreSQL's version 9 already is this schema.
  {
    sqlite: `
CREATE TABLE IF NOT EXISTS lobby_log_streams (
  lobby_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  last_ts INTEGER NOT NULL,
  line_count INTEGER NOT NULL,
  byte_count INTEGER NOT NULL,
  PRIMARY KEY (lobby_id, stream)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lobby_samples (
  lobby_id TEXT PRIMARY KEY,
  samples TEXT NOT NULL
) WITHOUT ROWID;
-- lobbies_find is what find reads, fullest first; the partial ones keep expireIdle's "anything due?" to an empty range.
CREATE INDEX IF NOT EXISTS lobbies_idle ON lobbies (idle_stop_ts) WHERE stop_ts IS NULL AND idle_stop_ts IS NOT NULL;
CREATE INDEX IF NOT EXISTS lobbies_find ON lobbies (namespace_id, game_mode, region_id, player_count) WHERE stop_ts IS NULL AND is_closed = 0;
CREATE INDEX IF NOT EXISTS lobbies_ready_deadline ON lobbies (ready_deadline_ts) WHERE stop_ts IS NULL AND ready_deadline_ts IS NOT NULL;
CREATE INDEX IF NOT EXISTS players_pending ON players (register_by_ts) WHERE connect_ts IS NULL AND remove_ts IS NULL;
CREATE INDEX IF NOT EXISTS players_pending_source ON players (source_ip) WHERE connect_ts IS NULL AND remove_ts IS NULL;
CREATE INDEX IF NOT EXISTS lobbies_owner ON lobbies (owner) WHERE stop_ts IS NULL AND owner IS NOT NULL;
-- The connected players of running lobbies by namespace, game mode and region (running_players), kept on every
-- write that changes them (a player in, connected, removed or deleted, a lobby stopped or deleted).
CREATE TRIGGER IF NOT EXISTS connected_players_insert AFTER INSERT ON players
  WHEN NEW.connect_ts IS NOT NULL AND NEW.remove_ts IS NULL AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = NEW.lobby_id)
BEGIN
  INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
    SELECT namespace_id, game_mode, region_id, 1 FROM lobbies WHERE lobby_id = NEW.lobby_id
    ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = player_count + 1;
END;
-- Connected (+1) or removed (-1): the difference between the row counted after and before.
CREATE TRIGGER IF NOT EXISTS connected_players_update AFTER UPDATE OF connect_ts, remove_ts ON players
  WHEN ((NEW.connect_ts IS NOT NULL AND NEW.remove_ts IS NULL) <> (OLD.connect_ts IS NOT NULL AND OLD.remove_ts IS NULL))
   AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = NEW.lobby_id)
BEGIN
  INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
    SELECT namespace_id, game_mode, region_id,
           (NEW.connect_ts IS NOT NULL AND NEW.remove_ts IS NULL) - (OLD.connect_ts IS NOT NULL AND OLD.remove_ts IS NULL)
      FROM lobbies WHERE lobby_id = NEW.lobby_id
    ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = player_count + excluded.player_count;
END;
CREATE TRIGGER IF NOT EXISTS connected_players_delete AFTER DELETE ON players
  WHEN OLD.connect_ts IS NOT NULL AND OLD.remove_ts IS NULL AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = OLD.lobby_id)
BEGIN
  UPDATE running_players SET player_count = player_count - 1
   WHERE (namespace_id, game_mode, region_id) = (SELECT namespace_id, game_mode, region_id FROM lobbies WHERE lobby_id = OLD.lobby_id);
END;
CREATE TRIGGER IF NOT EXISTS connected_players_stop AFTER UPDATE OF stop_ts ON lobbies
  WHEN OLD.stop_ts IS NULL AND NEW.stop_ts IS NOT NULL
BEGIN
  UPDATE running_players SET player_count = player_count -
      (SELECT COUNT(*) FROM players WHERE lobby_id = NEW.lobby_id AND connect_ts IS NOT NULL AND remove_ts IS NULL)
   WHERE namespace_id = NEW.namespace_id AND game_mode = NEW.game_mode AND region_id = NEW.region_id;
END;
CREATE TRIGGER IF NOT EXISTS connected_players_lobby_delete AFTER DELETE ON lobbies
  WHEN OLD.stop_ts IS NULL
BEGIN
  UPDATE running_players SET player_count = player_count -
      (SELECT COUNT(*) FROM players WHERE lobby_id = OLD.lobby_id AND connect_ts IS NOT NULL AND remove_ts IS NULL)
   WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
END;
`,
    postgres: '',
  },
  // Version 11: a game's versions (its configuration, as created), and the names reserved for them, by day. (IF NOT
  // EXISTS: the tests that take a store back to an older version keep the newer tables.)
  {
    sqlite: `
CREATE TABLE IF NOT EXISTS versions (
  version_id TEXT PRIMARY KEY,
  game_id TEXT NOT NULL,
  display_name TEXT NOT NULL,
  config TEXT NOT NULL,
  create_ts INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS versions_name ON versions (game_id, display_name);
CREATE TABLE IF NOT EXISTS version_names (
  game_id TEXT NOT NULL,
  day TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (game_id, day)
) WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE IF NOT EXISTS versions (
  version_id text PRIMARY KEY,
  game_id text NOT NULL,
  display_name text NOT NULL,
  config text NOT NULL,
  create_ts bigint NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS versions_name ON versions (game_id, display_name);
CREATE TABLE IF NOT EXISTS version_names (
  game_id text NOT NULL,
  day text NOT NULL,
  n integer NOT NULL,
  PRIMARY KEY (game_id, day)
);
`,
  },
  // Version 12: a game's namespaces, where they differ from the two every game starts with (prod and staging, on
  // version 0.0.1, with production's matchmaker defaults), and the versions each was given, in order.
  {
    sqlite: `
CREATE TABLE IF NOT EXISTS namespaces (
  namespace_id TEXT PRIMARY KEY,
  game_id TEXT NOT NULL,
  name_id TEXT NOT NULL,
  display_name TEXT NOT NULL,
  version_id TEXT NOT NULL,
  create_ts INTEGER NOT NULL,
  lobby_count_max INTEGER NOT NULL,
  max_players_per_client INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS namespaces_name ON namespaces (game_id, name_id);
CREATE TABLE IF NOT EXISTS namespace_versions (
  namespace_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  version_id TEXT NOT NULL,
  deploy_ts INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, seq)
) WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE IF NOT EXISTS namespaces (
  namespace_id text PRIMARY KEY,
  game_id text NOT NULL,
  name_id text NOT NULL,
  display_name text NOT NULL,
  version_id text NOT NULL,
  create_ts bigint NOT NULL,
  lobby_count_max integer NOT NULL,
  max_players_per_client integer
);
CREATE UNIQUE INDEX IF NOT EXISTS namespaces_name ON namespaces (game_id, name_id);
CREATE TABLE IF NOT EXISTS namespace_versions (
  namespace_id text NOT NULL,
  seq integer NOT NULL,
  version_id text NOT NULL,
  deploy_ts bigint NOT NULL,
  PRIMARY KEY (namespace_id, seq)
);
`,
  },
  // Version 13: the version each lobby was made with (it runs that version until it stops); lobbies made before ran
  // the version every game starts with, 0.0.1 (services/ids.ts VERSION_ID, written out: a step never changes).
  {
    sqlite: `ALTER TABLE lobbies ADD COLUMN version_id TEXT NOT NULL DEFAULT 'f2cd7525-490e-592c-8d39-7c4711c09058';`,
    postgres: `ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS version_id text NOT NULL DEFAULT 'f2cd7525-490e-592c-8d39-7c4711c09058';`,
  },
  // Version 14: idle lobbies (SERVICE-FACTS "Versions…" §3): how many idle lobbies a lobby's version keeps of its game
  // mode in its region (0, as every lobby before: an emptied lobby stops), and since when a lobby has held no player.
  // The per-client bound counts a source's players not yet removed, connected ones too (§6), as production does.
  {
    sqlite: `
ALTER TABLE lobbies ADD COLUMN idle_max INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN idle_ts INTEGER;
DROP INDEX IF EXISTS players_pending_source;
CREATE INDEX IF NOT EXISTS players_source ON players (source_ip) WHERE remove_ts IS NULL;
`,
    postgres: `
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS idle_max integer NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS idle_ts bigint;
DROP INDEX IF EXISTS players_pending_source;
CREATE INDEX IF NOT EXISTS players_source ON players (source_ip) WHERE remove_ts IS NULL;
`,
  },
  // Version 15: a lobby_logs row holds a run of lines (store.ts LogChunk): how many, and each one's length (NULL for
  // one, as every row before). A stream's byte count counts its rows too (LOG_BOUNDS.rowBytes, 160, written out).
  {
    sqlite: `
ALTER TABLE lobby_logs ADD COLUMN line_count INTEGER NOT NULL DEFAULT 1;
ALTER TABLE lobby_logs ADD COLUMN lengths BLOB;
UPDATE lobby_log_streams SET byte_count = byte_count + 160 * line_count;
`,
    postgres: `
ALTER TABLE lobby_logs ADD COLUMN IF NOT EXISTS line_count integer NOT NULL DEFAULT 1;
ALTER TABLE lobby_logs ADD COLUMN IF NOT EXISTS lengths bytea;
UPDATE lobby_log_streams SET byte_count = byte_count + 160 * line_count;
`,
  },
  // Version 16: the running lobbies of each namespace, counted (running_lobbies), kept by every write that changes
  // them (a lobby made, stopped or deleted): lobby_count_max was checked by counting the namespace's running lobbies
  // on each create, a read that grew with them. (IF NOT EXISTS: the tests that take a store back to an older version
  // keep the newer tables; the counts are made again from the lobbies.)
  {
    sqlite: `
CREATE TABLE IF NOT EXISTS running_lobbies (namespace_id TEXT PRIMARY KEY, lobby_count INTEGER NOT NULL);
DELETE FROM running_lobbies;
INSERT INTO running_lobbies (namespace_id, lobby_count) SELECT namespace_id, count(*) FROM lobbies WHERE stop_ts IS NULL GROUP BY namespace_id;
CREATE TRIGGER IF NOT EXISTS running_lobbies_insert AFTER INSERT ON lobbies WHEN NEW.stop_ts IS NULL
BEGIN
  INSERT INTO running_lobbies (namespace_id, lobby_count) SELECT NEW.namespace_id, 1 WHERE true
    ON CONFLICT (namespace_id) DO UPDATE SET lobby_count = lobby_count + 1;
END;
CREATE TRIGGER IF NOT EXISTS running_lobbies_stop AFTER UPDATE OF stop_ts ON lobbies WHEN OLD.stop_ts IS NULL AND NEW.stop_ts IS NOT NULL
BEGIN
  UPDATE running_lobbies SET lobby_count = lobby_count - 1 WHERE namespace_id = OLD.namespace_id;
END;
CREATE TRIGGER IF NOT EXISTS running_lobbies_delete AFTER DELETE ON lobbies WHEN OLD.stop_ts IS NULL
BEGIN
  UPDATE running_lobbies SET lobby_count = lobby_count - 1 WHERE namespace_id = OLD.namespace_id;
END;
`,
    postgres: `
CREATE TABLE IF NOT EXISTS running_lobbies (namespace_id text PRIMARY KEY, lobby_count integer NOT NULL);
DELETE FROM running_lobbies;
INSERT INTO running_lobbies (namespace_id, lobby_count) SELECT namespace_id, count(*) FROM lobbies WHERE stop_ts IS NULL GROUP BY namespace_id;
CREATE OR REPLACE FUNCTION running_lobbies_on_lobby() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.stop_ts IS NULL THEN
      INSERT INTO running_lobbies (namespace_id, lobby_count) VALUES (NEW.namespace_id, 1)
        ON CONFLICT (namespace_id) DO UPDATE SET lobby_count = running_lobbies.lobby_count + 1;
    END IF;
  ELSIF OLD.stop_ts IS NULL AND (TG_OP = 'DELETE' OR NEW.stop_ts IS NOT NULL) THEN
    UPDATE running_lobbies SET lobby_count = lobby_count - 1 WHERE namespace_id = OLD.namespace_id;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS running_lobbies_lobby ON lobbies;
CREATE TRIGGER running_lobbies_lobby AFTER INSERT OR DELETE OR UPDATE OF stop_ts ON lobbies FOR EACH ROW EXECUTE FUNCTION running_lobbies_on_lobby();
`,
  },
  // Version 17: a lobby's three player counts, as production's lobby keeps them (SERVICE-FACTS "Client routes"): join
  // counts against max_players_direct, find against max_players (normal). Lobbies made before had one count for all.
  {
    sqlite: `
ALTER TABLE lobbies ADD COLUMN max_players_direct INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN max_players_party INTEGER NOT NULL DEFAULT 0;
UPDATE lobbies SET max_players_direct = max_players, max_players_party = max_players;
`,
    postgres: `
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS max_players_direct integer NOT NULL DEFAULT 0;
ALTER TABLE lobbies ADD COLUMN IF NOT EXISTS max_players_party integer NOT NULL DEFAULT 0;
UPDATE lobbies SET max_players_direct = max_players, max_players_party = max_players;
`,
  },
  // Version 18: three indexes every create wrote and no query needs. lobbies_stop_ts (every running lobby under one
  // NULL key) was what SQLite chose to look for due idle stops and ready deadlines, a walk over every running lobby
  // where lobbies_idle and lobbies_ready_deadline hold only what may be due; lobbies_create_ts is read by nothing
  // (lists and the history are per namespace); lobbies_running is lobbies_running_mode's first column.
  both(`
DROP INDEX IF EXISTS lobbies_create_ts;
DROP INDEX IF EXISTS lobbies_stop_ts;
DROP INDEX IF EXISTS lobbies_running;
`),
  // Version 19: a namespace's lobbies in the history's order (newest first, then the id's bytes), so the export and
  // the lobby list read them a page at a time from where the last page ended, never the whole history and a sort
  // of it (a second of a replica's time at 30,000 lobbies). It takes the place of lobbies_namespace, its first column.
  {
    sqlite: `
CREATE INDEX IF NOT EXISTS lobbies_history ON lobbies (namespace_id, create_ts DESC, lobby_id);
DROP INDEX IF EXISTS lobbies_namespace;
`,
    postgres: `
CREATE INDEX IF NOT EXISTS lobbies_history ON lobbies (namespace_id, create_ts DESC, lobby_id COLLATE "C");
DROP INDEX IF EXISTS lobbies_namespace;
`,
  },
  // Version 20: a lobby that stops removes its players, as production's lobby cleanup does (remove_ts, the stop's
  // time). They stayed "not removed" before: players_source kept every connected player of every stopped lobby, and
  // each per-client check walked a source's whole history (18 ms a check at 20,000 past players of one address).
  // One trigger, which counts the connected players it removes out of running_players (the players' own triggers
  // see a stopped lobby and count nothing). On PostgreSQL it takes the players' rows before the count's, the order
  // of a player's own writes, and counts what its UPDATE removed once their locks were its: a connect or disconnect
  // racing the stop waits for it or is waited for, never deadlocks with it, and is counted once.
  {
    sqlite: `
DROP TRIGGER IF EXISTS connected_players_stop;
CREATE TRIGGER connected_players_stop AFTER UPDATE OF stop_ts ON lobbies
  WHEN OLD.stop_ts IS NULL AND NEW.stop_ts IS NOT NULL
BEGIN
  UPDATE running_players SET player_count = player_count -
      (SELECT COUNT(*) FROM players WHERE lobby_id = NEW.lobby_id AND connect_ts IS NOT NULL AND remove_ts IS NULL)
   WHERE namespace_id = NEW.namespace_id AND game_mode = NEW.game_mode AND region_id = NEW.region_id;
  UPDATE players SET remove_ts = NEW.stop_ts WHERE lobby_id = NEW.lobby_id AND remove_ts IS NULL;
END;
UPDATE players SET remove_ts = (SELECT stop_ts FROM lobbies WHERE lobbies.lobby_id = players.lobby_id)
 WHERE remove_ts IS NULL AND (SELECT stop_ts FROM lobbies WHERE lobbies.lobby_id = players.lobby_id) IS NOT NULL;
`,
    postgres: `
CREATE OR REPLACE FUNCTION running_players_on_lobby() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  connected bigint;
BEGIN
  IF OLD.stop_ts IS NOT NULL OR (TG_OP = 'UPDATE' AND NEW.stop_ts IS NULL) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    WITH removed AS (
      UPDATE players SET remove_ts = NEW.stop_ts WHERE lobby_id = NEW.lobby_id AND remove_ts IS NULL RETURNING connect_ts
    ) SELECT count(*) FILTER (WHERE connect_ts IS NOT NULL) INTO connected FROM removed;
  ELSE
    SELECT count(*) INTO connected FROM players WHERE lobby_id = OLD.lobby_id AND connect_ts IS NOT NULL AND remove_ts IS NULL;
  END IF;
  UPDATE running_players SET player_count = player_count - connected
   WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
  RETURN NULL;
END $$;
UPDATE players p SET remove_ts = l.stop_ts FROM lobbies l WHERE l.lobby_id = p.lobby_id AND p.remove_ts IS NULL AND l.stop_ts IS NOT NULL;
`,
  },
  // Version 21: what a build's delete, the uploads' sweep and a lobby's build looked for by a walk of the game's builds
  // or of every upload (the sweep and a game's purge deleted its builds' uploads a scan of uploads each, which the
  // foreign key's check repeated): the uploads of a build, the builds not complete, and a game's builds newest first
  // (the list in its order, and the newest complete build a short walk).
  {
    sqlite: `
CREATE INDEX IF NOT EXISTS uploads_build ON uploads (build_id);
CREATE INDEX IF NOT EXISTS builds_open ON builds (create_ts) WHERE complete = 0;
CREATE INDEX IF NOT EXISTS builds_newest ON builds (game_id, create_ts DESC, build_id);
`,
    postgres: `
CREATE INDEX IF NOT EXISTS uploads_build ON uploads (build_id);
CREATE INDEX IF NOT EXISTS builds_open ON builds (create_ts) WHERE complete = 0;
CREATE INDEX IF NOT EXISTS builds_newest ON builds (game_id, create_ts DESC, build_id COLLATE "C");
`,
  },
  // Version 22: no table changes. A data directory keeps a build of several parts as them (builds/<build_id>/part-<n>,
  // see stores/local-blobs.ts), which a gamehost of version 21 would try to read as one file: it refuses the store.
  { sqlite: '', postgres: '' },
  // Version 23: what identified a part's file when its bytes were hashed as they arrived (device, inode, size and
  // modification time), so an assembly that finds the file unchanged hashes it once, for the build, not again for the part.
  { sqlite: 'ALTER TABLE upload_parts ADD COLUMN stamp TEXT;', postgres: 'ALTER TABLE upload_parts ADD COLUMN stamp text;' },
];

/** The schema version this code writes and reads, on either engine. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A store migrated by a newer gamehost: this one would misread it, so it does not start, and writes nothing. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    store: string,
    elsewhere: string,
  ) {
    super(`${store} has schema version ${found}, newer than this gamehost knows (${SCHEMA_VERSION}); upgrade gamehost, or ${elsewhere}`);
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Brings a SQLite store up to SCHEMA_VERSION, a write transaction per step (BEGIN IMMEDIATE: one process at a time
 * takes a step; the others wait for the lock and find it taken). The version is read before any write, so a newer
 * store is refused untouched. A step that loses a lock race throws SQLITE_BUSY: running this again resumes.
 */
export function migrateSqlite(db: SqliteDatabase, file: string): void {
  const current = () => {
    const version = sqliteVersion(db);
    if (version > SCHEMA_VERSION) throw new SchemaTooNewError(version, `the emulator database ${file}`, 'give it another data directory');
    return version;
  };
  while (current() < SCHEMA_VERSION) {
    db.exec('BEGIN IMMEDIATE');
    try {
      // Read again under the lock: another process may have taken this step meanwhile.
      const version = sqliteVersion(db);
      if (version < SCHEMA_VERSION) {
        db.exec(MIGRATIONS[version]!.sqlite);
        db.prepare<[string]>("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
          String(version + 1),
        );
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }
}

/** A SQLite store keeps its version as text in meta; a file with no meta table is a new store (version 0). */
function sqliteVersion(db: SqliteDatabase): number {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() === undefined) return 0;
  const value = db.prepare<[], string>("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get();
  const version = Number(value ?? 0);
  if (!Number.isSafeInteger(version) || version < 0) throw new Error(`the emulator database holds schema version '${value}', which is not a version`);
  return version;
}

// Any fixed 64-bit key, the same in every replica: 'gamehost' in ASCII.
const MIGRATION_LOCK = '7449363093611016052';

/**
 * Brings a PostgreSQL store up to SCHEMA_VERSION. A session advisory lock lets one replica at a time look and
 * migrate, so replicas starting together never race on CREATE TABLE; each step and its version row commit together.
 * The version is read before any write, so a newer store is refused untouched.
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      let version = await postgresVersion(client);
      if (version > SCHEMA_VERSION) throw new SchemaTooNewError(version, 'the emulator database', 'point --database at another database');
      for (; version < SCHEMA_VERSION; version++) {
        await client.query('BEGIN');
        try {
          await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
          const sql = MIGRATIONS[version]!.postgres;
          if (sql !== '') await client.query(sql);
          await client.query('DELETE FROM schema_version');
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [version + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    // Never back to the pool: it may hold the advisory lock if unlocking failed.
    client.release(true);
  }
}

/** A database with no schema_version table is a new store (version 0). */
async function postgresVersion(client: pg.PoolClient): Promise<number> {
  const { rows: found } = await client.query<{ present: boolean }>("SELECT to_regclass('schema_version') IS NOT NULL AS present");
  if (!found[0]?.present) return 0;
  const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_version');
  return rows[0]?.version ?? 0;
}
