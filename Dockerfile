# One multi-stage file for the four images: build with --target toy-api, mcp-gateway, auth-server
# or agent.
# Works with the classic builder and BuildKit alike (no BuildKit-only syntax).
ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: install from the lockfile, compile, then cut one production tree per app ---------
FROM ${NODE_IMAGE} AS build
ENV CI=true TURBO_TELEMETRY_DISABLED=1
RUN npm install --global --no-update-notifier --no-fund pnpm@12.4.2
WORKDIR /repo
# The manifests alone first, so the install layer is reused until the lockfile or a manifest
# changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/schemas/package.json packages/schemas/
COPY packages/http-client/package.json packages/http-client/
COPY packages/tool-tokens/package.json packages/tool-tokens/
COPY packages/telemetry/package.json packages/telemetry/
COPY packages/oauth/package.json packages/oauth/
COPY apps/toy-api/package.json apps/toy-api/
COPY apps/mcp-gateway/package.json apps/mcp-gateway/
COPY apps/agent-cli/package.json apps/agent-cli/
COPY apps/auth-server/package.json apps/auth-server/
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json turbo.json ./
COPY packages packages
COPY apps apps
RUN pnpm turbo run build --filter=@agentwire/agent-cli... --filter=@agentwire/auth-server... --output-logs=errors-only
# `pnpm deploy --prod`: the app, its built workspace packages and its production dependencies.
RUN for app in toy-api mcp-gateway agent-cli auth-server; do \
      pnpm --filter "@agentwire/$app" deploy --prod "/out/$app" >/dev/null && rm -f "/out/$app/pnpm-lock.yaml"; \
    done

# --- runtime: Node, the app's tree, a non-root user ------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Node runs as PID 1 (exec-form CMD) and each app handles SIGTERM itself: `docker compose stop`
# closes the servers at once instead of waiting for the kill timeout.
STOPSIGNAL SIGTERM

FROM runtime AS toy-api
COPY --from=build /out/toy-api /app
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
USER node
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

FROM runtime AS mcp-gateway
COPY --from=build /out/mcp-gateway /app
ENV HOST=0.0.0.0 PORT=8090
EXPOSE 8090
USER node
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8090)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

FROM runtime AS auth-server
COPY --from=build /out/auth-server /app
# The signing keys live in /data (a volume in compose): made at first start, kept after.
RUN mkdir -p /data && chown node:node /data
ENV HOST=0.0.0.0 PORT=9000 AUTH_KEYS_FILE=/data/auth-keys.json
EXPOSE 9000
USER node
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||9000)+'/.well-known/oauth-authorization-server').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

FROM runtime AS agent
COPY --from=build /out/agent-cli /app
USER node
ENTRYPOINT ["node", "/app/dist/main.js"]
CMD ["triage"]
