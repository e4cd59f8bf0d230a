//! The limits and the visibility rules of `mcp serve` and `mcp proxy` given on the command
//! line, as middleware layers around the server's handlers (see docs/MIDDLEWARE.md).

use std::time::Duration;

use mcpwire_server::middleware::{RateLimitLayer, ResultSizeLayer, TimeoutLayer, VisibilityLayer};
use mcpwire_server::ServerBuilder;

/// The middleware options of `mcp serve`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Limits")]
pub struct LimitOptions {
    /// Seconds any request may take; past it, it is cancelled and answered with an error
    /// that says so.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub request_timeout: Option<Duration>,
    /// A tool's own time limit (repeatable).
    #[arg(long = "tool-timeout", value_name = "NAME=SECS", value_parser = tool_timeout)]
    pub tool_timeouts: Vec<(String, Duration)>,
    /// Requests per second per session (or stdio connection), and how many at once (the
    /// burst; RATE alone allows a burst of RATE, at least 1). Over it: error -32029 with
    /// `retryAfterMs`.
    #[arg(long, value_name = "RATE[:BURST]", value_parser = rate)]
    pub rate_limit: Option<(f64, u32)>,
    /// Largest result, in bytes of JSON; a larger one fails (a tool's as a tool error).
    #[arg(long, value_name = "BYTES")]
    pub max_result_bytes: Option<usize>,
    /// Show only the tools, prompts, resources and templates whose name matches (repeatable;
    /// `*` matches any run of characters). Others are left out of lists and answered as
    /// unknown when used.
    #[arg(long, value_name = "PATTERN")]
    pub show: Vec<String>,
    /// Hide the tools, prompts, resources and templates whose name matches (repeatable; `*`
    /// wildcards; wins over `--show`).
    #[arg(long, value_name = "PATTERN")]
    pub hide: Vec<String>,
}

impl LimitOptions {
    /// `builder` with the layers these options ask for: the rate limit outermost (a request
    /// over it costs nothing more), then visibility, then the result size, then the timeouts.
    pub fn apply(&self, mut builder: ServerBuilder) -> ServerBuilder {
        if self.request_timeout.is_some() || !self.tool_timeouts.is_empty() {
            let mut timeouts = match self.request_timeout {
                Some(limit) => TimeoutLayer::new(limit),
                None => TimeoutLayer::tools_only(),
            };
            for (tool, limit) in &self.tool_timeouts {
                timeouts = timeouts.tool(tool.clone(), *limit);
            }
            builder = builder.layer(timeouts);
        }
        if let Some(max) = self.max_result_bytes {
            builder = builder.layer(ResultSizeLayer::new(max));
        }
        if !self.show.is_empty() || !self.hide.is_empty() {
            let (show, hide) = (self.show.clone(), self.hide.clone());
            builder = builder.layer(VisibilityLayer::new(move |_ctx, item| {
                let name = item.name();
                (show.is_empty() || show.iter().any(|p| glob(p, name))) && !hide.iter().any(|p| glob(p, name))
            }));
        }
        if let Some((rate, burst)) = self.rate_limit {
            builder = builder.layer(RateLimitLayer::new(rate, burst));
        }
        builder
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters (none
/// included) and everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A positive number of seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

/// `NAME=SECS`.
fn tool_timeout(text: &str) -> Result<(String, Duration), String> {
    let (name, secs) = text.split_once('=').ok_or_else(|| format!("{text:?} is not NAME=SECS"))?;
    if name.is_empty() {
        return Err(format!("{text:?} names no tool"));
    }
    Ok((name.to_owned(), seconds(secs)?))
}

/// `RATE[:BURST]`.
fn rate(text: &str) -> Result<(f64, u32), String> {
    let (rate, burst) = match text.split_once(':') {
        Some((rate, burst)) => (rate, Some(burst)),
        None => (text, None),
    };
    let rate = match rate.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => r,
        _ => return Err(format!("{rate:?} is not a positive number of requests per second")),
    };
    let burst = match burst {
        Some(b) => b.parse::<u32>().ok().filter(|b| *b > 0).ok_or_else(|| format!("{b:?} is not a positive burst"))?,
        None => (rate.ceil() as u32).max(1),
    };
    Ok((rate, burst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_bad_ones_say_why() {
        assert_eq!(seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert!(seconds("0").is_err() && seconds("-1").is_err() && seconds("x").is_err());
        assert_eq!(tool_timeout("slow=30"), Ok(("slow".to_owned(), Duration::from_secs(30))));
        assert_eq!(tool_timeout("slow"), Err("\"slow\" is not NAME=SECS".to_owned()));
        assert!(tool_timeout("=3").is_err());
        assert_eq!(rate("10"), Ok((10.0, 10)));
        assert_eq!(rate("0.5"), Ok((0.5, 1)));
        assert_eq!(rate("2:5"), Ok((2.0, 5)));
        assert!(rate("2:0").is_err() && rate("0").is_err() && rate("inf").is_err());
    }

    #[test]
    fn globs_match_runs_of_anything() {
        for (pattern, name) in [
            ("echo", "echo"),
            ("*", ""),
            ("test_*", "test_x"),
            ("*_echo", "s_echo"),
            ("a*b*c", "abc"),
            ("a*b*c", "axxbyyc"),
            ("*x*", "x"),
        ] {
            assert!(glob(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in
            [("echo", "echoes"), ("test_*", "tes"), ("*_echo", "echo"), ("a*b*c", "acb"), ("a*a", "a"), ("", "x")]
        {
            assert!(!glob(pattern, name), "{pattern} {name}");
        }
    }
}
