# One image for the code server, the webserver and the daemon.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DAGSTER_HOME=/opt/dagster/home
WORKDIR /opt/chat-verdicts

COPY pyproject.toml README.md ./
COPY orchestration ./orchestration
COPY assets ./assets
COPY rules ./rules
COPY schemas ./schemas
COPY evals ./evals
COPY seeds ./seeds
# Editable so that paths relative to the project (sample data, configuration) resolve here.
RUN pip install --no-cache-dir -e . && mkdir -p "$DAGSTER_HOME" /data/raw /data/reports

COPY dagster.yaml "$DAGSTER_HOME/dagster.yaml"
COPY deploy/workspace.yaml /opt/dagster/workspace.yaml
