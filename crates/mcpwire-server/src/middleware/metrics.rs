//! The operation-duration histogram of the OpenTelemetry semantic conventions for MCP
//! (`mcp.server.operation.duration`), recorded by the tracing layer with the `opentelemetry`
//! feature, on the global meter provider.

use std::time::Instant;

use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::telemetry::{
    self, DURATION_BOUNDARIES, ERROR_TYPE, METHOD_NAME, PROTOCOL_VERSION, SERVER_DURATION,
};
use mcpwire_protocol::{Method, ProtocolVersion};
use opentelemetry::metrics::Histogram;
use opentelemetry::KeyValue;
use smallvec::SmallVec;

/// Where the server's operation durations go.
#[derive(Clone)]
pub(crate) struct Durations(Histogram<f64>);

impl std::fmt::Debug for Durations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(SERVER_DURATION)
    }
}

impl Durations {
    /// The server's histogram, on the global meter provider (as it is when the layer is made).
    pub(crate) fn server() -> Self {
        let histogram = opentelemetry::global::meter("mcp")
            .f64_histogram(SERVER_DURATION)
            .with_unit("s")
            .with_description("The duration of an MCP request as the server sees it")
            .with_boundaries(DURATION_BOUNDARIES.to_vec())
            .build();
        Self(histogram)
    }

    /// A measurement of `request` begun now.
    pub(crate) fn start(&self, request: &ClientRequest, revision: ProtocolVersion) -> Measurement {
        let target = telemetry::target(request).map(|(attribute, name)| (attribute, name.to_owned()));
        Measurement { started: Instant::now(), method: request.method(), revision, target }
    }

    /// Records the duration of `measurement`, with its `error.type` if it failed.
    pub(crate) fn finish(&self, measurement: Measurement, error: Option<&str>) {
        let Measurement { started, method, revision, target } = measurement;
        // On the stack, not the heap: with no meter provider set (the usual case) the
        // histogram drops them unread, once per request.
        let mut attributes: SmallVec<[KeyValue; 4]> = SmallVec::new();
        attributes.push(KeyValue::new(METHOD_NAME, method.as_str()));
        attributes.push(KeyValue::new(PROTOCOL_VERSION, revision.as_str()));
        if let Some((key, value)) = target {
            attributes.push(KeyValue::new(key, value));
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new(ERROR_TYPE, error.to_owned()));
        }
        self.0.record(started.elapsed().as_secs_f64(), &attributes);
    }
}

/// One request being measured.
pub(crate) struct Measurement {
    started: Instant,
    method: Method,
    revision: ProtocolVersion,
    target: Option<(&'static str, String)>,
}
