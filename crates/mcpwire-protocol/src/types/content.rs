use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Annotations, Icon, Meta};
use crate::message::Key;

/// A piece of content in a tool result, a prompt message or a sampling message.
///
/// Read by its `type` member: when `type` comes first, as writers usually put it, the block's
/// own members are read straight from the input after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text(TextContent),
    /// A base64 image.
    Image(ImageContent),
    /// Base64 audio (2025-03-26+).
    Audio(AudioContent),
    /// A link to a resource the client may read (2025-06-18+).
    ResourceLink(ResourceLink),
    /// A resource's contents embedded inline.
    #[serde(rename = "resource")]
    EmbeddedResource(EmbeddedResource),
    /// A tool call made by a model (sampling with tools, 2025-11-25+).
    ToolUse(ToolUseContent),
    /// The result of a tool call, given back to a model (sampling with tools, 2025-11-25+).
    ToolResult(ToolResultContent),
}

/// The `type` of a content block, as each variant of [`ContentBlock`] is named.
///
/// A block is read by hand rather than by serde's reader of internally tagged enums, which
/// takes every member into a buffer of its own before it looks at the tag. A writer usually
/// puts `type` first (serde does), and then the block's own members are read straight from
/// the input after it; a block whose `type` comes later is read into a value first, then
/// read the same way.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Text,
    Image,
    Audio,
    ResourceLink,
    #[serde(rename = "resource")]
    EmbeddedResource,
    ToolUse,
    ToolResult,
}

/// The member that names a block's kind.
const TYPE: &str = "type";

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl BlockVisitor {
    /// Reads the rest of a block, its kind read.
    fn read<'de, A: MapAccess<'de>>(kind: Kind, rest: A) -> Result<ContentBlock, A::Error> {
        let rest = MapAccessDeserializer::new(rest);
        Ok(match kind {
            Kind::Text => ContentBlock::Text(Deserialize::deserialize(rest)?),
            Kind::Image => ContentBlock::Image(Deserialize::deserialize(rest)?),
            Kind::Audio => ContentBlock::Audio(Deserialize::deserialize(rest)?),
            Kind::ResourceLink => ContentBlock::ResourceLink(Deserialize::deserialize(rest)?),
            Kind::EmbeddedResource => ContentBlock::EmbeddedResource(Deserialize::deserialize(rest)?),
            Kind::ToolUse => ContentBlock::ToolUse(Deserialize::deserialize(rest)?),
            Kind::ToolResult => ContentBlock::ToolResult(Deserialize::deserialize(rest)?),
        })
    }
}

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        let Some(Key(first)) = map.next_key::<Key<'de>>()? else {
            return Err(de::Error::missing_field(TYPE));
        };
        if first == TYPE {
            let kind = map.next_value::<Kind>()?;
            return Self::read(kind, map);
        }
        // `type` later: every member into a value, then read with `type` first.
        let mut members = Map::new();
        members.insert(first.into_owned(), map.next_value()?);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            members.insert(key.into_owned(), map.next_value()?);
        }
        let kind = members.remove(TYPE).ok_or_else(|| de::Error::missing_field(TYPE))?;
        let kind = Kind::deserialize(kind).map_err(de::Error::custom)?;
        let members = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(members.into_iter());
        Self::read(kind, members).map_err(de::Error::custom)
    }
}

impl ContentBlock {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent { text: text.into(), annotations: None, meta: None })
    }

    /// Image content from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent { data: data.into(), mime_type: mime_type.into(), annotations: None, meta: None })
    }

    /// Audio content from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(AudioContent { data: data.into(), mime_type: mime_type.into(), annotations: None, meta: None })
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Self::EmbeddedResource(EmbeddedResource { resource: contents, annotations: None, meta: None })
    }

    /// The text, if this is text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Image content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Audio content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A link to a resource (the fields of a `Resource`, plus `type: "resource_link"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A resource's contents embedded in content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A model's request to call a tool (in sampling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifier of this tool use, echoed by the matching result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Arguments.
    pub input: Value,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use (in sampling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the tool use this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The contents of a resource: text or binary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents (exactly one of `text` and `blob` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 binary contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Binary contents, already base64-encoded.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, base64: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: None,
            blob: Some(base64.into()),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both(text: &str) -> (Result<ContentBlock, String>, Result<ContentBlock, String>) {
        let from_text = serde_json::from_str::<ContentBlock>(text).map_err(|e| e.to_string());
        let value: Value = serde_json::from_str(text).unwrap();
        (from_text, ContentBlock::deserialize(value).map_err(|e| e.to_string()))
    }

    #[test]
    fn a_block_reads_by_its_type_wherever_the_type_is() {
        let text = ContentBlock::text("hi");
        for written in [
            r#"{"type":"text","text":"hi"}"#,
            r#"{"text":"hi","type":"text"}"#,
            r#"{"text":"hi","extra":[1,{"a":2}],"type":"text"}"#,
        ] {
            let (a, b) = both(written);
            assert_eq!(a.as_ref(), Ok(&text), "{written}");
            assert_eq!(b.as_ref(), Ok(&text), "{written}");
        }
        let image = json!({"data": "AA==", "_meta": {"k": 1}, "mimeType": "image/png", "type": "image"});
        let ContentBlock::Image(i) = ContentBlock::deserialize(image).unwrap() else { panic!("an image") };
        assert_eq!((i.mime_type.as_str(), i.meta.unwrap()["k"].clone()), ("image/png", json!(1)));
        let link = r#"{"type":"resource_link","uri":"file:///a","name":"a"}"#;
        assert!(matches!(both(link).0, Ok(ContentBlock::ResourceLink(_))));
        let embedded = r#"{"resource":{"uri":"file:///a","text":"x"},"type":"resource"}"#;
        assert!(matches!(
            both(embedded),
            (Ok(ContentBlock::EmbeddedResource(_)), Ok(ContentBlock::EmbeddedResource(_)))
        ));
        // Written as it was read.
        assert_eq!(serde_json::to_string(&text).unwrap(), r#"{"type":"text","text":"hi"}"#);
    }

    #[test]
    fn a_block_without_a_known_type_or_its_members_is_refused_with_what_is_wrong() {
        let unknown = "unknown variant `video`, expected one of `text`, `image`, `audio`, `resource_link`, `resource`, `tool_use`, `tool_result`";
        for (written, says) in [
            (r#"{"text":"hi"}"#, "missing field `type`"),
            ("{}", "missing field `type`"),
            (r#"{"type":"video","text":"hi"}"#, unknown),
            (r#"{"text":"hi","type":"video"}"#, unknown),
            (r#"{"type":"text"}"#, "missing field `text`"),
            (r#"{"type":"text","text":3}"#, "invalid type: integer `3`, expected a string"),
            (r#"{"text":3,"type":"text"}"#, "invalid type: integer `3`, expected a string"),
            (r#""text""#, "invalid type: string \"text\", expected a content block"),
        ] {
            let (a, b) = both(written);
            for said in [a.unwrap_err(), b.unwrap_err()] {
                assert!(said.starts_with(says), "{written}: {said}");
            }
        }
    }
}
