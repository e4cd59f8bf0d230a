//! SVG charts (plotters, SVG backend only): grouped bars of req/s per server.

use crate::http_load::Mode;
use crate::suite::SuiteResults;
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// One group of bars: a label under it, and one value per series (`None`: no bar).
#[derive(Debug, Clone)]
pub struct Group {
    /// The label under the group.
    pub label: String,
    /// One value per series.
    pub values: Vec<Option<f64>>,
}

/// Writes `bench-http.svg` (and `bench-stdio.svg`, when there are stdio figures) into `dir`;
/// returns the files written.
pub fn write_charts(results: &SuiteResults, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let http_servers: Vec<&str> =
        results.servers.iter().filter(|s| !s.http.is_empty()).map(|s| s.name.as_str()).collect();
    let mut groups = Vec::new();
    for mode in [Mode::Sessions, Mode::Stateless] {
        for &clients in &results.settings.clients {
            let values: Vec<Option<f64>> = http_servers
                .iter()
                .map(|name| {
                    let s = results.servers.iter().find(|s| s.name == *name)?;
                    s.http.iter().find(|c| c.mode == mode && c.clients == clients)?.median.req_per_s
                })
                .collect();
            if values.iter().any(Option::is_some) {
                groups.push(Group { label: format!("{} ×{clients}", mode.as_str()), values });
            }
        }
    }
    if !groups.is_empty() {
        let path = dir.join("bench-http.svg");
        let names: Vec<String> = http_servers.iter().map(|s| s.to_string()).collect();
        grouped_bars(&path, "Streamable HTTP tools/call (echo): req/s by mode × clients", &names, &groups)?;
        written.push(path);
    }

    let stdio_servers: Vec<&str> =
        results.servers.iter().filter(|s| !s.stdio.is_empty()).map(|s| s.name.as_str()).collect();
    let groups: Vec<Group> = results
        .settings
        .inflight
        .iter()
        .map(|&n| Group {
            label: format!("{n} in flight"),
            values: stdio_servers
                .iter()
                .map(|name| {
                    let s = results.servers.iter().find(|s| s.name == *name)?;
                    s.stdio.iter().find(|c| c.inflight == n)?.median.req_per_s
                })
                .collect(),
        })
        .filter(|g| g.values.iter().any(Option::is_some))
        .collect();
    if !groups.is_empty() {
        let path = dir.join("bench-stdio.svg");
        let names: Vec<String> = stdio_servers.iter().map(|s| s.to_string()).collect();
        grouped_bars(&path, "stdio tools/call (echo): req/s by calls in flight", &names, &groups)?;
        written.push(path);
    }
    Ok(written)
}

/// Draws a grouped bar chart of `groups` (one bar per series in each) to an SVG file.
pub fn grouped_bars(path: &Path, title: &str, series: &[String], groups: &[Group]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let max = groups.iter().flat_map(|g| g.values.iter().flatten()).fold(0.0f64, |a, &b| a.max(b));
    let top = if max > 0.0 { max * 1.35 } else { 1.0 }; // headroom for the legend
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..n, 0f64..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("req/s")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(|e| err(&e))?;
    let width = 0.8 / series.len().max(1) as f64;
    for (j, name) in series.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let bars = groups.iter().enumerate().filter_map(move |(i, g)| {
            let v = (*g.values.get(j)?)?;
            let x0 = i as f64 + 0.1 + j as f64 * width;
            Some(Rectangle::new([(x0, 0.0), (x0 + width * 0.9, v)], color.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    let style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, g) in groups.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(g.label.clone(), (x, y + 8), style.clone())).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_chart() {
        let dir = std::env::temp_dir().join(format!("mcp-bench-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.svg");
        let groups = vec![
            Group { label: "sessions ×1".into(), values: vec![Some(100.0), Some(50.0)] },
            Group { label: "sessions ×16".into(), values: vec![Some(400.0), None] },
        ];
        grouped_bars(&path, "t", &["alpha".into(), "beta".into()], &groups).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("alpha") && svg.contains("beta") && svg.contains("sessions ×16"));
        // Three bars plus two legend swatches and the background.
        assert!(svg.matches("<rect").count() >= 5);
        std::fs::remove_dir_all(&dir).ok();
    }
}
