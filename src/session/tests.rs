//! Unit tests of the session core, driven by the recorded transcripts in `fixtures/`.
