// Every error the emulator can answer, in one table: status, code and message template.
// Codes follow the production service where it has one; `{name}` placeholders are filled from params. A code of the
// emulator's own (`emulatorOnly`: the service has no such code, or answers 500 ERROR there) gets no `documentation`
// link: the service's error pages do not have it.

export const ERRORS = {
  API_BAD_REQUEST_TARGET: { status: 400, message: 'The request target must be a path starting with "/".', emulatorOnly: true },
  API_BAD_BODY: { status: 400, message: 'Invalid request body: {reason}' },
  API_BAD_PATH_PARAMETER: { status: 400, message: 'Invalid path parameter {name}: {reason}' },
  API_BAD_QUERY_PARAMETER: { status: 400, message: 'Invalid query parameter {name}: {reason}' },
  API_UNAUTHORIZED: { status: 401, message: 'Unauthorized: {reason}' },
  API_FORBIDDEN: { status: 403, message: 'Forbidden: {reason}' },
  // Production answers 500 for an unknown lobby in the logs endpoint; the emulator is kinder and says 404.
  API_NOT_FOUND: { status: 404, message: '{what} not found.' },
  API_METHOD_NOT_ALLOWED: { status: 405, message: 'Method {method} is not allowed on this path; allowed: {allow}.' },
  API_RATE_LIMIT: { status: 429, message: 'Too many requests: {reason}' },
  // A body that takes longer than its length allows (routes/bodies.ts): the connection is closed after the answer.
  API_BODY_TIMEOUT: { status: 408, message: 'The request body did not arrive in time: {reason}', emulatorOnly: true },
  PRESIGN_INVALID: { status: 403, message: 'The presigned URL signature does not match.', emulatorOnly: true },
  PRESIGN_EXPIRED: { status: 403, message: 'The presigned URL expired at {expires}.', emulatorOnly: true },
  // Production says only "Game mode not found."; naming the ones that exist saves a trip to the dashboard.
  MATCHMAKER_GAME_MODE_NOT_FOUND: { status: 400, message: 'Game mode "{game_mode}" not found; this namespace has {known}.' },
  MATCHMAKER_REGION_NOT_FOUND: { status: 400, message: 'Region "{region}" not found; this namespace has {known}.' },
  MATCHMAKER_TOO_MANY_TAGS: { status: 400, message: 'Too many tags: {count} given, at most 8 allowed.' },
  MATCHMAKER_TAG_NAME_TOO_LONG: { status: 400, message: 'Tag name is too long: at most 128 bytes.' },
  MATCHMAKER_TAG_TOO_LONG: { status: 400, message: 'Tag "{name}" value is too long: at most 512 bytes.' },
  MATCHMAKER_LOBBY_FULL: { status: 400, message: 'Lobby {lobby_id} is full: {max} players at most.' },
  MATCHMAKER_LOBBY_STOPPED: { status: 400, message: 'Lobby {lobby_id} has stopped.' },
  MATCHMAKER_LOBBY_NOT_STARTED: { status: 400, message: 'Lobby {lobby_id} has not started: its process has no output yet.' },
  MATCHMAKER_LOBBY_NOT_FOUND: { status: 400, message: 'Lobby {lobby_id} not found.' },
  MATCHMAKER_NO_GAME_MODE_PROVIDED: { status: 400, message: 'No game mode provided: game_modes must list at least one.' },
  MATCHMAKER_NO_AVAILABLE_LOBBIES: { status: 400, message: 'No lobby available with room for one more, and prevent_auto_create_lobby is set.' },
  MATCHMAKER_TOO_MANY_LOBBIES: { status: 400, message: 'Too many lobbies: {reason}' },
  MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE: { status: 400, message: 'Too many players from this address in this namespace ({max} at most, pending or connected).' },
  MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY: { status: 400, message: 'The player belongs to another lobby.' },
  MATCHMAKER_PLAYER_ALREADY_CONNECTED: { status: 400, message: 'The player has already connected: a player token connects once.' },
  MATCHMAKER_PLAYER_REGISTRATION_EXPIRED: { status: 400, message: 'The player did not connect in time ({seconds} s after find, join or the lobby\'s ready).' },
  MATCHMAKER_PLAYER_REMOVED: { status: 400, message: 'The player was removed from the lobby.' },
  TOKEN_ERROR: { status: 400, message: 'Invalid player token: {reason}' },
  CLAIMS_MISSING_ENTITLEMENT: { status: 401, message: 'This token cannot call this endpoint: {reason}' },
  MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID: { status: 400, message: 'max_players must be an integer from 1 to {max}.' },
  MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED: { status: 400, message: 'Dynamic max players are not enabled for this game mode: {game_mode}' },
  MATCHMAKER_TAGS_DISABLED: { status: 400, message: 'Tags are not enabled for this game mode: {game_mode}' },
  MATCHMAKER_FIND_DISABLED: { status: 400, message: 'The find endpoint has been disabled by the developer.' },
  MATCHMAKER_JOIN_DISABLED: { status: 400, message: 'The join endpoint has been disabled by the developer.' },
  MATCHMAKER_CUSTOM_LOBBIES_DISABLED: { status: 400, message: 'Custom lobbies are not enabled for this game mode.' },
  MATCHMAKER_IDENTITY_REQUIRED: { status: 400, message: 'This resource can not be accessed without an identity.' },
  MATCHMAKER_AUTO_CREATE_FAILED: { status: 400, message: 'Could not find a valid game mode and region pair for automatic lobby creation.' },
  MATCHMAKER_VERIFICATION_FAILED: { status: 400, message: 'Verification failed.' },
  MATCHMAKER_VERIFICATION_REQUEST_FAILED: { status: 400, message: 'Verification request failed.' },
  MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID: { status: 400, message: 'Custom lobby config invalid: {reason}' },
  MATCHMAKER_INVALID_VERSION_CONFIG: { status: 400, message: 'The given version config was invalid: `{field}` out of bounds' },
  VALIDATION_ERROR: { status: 400, message: 'The given resource did not pass validation: {paths}' },
  // Production answers 500 ERROR for a build that is missing, another game's or not uploaded yet.
  VERSION_BUILD_INVALID: { status: 400, message: 'Build {build_id} of game mode {game_mode} is not a build of this game whose upload completed.', emulatorOnly: true },
  // Production answers 500 ERROR for a version that is missing or another game's, named by a namespace.
  VERSION_NOT_FOUND: { status: 400, message: 'Version {version_id} is not a version of this game.', emulatorOnly: true },
  CLOUD_INVALID_CONFIG: { status: 400, message: 'The given config was invalid: {reason}' },
  BUILD_INVALID_DISPLAY_NAME: { status: 400, message: 'Invalid display_name: {reason}', emulatorOnly: true },
  BUILD_INVALID_IMAGE_TAG: { status: 400, message: 'Invalid image_tag "{tag}": {reason}', emulatorOnly: true },
  BUILD_TAG_TAKEN: { status: 400, message: 'Image tag "{tag}" is already used by another build of this game.', emulatorOnly: true },
  UPLOAD_TOO_LARGE: { status: 400, message: 'Upload too large: {reason}' },
  UPLOAD_INVALID: { status: 400, message: 'Invalid upload: {reason}', emulatorOnly: true },
  // 429 with Retry-After (the spec's statuses for complete are 204, 400, 403, 404, 408, 429, 500): ask again soon.
  UPLOAD_COMPLETE_IN_PROGRESS: { status: 429, message: 'Another completion of upload {upload_id} is in progress; ask again in a moment.', emulatorOnly: true },
  // A store that does not answer in time (or at all): the request is not held, and may be sent again shortly.
  STORE_UNAVAILABLE: { status: 503, message: 'The {store} does not answer ({reason}); try again shortly.', emulatorOnly: true },
  API_REQUEST_TIMEOUT: { status: 500, message: 'The request timed out: {reason}' },
  ERROR: { status: 500, message: 'An internal error has occurred (ray {ray_id}).' },
} as const satisfies Record<string, { status: number; message: string; emulatorOnly?: true }>;

export type ErrorCode = keyof typeof ERRORS;
export type ErrorParams = Record<string, string | number>;

export interface ErrorBody {
  code: string;
  message: string;
  ray_id: string;
  /** The service's page for the code; none for the emulator's own codes. */
  documentation?: string;
  metadata?: unknown;
}

/** The service's documentation page of one of its error codes. */
export function documentationOf(code: string): string {
  return `https://rivet.gg/docs/general/errors#${code.toLowerCase().replace(/_/g, '-')}`;
}

/** Thrown by handlers; the router turns it into the JSON error body. */
export class EmulatorError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly params: ErrorParams = {},
    readonly metadata?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(code);
    this.status = ERRORS[code].status;
  }
}

export function fail(code: ErrorCode, params: ErrorParams = {}, metadata?: unknown): never {
  throw new EmulatorError(code, params, metadata);
}

export function errorBody(code: ErrorCode, params: ErrorParams, rayId: string, metadata?: unknown): ErrorBody {
  const message = ERRORS[code].message.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name === 'ray_id' ? rayId : name in params ? String(params[name]) : whole,
  );
  const body: ErrorBody = { code, message, ray_id: rayId };
  if (!('emulatorOnly' in ERRORS[code])) body.documentation = documentationOf(code);
  if (metadata !== undefined) body.metadata = metadata;
  return body;
}

/** Why the emulator cannot start or go on as asked, apart from any one request's answer. */
export type FailureCode =
  /** Its data directory cannot be read or written (not a directory, not this user's, a full disk). */
  | 'DATA_DIR_UNUSABLE'
  /** A running `emulator serve` holds the data directory, and cannot be used from here. */
  | 'DATA_DIR_SERVED'
  /** Node.js 20 without a loadable better-sqlite3. */
  | 'SQLITE_UNAVAILABLE';

/**
 * A failure of the emulator itself, in one line for people (and what to do, when there is something): the code says
 * which, and whoever runs the emulator decides what it means there (the CLI: an exit code, in src/errors.ts).
 */
export class EmulatorFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'EmulatorFailure';
  }
}
