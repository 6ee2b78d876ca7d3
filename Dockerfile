# One image for the code server, the webserver, the daemon and the Celery workers.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DAGSTER_HOME=/opt/dagster/home
WORKDIR /opt/chat-verdicts

COPY pyproject.toml requirements.lock README.md ./
COPY orchestration ./orchestration
COPY web ./web
COPY live ./live
COPY assets ./assets
COPY rules ./rules
COPY schemas ./schemas
COPY evals ./evals
COPY seeds ./seeds
# Editable so that paths relative to the project (sample data, configuration) resolve here;
# the versions are requirements.lock's, as on every other machine.
# EXTRAS=k8s for the Kubernetes run pods (deploy/kubernetes/values.yaml).
ARG EXTRAS=""
RUN pip install --no-cache-dir -c requirements.lock -e ".${EXTRAS:+[$EXTRAS]}" && mkdir -p "$DAGSTER_HOME" /data/raw /data/reports

COPY dagster.yaml "$DAGSTER_HOME/dagster.yaml"
COPY deploy/workspace.yaml /opt/dagster/workspace.yaml
