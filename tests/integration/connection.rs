//! A control connection driven directly through its handle: commands and their replies, the
//! per-command timeout, and the pane mirror.

use std::time::Duration;

use panectl::control::command::{Command, Line, SafeValue, commands};
use panectl::events::{EventBus, ResyncReason};
use panectl::ids::SessionId;
use panectl::tmux::connection::{self, ConnectionContext};
use panectl::tmux::{ConnectionConfig, ConnectionError, ServerAddress};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::support::TmuxServer;

fn address(server: &TmuxServer) -> ServerAddress {
    ServerAddress::from_socket(
        server
            .dir()
            .join(format!("tmux-{}", nix::unistd::getuid()))
            .join(server.socket_name()),
    )
}

#[test]
fn commands_get_their_replies_and_time_out_clearly() {
    let server = TmuxServer::start(80, 24);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (upcalls, _upcall_receiver) = tokio::sync::mpsc::unbounded_channel();
        let context = ConnectionContext {
            address: address(&server),
            config: ConnectionConfig {
                command_timeout: Duration::from_millis(500),
                ..ConnectionConfig::default()
            },
            bus: EventBus::new(),
            upcalls,
            providers: tokio::sync::watch::channel(std::sync::Arc::new(
                panectl::status::providers::ProviderSet::builtin().unwrap(),
            ))
            .1,
            clients: panectl::clients::ClientRegistry::in_memory(),
        };
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        let (handle, task) = connection::spawn(
            &context,
            SessionId(0),
            ResyncReason::Attach,
            cancel.clone(),
            &tracker,
        );

        // Two commands on one line: both answered, in order.
        let line = Line::new(commands::set_buffer(b"b", b"one ; two").unwrap())
            .then(commands::show_buffer(b"b").unwrap());
        let replies = handle.command(line).await.unwrap();
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[1].as_ref().unwrap().joined_body(), b"one ; two");

        // A failing command abandons the rest of its line.
        let line = Line::new(Command::new("kill-pane").target("-t", panectl::ids::PaneId(999)))
            .then(commands::show_buffer(b"b").unwrap());
        let replies = handle.command(line).await.unwrap();
        assert!(!replies[0].as_ref().unwrap().success);
        assert!(replies[1].is_none());

        // `wait-for` is answered at once but holds the client's queue until signalled, so the
        // next command gets no answer and times out with a clear error.
        let channel = SafeValue::new("never").unwrap();
        handle
            .command(Line::new(Command::new("wait-for").safe(&channel)))
            .await
            .unwrap();
        let stuck = Line::new(commands::show_buffer(b"b").unwrap());
        let error = handle.command(stuck).await.unwrap_err();
        assert!(matches!(error, ConnectionError::Timeout { .. }), "{error}");
        assert!(error.to_string().contains("show-buffer -b 'b'"), "{error}");
        // Once released, the late reply is dropped and new commands work again.
        server.tmux(&["wait-for", "-S", "never"]);
        let replies = handle
            .command(Line::new(commands::show_buffer(b"b").unwrap()))
            .await
            .unwrap();
        assert_eq!(replies[0].as_ref().unwrap().joined_body(), b"one ; two");

        // The panes of the session are mirrored.
        let panes = handle.panes().await.unwrap();
        assert_eq!(panes.len(), 1);

        cancel.cancel();
        tracker.close();
        let reason = task.await.unwrap();
        assert_eq!(reason, connection::EndReason::Cancelled);
        tracker.wait().await;
        // And the connection is now closed for callers.
        assert!(matches!(
            handle.panes().await,
            Err(ConnectionError::Closed(_))
        ));
    });
}
