#!/usr/bin/env bash
# The Python environment of tests/otel/receiver.py (the OTLP/HTTP receiver of the telemetry test):
# a venv with pinned opentelemetry-proto and protobuf. Idempotent; the directory is
# $BOSUN_OTEL_VENV, default /var/tmp/bosun-otel-venv. Prints the venv's python.
set -euo pipefail
VENV="${BOSUN_OTEL_VENV:-/var/tmp/bosun-otel-venv}"
PINS=(opentelemetry-proto==1.45.2 protobuf==7.36.2)
if ! "$VENV/bin/python" -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2, google.protobuf' >/dev/null 2>&1; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "${PINS[@]}" >&2
fi
echo "$VENV/bin/python"
