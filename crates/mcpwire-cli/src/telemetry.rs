//! OpenTelemetry export for `mcp serve` and `mcp proxy` (the `otel` feature, on by
//! default): traces and metrics over OTLP/HTTP, through the OpenTelemetry SDK and its OTLP
//! exporter.
//!
//! Export is on when `--otel-endpoint URL` is given, or when one of the standard endpoint
//! variables is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`), and `OTEL_SDK_DISABLED` is not `true`. The other
//! standard variables apply as the SDK reads them: `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_{,TRACES_,METRICS_}HEADERS`, `…TIMEOUT`,
//! `…PROTOCOL` (`http/protobuf` or `http/json`), `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`,
//! `OTEL_METRIC_EXPORT_INTERVAL`; `OTEL_TRACES_EXPORTER=none` or `OTEL_METRICS_EXPORTER=none`
//! turns one signal off.
//!
//! When exporting, the server gets the tracing layer (a span per request, with the
//! semantic conventions for MCP, continuing the caller's `traceparent`), and the proxy's
//! upstream calls are client spans whose context goes upstream in `_meta`: a call through
//! `mcp proxy` is one trace from the client to the upstream server.

use mcpwire_server::ServerBuilder;
use tracing::Subscriber;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The telemetry options of `mcp serve` and `mcp proxy`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Telemetry")]
pub struct TelemetryOptions {
    /// Export traces and metrics over OTLP/HTTP to this collector (`http://host:4318`:
    /// traces go to `/v1/traces`, metrics to `/v1/metrics`). Without it, the standard
    /// `OTEL_EXPORTER_OTLP_*ENDPOINT` variables turn export on; the other `OTEL_*` variables
    /// apply either way.
    #[arg(long, value_name = "URL")]
    pub otel_endpoint: Option<String>,
}

/// The telemetry of this process: exporting, or inert.
pub struct Telemetry {
    #[cfg(feature = "otel")]
    export: Option<otel::Export>,
}

impl Telemetry {
    /// Starts exporting if the options or the environment ask for it; an inert value
    /// otherwise. Call it before the async runtime starts (the exporter's HTTP client is a
    /// blocking one) and before the server is built (its metrics take the meter provider
    /// set here).
    pub fn start(options: &TelemetryOptions, service_name: &str) -> Result<Telemetry, String> {
        #[cfg(feature = "otel")]
        {
            Ok(Telemetry { export: otel::Export::start(options, service_name, |name| std::env::var(name).ok())? })
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = service_name;
            match &options.otel_endpoint {
                Some(_) => Err("--otel-endpoint needs mcp built with the `otel` feature".into()),
                None => Ok(Telemetry {}),
            }
        }
    }

    /// Whether spans or metrics are exported.
    pub fn exporting(&self) -> bool {
        #[cfg(feature = "otel")]
        {
            self.export.is_some()
        }
        #[cfg(not(feature = "otel"))]
        {
            false
        }
    }

    /// The `tracing` layer that turns the protocol's spans into OpenTelemetry spans, when
    /// exporting.
    pub fn layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync>>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        #[cfg(feature = "otel")]
        {
            self.export.as_ref().and_then(|e| e.layer())
        }
        #[cfg(not(feature = "otel"))]
        {
            None
        }
    }

    /// `builder` with the tracing layer outermost when exporting (so that it times, and
    /// sees the refusals of, every other layer); unchanged otherwise.
    pub fn apply(&self, builder: ServerBuilder) -> ServerBuilder {
        if self.exporting() {
            builder.layer(mcpwire_server::middleware::TracingLayer::new())
        } else {
            builder
        }
    }

    /// Sends what is still buffered and stops. Call it after the async runtime has ended.
    pub fn shutdown(self) {
        #[cfg(feature = "otel")]
        if let Some(export) = self.export {
            export.shutdown();
        }
    }
}

#[cfg(feature = "otel")]
mod otel {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use opentelemetry_sdk::Resource;
    use tracing_subscriber::filter::Targets;

    const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
    const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    const METRICS_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
    const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
    const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
    const METRICS_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL";
    const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
    const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
    const TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
    const METRICS_EXPORTER: &str = "OTEL_METRICS_EXPORTER";
    const GRPC: &str = "grpc";
    const NONE: &str = "none";
    /// The spans of the protocol: the server's and the client's (see `mcpwire_protocol::telemetry`).
    const SPAN_TARGETS: [&str; 2] = ["mcpwire::server", "mcpwire::client"];

    /// The providers exporting, with what the tracing layer needs.
    pub(super) struct Export {
        tracer: Option<SdkTracerProvider>,
        meter: Option<SdkMeterProvider>,
    }

    impl Export {
        /// What the options and the environment (`var`) ask for; `None` when they ask for
        /// nothing.
        pub(super) fn start(
            options: &TelemetryOptions,
            service_name: &str,
            var: impl Fn(&str) -> Option<String>,
        ) -> Result<Option<Export>, String> {
            let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
            if set(SDK_DISABLED).is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
                return Ok(None);
            }
            let endpoint = options.otel_endpoint.as_deref().map(|url| url.trim_end_matches('/'));
            if let Some(url) = endpoint {
                check_url(url)?;
            }
            let asked = |signal_endpoint: &str| endpoint.is_some() || set(ENDPOINT).or(set(signal_endpoint)).is_some();
            let off = |exporter: &str| set(exporter).is_some_and(|v| v.trim().eq_ignore_ascii_case(NONE));
            let traces = asked(TRACES_ENDPOINT) && !off(TRACES_EXPORTER);
            let metrics = asked(METRICS_ENDPOINT) && !off(METRICS_EXPORTER);
            if !traces && !metrics {
                return Ok(None);
            }
            let mut resource = Resource::builder();
            if set(SERVICE_NAME).is_none() {
                resource = resource.with_service_name(service_name.to_owned());
            }
            let resource = resource.build();
            let client = BlockingHttp::new()?;
            let tracer = if traces {
                let mut exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_http_client(client.clone())
                    .with_protocol(protocol(&set, TRACES_PROTOCOL)?);
                if let Some(url) = endpoint {
                    exporter = exporter.with_endpoint(format!("{url}/v1/traces"));
                }
                let exporter = exporter.build().map_err(|e| format!("cannot export traces: {e}"))?;
                let provider =
                    SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.clone()).build();
                opentelemetry::global::set_tracer_provider(provider.clone());
                Some(provider)
            } else {
                None
            };
            let meter = if metrics {
                let mut exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_http_client(client)
                    .with_protocol(protocol(&set, METRICS_PROTOCOL)?);
                if let Some(url) = endpoint {
                    exporter = exporter.with_endpoint(format!("{url}/v1/metrics"));
                }
                let exporter = exporter.build().map_err(|e| format!("cannot export metrics: {e}"))?;
                let provider =
                    SdkMeterProvider::builder().with_periodic_exporter(exporter).with_resource(resource).build();
                opentelemetry::global::set_meter_provider(provider.clone());
                Some(provider)
            } else {
                None
            };
            Ok(Some(Export { tracer, meter }))
        }

        pub(super) fn layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync>>
        where
            S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
        {
            let tracer = self.tracer.as_ref()?.tracer("mcp");
            let targets =
                SPAN_TARGETS.iter().fold(Targets::new(), |t, target| t.with_target(*target, tracing::Level::INFO));
            Some(Box::new(tracing_opentelemetry::layer().with_tracer(tracer).with_filter(targets)))
        }

        pub(super) fn shutdown(self) {
            if let Some(tracer) = self.tracer {
                if let Err(e) = tracer.shutdown() {
                    eprintln!("mcp: could not export the last spans: {e}");
                }
            }
            if let Some(meter) = self.meter {
                if let Err(e) = meter.shutdown() {
                    eprintln!("mcp: could not export the last metrics: {e}");
                }
            }
        }
    }

    fn check_url(url: &str) -> Result<(), String> {
        match url.parse::<reqwest::Url>() {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
            _ => Err(format!("--otel-endpoint {url:?} is not an http(s) URL")),
        }
    }

    /// The protocol a signal's variables name (`http/protobuf` when none). gRPC is refused
    /// with a clear message rather than sent as HTTP.
    fn protocol(set: &impl Fn(&str) -> Option<String>, signal: &str) -> Result<Protocol, String> {
        let named = set(signal).map(|v| (signal, v)).or_else(|| set(PROTOCOL).map(|v| (PROTOCOL, v)));
        match named {
            None => Ok(Protocol::HttpBinary),
            Some((_, v)) if v.trim() == "http/protobuf" => Ok(Protocol::HttpBinary),
            Some((_, v)) if v.trim() == "http/json" => Ok(Protocol::HttpJson),
            Some((name, v)) if v.trim() == GRPC => {
                Err(format!("{name}=grpc: mcp exports over OTLP/HTTP only (http/protobuf or http/json)"))
            }
            Some((name, v)) => Err(format!("{name}={v:?} is not an OTLP protocol (http/protobuf or http/json)")),
        }
    }

    /// The exporter's HTTP client: the workspace's reqwest, blocking (the SDK's batch
    /// processor and periodic reader post from threads of their own), with rustls.
    #[derive(Debug, Clone)]
    struct BlockingHttp(reqwest::blocking::Client);

    impl BlockingHttp {
        fn new() -> Result<Self, String> {
            reqwest::blocking::Client::builder()
                .build()
                .map(BlockingHttp)
                .map_err(|e| format!("cannot make the OTLP HTTP client: {e}"))
        }
    }

    /// The largest answer read from a collector (it sends an empty or tiny body).
    const MAX_ANSWER: u64 = 1024 * 1024;

    #[async_trait::async_trait]
    impl opentelemetry_http::HttpClient for BlockingHttp {
        async fn send_bytes(
            &self,
            request: opentelemetry_http::Request<opentelemetry_http::Bytes>,
        ) -> Result<opentelemetry_http::Response<opentelemetry_http::Bytes>, opentelemetry_http::HttpError> {
            use std::io::Read;
            let (parts, body) = request.into_parts();
            let mut outgoing = self.0.request(parts.method, parts.uri.to_string()).body(body.to_vec());
            for (name, value) in &parts.headers {
                outgoing = outgoing.header(name, value);
            }
            let answer = outgoing.send()?;
            let mut response = opentelemetry_http::Response::builder().status(answer.status().as_u16());
            for (name, value) in answer.headers() {
                response = response.header(name.as_str(), value.as_bytes());
            }
            let mut body = Vec::new();
            answer.take(MAX_ANSWER).read_to_end(&mut body)?;
            Ok(response.body(opentelemetry_http::Bytes::from(body))?)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::collections::HashMap;

        fn start(endpoint: Option<&str>, vars: &[(&str, &str)]) -> Result<Option<Export>, String> {
            let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let options = TelemetryOptions { otel_endpoint: endpoint.map(str::to_owned) };
            Export::start(&options, "test", |name| vars.get(name).cloned())
        }

        #[test]
        fn export_is_off_unless_asked_for() {
            assert!(start(None, &[]).unwrap().is_none());
            assert!(start(None, &[(SERVICE_NAME, "x")]).unwrap().is_none());
            assert!(start(Some("http://127.0.0.1:1"), &[(SDK_DISABLED, "true")]).unwrap().is_none());
            let both_off = [(TRACES_EXPORTER, "none"), (METRICS_EXPORTER, "none")];
            assert!(start(Some("http://127.0.0.1:1"), &both_off).unwrap().is_none());
        }

        #[test]
        fn the_flag_or_the_variables_turn_it_on() {
            let export = start(Some("http://127.0.0.1:1/"), &[]).unwrap().unwrap();
            assert!(export.tracer.is_some() && export.meter.is_some());
            export.shutdown();
            let export = start(None, &[(TRACES_ENDPOINT, "http://127.0.0.1:1/v1/traces")]).unwrap().unwrap();
            assert!(export.tracer.is_some() && export.meter.is_none(), "only the signal named");
            export.shutdown();
            let export = start(None, &[(ENDPOINT, "http://127.0.0.1:1"), (METRICS_EXPORTER, "none")]).unwrap().unwrap();
            assert!(export.tracer.is_some() && export.meter.is_none());
            export.shutdown();
        }

        #[test]
        fn bad_settings_say_what_is_wrong() {
            let e = start(Some("localhost:4318"), &[]).err().unwrap();
            assert!(e.contains("not an http(s) URL"), "{e}");
            let e = start(Some("http://127.0.0.1:1"), &[(PROTOCOL, "grpc")]).err().unwrap();
            assert!(e.contains("OTLP/HTTP only"), "{e}");
            let e = start(Some("http://127.0.0.1:1"), &[(TRACES_PROTOCOL, "carrier-pigeon")]).err().unwrap();
            assert!(e.contains("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") && e.contains("not an OTLP protocol"), "{e}");
            assert!(start(Some("http://127.0.0.1:1"), &[(PROTOCOL, "http/json")]).unwrap().is_some());
        }
    }
}
