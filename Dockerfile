# The image the chart runs (sedna-gm and sedna-lc): the project's wheel in a virtualenv (/opt/sedna, first on PATH)
# on a Debian-based Python 3.10+ image, as a non-root user.
#
#   docker build -t <registry>/sedna-controlplane:0.1.0 .          # on python:3.11-slim (BASE)
#   hack/build_image.sh                                             # no registry needed: a Debian bookworm base made
#                                                                   # with debootstrap, built with podman, smoke-tested
#   helm install sedna charts/sedna -n sedna --create-namespace --set image.repository=<registry>/sedna-controlplane
#
# BASE is any image with python3 and its venv module (python:3.11-slim; Debian bookworm with python3-venv). The build
# stage fetches the project's dependencies from PyPI. The chart runs the GM as uid 65532 on a read-only root
# filesystem and the LC as root (it writes the host's files). docs/real-cluster.md has the whole walkthrough.
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
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
# a CA bundle for pip where the build machine reaches PyPI through a TLS-intercepting proxy (unset: pip's own)
ARG PIP_CERT
RUN python3 -m venv /opt/build && /opt/build/bin/pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${BASE}
COPY --from=build /wheels /wheels
RUN python3 -m venv /opt/sedna && /opt/sedna/bin/pip install --no-index --no-cache-dir --no-compile /wheels/*.whl \
    && rm -rf /wheels \
    && groupadd --gid 65532 sedna && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin sedna
ENV PATH=/opt/sedna/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
CMD ["sedna-gm", "--help"]
