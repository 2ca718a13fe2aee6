# One image for every process: `trainplate serve api|relay|projector|submitter`, `trainplate migrate`.
# The build stage installs the package and its production dependencies (and the OTLP exporter;
# no embedded servers, no dev tools, no torch) into a virtual environment; the image gets that.
FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/trainplate
WORKDIR /src
COPY pyproject.toml README.md ./
COPY domain ./domain
COPY services ./services
COPY projections ./projections
COPY infra ./infra
RUN /opt/trainplate/bin/pip install '.[otlp]'

FROM python:3.12-slim
ENV PATH=/opt/trainplate/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
COPY --from=build /opt/trainplate /opt/trainplate
# A numeric user, so that Kubernetes can tell it is not root (runAsNonRoot).
USER 65532:65532
ENTRYPOINT ["trainplate"]
