# syntax=docker/dockerfile:1
# Build stage: build a wheel of the bot (with the bundled bank) and its dependencies.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY data ./data
# Optional extras, e.g. `docker build --build-arg EXTRAS=voice .` for STT=local (faster-whisper)
ARG EXTRAS=""
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".${EXTRAS:+[$EXTRAS]}"

# Runtime stage: only the installed wheels, a non-root user, the SQLite file on a volume.
FROM python:3.11-slim
# DejaVu Sans: the /stats chart draws Russian topic names with it
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 bot && mkdir -p /data && chown bot /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER bot
WORKDIR /home/bot
ENV DATABASE_URL=sqlite:////data/interview-bot.db \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
EXPOSE 8443 9100
# /healthz on the webhook port (webhook mode) or METRICS_PORT (polling): database, bank, tick age.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["interview-bot", "health"]
ENTRYPOINT ["interview-bot"]
CMD ["run"]
