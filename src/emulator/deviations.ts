// Where the emulator knowingly differs from the published spec (rivet-openapi.yml), in one list: each is what the
// production server itself does (SERVICE-FACTS.md, marked "server"), or kinder than production, never looser.
// The conformance tests tolerate exactly these and fail on anything else; docs/emulator.md lists the same.

export type Deviation =
  /** The answer's status is not one the spec lists for the operation; the body is `body`, or the spec's body for `specStatus`. */
  | { kind: 'status'; operation: string; status: number; specStatus: number; body?: unknown; summary: string }
  /** In a `status` answer, the field at JSON pointer `pointer` is null where the spec types it as an object. */
  | { kind: 'null-field'; operation: string; status: number; pointer: string; summary: string }
  /** The spec declares no request body; clients send `body`, which the server reads. */
  | { kind: 'request-body'; operation: string; body: unknown; summary: string }
  /** The spec allows `status`, but production answers `productionStatus` here: the emulator is kinder. */
  | { kind: 'kinder'; operation: string; status: number; productionStatus: number; summary: string };

/** `operation` is an operationId of rivet-openapi.yml, or `*` for every operation. */
export const DEVIATIONS: readonly Deviation[] = Object.freeze([
  {
    kind: 'status',
    operation: 'cloud_uploads_completeUpload',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'upload complete answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: '*',
    status: 401,
    specStatus: 408,
    summary: 'a missing or malformed token answers 401 API_UNAUTHORIZED, as the server does; the spec says 408',
  },
  {
    kind: 'status',
    operation: 'cloud_games_namespaces_updateGameNamespaceVersion',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'a namespace\'s version set answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: 'cloud_games_namespaces_updateGameNamespaceMatchmakerConfig',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'a namespace\'s matchmaker config set answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'kinder',
    operation: 'cloud_games_namespaces_getGameNamespaceById',
    status: 404,
    productionStatus: 500,
    summary: 'an unknown namespace answers 404 API_NOT_FOUND; production answers 500',
  },
  {
    kind: 'kinder',
    operation: 'cloud_games_namespaces_updateGameNamespaceVersion',
    status: 400,
    productionStatus: 500,
    summary: 'a version that is missing or another game\'s, set on a namespace, answers 400 VERSION_NOT_FOUND; production answers 500',
  },
  {
    kind: 'null-field',
    operation: 'cloud_games_namespaces_logs_getNamespaceLobby',
    status: 200,
    pointer: '/lobby/status/running',
    summary: 'a stopped lobby carries `"running": null` beside `stopped`, as the server does; the spec types `running` as an object',
  },
  {
    kind: 'request-body',
    operation: 'cloud_uploads_completeUpload',
    body: {},
    summary: 'upload complete is sent the JSON body `{}`, which the server reads; the spec declares no request body',
  },
  {
    kind: 'kinder',
    operation: 'cloud_games_namespaces_logs_getNamespaceLobby',
    status: 404,
    productionStatus: 500,
    summary: 'an unknown lobby in lobby logs answers 404 API_NOT_FOUND; production answers 500',
  },
  {
    kind: 'status',
    operation: 'matchmaker_lobbies_ready',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'lobby ready answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: 'matchmaker_lobbies_setClosed',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'lobby closed answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: 'matchmaker_lobbies_setState',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'lobby state (PUT) answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: 'matchmaker_players_connected',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'players connected answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
  {
    kind: 'status',
    operation: 'matchmaker_players_disconnected',
    status: 200,
    specStatus: 204,
    body: {},
    summary: 'players disconnected answers 200 with the body `{}`, as the server does; the spec says 204 with no body',
  },
] satisfies Deviation[]);
