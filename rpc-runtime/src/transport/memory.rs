//! The in-memory transport: two ends joined by channels of whole messages,
//! for a client and a server in one process (tests, plugins). No framing,
//! no copies beyond the message itself.

use std::collections::VecDeque;
use std::io;

use tokio::sync::mpsc;

use crate::peer::{MessageSink, MessageSource, Received};

/// Messages in flight from one end to the other before the sender waits.
const CHANNEL_MESSAGES: usize = 256;

/// One end of an in-memory connection: its receiving half.
pub struct MemorySource {
    rx: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
}

impl std::fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySource").finish_non_exhaustive()
    }
}

/// One end of an in-memory connection: its sending half.
pub struct MemorySink {
    tx: Option<mpsc::Sender<Vec<u8>>>,
    scratch: Vec<u8>,
    queue: VecDeque<Vec<u8>>,
    queued: usize,
}

impl std::fmt::Debug for MemorySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySink").finish_non_exhaustive()
    }
}

/// Two connected ends: what one sink sends, the other source receives.
/// Each end is a `(source, sink)` pair for
/// a [`Transport`](crate::transport::Transport), served with
/// [`Server::serve`](crate::Server::serve) or connected to with
/// [`PeerBuilder::connect`](crate::PeerBuilder::connect).
pub fn memory_pair() -> ((MemorySource, MemorySink), (MemorySource, MemorySink)) {
    let (a_tx, a_rx) = mpsc::channel(CHANNEL_MESSAGES);
    let (b_tx, b_rx) = mpsc::channel(CHANNEL_MESSAGES);
    ((MemorySource::new(b_rx), MemorySink::new(a_tx)), (MemorySource::new(a_rx), MemorySink::new(b_tx)))
}

impl MemorySource {
    fn new(rx: mpsc::Receiver<Vec<u8>>) -> Self {
        MemorySource { rx, current: Vec::new() }
    }
}

impl MemorySink {
    fn new(tx: mpsc::Sender<Vec<u8>>) -> Self {
        MemorySink { tx: Some(tx), scratch: Vec::new(), queue: VecDeque::new(), queued: 0 }
    }
}

impl MessageSource for MemorySource {
    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        match self.rx.recv().await {
            Some(message) => {
                self.current = message;
                Ok(Some(Received::Message(&self.current)))
            }
            None => Ok(None),
        }
    }

    fn recv_ready(&mut self) -> Option<Received<'_>> {
        self.current = self.rx.try_recv().ok()?;
        Some(Received::Message(&self.current))
    }
}

impl MessageSink for MemorySink {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if self.scratch.len() > start {
            let message = if start == 0 { std::mem::take(&mut self.scratch) } else { self.scratch.split_off(start) };
            self.queued += message.len();
            self.queue.push_back(message);
        }
    }

    fn send(&mut self, message: &[u8]) {
        self.queued += message.len();
        self.queue.push_back(message.to_vec());
    }

    fn queued(&self) -> usize {
        self.queued
    }

    async fn flush(&mut self) -> io::Result<()> {
        let Some(tx) = &self.tx else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the in-memory connection is closed"));
        };
        while !self.queue.is_empty() {
            // Room first, then the message: a flush dropped while waiting
            // loses nothing.
            let Ok(permit) = tx.reserve().await else {
                self.queue.clear();
                self.queued = 0;
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the other end of the in-memory connection is gone",
                ));
            };
            if let Some(message) = self.queue.pop_front() {
                self.queued -= message.len();
                permit.send(message);
            }
        }
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        let flushed = self.flush().await;
        self.tx = None;
        flushed
    }
}
