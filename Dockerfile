# The emulator as a shared staging service: `gamehost emulator serve` on port 6420, its data under /data (or on
# PostgreSQL and a bucket: GAMEHOST_EMULATOR_DATABASE_URL, GAMEHOST_EMULATOR_BUCKET). See docs/staging.md.
#   docker build -t gamehost-emulator .
#   docker run -e GAMEHOST_EMULATOR_ADMIN_TOKEN=... -p 6420:6420 gamehost-emulator
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
# Without scripts: on Node.js 24 the emulator's SQLite is node:sqlite, so nothing needs compiling (better-sqlite3,
# a dev dependency for Node.js 20, is left unbuilt and not copied).
RUN npm ci --ignore-scripts && npm run build

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production \
    GAMEHOST_HEALTH_URL=http://127.0.0.1:6420/_emulator/health
COPY package.json package-lock.json ./
# Production dependencies only; no install script of ours or theirs is needed.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 6420
# Health needs no admin token; on HTTPS set GAMEHOST_HEALTH_URL (and NODE_EXTRA_CA_CERTS for a private CA).
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.GAMEHOST_HEALTH_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/gamehost.js", "emulator", "serve"]
CMD ["--host", "0.0.0.0", "--port", "6420", "--data-dir", "/data"]
