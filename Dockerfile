# The image the chart runs (sedna-gm and sedna-lc): the project's wheel on python:3.11-slim, as a non-root user.
#
#   docker build -t <registry>/sedna-controlplane:0.1.0 .
#   docker push <registry>/sedna-controlplane:0.1.0
#   helm install sedna charts/sedna -n sedna --create-namespace --set image.repository=<registry>/sedna-controlplane
#
# The chart runs the GM as uid 65532 on a read-only root filesystem and the LC as root (it writes the host's files).
FROM python:3.11-slim AS build
WORKDIR /src
COPY setup.cfg pyproject.toml README.md ./
COPY apis apis
COPY informers informers
COPY workqueue workqueue
COPY reconcile reconcile
COPY globalmanager globalmanager
COPY localcontroller localcontroller
COPY examples examples
COPY workersim workersim
COPY sandbox sandbox
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl && rm -rf /wheels \
    && groupadd --gid 65532 sedna && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin sedna
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
CMD ["sedna-gm", "--help"]
