//! Stream servers under test that more than one benchmark binary runs
//! (`load` for throughput and instructions, `idle` for memory per idle
//! connection), so that both measure the same code.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::handwritten;

/// The hand-written NDJSON server, as lean as a server can be: one task per
/// connection that owns the socket (no split halves), reads into one
/// buffer, answers every complete line already read into a reused buffer
/// with the hand-written handler, and writes once no complete line is left.
pub async fn serve_handwritten(listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let mut input = Vec::with_capacity(64 * 1024);
            let mut out = Vec::with_capacity(64 * 1024);
            loop {
                let mut start = 0;
                while let Some(offset) = memchr::memchr(b'\n', &input[start..]) {
                    let line = input[start..start + offset].trim_ascii();
                    start += offset + 1;
                    if line.is_empty() {
                        continue;
                    }
                    let before = out.len();
                    handwritten::handle(line, &mut out);
                    if out.len() > before {
                        out.push(b'\n');
                    }
                }
                if !out.is_empty() {
                    if stream.write_all(&out).await.is_err() {
                        return;
                    }
                    out.clear();
                }
                input.drain(..start);
                input.reserve(64 * 1024);
                match stream.read_buf(&mut input).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        });
    }
}
