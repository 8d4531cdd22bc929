//! Every route of the API, defined once: [`route_table!`] names each route, its handler (whose
//! `#[utoipa::path]` alone spells its method and path) and whether it holds its connection.
//! From that one table come the axum router ([`served`], used by [`super::server::router`]),
//! the OpenAPI document's paths (the derive in [`super::openapi`]) and [`Route`], the typed
//! URL every client (the CLI, MCP) builds its requests with, so that no `/v1/...` URL is
//! written by hand anywhere else.

use axum::routing::{MethodFilter, MethodRouter};
use utoipa::openapi::path::HttpMethod;

use super::state::ApiState;

/// The table of routes. It hands every entry to the macro `$callback`, which makes what it
/// needs of them (the [`Route`] enum and the router here, the OpenAPI paths in
/// [`super::openapi`]). An entry is `Variant { path params } => module::handler /
/// module's __path_handler (the type `#[utoipa::path]` makes), holds;` where `holds` says
/// whether its requests hold their connection (a stream, a long wait), and so take one of the
/// [`super::listen::StreamSlots`]. The order is the OpenAPI document's.
/// Percent-encodes a path segment (everything but unreserved characters).
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

macro_rules! route_table {
    ($callback:ident) => {
        $callback! {
            /// `GET /v1/health`: the daemon, the tmux server and the counters.
            Health {} => health::health / __path_health, false;
            /// `GET /v1/openapi.json`: this API's OpenAPI document.
            OpenApi {} => openapi::serve / __path_serve, false;
            /// `GET /v1/panes`: every pane.
            Panes {} => panes::list_panes / __path_list_panes, false;
            /// `GET /v1/panes/{pane}`: one pane.
            Pane { pane } => panes::one_pane / __path_one_pane, false;
            /// `GET /v1/panes/{pane}/screen`: the mirrored screen.
            PaneScreen { pane } => panes::screen / __path_screen, false;
            /// `GET /v1/panes/{pane}/output`: recent output bytes.
            PaneOutput { pane } => panes::output / __path_output, false;
            /// `GET /v1/panes/{pane}/explain`: which status rule fired and why.
            PaneExplain { pane } => panes::explain / __path_explain, false;
            /// `GET /v1/panes/{pane}/last-response`: the agent's last answer.
            PaneLastResponse { pane } => panes::last_response / __path_last_response, false;
            /// `POST /v1/panes/{pane}/provider`: assigns or unassigns a provider.
            PaneProvider { pane } => panes::set_provider / __path_set_provider, false;
            /// `POST /v1/panes/{pane}/hook`: an agent's hook event.
            PaneHook { pane } => panes::hook / __path_hook, false;
            /// `POST /v1/panes/{pane}/transport`: moves the pane's output to another transport.
            PaneTransport { pane } => panes::set_transport / __path_set_transport, false;
            /// `POST /v1/sessions/{session}/transport`: the same for a whole session.
            SessionTransport { session } =>
                panes::set_session_transport / __path_set_session_transport, false;
            /// `GET /v1/providers`: the provider rules in force.
            Providers {} => panes::providers / __path_providers, false;
            /// `POST /v1/panes/{pane}/messages`: a message for the pane's inbox.
            PaneMessages { pane } => messages::send_message / __path_send_message, false;
            /// `POST /v1/panes/{pane}/input`: types text.
            PaneInput { pane } => workflows::input / __path_input, false;
            /// `POST /v1/panes/{pane}/keys`: sends keys.
            PaneKeys { pane } => workflows::keys / __path_keys, false;
            /// `POST /v1/panes/{pane}/decision`: answers the dialog on the pane's screen.
            PaneDecision { pane } => workflows::answer_decision / __path_answer_decision, false;
            /// `POST /v1/panes/{pane}/close`: asks the agent to exit, then closes its pane.
            PaneClose { pane } => workflows::close / __path_close, true;
            /// `GET /v1/decisions`: the dialogs agents wait on.
            Decisions {} => workflows::decisions / __path_decisions, false;
            /// `POST /v1/panes/{pane}/wait`: waits for a status.
            PaneWait { pane } => workflows::wait / __path_wait, true;
            /// `POST /v1/agents`: launches an agent.
            Agents {} => workflows::launch / __path_launch, true;
            /// `POST /v1/handoff`: hands work to an agent and waits for its answer.
            Handoff {} => workflows::handoff / __path_handoff, true;
            /// `POST /v1/assign`: assigns work without waiting.
            Assign {} => workflows::assign / __path_assign, false;
            /// `GET /v1/assignments`: every assignment.
            Assignments {} => workflows::assignments / __path_assignments, false;
            /// `GET /v1/assignments/{id}`: one assignment.
            Assignment { id } => workflows::assignment / __path_assignment, false;
            /// `GET /v1/messages`: the inbox's messages.
            Messages {} => messages::list_messages / __path_list_messages, false;
            /// `GET /v1/messages/{id}`: one message.
            Message { id } => messages::one_message / __path_one_message, false;
            /// `POST /v1/messages/{id}/cancel`: cancels a pending message.
            CancelMessage { id } => messages::cancel_message / __path_cancel_message, false;
            /// `POST /v1/restore`: starts again the agents that no longer run.
            Restore {} => workflows::restore / __path_restore, true;
            /// `GET /v1/worktrees`: the worktrees launches made.
            Worktrees {} => worktrees::list / __path_list, false;
            /// `DELETE /v1/worktrees/{name}`: removes one (never its branch).
            Worktree { name } => worktrees::remove / __path_remove, false;
            /// `GET /v1/events`: the event stream.
            Events {} => events::events / __path_events, true;
        }
    };
}
pub(crate) use route_table;

/// One served route: what [`super::server::router`] mounts.
pub(crate) struct Served {
    /// The HTTP method (lowercase, as in OpenAPI).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the OpenAPI check"))]
    pub method: String,
    /// The path template, from the handler's `#[utoipa::path]`.
    pub path: String,
    /// The handler, on its method.
    pub handler: MethodRouter<ApiState>,
    /// Whether its requests hold their connection (see [`route_table!`]).
    pub holds: bool,
}

/// The axum filter and the OpenAPI name of a handler's methods (`None`: it declares none).
fn methods(declared: Vec<HttpMethod>) -> Option<(MethodFilter, String)> {
    let mut filter: Option<MethodFilter> = None;
    let mut names = Vec::new();
    for method in declared {
        let (one, name) = match method {
            HttpMethod::Get => (MethodFilter::GET, "get"),
            HttpMethod::Post => (MethodFilter::POST, "post"),
            HttpMethod::Put => (MethodFilter::PUT, "put"),
            HttpMethod::Delete => (MethodFilter::DELETE, "delete"),
            HttpMethod::Options => (MethodFilter::OPTIONS, "options"),
            HttpMethod::Head => (MethodFilter::HEAD, "head"),
            HttpMethod::Patch => (MethodFilter::PATCH, "patch"),
            HttpMethod::Trace => (MethodFilter::TRACE, "trace"),
        };
        filter = Some(filter.map_or(one, |f| f.or(one)));
        names.push(name);
    }
    filter.map(|filter| (filter, names.join(",")))
}

/// Makes [`Route`] and [`served`] from the table.
macro_rules! define_routes {
    ($(
        $(#[$doc:meta])*
        $name:ident { $($param:ident),* } => $module:ident :: $handler:ident / $spec:ident,
            $holds:literal;
    )*) => {
        /// A route of the API with its path parameters: what a client asks for, so that it
        /// never spells a URL. [`Route::path`] is the URL path, each parameter
        /// percent-encoded.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Route<'a> {
            $(
                $(#[$doc])*
                $name {
                    $(
                        #[doc = concat!("The `{", stringify!($param), "}` segment, as is.")]
                        $param: &'a str,
                    )*
                },
            )*
        }

        impl Route<'_> {
            /// The path template, as the router and the OpenAPI document have it
            /// (`/v1/panes/{pane}`).
            pub fn template(&self) -> String {
                match self {
                    $(Route::$name { .. } => {
                        <super::$module::$spec as utoipa::Path>::path()
                    })*
                }
            }

            /// The URL path: the template with each parameter percent-encoded.
            pub fn path(&self) -> String {
                match self {
                    $(Route::$name { $($param),* } => {
                        #[allow(unused_mut, reason = "routes without parameters")]
                        let mut path = self.template();
                        $(
                            path = path.replace(
                                concat!("{", stringify!($param), "}"),
                                &encode_segment($param),
                            );
                        )*
                        path
                    })*
                }
            }
        }

        /// Every route of the table, on its handler, in the table's order.
        pub(crate) fn served() -> Vec<Served> {
            let mut all = Vec::new();
            $(
                if let Some((filter, method)) =
                    methods(<super::$module::$spec as utoipa::Path>::methods())
                {
                    all.push(Served {
                        method,
                        path: <super::$module::$spec as utoipa::Path>::path(),
                        handler: axum::routing::on(filter, super::$module::$handler),
                        holds: $holds,
                    });
                }
            )*
            all
        }
    };
}

route_table!(define_routes);

impl Route<'_> {
    /// The URL path and a query of `(name, value)` pairs, each value percent-encoded; no `?`
    /// when `query` is empty.
    pub fn with_query(&self, query: &[(&str, &str)]) -> String {
        let mut path = self.path();
        for (i, (name, value)) in query.iter().enumerate() {
            path.push(if i == 0 { '?' } else { '&' });
            path.push_str(name);
            path.push('=');
            path.push_str(&encode_segment(value));
        }
        path
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pane_names_are_encoded_for_paths() {
        assert_eq!(super::encode_segment("%3"), "%253");
        assert_eq!(super::encode_segment("main:0.1"), "main%3A0.1");
        assert_eq!(super::encode_segment("a b/é"), "a%20b%2F%C3%A9");
    }

    use super::*;

    #[test]
    fn paths_encode_their_parameters_as_the_client_always_has() {
        assert_eq!(Route::Health {}.path(), "/v1/health");
        assert_eq!(Route::Pane { pane: "%3" }.path(), "/v1/panes/%253");
        assert_eq!(
            Route::PaneScreen { pane: "a b/é:{x}" }.path(),
            "/v1/panes/a%20b%2F%C3%A9%3A%7Bx%7D/screen"
        );
        assert_eq!(
            Route::SessionTransport { session: "$1" }.path(),
            "/v1/sessions/%241/transport"
        );
        assert_eq!(
            Route::PaneClose { pane: "%3" }.path(),
            "/v1/panes/%253/close"
        );
        assert_eq!(
            Route::CancelMessage { id: "7" }.path(),
            "/v1/messages/7/cancel"
        );
        assert_eq!(
            Route::PaneScreen { pane: "%3" }.with_query(&[("format", "ansi")]),
            "/v1/panes/%253/screen?format=ansi"
        );
        assert_eq!(
            Route::Messages {}.with_query(&[("pane", "%3"), ("state", "pending")]),
            "/v1/messages?pane=%253&state=pending"
        );
        assert_eq!(Route::Events {}.with_query(&[]), "/v1/events");
    }

    #[test]
    fn every_route_of_the_table_is_served_once() {
        let served = served();
        // One per entry of the table: a handler without a method would be left out.
        macro_rules! count {
            ($($(#[$doc:meta])* $name:ident { $($p:ident),* } => $m:ident :: $h:ident / $s:ident, $holds:literal;)*) => {
                [$(stringify!($name)),*].len()
            };
        }
        assert_eq!(served.len(), route_table!(count));
        let mut seen = std::collections::BTreeSet::new();
        for route in &served {
            assert!(route.path.starts_with("/v1/"), "{}", route.path);
            assert!(
                seen.insert((route.method.clone(), route.path.clone())),
                "{} {} twice",
                route.method,
                route.path
            );
        }
    }
}
