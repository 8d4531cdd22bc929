//! The answers many routes share, kept once in the OpenAPI document's `components.responses`
//! (the errors) or schemas (raw bytes): the handlers' `#[utoipa::path]` name them, and
//! `openapi` collects them.

use utoipa::ToResponse;
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr, Response, ResponseBuilder};

/// The error answer with the `Error` body, under `description`.
fn error_answer(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("Error")))
            .build(),
    )
}

/// Declares an error answer many routes share, kept once in `components.responses`.
macro_rules! shared_error {
    ($(#[$doc:meta])* $name:ident, $description:literal) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl<'r> ToResponse<'r> for $name {
            fn response() -> (&'r str, RefOr<Response>) {
                (stringify!($name), error_answer($description).build().into())
            }
        }
    };
}

shared_error!(
    /// 400 of a route whose body is not the JSON it takes.
    UnreadableBody,
    "The body is not the JSON the route takes: not JSON, a required field missing, an unknown \
     field, a wrong type, or a number out of its range (the error names the field). Related: \
     415 without `Content-Type: application/json`, 413 over 4 MiB; both with an `Error` body."
);
shared_error!(
    /// 400 of a route whose path or query cannot be read.
    UnreadableQuery,
    "A path or query parameter cannot be read (an id that is not a number, `from=abc`)."
);
shared_error!(
    /// 404 of a route that names a pane.
    PaneNotFound,
    "No pane has that name (or the pane closed meanwhile)."
);
shared_error!(
    /// 409 of a route that names a pane.
    PaneAmbiguous,
    "The name matches several panes; the error lists them."
);
shared_error!(
    /// 409 of a route that types into a pane: an ambiguous name, or a shell.
    PaneRefused,
    "The name matches several panes (the error lists them), or the pane runs no recognised \
     agent and `allow_shell` is not given (a plain shell would run the text as commands; MCP \
     clients: unless the daemon runs with `--mcp-allow-shell`)."
);
shared_error!(
    /// 503 of a route that asks a pane's session.
    PaneUnavailable,
    "The pane's session is reconnecting, or its control connection did not answer."
);
shared_error!(
    /// 500 of a route that reads or writes the inbox database.
    InboxFailed,
    "The inbox database failed."
);

/// 401 of every route on the TCP listener.
pub(crate) struct Unauthorized;

impl<'r> ToResponse<'r> for Unauthorized {
    fn response() -> (&'r str, RefOr<Response>) {
        let challenge = HeaderBuilder::new()
            .schema(Some(
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String),
            ))
            .description(Some("`Bearer`."))
            .build();
        (
            "Unauthorized",
            error_answer("TCP listener only: the bearer token is missing or wrong.")
                .header("WWW-Authenticate", challenge)
                .build()
                .into(),
        )
    }
}

/// An `application/octet-stream` body: raw bytes (a `Vec<u8>` would read as a list of numbers).
pub(crate) struct Binary;

impl utoipa::PartialSchema for Binary {
    fn schema() -> RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .content_media_type("application/octet-stream")
            .into()
    }
}

impl utoipa::ToSchema for Binary {}
