//! The daemon's local API: the HTTP layer ([`server`] serving the table of [`routes`], [`workflows`] over
//! [`crate::orchestration`]), its listeners ([`listen`], [`tcp`]) and the client the CLI uses
//! ([`client`]), and the types on the wire between them ([`wire`]), described by the OpenAPI
//! document generated from them ([`openapi`]).

pub(crate) mod body;
pub mod client;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod health;
pub mod listen;
pub(crate) mod messages;
pub mod openapi;
pub(crate) mod panes;
pub(crate) mod params;
mod responses;
pub mod routes;
pub mod server;
pub mod state;
pub mod tcp;
pub mod wire;
pub(crate) mod workflows;
pub(crate) mod worktrees;
