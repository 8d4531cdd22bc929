//! Fuzzes the replay path: any bytes through the decoder and the pane screens (including
//! layouts that resize them) must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use panectl::replay::{ReplayOptions, replay};

fuzz_target!(|data: &[u8]| {
    let _ = replay(data, ReplayOptions { default_size: (40, 12) });
});
