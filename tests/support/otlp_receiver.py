"""A test OTLP/HTTP receiver: keeps every trace and metric export it is sent, for a test to read.

Usage: $MCP_TEST_PYTHON tests/support/otlp_receiver.py
  (the test Python of ./run-tests, whose virtual environment has `opentelemetry-proto`)

Listens on 127.0.0.1 on a port of the system's choosing and prints one line to standard
output, `{"url": "http://127.0.0.1:PORT"}`; the exporter under test is pointed at that URL.
Exits as soon as its standard input closes, so the test holds it open for as long as it
needs the receiver, and a test that ends (or dies) takes the receiver with it.

  POST /v1/traces    an ExportTraceServiceRequest, serialized protobuf
  POST /v1/metrics   an ExportMetricsServiceRequest, serialized protobuf
      Content-Type application/x-protobuf (else 415); Content-Encoding gzip or none. The
      request is decoded with the official protobuf classes (PyPI's opentelemetry-proto) and
      kept; the answer is 200 with the empty Export*ServiceResponse. A body that does not
      decode is answered 400 and kept in `errors`.
  GET /received      JSON of everything kept so far:
      "traces", "metrics": each request as google.protobuf.json_format.MessageToDict gives it
          (camelCase names; bytes such as ids in base64; 64-bit integers as strings);
      "spans": every span of every trace request, flattened: name, traceId, spanId,
          parentSpanId (lowercase hex; "" for a root span), kind ("SPAN_KIND_SERVER"...),
          status ({"code": "STATUS_CODE_UNSET"..., "message": ...}), attributes and resource
          (attribute key -> Python value), scope (the instrumentation scope's name),
          startTimeUnixNano, endTimeUnixNano;
      "metric_points": every data point of every metric request, flattened: name, unit,
          kind ("sum", "gauge", "histogram", "exponential_histogram", "summary"), attributes,
          resource, and value (sum and gauge: asInt or asDouble), monotonic (sum),
          temporality (sum and histograms: "AGGREGATION_TEMPORALITY_CUMULATIVE"...), count
          and sum (histograms and summaries);
      "errors": {"path", "error"} for each request refused;
      "requests": {"path", "headers"} for each request received (header names lowercase).
  DELETE /received   forgets everything kept so far.

Only the standard library's http.server and opentelemetry-proto (with protobuf) are used.
"""

import gzip
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

# What each export path takes, where its requests are kept, and what it answers.
EXPORTS = {
    "/v1/traces": (
        trace_service_pb2.ExportTraceServiceRequest,
        "traces",
        trace_service_pb2.ExportTraceServiceResponse,
    ),
    "/v1/metrics": (
        metrics_service_pb2.ExportMetricsServiceRequest,
        "metrics",
        metrics_service_pb2.ExportMetricsServiceResponse,
    ),
}

lock = threading.Lock()
received = {}


def forget():
    with lock:
        received.clear()
        received.update(traces=[], metrics=[], spans=[], metric_points=[], errors=[], requests=[])


forget()


def value(any_value):
    """An OTLP AnyValue as the Python value it holds."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    held = getattr(any_value, kind)
    if kind == "array_value":
        return [value(item) for item in held.values]
    if kind == "kvlist_value":
        return attributes(held.values)
    if kind == "bytes_value":
        return held.hex()
    return held  # string_value, int_value, bool_value, double_value


def attributes(key_values):
    """A repeated KeyValue as a dict: key -> Python value."""
    return {kv.key: value(kv.value) for kv in key_values}


def flat_spans(request):
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "name": span.name,
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                        "status": {
                            "code": trace_pb2.Status.StatusCode.Name(span.status.code),
                            "message": span.status.message,
                        },
                        "attributes": attributes(span.attributes),
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                        "startTimeUnixNano": span.start_time_unix_nano,
                        "endTimeUnixNano": span.end_time_unix_nano,
                    }
                )
    return spans


def temporality(data):
    return metrics_pb2.AggregationTemporality.Name(data.aggregation_temporality)


def flat_points(request):
    points = []
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:
                    continue
                data = getattr(metric, kind)
                for point in data.data_points:
                    flat = {
                        "name": metric.name,
                        "unit": metric.unit,
                        "kind": kind,
                        "attributes": attributes(point.attributes),
                        "resource": resource,
                    }
                    if kind in ("sum", "gauge"):
                        which = point.WhichOneof("value")
                        flat["value"] = getattr(point, which) if which else None
                        if kind == "sum":
                            flat["monotonic"] = data.is_monotonic
                            flat["temporality"] = temporality(data)
                    else:  # histogram, exponential_histogram, summary
                        flat["count"] = point.count
                        flat["sum"] = point.sum if kind == "summary" or point.HasField("sum") else None
                        if kind != "summary":
                            flat["temporality"] = temporality(data)
                    points.append(flat)
    return points


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps exporters' connections open between exports

    def log_message(self, format, *args):
        pass

    def answer(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, status, error):
        with lock:
            received["errors"].append({"path": self.path, "error": error})
        self.answer(status, "text/plain; charset=utf-8", (error + "\n").encode())

    def body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers, up to the empty line ending the body
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF ending the chunk
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        body = self.body()
        with lock:
            received["requests"].append(
                {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
            )
        if self.path not in EXPORTS:
            self.refuse(404, f"no such export path: {self.path}")
            return
        request_type, kept, response_type = EXPORTS[self.path]
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != "application/x-protobuf":
            self.refuse(415, f"content type {content_type!r}, not application/x-protobuf")
            return
        encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
        try:
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding not in ("", "identity"):
                raise ValueError(f"content encoding {encoding!r}, not gzip")
            request = request_type()
            request.ParseFromString(body)
        except (OSError, EOFError, ValueError, DecodeError) as error:
            self.refuse(400, f"{request_type.__name__} does not decode: {error!r}")
            return
        as_dict = json_format.MessageToDict(request, preserving_proto_field_name=False)
        with lock:
            received[kept].append(as_dict)
            if kept == "traces":
                received["spans"].extend(flat_spans(request))
            else:
                received["metric_points"].extend(flat_points(request))
        self.answer(200, "application/x-protobuf", response_type().SerializeToString())

    def do_GET(self):
        if self.path != "/received":
            self.answer(404, "text/plain; charset=utf-8", b"not found\n")
            return
        with lock:
            body = json.dumps(received).encode()
        self.answer(200, "application/json", body)

    def do_DELETE(self):
        if self.path != "/received":
            self.answer(404, "text/plain; charset=utf-8", b"not found\n")
            return
        forget()
        self.answer(200, "application/json", b"{}")


def exit_when_stdin_closes():
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
