// The service's rules, one object per area, over the injected stores and clock: what routes call, and what
// tests and the CLI's data-directory commands call without HTTP.
import type { EmulatorConfig } from '../config.js';
import type { Faults } from '../faults.js';
import type { BlobStore, Store } from '../stores/store.js';
import type { InternalErrors } from '../operator-log.js';
import type { StoreName, Tell } from '../stores/unavailable.js';
import { AdminGuard } from './admin.js';
import { Auth } from './auth.js';
import { Builds } from './builds.js';
import type { LobbyServerRunner } from './capacity.js';
import type { Clock } from './clock.js';
import { Games } from './games.js';
import { Health } from './health.js';
import { History } from './history.js';
import { IdleLobbies } from './idle-lobbies.js';
import { Lobbies } from './lobbies.js';
import { LobbyCalls } from './lobby-calls.js';
import { LobbyVersions } from './lobby-versions.js';
import type { LobbyLogs } from './logs.js';
import { Matchmaking } from './matchmaking.js';
import { Namespaces } from './namespaces.js';
import { RateLimits } from './ratelimit.js';
import { Statistics } from './statistics.js';
import { Versions } from './versions.js';

export interface ServiceDeps {
  store: Store;
  blobs: BlobStore;
  /** What the store and the blob store are called when they do not answer. */
  names: { records: StoreName; bytes: StoreName };
  /** Tells the operator's log a store's whole error, which answers say without paths or hosts. */
  tell: Tell;
  /** Where defects are told: a request's 500, a failed sweep. */
  internal: InternalErrors;
  clock: Clock;
  config: EmulatorConfig;
  /** Signs tokens and player tokens. */
  secret: Buffer;
  /** Required on the admin routes when set. */
  adminToken?: string;
  /** Injected failures that act inside a service (a slow assembly); the rest act on requests (faults.ts). */
  faults?: Faults;
  /** A lobby's log lines: built first, as the runner writes its servers' lines through the same one. */
  logs: LobbyLogs;
  /** What runs lobbies' servers (readiness `run`): built first, given to the services that start and stop them. */
  runner?: LobbyServerRunner;
}

export interface Services {
  config: EmulatorConfig;
  admin: AdminGuard;
  auth: Auth;
  games: Games;
  lobbies: Lobbies;
  lobbyCalls: LobbyCalls;
  matchmaking: Matchmaking;
  idleLobbies: IdleLobbies;
  logs: LobbyLogs;
  rateLimits: RateLimits;
  statistics: Statistics;
  builds: Builds;
  history: History;
  health: Health;
  versions: Versions;
  namespaces: Namespaces;
}

export function createServices(deps: ServiceDeps): Services {
  const games = new Games(deps);
  const versions = new Versions(deps);
  const lobbyVersions = new LobbyVersions(deps);
  const idleLobbies = new IdleLobbies({ ...deps, lobbyVersions, warn: (message) => console.error(`[emulator] ${message}`) });
  const lobbies = new Lobbies({ ...deps, lobbyVersions, idleLobbies });
  const namespaces = new Namespaces({ ...deps, versions, afterDeploy: (game, version) => lobbies.afterDeploy(game, version) });
  return {
    config: deps.config,
    admin: new AdminGuard(deps.adminToken, deps.clock),
    auth: new Auth(deps.secret, games, namespaces),
    games,
    lobbies,
    lobbyCalls: new LobbyCalls({ ...deps, lobbyVersions }),
    matchmaking: new Matchmaking({ ...deps, lobbyVersions, idleLobbies }),
    idleLobbies,
    logs: deps.logs,
    rateLimits: new RateLimits(deps.config.rateLimits, deps.clock),
    statistics: new Statistics(deps),
    builds: new Builds(deps),
    history: new History({ ...deps, lobbyVersions }),
    health: new Health(deps),
    versions,
    namespaces,
  };
}
