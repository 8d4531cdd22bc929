//! Runs the tests' fake model server until interrupted, for recording agent screens by hand:
//! `cargo run --example fake_model_server`, then point a CLI at the printed URL (see
//! `tests/integration/fake_model.rs` for the prompts it understands).

#[path = "../tests/integration/fake_model.rs"]
mod fake_model;

fn main() {
    let server = fake_model::FakeModel::start();
    println!("{}", server.url());
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        // Ends on end of input (or Ctrl-C, which ends the process).
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            line.clear();
        }
        let _ = sender.send(());
    });
    let _ = receiver.recv();
    for entry in server.log() {
        eprintln!("{} {:?}", entry.path, entry.prompt);
    }
}
