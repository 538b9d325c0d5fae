# One image for every service (docs/architecture.md §2): the compose file picks the entry point with SERVICE.
# syntax=docker/dockerfile:1
FROM node:24-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 (embedded store) compiles from source: no prebuilt binary is fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
ENV npm_config_build_from_source=true
COPY package.json package-lock.json .npmrc ./
COPY shared/package.json shared/
COPY services/gateway/package.json services/gateway/
COPY services/tasks/package.json services/tasks/
COPY services/boards/package.json services/boards/
COPY services/sprints/package.json services/sprints/
COPY services/query/package.json services/query/
COPY web/package.json web/
RUN npm ci --no-audit --no-fund
COPY . .
# The build includes the web board (web/dist), which the gateway serves at `/`; its packages are
# build-time only (devDependencies) and leave with the prune.
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# V8's young generation, as `npm start` runs the service (package.json; docs/store.md "Memory and
# garbage collection"): fewer scavenges per request and a faster load of a large embedded store
ENV NODE_OPTIONS=--max-semi-space-size=32
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
ARG SERVICE=gateway
ENV SERVICE=${SERVICE}
EXPOSE 8080
CMD ["sh", "-c", "exec node services/${SERVICE}/dist/main.js"]
