#!/usr/bin/env python3
"""A small OTLP/HTTP receiver for Bosun's telemetry test.

Accepts POST /v1/traces and /v1/metrics as protobuf (application/x-protobuf) or JSON
(application/json), decodes every body into the opentelemetry-proto request message (JSON
through google.protobuf.json_format.Parse, strictly: an unknown field is an error), and appends
what it received, one JSON object per line, to OUT_FILE:

  {"kind": "request", "path": ..., "content_type": ..., "headers": {...}, "raw": <body text>}
  {"kind": "span", "name": ..., "traceId": hex, "spanId": hex, "parentSpanId": hex,
   "kind_code": int, "start": int, "end": int, "attributes": {...}, "status": {...},
   "resource": {...}}
  {"kind": "metric", "name": ..., "unit": ..., "type": "histogram"|"sum",
   "temporality": int, "points": [{"attributes": {...}, "count": ..., "sum": ..., "value": ...}]}

A body that does not decode gets HTTP 400 and a {"kind": "error"} line. With
OTLP_RECEIVER_UNAVAILABLE=N in the environment, the first N requests get HTTP 503 with
`Retry-After: 0` (an overloaded collector) and a {"kind": "refused"} line. Prints "PORT <n>" on
stdout once listening (on 127.0.0.1, port 0 unless given).

Usage: receiver.py OUT_FILE [PORT]
"""

import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

OUT = sys.argv[1]
LOCK = threading.Lock()
UNAVAILABLE = [int(os.environ.get("OTLP_RECEIVER_UNAVAILABLE") or 0)]

MESSAGES = {
    "/v1/traces": trace_service_pb2.ExportTraceServiceRequest,
    "/v1/metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}


def hex_ids_to_base64(value):
    """OTLP/JSON writes trace and span ids in hex, where the protobuf JSON mapping has base64."""
    if isinstance(value, dict):
        for key, v in list(value.items()):
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                raw = bytes.fromhex(v)  # ValueError (400) if it is not hex
                value[key] = base64.b64encode(raw).decode()
            else:
                hex_ids_to_base64(v)
    elif isinstance(value, list):
        for v in value:
            hex_ids_to_base64(v)


def any_value(v):
    which = v.WhichOneof("value")
    if which == "string_value":
        return v.string_value
    if which == "int_value":
        return v.int_value
    if which == "double_value":
        return v.double_value
    if which == "bool_value":
        return v.bool_value
    if which is None:
        return None
    return json_format.MessageToDict(v)


def attrs(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def records(path, msg):
    if path == "/v1/traces":
        for rs in msg.resource_spans:
            resource = attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    if len(s.trace_id) != 16 or len(s.span_id) != 8:
                        raise ValueError("a trace id is 16 bytes, a span id 8")
                    if s.parent_span_id and len(s.parent_span_id) != 8:
                        raise ValueError("a parent span id is 8 bytes")
                    yield {
                        "kind": "span",
                        "name": s.name,
                        "traceId": s.trace_id.hex(),
                        "spanId": s.span_id.hex(),
                        "parentSpanId": s.parent_span_id.hex(),
                        "kind_code": s.kind,
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "attributes": attrs(s.attributes),
                        "status": {"code": s.status.code, "message": s.status.message},
                        "resource": resource,
                        "scope": ss.scope.name,
                    }
    else:
        for rm in msg.resource_metrics:
            resource = attrs(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    which = m.WhichOneof("data")
                    points = []
                    if which == "histogram":
                        data = m.histogram
                        for p in data.data_points:
                            points.append({
                                "attributes": attrs(p.attributes),
                                "count": p.count,
                                "sum": p.sum,
                                "min": p.min,
                                "max": p.max,
                                "bucket_counts": list(p.bucket_counts),
                                "bounds": list(p.explicit_bounds),
                            })
                    elif which == "sum":
                        data = m.sum
                        for p in data.data_points:
                            v = p.WhichOneof("value")
                            points.append({
                                "attributes": attrs(p.attributes),
                                "value": p.as_double if v == "as_double" else p.as_int,
                            })
                    else:
                        raise ValueError(f"unexpected metric data {which}")
                    yield {
                        "kind": "metric",
                        "name": m.name,
                        "unit": m.unit,
                        "type": which,
                        "temporality": data.aggregation_temporality,
                        "points": points,
                        "resource": resource,
                    }


def write(lines):
    with LOCK, open(OUT, "a", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
        f.flush()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        path = self.path.split("?")[0]
        with LOCK:
            refuse = UNAVAILABLE[0] > 0
            UNAVAILABLE[0] -= refuse
        if refuse:
            write([{"kind": "refused", "path": path}])
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        message = MESSAGES.get(path)
        if message is None:
            write([{"kind": "error", "path": path, "error": "unknown path"}])
            self.send_response(404)
            self.end_headers()
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        lines = [{"kind": "request", "path": path, "content_type": ctype, "headers": headers,
                  "raw": body.decode("utf-8", "replace")}]
        try:
            msg = message()
            if ctype == "application/json":
                doc = json.loads(body)
                hex_ids_to_base64(doc)
                json_format.Parse(json.dumps(doc), msg)
            elif ctype == "application/x-protobuf":
                msg.ParseFromString(body)
            else:
                raise ValueError(f"unsupported content type {ctype!r}")
            lines.extend(records(path, msg))
        except Exception as e:  # noqa: BLE001 - any decoding failure is the client's
            lines.append({"kind": "error", "path": path, "error": f"{type(e).__name__}: {e}"})
            write(lines)
            self.send_response(400)
            self.end_headers()
            return
        write(lines)
        reply = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
