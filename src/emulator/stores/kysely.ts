// Kysely, as the stores use it (a query compiler: sql.ts). Its package is some 280 modules, which cost every
// process that opens a store about 0.15 s of CPU to load; the build (scripts/build.js) replaces what tsc makes of
// this file with one bundle of them. Tests that import src/ load the package itself.
export * from 'kysely';
