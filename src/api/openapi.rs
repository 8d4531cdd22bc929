//! The OpenAPI document of the API (`GET /v1/openapi.json`), generated from the code that
//! serves it: each handler's `#[utoipa::path]` (its path, method, parameters, body and
//! answers, its doc comment as summary and description) and the `ToSchema` of every wire type,
//! so the document cannot drift from what the routes take and answer. What is true of every
//! route (the TCP listener's bearer token and its 401) is added here, once.

use std::sync::LazyLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{OpenApi as Document, Ref, ServerBuilder, ServerVariableBuilder};
use utoipa::{Modify, OpenApi, ToResponse};

use super::responses::{
    InboxFailed, PaneAmbiguous, PaneNotFound, PaneRefused, PaneUnavailable, Unauthorized,
    UnreadableBody, UnreadableQuery,
};

/// The served document: generated once, as JSON.
static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
    let generated = match serde_json::to_string(&ApiDoc::openapi()) {
        Ok(text) => text,
        Err(error) => {
            tracing::error!(%error, "the OpenAPI document cannot be written");
            String::new()
        }
    };
    match serde_json::from_str::<Ordered>(&generated) {
        Ok(mut json) => {
            tidy(&mut json);
            serde_json::to_string_pretty(&json).unwrap_or(generated)
        }
        Err(_) => generated,
    }
});

/// The OpenAPI 3.1 document of the API, as served.
pub fn document() -> &'static str {
    &DOCUMENT
}

/// This OpenAPI document
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    operation_id = "get_openapi",
    tag = "daemon",
    responses((
        status = 200,
        description = "The OpenAPI 3.1 document of the API, generated from the types the routes \
                       take and answer.",
        body = Object
    ))
)]
pub(crate) async fn serve() -> HttpResponse {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        document(),
    )
        .into_response()
}

/// What `info.description` says: how to reach the API, and the conventions of every route.
const DESCRIPTION: &str = "HTTP/1.1 and JSON. The daemon serves it on a Unix socket (mode \
    0600, in a private 0700 directory; connections from other users are refused): \
    `$XDG_RUNTIME_DIR/panectl/<stem>.sock`, else `${TMUX_TMPDIR:-/tmp}/panectl-<uid>/<stem>.sock`, \
    where `<stem>` is the tmux socket's file name and a hash of its path. With `panectl daemon \
    --listen ADDR:PORT` it serves the same API on TCP, every request carrying `Authorization: \
    Bearer TOKEN`. `{pane}` is a pane id (`%N`), `session:window.pane` (each part a name, an \
    index or an id), or a window name unique on the server (its active pane), percent-encoded: \
    `%` is `%25`, so pane `%3` is `/v1/panes/%253`. Handler errors are `{\"error\": \"...\"}` \
    with a 4xx/5xx status. This document is generated from the daemon's code; the human \
    reference is docs/API.md.";

/// Makes [`ApiDoc`] with the paths of the table of routes ([`super::routes::route_table`]), in
/// its order.
macro_rules! api_doc {
    ($(
        $(#[$doc:meta])*
        $name:ident { $($param:ident),* } => $module:ident :: $handler:ident / $spec:ident,
            $holds:literal;
    )*) => {
        /// The document, as the derive assembles it from the handlers and the types they name.
        #[derive(OpenApi)]
        #[openapi(
            info(title = "panectl API", description = DESCRIPTION),
            servers(
                (
                    url = "http://panectl",
                    description = "The Unix socket (any host name), e.g. `curl --unix-socket \"$SOCK\" \
                                   http://panectl/v1/health`."
                ),
            ),
            security((), ("bearer" = [])),
            tags(
                (name = "daemon", description = "The daemon itself."),
                (name = "panes", description = "Mirrored panes: metadata, screens, output."),
                (name = "status", description = "Providers and agent status."),
                (name = "inbox", description = "Messages delivered to agents when they are ready."),
                (
                    name = "orchestration",
                    description = "Typing, keys, waiting, launching agents, handing off work."
                ),
                (name = "events", description = "The event stream."),
            ),
            paths($(super::$module::$handler),*),
            components(
                schemas(
                    super::events::Event,
                    crate::mirror::ring::Gap,
                    crate::pipe::Transport,
                    crate::status::rules::Verdict,
                ),
                responses(
                    Unauthorized,
                    UnreadableBody,
                    UnreadableQuery,
                    PaneNotFound,
                    PaneAmbiguous,
                    PaneRefused,
                    PaneUnavailable,
                    InboxFailed,
                )
            ),
            modifiers(&TcpListener)
        )]
        struct ApiDoc;
    };
}

super::routes::route_table!(api_doc);

/// The TCP listener (`panectl daemon --listen`): its server entry, its bearer token, and the
/// 401 every route answers there without one.
struct TcpListener;

impl Modify for TcpListener {
    fn modify(&self, document: &mut Document) {
        let address = ServerVariableBuilder::new()
            .default_value("127.0.0.1:7878")
            .build();
        document.servers.get_or_insert_with(Vec::new).push(
            ServerBuilder::new()
                .url("http://{address}")
                .description(Some(
                    "The TCP listener (`panectl daemon --listen ADDR:PORT`); bearer token \
                     required.",
                ))
                .parameter("address", address)
                .build(),
        );
        let bearer = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "Applies only to the TCP listener (`panectl daemon --listen ADDR:PORT`): every \
                 request needs `Authorization: Bearer TOKEN`, the token being the content of \
                 the token file (`--token-file`, default `<runtime dir>/<stem>.token`, created \
                 with a random token and mode 0600). The Unix socket needs no token: it checks \
                 that the peer's uid is the daemon's own.",
            ))
            .build();
        document
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(bearer));
        for item in document.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                add_unauthorized(operation);
            }
        }
    }
}

fn add_unauthorized(operation: &mut Operation) {
    operation.responses.responses.insert(
        "401".into(),
        Ref::from_response_name(Unauthorized::response().0).into(),
    );
}

/// JSON that keeps its objects' keys in the order they were written (`serde_json::Value`
/// sorts them, which would scatter each type's fields), so that the tidied document lists
/// properties, routes and answers as the code declares them.
#[derive(Debug)]
enum Ordered {
    /// An object, its entries in order.
    Object(Vec<(String, Ordered)>),
    /// An array.
    Array(Vec<Ordered>),
    /// A string, a number, a boolean or null.
    Scalar(serde_json::Value),
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> serde::de::Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(serde_json::Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Ordered::Object(entries))
    }
}

impl serde::Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Ordered::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Scalar(value) => value.serialize(serializer),
        }
    }
}

/// Finishes the generated JSON: `info.summary` (which utoipa does not model), and each
/// description's lines joined into one paragraph as written (doc comments break lines at 100
/// columns; Markdown reads a single line break as a space anyway).
fn tidy(json: &mut Ordered) {
    if let Ordered::Object(entries) = json
        && let Some((_, Ordered::Object(info))) = entries.iter_mut().find(|(key, _)| key == "info")
    {
        let summary = "Mirror tmux panes, track the status of CLI coding agents in them, and \
                       drive them.";
        info.insert(
            1.min(info.len()),
            ("summary".into(), Ordered::Scalar(summary.into())),
        );
    }
    unfold(json);
}

fn unfold(json: &mut Ordered) {
    match json {
        Ordered::Object(entries) => {
            for (key, value) in entries.iter_mut() {
                match value {
                    Ordered::Scalar(serde_json::Value::String(text))
                        if key == "description" || key == "summary" =>
                    {
                        *text = unfold_text(text);
                    }
                    other => unfold(other),
                }
            }
        }
        Ordered::Array(items) => items.iter_mut().for_each(unfold),
        Ordered::Scalar(_) => {}
    }
}

/// Joins the lines of each paragraph with a space; paragraphs (blank lines) stay.
fn unfold_text(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document_json() -> serde_json::Value {
        serde_json::from_str(document()).expect("the document is JSON")
    }

    #[test]
    fn every_reference_resolves() {
        fn walk(value: &serde_json::Value, root: &serde_json::Value, at: &str) {
            match value {
                serde_json::Value::Object(map) => {
                    if let Some(target) = map.get("$ref").and_then(|r| r.as_str()) {
                        let pointer = target.trim_start_matches('#');
                        assert!(
                            root.pointer(pointer).is_some(),
                            "{at}: $ref {target} resolves to nothing"
                        );
                    }
                    for (key, value) in map {
                        walk(value, root, &format!("{at}/{key}"));
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, root, &format!("{at}/{i}"));
                    }
                }
                _ => {}
            }
        }
        let json = document_json();
        walk(&json, &json, "");
    }

    #[test]
    fn descriptions_are_for_api_readers() {
        fn walk(value: &serde_json::Value, at: &str, found: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, value) in map {
                        let here = format!("{at}/{key}");
                        match value.as_str() {
                            // A rustdoc link (`[`name`]` not followed by a URL) or a line
                            // break inside a paragraph means a doc comment leaked as written.
                            Some(text) if key == "description" || key == "summary" => {
                                let rustdoc = text
                                    .match_indices("`]")
                                    .any(|(i, _)| !text[i + 2..].starts_with('('));
                                let broken = text.replace("\n\n", "").contains('\n');
                                if rustdoc || broken || text.trim().is_empty() {
                                    found.push(format!("{here}: {text:?}"));
                                }
                            }
                            _ => walk(value, &here, found),
                        }
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, &format!("{at}/{i}"), found);
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        walk(&document_json(), "", &mut found);
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn every_operation_says_what_it_does_and_how_it_fails_over_tcp() {
        let json = document_json();
        for (path, item) in json["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("a path item") {
                let summary = operation["summary"].as_str().unwrap_or_default();
                assert!(!summary.is_empty(), "{method} {path}: no summary");
                assert!(!summary.ends_with('.'), "{method} {path}: {summary:?}");
                assert!(operation["tags"].as_array().is_some_and(|t| t.len() == 1));
                assert_eq!(
                    operation["responses"]["401"]["$ref"], "#/components/responses/Unauthorized",
                    "{method} {path}"
                );
                for (status, answer) in operation["responses"].as_object().expect("responses") {
                    if status.starts_with(['4', '5']) && answer.get("$ref").is_none() {
                        assert_eq!(
                            answer["content"]["application/json"]["schema"]["$ref"],
                            "#/components/schemas/Error",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
        let security = &json["components"]["securitySchemes"]["bearer"];
        assert_eq!(security["scheme"], "bearer");
        assert_eq!(json["security"], serde_json::json!([{}, {"bearer": []}]));
    }

    #[test]
    fn wire_types_with_their_own_serde_have_schemas_that_say_so() {
        let json = document_json();
        let schemas = &json["components"]["schemas"];
        // Ids are strings such as `%3`, not the numbers inside them.
        assert_eq!(schemas["PaneId"]["type"], "string");
        assert_eq!(
            schemas["Pane"]["properties"]["pane"]["$ref"],
            "#/components/schemas/PaneId"
        );
        // Bytes from tmux are text; a message's body is text, not a list of numbers.
        assert_eq!(schemas["TmuxText"]["type"], "string");
        assert_eq!(schemas["Message"]["properties"]["body"]["type"], "string");
        // An absent optional field is left out, a null one is always written.
        let pane_required = schemas["Pane"]["required"].as_array().expect("required");
        assert!(!pane_required.contains(&"name".into()));
        assert!(pane_required.contains(&"provider".into()));
        // Events are their fields flattened with one of the kinds, tagged by `type`.
        let event = serde_json::to_string(&schemas["DaemonEvent"]).expect("serializes");
        assert!(event.contains("#/components/schemas/EventKind"), "{event}");
        let kinds = schemas["EventKind"]["oneOf"].as_array().expect("kinds");
        let types: Vec<&serde_json::Value> = kinds
            .iter()
            .map(|kind| &kind["properties"]["type"]["enum"][0])
            .collect();
        assert_eq!(
            types,
            crate::events::EventKind::TYPES
                .map(serde_json::Value::from)
                .iter()
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_document_keeps_the_order_of_the_code() {
        let json = document();
        let position = |text: &str| json.find(text).unwrap_or_else(|| panic!("{text} missing"));
        // Routes in the order of `paths(...)`, a type's fields in declaration order.
        assert!(position("\"/v1/health\"") < position("\"/v1/events\""));
        let pane = position("\"Pane\": {");
        let field = |name: &str| pane + json[pane..].find(&format!("\"{name}\": {{")).unwrap_or(0);
        assert!(field("session_id") < field("window_index"));
        assert!(field("window_index") < field("status_seconds"));
        assert!(document_json()["info"]["summary"].is_string());
    }

    #[test]
    fn paragraphs_are_unfolded_and_kept() {
        assert_eq!(
            unfold_text("one\ntwo\n\nthree\n four"),
            "one two\n\nthree four"
        );
    }
}
