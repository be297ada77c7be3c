//! Spans and metric points, and their OTLP/HTTP JSON encoding (the protobuf JSON mapping of
//! `ExportTraceServiceRequest` / `ExportMetricsServiceRequest`, with OTLP's own rules: trace and
//! span ids in hex, enums as integers, 64-bit integers as strings).

use serde_json::{Value, json};

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyValue {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
}

impl From<&str> for AnyValue {
    fn from(s: &str) -> Self {
        AnyValue::Str(s.to_string())
    }
}

impl From<String> for AnyValue {
    fn from(s: String) -> Self {
        AnyValue::Str(s)
    }
}

impl From<u64> for AnyValue {
    fn from(n: u64) -> Self {
        AnyValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<i32> for AnyValue {
    fn from(n: i32) -> Self {
        AnyValue::Int(i64::from(n))
    }
}

impl From<f64> for AnyValue {
    fn from(n: f64) -> Self {
        AnyValue::Double(n)
    }
}

impl From<bool> for AnyValue {
    fn from(b: bool) -> Self {
        AnyValue::Bool(b)
    }
}

pub type Attributes = Vec<(String, AnyValue)>;

/// `SpanKind`: INTERNAL (a task, a tool call) or CLIENT (a model request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Internal = 1,
    Client = 3,
}

/// A finished span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub name: String,
    pub kind: SpanKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Attributes,
    /// An error, with its description; None is UNSET.
    pub error: Option<String>,
}

/// A histogram point (explicit buckets) or a sum point, as one task accumulated it.
#[derive(Debug, Clone, PartialEq)]
pub enum Point {
    Histogram {
        bounds: &'static [f64],
        counts: Vec<u64>,
        count: u64,
        sum: f64,
        min: f64,
        max: f64,
    },
    Sum(f64),
}

impl Point {
    pub fn histogram(bounds: &'static [f64]) -> Point {
        Point::Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    pub fn record(&mut self, value: f64) {
        match self {
            Point::Histogram {
                bounds,
                counts,
                count,
                sum,
                min,
                max,
            } => {
                // Bucket i holds (bounds[i-1], bounds[i]].
                let i = bounds
                    .iter()
                    .position(|b| value <= *b)
                    .unwrap_or(bounds.len());
                if let Some(c) = counts.get_mut(i) {
                    *c += 1;
                }
                *count += 1;
                *sum += value;
                *min = min.min(value);
                *max = max.max(value);
            }
            Point::Sum(total) => *total += value,
        }
    }
}

/// One metric's point for one set of attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub description: &'static str,
    pub attributes: Attributes,
    pub start_ns: u64,
    pub end_ns: u64,
    pub point: Point,
}

/// What identifies the exporter in every request.
#[derive(Debug, Clone)]
pub struct Resource {
    pub service_name: String,
    /// `service.instance.id`: this process, so two Bosuns' delta points are two series.
    pub instance_id: String,
}

fn resource(r: &Resource) -> Value {
    json!({"attributes": attributes(&[
        ("service.name".to_string(), AnyValue::Str(r.service_name.clone())),
        ("service.version".to_string(), AnyValue::Str(env!("CARGO_PKG_VERSION").to_string())),
        ("service.instance.id".to_string(), AnyValue::Str(r.instance_id.clone())),
        ("telemetry.sdk.name".to_string(), AnyValue::Str("bosun".into())),
        ("telemetry.sdk.language".to_string(), AnyValue::Str("rust".into())),
    ])})
}

fn scope() -> Value {
    json!({"name": "bosun", "version": env!("CARGO_PKG_VERSION")})
}

fn value(v: &AnyValue) -> Value {
    match v {
        AnyValue::Str(s) => json!({"stringValue": s}),
        AnyValue::Int(n) => json!({"intValue": n.to_string()}),
        // JSON has no NaN or infinity; a non-finite double is sent as 0.
        AnyValue::Double(d) => json!({"doubleValue": if d.is_finite() { *d } else { 0.0 }}),
        AnyValue::Bool(b) => json!({"boolValue": b}),
    }
}

fn attributes(attrs: &[(String, AnyValue)]) -> Value {
    Value::Array(
        attrs
            .iter()
            .map(|(k, v)| json!({"key": k, "value": value(v)}))
            .collect(),
    )
}

/// An `ExportTraceServiceRequest`.
pub fn traces_request(r: &Resource, spans: &[Span]) -> Value {
    let spans: Vec<Value> = spans
        .iter()
        .map(|s| {
            let mut v = json!({
                "traceId": s.trace_id,
                "spanId": s.span_id,
                "name": s.name,
                "kind": s.kind as i32,
                "startTimeUnixNano": s.start_ns.to_string(),
                "endTimeUnixNano": s.end_ns.max(s.start_ns).to_string(),
                "attributes": attributes(&s.attributes),
                // STATUS_CODE_ERROR = 2; UNSET otherwise.
                "status": match &s.error {
                    Some(m) => json!({"code": 2, "message": m}),
                    None => json!({}),
                },
            });
            if let (Some(parent), Some(obj)) = (&s.parent_span_id, v.as_object_mut()) {
                obj.insert("parentSpanId".into(), json!(parent));
            }
            v
        })
        .collect();
    json!({"resourceSpans": [{
        "resource": resource(r),
        "scopeSpans": [{"scope": scope(), "spans": spans}],
    }]})
}

/// AGGREGATION_TEMPORALITY_DELTA: each export holds one task's requests only.
const DELTA: i32 = 1;

/// An `ExportMetricsServiceRequest`; points of the same metric name share one metric.
pub fn metrics_request(r: &Resource, metrics: &[Metric]) -> Value {
    let mut out: Vec<Value> = Vec::new();
    let mut names: Vec<&'static str> = Vec::new();
    for m in metrics {
        if !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    for name in names {
        let points: Vec<&Metric> = metrics.iter().filter(|m| m.name == name).collect();
        let Some(first) = points.first() else {
            continue;
        };
        let data: Vec<Value> = points.iter().map(|m| point(m)).collect();
        let body = match first.point {
            Point::Histogram { .. } => {
                json!({"histogram": {"aggregationTemporality": DELTA, "dataPoints": data}})
            }
            Point::Sum(_) => json!({"sum": {
                "aggregationTemporality": DELTA, "isMonotonic": true, "dataPoints": data}}),
        };
        let mut metric =
            json!({"name": name, "unit": first.unit, "description": first.description});
        if let (Some(obj), Value::Object(b)) = (metric.as_object_mut(), body) {
            obj.extend(b);
        }
        out.push(metric);
    }
    json!({"resourceMetrics": [{
        "resource": resource(r),
        "scopeMetrics": [{"scope": scope(), "metrics": out}],
    }]})
}

fn point(m: &Metric) -> Value {
    let finite = |d: f64| if d.is_finite() { d } else { 0.0 };
    let mut v = json!({
        "attributes": attributes(&m.attributes),
        "startTimeUnixNano": m.start_ns.to_string(),
        "timeUnixNano": m.end_ns.max(m.start_ns).to_string(),
    });
    let extra = match &m.point {
        Point::Histogram {
            bounds,
            counts,
            count,
            sum,
            min,
            max,
        } => json!({
            "count": count.to_string(),
            "sum": finite(*sum),
            "bucketCounts": counts.iter().map(u64::to_string).collect::<Vec<_>>(),
            "explicitBounds": bounds,
            "min": finite(*min),
            "max": finite(*max),
        }),
        Point::Sum(total) => json!({"asDouble": finite(*total)}),
    };
    if let (Some(obj), Value::Object(e)) = (v.as_object_mut(), extra) {
        obj.extend(e);
    }
    v
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_histogram_puts_values_in_upper_inclusive_buckets() {
        let mut p = Point::histogram(&[1.0, 4.0]);
        for v in [1.0, 2.0, 4.0, 9.0] {
            p.record(v);
        }
        assert_eq!(
            p,
            Point::Histogram {
                bounds: &[1.0, 4.0],
                counts: vec![1, 2, 1],
                count: 4,
                sum: 16.0,
                min: 1.0,
                max: 9.0
            }
        );
    }

    #[test]
    fn a_span_is_encoded_with_hex_ids_integer_enums_and_string_int64s() {
        let span = Span {
            trace_id: "0123456789abcdef0123456789abcdef".into(),
            span_id: "0123456789abcdef".into(),
            parent_span_id: None,
            name: "chat m".into(),
            kind: SpanKind::Client,
            start_ns: 5,
            end_ns: 7,
            attributes: vec![("n".into(), AnyValue::from(3u64))],
            error: Some("failed".into()),
        };
        let r = Resource {
            service_name: "bosun".into(),
            instance_id: "i".into(),
        };
        let v = traces_request(&r, &[span]);
        let s = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["kind"], 3);
        assert_eq!(s["startTimeUnixNano"], "5");
        assert_eq!(s["attributes"][0]["value"]["intValue"], "3");
        assert_eq!(s["status"]["code"], 2);
        assert!(s.get("parentSpanId").is_none());
    }
}
