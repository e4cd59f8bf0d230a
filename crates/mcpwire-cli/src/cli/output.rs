//! What the client commands print on stdout: aligned tables, content blocks as people read
//! them (text as text; images, audio and binary resources saved to files with their paths
//! printed; a tool's structured content as pretty JSON when no text block carries it), and
//! raw JSON for `--json`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use mcpwire_protocol::types::{CallToolResult, ContentBlock, ResourceContents};
use parking_lot::Mutex;
use serde_json::Value;

use super::error::{one_line, CliError};

/// Writes to stdout. A closed pipe (`mcp list … | head`) is not an error worth a word.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// Prints a value as pretty JSON on stdout.
pub fn out_json(value: &Value) {
    out(&serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()));
}

/// The width to lay tables out in: the terminal's, or unbounded when stdout is not one.
pub fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout().size_checked().map(|(_, w)| usize::from(w)).filter(|w| *w >= 40)
}

fn width(s: &str) -> usize {
    console::measure_text_width(s)
}

/// Splits `text` into lines of at most `max` columns, at spaces where possible.
fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(8);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_owned();
        loop {
            let sep = usize::from(!line.is_empty());
            if width(&line) + sep + width(&word) <= max {
                if sep == 1 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word longer than the column: cut it.
            let cut: String = word.chars().take(max).collect();
            let rest: String = word.chars().skip(max).collect();
            lines.push(cut);
            if rest.is_empty() {
                break;
            }
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Lays out rows as aligned columns separated by two spaces, under an upper-case header.
/// With a terminal width, columns wider than their share are wrapped (the last column
/// takes what is left); without one every row stays on one line.
pub fn table(headers: &[&str], rows: &[Vec<String>], width_limit: Option<usize>) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(width(cell));
        }
    }
    if let Some(total) = width_limit {
        fit(&mut widths, total);
    }
    let mut text = String::new();
    let mut emit = |cells: Vec<Vec<String>>| {
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let mut out_line = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let part = cell.get(line).map(String::as_str).unwrap_or("");
                out_line.push_str(part);
                if i + 1 < columns {
                    out_line.push_str(&" ".repeat(widths[i].saturating_sub(width(part)) + 2));
                }
            }
            text.push_str(out_line.trim_end());
            text.push('\n');
        }
    };
    let head: Vec<Vec<String>> = headers.iter().map(|h| vec![(*h).to_owned()]).collect();
    emit(head);
    for row in rows {
        let cells = (0..columns)
            .map(|i| {
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                if width_limit.is_some() {
                    wrap(cell, widths[i])
                } else {
                    vec![cell.to_owned()]
                }
            })
            .collect();
        emit(cells);
    }
    text
}

/// Shrinks column widths to fit `total`: the last column keeps at least a third of the
/// width (30 columns at least); the others shrink widest first, the first column (names)
/// last, none below 12.
fn fit(widths: &mut [usize], total: usize) {
    const FLOOR: usize = 12;
    let last = widths.len() - 1;
    let gaps = 2 * last;
    if widths.iter().sum::<usize>() + gaps <= total {
        return;
    }
    let keep = widths[last].min((total / 3).max(30));
    let budget = total.saturating_sub(gaps + keep);
    while widths[..last].iter().sum::<usize>() > budget {
        let widest = (1..last).filter(|&i| widths[i] > FLOOR).max_by_key(|&i| widths[i]);
        match widest.or_else(|| (widths[0] > FLOOR).then_some(0)) {
            Some(i) => widths[i] -= 1,
            None => break,
        }
    }
    let others = widths[..last].iter().sum::<usize>() + gaps;
    widths[last] = widths[last].min(total.saturating_sub(others).max(20));
}

/// Saves binary content to files: in `--out DIR`, or a new temporary directory made on the
/// first save.
pub struct Saver {
    dir: Option<PathBuf>,
    made: Mutex<Option<PathBuf>>,
}

impl Saver {
    /// A saver writing into `dir` (created if missing), or a temporary directory.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir, made: Mutex::new(None) }
    }

    fn directory(&self) -> Result<PathBuf, CliError> {
        let mut made = self.made.lock();
        if let Some(d) = made.as_ref() {
            return Ok(d.clone());
        }
        let dir = match &self.dir {
            Some(d) => d.clone(),
            None => {
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default();
                std::env::temp_dir().join(format!("mcp-{}-{:x}", std::process::id(), stamp & 0xffff_ffff))
            }
        };
        std::fs::create_dir_all(&dir).map_err(|e| CliError::usage(format!("cannot create {}: {e}", dir.display())))?;
        *made = Some(dir.clone());
        Ok(dir)
    }

    /// Decodes base64 `data` and writes it to a new file named after `stem` with the
    /// extension of `mime`; returns the path.
    pub fn save(&self, stem: &str, mime: Option<&str>, data: &str) -> Result<PathBuf, CliError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(data.trim()))
            .map_err(|e| {
                CliError::protocol(format!("the server sent {} data that is not base64: {e}", mime.unwrap_or("binary")))
            })?;
        let dir = self.directory()?;
        let stem = sanitize(stem);
        let ext = extension(mime);
        let has_ext = Path::new(&stem).extension().is_some();
        let name = |n: usize| {
            let suffix = if n == 1 { String::new() } else { format!("-{n}") };
            if has_ext {
                let p = Path::new(&stem);
                let base = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let e = p.extension().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                format!("{base}{suffix}.{e}")
            } else {
                format!("{stem}{suffix}.{ext}")
            }
        };
        let mut n = 1;
        let path = loop {
            let candidate = dir.join(name(n));
            if !candidate.exists() {
                break candidate;
            }
            n += 1;
        };
        std::fs::write(&path, &bytes).map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}

/// A file name from a tool name or URI: its last path segment, letters, digits, `.`, `-`,
/// `_` only.
fn sanitize(stem: &str) -> String {
    let last = stem.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or(stem);
    let clean: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .take(80)
        .collect();
    let clean = clean.trim_matches('.').to_owned();
    if clean.is_empty() {
        "content".into()
    } else {
        clean
    }
}

/// The usual file extension of a MIME type.
pub fn extension(mime: Option<&str>) -> &'static str {
    let mime = mime.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match mime.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" => "bmp",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "audio/wav" | "audio/wave" | "audio/x-wav" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "audio/webm" | "video/webm" => "webm",
        "audio/mp4" | "audio/aac" => "m4a",
        "video/mp4" => "mp4",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "application/json" => "json",
        "text/plain" => "txt",
        "text/html" => "html",
        "text/csv" => "csv",
        _ => "bin",
    }
}

/// A tool's structured content, when it is to be printed: only when no content block is
/// text. A tool returning structured content should also return it serialized in a text
/// block (the specification says so), so printing both would print it twice, and the text
/// is what `mcp call … > file` is meant to capture.
pub fn structured_to_print(result: &CallToolResult) -> Option<&Value> {
    let has_text = result.content.iter().any(|b| b.as_text().is_some());
    result.structured_content.as_ref().filter(|_| !has_text)
}

/// Prints a successful tool result: its content blocks, then its structured content as
/// pretty JSON if [`structured_to_print`] says so. `stem` names saved files; `false` when
/// there was nothing to print.
pub fn print_tool_result(result: &CallToolResult, saver: &Saver, stem: &str) -> Result<bool, CliError> {
    print_content(&result.content, saver, stem)?;
    let structured = structured_to_print(result);
    if let Some(s) = structured {
        out_json(s);
    }
    Ok(!result.content.is_empty() || structured.is_some())
}

/// Prints content blocks as people read them; `stem` names saved files.
pub fn print_content(blocks: &[ContentBlock], saver: &Saver, stem: &str) -> Result<(), CliError> {
    for block in blocks {
        print_block(block, saver, stem)?;
    }
    Ok(())
}

/// Prints one content block.
pub fn print_block(block: &ContentBlock, saver: &Saver, stem: &str) -> Result<(), CliError> {
    match block {
        ContentBlock::Text(t) => out(&t.text),
        ContentBlock::Image(i) => {
            let path = saver.save(stem, Some(&i.mime_type), &i.data)?;
            out(&format!("[image {}, {}] saved to {}", i.mime_type, size_of(&path), path.display()));
        }
        ContentBlock::Audio(a) => {
            let path = saver.save(stem, Some(&a.mime_type), &a.data)?;
            out(&format!("[audio {}, {}] saved to {}", a.mime_type, size_of(&path), path.display()));
        }
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("[resource link] {}", link.uri);
            if let Some(mime) = &link.mime_type {
                line.push_str(&format!(" ({mime})"));
            }
            let about = link.description.as_deref().or(link.title.as_deref()).unwrap_or(&link.name);
            line.push_str(&format!(" {}", one_line(about)));
            out(&line);
        }
        ContentBlock::EmbeddedResource(e) => print_resource_contents(&e.resource, saver, true)?,
        ContentBlock::ToolUse(_) | ContentBlock::ToolResult(_) => {
            out_json(&serde_json::to_value(block).unwrap_or(Value::Null));
        }
    }
    Ok(())
}

/// Prints a resource's contents: text as text (after a header line when `header`), binary
/// contents saved to a file.
pub fn print_resource_contents(contents: &ResourceContents, saver: &Saver, header: bool) -> Result<(), CliError> {
    let mime = contents.mime_type.as_deref();
    let described = match mime {
        Some(m) => format!("{} ({m})", contents.uri),
        None => contents.uri.clone(),
    };
    match (&contents.text, &contents.blob) {
        (Some(text), _) => {
            if header {
                out(&format!("[resource {described}]"));
            }
            out(text);
        }
        (None, Some(blob)) => {
            let path = saver.save(&contents.uri, mime, blob)?;
            out(&format!("[resource {described}, {}] saved to {}", size_of(&path), path.display()));
        }
        (None, None) => out(&format!("[resource {described}] (empty)")),
    }
    Ok(())
}

fn size_of(path: &Path) -> String {
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_wrap() {
        let rows = vec![
            vec!["echo".to_owned(), "text: string".to_owned(), "Returns its text.".to_owned()],
            vec!["a_longer_name".to_owned(), String::new(), "x".to_owned()],
        ];
        let t = table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows, None);
        assert_eq!(
            t,
            "NAME           ARGUMENTS     DESCRIPTION\n\
             echo           text: string  Returns its text.\n\
             a_longer_name                x\n"
        );
        let long = vec![vec!["n".to_owned(), "word ".repeat(20).trim().to_owned()]];
        let t = table(&["A", "B"], &long, Some(40));
        assert!(t.lines().all(|l| width(l) <= 40), "{t}");
        assert!(t.lines().count() > 3);
    }

    #[test]
    fn structured_content_is_printed_only_without_a_text_block() {
        let structured = serde_json::json!({"sum": 3.5});
        // The text copy the specification asks for: the text is printed, not the JSON again.
        let copy = CallToolResult::structured(structured.clone());
        assert_eq!(structured_to_print(&copy), None);
        // Text that is not a copy of it: still only the text (the content is what is printed).
        let other_text = CallToolResult {
            content: vec![ContentBlock::text("the sum is 3.5")],
            structured_content: Some(structured.clone()),
            ..CallToolResult::default()
        };
        assert_eq!(structured_to_print(&other_text), None);
        // No content at all, or no text block among it: the structured content is printed.
        let bare = CallToolResult { structured_content: Some(structured.clone()), ..CallToolResult::default() };
        assert_eq!(structured_to_print(&bare), Some(&structured));
        let link = serde_json::from_value::<ContentBlock>(
            serde_json::json!({"type": "resource_link", "uri": "file:///x", "name": "x"}),
        )
        .unwrap();
        let no_text = CallToolResult {
            content: vec![link],
            structured_content: Some(structured.clone()),
            ..CallToolResult::default()
        };
        assert_eq!(structured_to_print(&no_text), Some(&structured));
        // Nothing structured: nothing to print.
        assert_eq!(structured_to_print(&CallToolResult::text("hi")), None);
    }

    #[test]
    fn files_are_named_and_numbered() {
        let dir = std::env::temp_dir().join(format!("mcp-cli-saver-{}", std::process::id()));
        let saver = Saver::new(Some(dir.clone()));
        let a = saver.save("test_image_content", Some("image/png"), "aGVsbG8=").unwrap();
        let b = saver.save("test_image_content", Some("image/png"), "aGVsbG8=").unwrap();
        assert_eq!(a.file_name().unwrap(), "test_image_content.png");
        assert_eq!(b.file_name().unwrap(), "test_image_content-2.png");
        assert_eq!(std::fs::read(&a).unwrap(), b"hello");
        let c = saver.save("file:///x/report.pdf", Some("application/pdf"), "aGVsbG8=").unwrap();
        assert_eq!(c.file_name().unwrap(), "report.pdf");
        assert!(saver.save("x", None, "!!!").is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
