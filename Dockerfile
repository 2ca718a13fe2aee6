# One image for every process: `trainplate serve api|relay|projector|submitter`.
FROM python:3.12-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY domain ./domain
COPY services ./services
COPY projections ./projections
COPY infra ./infra
RUN pip install --no-cache-dir .
USER nobody
ENTRYPOINT ["trainplate"]
